"""Acknowledged writes survive writers killed mid-work (SIGKILL), on either backend, and a
SQLite file stays sound."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time

import engram
import stores
from engram import ResourceRef
from stores import Target

WRITER = """
import sys
import engram
path, worker = sys.argv[1], sys.argv[2]
ref = engram.ResourceRef("killed")
with engram.open(path, embedder=engram.HashingEmbedder(32)) as memory:
    for i in range(100000):
        fact = memory.remember(ref, f"worker {worker} fact {i}")
        memory.working.set(ref, f"{worker}-{i}", i)
        print(fact.id, f"{worker}-{i}", flush=True)  # acknowledged only once both returned
"""


# Every writer acknowledges this many writes before the kill, however long that takes on
# a loaded machine; PATIENCE (seconds) only bounds a hang.
EACH = 20
PATIENCE = 120.0


def _read_acknowledgements(
    proc: subprocess.Popen[str], into: list[list[str]], enough: threading.Event
) -> None:
    """Collects ``proc``'s acknowledgements as they come; sets ``enough`` at EACH, or when
    the writer's output ends."""
    assert proc.stdout is not None
    for line in proc.stdout:
        # Only whole lines: the kill can cut the last one short, and a cut line was never
        # an acknowledgement.
        if line.endswith("\n") and len(line.split()) == 2:
            into.append(line.split())
            if len(into) >= EACH:
                enough.set()
    enough.set()


def test_a_killed_writer_loses_nothing_it_acknowledged(target: Target) -> None:
    engram.open(target, embedder=engram.HashingEmbedder(32)).close()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(target), str(w)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for w in range(3)
    ]
    acks: list[list[list[str]]] = [[] for _ in procs]
    enough = [threading.Event() for _ in procs]
    readers = [
        threading.Thread(target=_read_acknowledgements, args=(proc, into, event))
        for proc, into, event in zip(procs, acks, enough, strict=True)
    ]
    try:
        for reader in readers:
            reader.start()
        deadline = time.monotonic() + PATIENCE
        for event in enough:
            event.wait(max(0.0, deadline - time.monotonic()))
    finally:
        for proc in procs:  # mid-work: each is still writing when it is killed
            proc.kill()
    for proc, reader in zip(procs, readers, strict=True):
        proc.wait(PATIENCE)
        reader.join(PATIENCE)
        assert proc.returncode == -signal.SIGKILL
    assert min(len(got) for got in acks) >= EACH  # every writer got under way
    acknowledged = [ack for got in acks for ack in got]

    if not stores.is_postgres(target):
        assert stores.rows(target, "PRAGMA integrity_check") == [("ok",)]
    ref = ResourceRef("killed")
    with engram.open(target, embedder=engram.HashingEmbedder(32)) as memory:
        stored = {f.id for f in memory.facts(ref, limit=1000).facts}
        page = memory.facts(ref, limit=1000)
        while page.next_before:
            page = memory.facts(ref, limit=1000, before=page.next_before)
            stored |= {f.id for f in page.facts}
        for fact_id, key in acknowledged:
            assert fact_id in stored
            memory.working.get(ref, key)  # raises NotFound if lost
        assert memory.recall(ref, "worker fact", top_k=3)  # the indexes answer too
