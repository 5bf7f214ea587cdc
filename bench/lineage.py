#!/usr/bin/env python3
"""What reading a session's lineage costs: a 10-deep fork chain holding 10k entries.

Ten sessions, each forked from the last entry of the one before (each in the scope of
another agent of one team), each with 1,000 entries of one to three dozen words; the
deepest session's lineage is then all 10,000 entries. Timed, on a fresh store per
backend: the first page of its lineage (100 entries, the default), a page of 1,000, a
lineage filtered by a query word, its own entries, and the fork tree (every entry of the
ten sessions). The goal for the first page is under 20 ms p50 on SQLite.

    .venv/bin/python bench/lineage.py [--backends sqlite postgres] [--runs 50] [--json OUT]
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import sentences
from harness import environment, latency_summary, table, timed, write_json
from targets import Targets

import engram
from engram import ResourceRef, SourceRef
from engram.core.records import Entry

DEPTH = 10
PER_SESSION = 1000
T0 = datetime(2024, 5, 1, tzinfo=UTC)


def build(memory: engram.Memory) -> ResourceRef:
    """The chain; returns the scope of its deepest session."""
    rng = random.Random(7)
    fork, ref, moment = None, ResourceRef("agent-0", "bench"), T0
    for depth in range(DEPTH):
        ref = ResourceRef(f"agent-{depth}", "bench")
        session = memory.sessions.start(ref, fork_of=fork)
        entries = []
        for _ in range(PER_SESSION):
            moment += timedelta(seconds=rng.randint(1, 30))
            entries.append(Entry("message", sentences.sentence(rng), role="user", at=moment))
        memory.sessions.append(session, entries)
        fork = SourceRef(session.id, PER_SESSION - 1)
    return ref


def measure(target: str, runs: int) -> dict[str, Any]:
    with engram.open(target, embedder=None) as memory:
        ref, build_ms = timed(build, memory)
        cases: dict[str, Callable[[], object]] = {
            "lineage, first 100": lambda: memory.episodic_recall(ref, branch="lineage"),
            "lineage, 1,000": lambda: memory.episodic_recall(ref, branch="lineage", limit=1000),
            "lineage, query": lambda: memory.episodic_recall(
                ref, branch="lineage", query="invoice"
            ),
            "own, first 100": lambda: memory.episodic_recall(ref),
            "tree (10k entries)": lambda: memory.episodic_tree(ref),
        }
        figures: dict[str, Any] = {"build_ms": round(build_ms, 1)}
        first = memory.episodic_recall(ref, branch="lineage", limit=1000)
        figures["lineage_sessions"] = len({e.session_id for e in first.entries})
        for name, case in cases.items():
            case()  # warm
            figures[name] = latency_summary([timed(case)[1] for _ in range(runs)])
        return figures


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--backends", nargs="+", default=["sqlite", "postgres"])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--json", type=Path, dest="out")
    args = parser.parse_args(argv)
    result: dict[str, Any] = {"environment": environment(), "depth": DEPTH, "backends": {}}
    for backend in args.backends:
        with Targets(backend) as targets:
            result["backends"][backend] = measure(targets.fresh(), args.runs)
    rows = []
    for backend, figures in result["backends"].items():
        for name, summary in figures.items():
            if isinstance(summary, dict):
                rows.append([f"{backend}: {name}", summary["p50_ms"], summary["p95_ms"]])
        rows.append([f"{backend}: build (10k entries)", figures["build_ms"], ""])
    print(table(["case", "p50 ms", "p95 ms"], rows))
    write_json(args.out or Path(__file__).parent / "results" / "lineage.json", result)


if __name__ == "__main__":
    main()
