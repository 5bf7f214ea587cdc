#!/usr/bin/env python3
"""How long does a consolidation run take over a 100k-fact scope, and is the next run free?

Fills one scope with ``--facts`` facts (default 100,000) made from the LoCoMo dev turns:
each turn's words as they are, then again with a counter in them ("... (note 17)"), so
the facts differ in a figure and never merge; one fact in fifty also gets a near-duplicate
(its words with other punctuation and case), which merge must fold. A tenth of the facts
are old and weak (strength 0.1, created 40 days ago): prune takes them. 10,000 feedback
signals wait for strengthen. The facts are written with the hashing embedder (64
dimensions): the figures are the cycle's own, not a model's.

Then it times a dry run, the run itself, and a second run (which must change nothing),
each step apart, and writes the figures.

    .venv/bin/python bench/consolidation.py [--facts N] [--db PATH]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from harness import RESULTS_DIR, environment, table, write_json

import engram
from engram import Note, ResourceRef
from engram.core.records import ConsolidationReport

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "locomo"
REF = ResourceRef("consolidation-bench")
BATCH = 1000
TWIN_EVERY, WEAK_EVERY = 50, 10
SIGNALS = 10_000


def turns() -> list[str]:
    raw = json.loads((DATA / "locomo-dev.json").read_text())
    found = []
    for item in raw:
        conversation = item["conversation"]
        for key, value in conversation.items():
            if key.startswith("session_") and isinstance(value, list):
                found.extend(str(t["text"]) for t in value if t.get("text"))
    return found


def notes(count: int) -> list[Note]:
    words, made, old = turns(), [], datetime.now(UTC) - timedelta(days=40)
    n = 0
    while len(made) < count:
        text = words[n % len(words)]
        if n >= len(words):
            text = f"{text} (note {n // len(words)})"
        weak = n % WEAK_EVERY == WEAK_EVERY - 1
        made.append(Note(text, strength=0.1, created_at=old) if weak else Note(text))
        if n % TWIN_EVERY == 0 and len(made) < count and not weak:
            made.append(Note(text.lower().rstrip(".!?") + " !"))
        n += 1
    return made[:count]


class Beside:
    """Another store on the same file writing one fact at a time to the scope for as long
    as the run lasts: how long a write waits for the run (the scope's lock)."""

    def __init__(self, db: Path) -> None:
        self._mem = engram.open(db, embedder=engram.HashingEmbedder(64))
        self._took: list[float] = []
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._write)
        self._thread.start()

    def _write(self) -> None:
        n = 0
        while not self._done.is_set():
            start = time.perf_counter()
            self._mem.remember(REF, f"written beside the run, number {n}")
            self._took.append(time.perf_counter() - start)
            n += 1

    def stop(self) -> dict[str, float]:
        self._done.set()
        self._thread.join()
        self._mem.close()
        took = sorted(self._took)
        return {
            "writes": len(took),
            "p50_ms": round(took[len(took) // 2] * 1000, 1),
            "max_s": round(took[-1], 2),
        }


def steps_row(name: str, report: ConsolidationReport, took: float) -> list[object]:
    by_step = {s.step: s.changed for s in report.steps}
    return [name, f"{took:.2f}", report.changed, *by_step.values()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--db", type=Path, default=None)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="engram-consolidation-"))
    db = args.db or folder / "bench.db"
    mem = engram.open(db, embedder=engram.HashingEmbedder(64))
    made = notes(args.facts)
    start = time.perf_counter()
    for i in range(0, len(made), BATCH):
        mem.remember_many(REF, made[i : i + BATCH])
    fill = time.perf_counter() - start
    held = mem.count(REF)
    ids: list[str] = []
    cursor = None
    while len(ids) < SIGNALS:
        page = mem.facts(REF, limit=1000, before=cursor)
        ids += [f.id for f in page.facts]
        cursor = page.next_before
    ids = ids[:SIGNALS]
    start = time.perf_counter()
    for i in range(0, len(ids), 100):
        part = ids[i : i + 100]
        mem.usage.detect(REF, part, "nothing said here matches", record=True)
    signal_s = time.perf_counter() - start

    results: dict[str, Any] = {}
    rows = []
    beside: dict[str, float] = {}
    for name, dry in (("dry run", True), ("run", False), ("second run", False)):
        writer = Beside(db) if name == "run" else None
        start = time.perf_counter()
        report = mem.consolidate(REF, dry_run=dry)
        took = time.perf_counter() - start
        if writer is not None:
            beside = writer.stop()
        rows.append(steps_row(name, report, took))
        results[name] = {
            "seconds": round(took, 3),
            "changed": report.changed,
            "steps": {s.step: {"changed": s.changed, **s.counts} for s in report.steps},
        }
    step_times = {}
    for step in ("reindex", "strengthen", "prune", "merge", "derive", "compact"):
        start = time.perf_counter()
        mem.consolidate(REF, steps=[step], dry_run=True)
        step_times[step] = round(time.perf_counter() - start, 3)
    mem.close()

    print(f"{held} facts written in {fill:.1f} s; {SIGNALS} signals in {signal_s:.1f} s")
    steps = ["reindex", "strengthen", "prune", "merge", "derive", "compact"]
    print(table(["run", "seconds", "changed", *steps], rows))
    print("one step alone, planned (dry run), seconds:", step_times)
    print("a writer beside the run, one fact a write:", beside)
    write_json(
        RESULTS_DIR / "consolidation.json",
        {
            "benchmark": "consolidation",
            "facts": held,
            "fill_seconds": round(fill, 1),
            "signals": SIGNALS,
            "runs": results,
            "dry_run_step_seconds": step_times,
            "writer_beside_the_run": beside,
            "environment": environment(),
        },
    )


if __name__ == "__main__":
    main()
