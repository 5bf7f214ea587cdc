"""Many threads and processes on one file: no "database is locked", no lost writes."""

from __future__ import annotations

import multiprocessing
import threading

import pytest

import engram
from engram import ResourceRef
from stores import Target

WRITERS = 8
ROUNDS = 60


def _writer(path: str, worker: int, out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    acknowledged: list[str] = []
    errors: list[str] = []
    shared = ResourceRef("shared")
    own = ResourceRef(f"worker-{worker}")
    try:
        with engram.open(path, embedder=engram.HashingEmbedder(32)) as memory:
            for i in range(ROUNDS):
                acknowledged.append(memory.remember(shared, f"worker {worker} says {i}").id)
                acknowledged.append(memory.remember(own, f"note {i}").id)
                memory.working.set(shared, f"w{worker}-{i}", {"i": i})
                if i % 10 == 0:
                    memory.recall(shared, f"worker {worker}", top_k=5)
                    memory.facts(shared, limit=20)
            memory.remember_many(own, [f"batch {worker} {j}" for j in range(50)])
    except Exception as exc:  # reported to the parent, which fails the test
        errors.append(f"{type(exc).__name__}: {exc}")
    out.put((worker, acknowledged, errors))


def test_eight_writer_processes_lose_nothing(target: Target) -> None:
    engram.open(target, embedder=engram.HashingEmbedder(32)).close()
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(str(target), w, out)) for w in range(WRITERS)]
    for proc in procs:
        proc.start()
    results = [out.get(timeout=240) for _ in procs]
    for proc in procs:
        proc.join(timeout=60)
    assert [errors for _, _, errors in results if errors] == []
    with engram.open(target, embedder=engram.HashingEmbedder(32)) as memory:
        shared = ResourceRef("shared")
        assert memory.count(shared) == WRITERS * ROUNDS
        for worker, acknowledged, _ in results:
            own = ResourceRef(f"worker-{worker}")
            assert memory.count(own) == ROUNDS + 50
            stored = {f.id for f in memory.facts(own, limit=1000).facts}
            stored |= {f.id for f in memory.facts(shared, limit=1000).facts}
            assert set(acknowledged) <= stored
        page = memory.working.list(shared, limit=1000)
        assert len(page.entries) == WRITERS * ROUNDS


def test_threads_share_one_memory(mem: engram.Memory) -> None:
    ref = ResourceRef("threads")
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(40):
                mem.remember(ref, f"thread {n} fact {i}")
                mem.working.set(ref, f"t{n}", i)
                mem.recall(ref, f"thread {n}", top_k=3)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert mem.count(ref) == 8 * 40
    assert mem.working.list(ref).as_dict() == {f"t{n}": 39 for n in range(8)}


def test_concurrent_compare_and_set_has_one_winner(mem: engram.Memory) -> None:
    ref = ResourceRef("cas")
    mem.working.set(ref, "counter", 0)
    wins: list[int] = []
    barrier = threading.Barrier(8)

    def bump(n: int) -> None:
        barrier.wait()
        try:
            mem.working.set(ref, "counter", n, expected_version=1)
            wins.append(n)
        except engram.Conflict:
            pass

    threads = [threading.Thread(target=bump, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(wins) == 1
    assert mem.working.entry(ref, "counter").value == wins[0]


def test_forget_all_refuses_when_another_writer_added_since_the_count(target: Target) -> None:
    reader = engram.open(target, embedder=engram.HashingEmbedder(32))
    writer = engram.open(target, embedder=engram.HashingEmbedder(32))
    ref = ResourceRef("raced")
    try:
        reader.remember_many(ref, [f"old {i}" for i in range(5)])
        seen = reader.count(ref)
        writer.remember(ref, "arrived after the count")  # another process's write
        with pytest.raises(engram.Conflict, match="holds 6 facts"):
            reader.forget_all(ref, expected_count=seen)
        assert writer.count(ref) == 6
        assert reader.forget_all(ref, expected_count=reader.count(ref)) == 6
        assert writer.recall(ref, "arrived", mode="text") == []
        assert writer.recall(ref, "old", mode="vector") == []
    finally:
        reader.close()
        writer.close()
