"""Two processes racing on one store: compare-and-set, forget-all with a confirmed count,
caps and fork stay correct (on each backend)."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from typing import Any

import engram
import stores
from engram import Conflict, ResourceRef
from engram.core.memory import Note
from stores import Target

SCOPE = ResourceRef("raced")
CHILD = ResourceRef("raced-child")


def _race(target: Target, work: Callable[..., Any], *args: Any) -> list[Any]:
    """Runs ``work(target, worker, *args)`` in two processes at once; their results."""
    engram.open(target, embedder=engram.HashingEmbedder(32)).close()
    ctx = multiprocessing.get_context("spawn")
    out, start = ctx.Queue(), ctx.Barrier(2)
    procs = [
        ctx.Process(target=_report, args=(out, start, work, str(target), w, *args)) for w in (0, 1)
    ]
    for proc in procs:
        proc.start()
    results = [out.get(timeout=240) for _ in procs]
    for proc in procs:
        proc.join(timeout=60)
    failures = [r for r in results if isinstance(r, str)]
    assert failures == []
    return [r for _, r in sorted(results)]


def _report(
    out: Any, start: Any, work: Callable[..., Any], target: str, worker: int, *args: Any
) -> None:
    try:
        with engram.open(target, embedder=engram.HashingEmbedder(32)) as memory:
            start.wait(timeout=120)  # both open and ready: the race starts together
            out.put((worker, work(memory, worker, *args)))
    except Exception as exc:  # the parent fails the test with it
        out.put(f"worker {worker}: {type(exc).__name__}: {exc}")


def _increment(memory: engram.Memory, worker: int, times: int) -> int:
    conflicts = 0
    for _ in range(times):
        while True:
            try:
                entry = memory.working.entry(SCOPE, "counter")
                value, version = int(str(entry.value)), entry.version
            except engram.NotFound:
                value, version = 0, 0
            try:
                memory.working.set(SCOPE, "counter", value + 1, expected_version=version)
                break
            except Conflict:
                conflicts += 1
    return conflicts


def test_compare_and_set_loses_no_increment(target: Target) -> None:
    _race(target, _increment, 100)
    with engram.open(target, embedder=None) as memory:
        assert memory.working.get(SCOPE, "counter") == 200


def _write_or_forget(memory: engram.Memory, worker: int) -> list[Any]:
    if worker == 0:
        return [memory.remember(SCOPE, f"written {i}").id for i in range(150)]
    forgotten = []
    for _ in range(60):
        seen = memory.count(SCOPE)
        try:
            forgotten.append((seen, memory.forget_all(SCOPE, expected_count=seen)))
        except Conflict:
            forgotten.append((seen, None))
    return forgotten


def test_forget_all_never_forgets_more_than_was_confirmed(target: Target) -> None:
    written, attempts = _race(target, _write_or_forget)
    done = [(seen, gone) for seen, gone in attempts if gone is not None]
    assert all(gone <= seen for seen, gone in done)
    with engram.open(target, embedder=None) as memory:
        remaining = memory.count(SCOPE)
    assert remaining + sum(gone for _, gone in done) == len(set(written)) == 150


def _remember_capped(memory: engram.Memory, worker: int) -> int:
    for i in range(40):
        memory.remember_many(SCOPE, [f"worker {worker} batch {i} fact {j}" for j in range(3)])
    return memory.count(SCOPE)


def test_caps_hold_under_two_writers(target: Target) -> None:
    engram.open(target, embedder=engram.HashingEmbedder(32)).close()
    results = _race_capped(target)
    assert all(count <= 50 for count in results)
    with engram.open(target, embedder=None) as memory:
        assert memory.count(SCOPE) == 50


def _race_capped(target: Target) -> list[Any]:
    ctx = multiprocessing.get_context("spawn")
    out, start = ctx.Queue(), ctx.Barrier(2)
    procs = [ctx.Process(target=_capped_worker, args=(out, start, str(target), w)) for w in (0, 1)]
    for proc in procs:
        proc.start()
    results = [out.get(timeout=240) for _ in procs]
    for proc in procs:
        proc.join(timeout=60)
    assert [r for r in results if isinstance(r, str)] == []
    return [r for _, r in results]


def _capped_worker(out: Any, start: Any, target: str, worker: int) -> None:
    try:
        with engram.open(target, embedder=engram.HashingEmbedder(32), max_facts=50) as memory:
            start.wait(timeout=120)
            out.put((worker, _remember_capped(memory, worker)))
    except Exception as exc:
        out.put(f"worker {worker}: {type(exc).__name__}: {exc}")


def _fork_repeatedly(memory: engram.Memory, worker: int) -> int:
    copied = 0
    for _ in range(8):
        copied += memory.fork(SCOPE, CHILD.resource_id, into_existing=True).facts_copied
    return copied


def _fork_once(memory: engram.Memory, worker: int) -> str:
    try:
        return f"copied {memory.fork(SCOPE, CHILD.resource_id).facts_copied}"
    except Conflict:
        return "refused"


def test_of_two_forks_racing_into_one_empty_child_one_is_refused(target: Target) -> None:
    with engram.open(target, embedder=engram.HashingEmbedder(32)) as memory:
        memory.remember_many(SCOPE, [f"parent fact {i}" for i in range(120)])
    assert sorted(_race(target, _fork_once)) == ["copied 120", "refused"]


def test_forks_racing_into_one_child_copy_each_fact_once_with_its_vector(target: Target) -> None:
    with engram.open(target, embedder=engram.HashingEmbedder(32)) as memory:
        memory.remember_many(SCOPE, [Note(f"parent fact {i}", tags=["p"]) for i in range(120)])
    copies = _race(target, _fork_repeatedly)
    assert sum(copies) == 120  # each fact copied by exactly one fork
    with engram.open(target, embedder=engram.HashingEmbedder(32)) as memory:
        parent = {f.content for f in memory.facts(SCOPE, limit=1000).facts}
        child = memory.facts(CHILD, limit=1000).facts
        assert {f.content for f in child} == parent and len(child) == 120
        assert all(f.tags == ("p",) for f in child)
        hit = memory.recall(CHILD, "parent fact 7", top_k=1, mode="vector")[0]
        assert hit.fact.content == "parent fact 7"
    vectors = stores.rows(
        target,
        "SELECT count(*) FROM fact_vectors v JOIN facts f ON f.seq = v.fact WHERE f.scope = ?",
        (CHILD.key,),
    )
    assert vectors == [(120,)]
