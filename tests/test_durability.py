"""Acknowledged writes survive writers killed mid-work (SIGKILL), on either backend, and a
SQLite file stays sound."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
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
    time.sleep(2.0)
    for proc in procs:
        os.kill(proc.pid, signal.SIGKILL)
    acknowledged = []
    for proc in procs:
        out, _ = proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        # Only whole lines: the kill can cut the last one short, and a cut line was never
        # an acknowledgement.
        whole = out.split("\n")[:-1]
        acknowledged += [line.split() for line in whole if len(line.split()) == 2]
    assert len(acknowledged) > 30  # the writers got well under way before the kill

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
