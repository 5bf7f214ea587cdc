#!/usr/bin/env python3
"""What the write ledger costs: writes with and without it, and deletion for good.

Runs the engram on ``PYTHONPATH`` (so a build from before the ledger can be measured the
same way, from a worktree) on a fresh SQLite file (or ``--postgres URL``):
- ``remember_many`` of 1,000 facts into a fresh scope, repeated; the median;
- a single ``remember``, repeated, p50 and p95;
- a working-memory set, p50;
- deleting a 10,000-fact scope for good (``delete_scope``; before the ledger,
  ``forget_all``, which deleted for good then), and a soft ``forget_all`` of one.

The embedder is ``engram.HashingEmbedder(384)``: the local model's width, but no model
time, so what is measured is the store's own work (with the local model, embedding 1,000
texts takes seconds and hides the ledger entirely).

    PYTHONPATH=src .venv/bin/python bench/ledger.py --label after [--postgres URL]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from harness import RESULTS_DIR, environment, latency_summary, table, timed, write_json

import engram
from engram import ResourceRef


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", required=True, help="names the JSON: ledger-LABEL.json")
    parser.add_argument("--postgres", metavar="URL", help="measure a PostgreSQL store instead")
    parser.add_argument("--batches", type=int, default=15)
    parser.add_argument("--singles", type=int, default=400)
    parser.add_argument("--scope", type=int, default=10_000, help="facts in the deleted scope")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        target = args.postgres or str(Path(tmp) / "ledger.db")
        with engram.open(target, embedder=engram.HashingEmbedder(384)) as mem:
            figures = measure(mem, args)
    rows = [
        ["remember_many 1,000 (median ms)", f"{figures['remember_many']['p50_ms']:.1f}"],
        ["remember one (p50 ms)", f"{figures['remember']['p50_ms']:.3f}"],
        ["remember one (p95 ms)", f"{figures['remember']['p95_ms']:.3f}"],
        ["working set (p50 ms)", f"{figures['working_set']['p50_ms']:.3f}"],
        [f"delete a {args.scope:,}-fact scope for good (ms)", f"{figures['delete_scope_ms']:.0f}"],
        [f"soft forget_all of {args.scope:,} (ms)", f"{figures['soft_forget_all_ms']:.0f}"],
    ]
    print(table(["what", args.label], rows))
    write_json(
        RESULTS_DIR / f"ledger-{args.label}.json",
        {
            "label": args.label,
            "backend": "postgres" if args.postgres else "sqlite",
            "environment": environment(),
            **figures,
        },
    )


def measure(mem: engram.Memory, args: argparse.Namespace) -> dict[str, Any]:
    batches = []
    for i in range(args.batches):
        notes = [f"batch {i} fact {j} about the plan and the trip" for j in range(1000)]
        _, ms = timed(mem.remember_many, ResourceRef(f"batch-{i}"), notes)
        batches.append(ms)
    singles = []
    one = ResourceRef("singles")
    for i in range(args.singles):
        _, ms = timed(mem.remember, one, f"single fact number {i} about coffee")
        singles.append(ms)
    sets = []
    for i in range(args.singles):
        _, ms = timed(mem.working.set, one, f"key-{i % 20}", {"step": i})
        sets.append(ms)
    doomed = ResourceRef("doomed")
    for start in range(0, args.scope, 1000):
        mem.remember_many(doomed, [f"doomed fact {j}" for j in range(start, start + 1000)])
    hard = getattr(mem, "delete_scope", None)
    if hard is not None:
        _, delete_ms = timed(hard, doomed)
    else:  # before the ledger, forget_all deleted for good
        _, delete_ms = timed(mem.forget_all, doomed, expected_count=args.scope)
    soft = ResourceRef("soft")
    for start in range(0, args.scope, 1000):
        mem.remember_many(soft, [f"soft fact {j}" for j in range(start, start + 1000)])
    _, soft_ms = timed(mem.forget_all, soft, expected_count=args.scope)
    return {
        "remember_many": latency_summary(batches),
        "remember": latency_summary(singles),
        "working_set": latency_summary(sets),
        "delete_scope_ms": delete_ms,
        "soft_forget_all_ms": soft_ms,
    }


if __name__ == "__main__":
    main()
