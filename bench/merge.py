#!/usr/bin/env python3
"""Merge over a scope whose facts share most of their words: by comparing words, and by
each fact's nearest vectors.

Fills one scope with ``--facts`` of ``bench/sentences.py``'s sentences (short, from a
small vocabulary: most share most of their words with many others) and, one in fifty, a
twin (its words in lower case, other punctuation), with the hashing embedder (384
dimensions). Then plans merge (a dry run) in a new process each way:

- ``words``: every two facts sharing a rare word compared (exact; its work grows with
  the square of such a scope), however long it takes;
- ``nearest``: each fact compared with its nearest by vector, as merge does past its
  budget of comparisons.

and reports each one's seconds, peak memory and groups, and how many of the comparison
of words' merges the nearest found. ``--ways nearest`` alone for a large scope (the
comparison of words takes hours at 1M).

    .venv/bin/python bench/merge.py [--facts N] [--backend sqlite|postgres] [--ways words nearest]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from typing import Any

from harness import RESULTS_DIR, environment, table, write_json
from sentences import unique_sentences
from targets import BACKENDS, Targets

import engram
from engram import ResourceRef

REF = ResourceRef("merge-bench")
BATCH, TWIN_EVERY, DIMENSION = 10_000, 50, 384


def fill(db: str, count: int) -> float:
    texts = unique_sentences(count, seed=11)
    twins = [t.lower().rstrip(".") + " !" for t in texts[::TWIN_EVERY]]
    start = time.perf_counter()
    with engram.open(db, embedder=engram.HashingEmbedder(DIMENSION)) as mem:
        for made in (texts, twins):
            for i in range(0, len(made), BATCH):
                mem.remember_many(REF, made[i : i + BATCH])
    return time.perf_counter() - start


def plan(db: str, way: str) -> dict[str, Any]:
    """One dry run of merge, in this process (run as ``--plan``)."""
    from engram.core import consolidation

    if way == "words":
        consolidation.EXACT_CHECKS = consolidation.EXACT_FLOOR = 1 << 62
    else:
        consolidation.EXACT_CHECKS = consolidation.EXACT_FLOOR = 0
    with engram.open(db, embedder=engram.HashingEmbedder(DIMENSION)) as mem:
        start = time.perf_counter()
        step = mem.consolidate(REF, steps=["merge"], dry_run=True).step("merge")
        took = time.perf_counter() - start
    assert step is not None and step.merged is not None
    return {
        "seconds": round(took, 1),
        "peak_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "merged": {k: list(v) for k, v in step.merged.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--backend", choices=BACKENDS, default="sqlite")
    parser.add_argument("--db", default=None, help="a SQLite store this made before")
    parser.add_argument("--ways", nargs="+", default=["words", "nearest"])
    parser.add_argument("--plan", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.plan is not None:
        print(json.dumps(plan(args.db, args.plan)))
        return
    with Targets(args.backend) as targets:
        db = args.db or targets.fresh()
        filled = None if args.db is not None else round(fill(db, args.facts), 1)
        with engram.open(db, embedder=engram.HashingEmbedder(DIMENSION)) as mem:
            held = mem.count(REF)
        runs: dict[str, dict[str, Any]] = {}
        for way in args.ways:  # a new process each: its peak memory is its own
            out = subprocess.run(
                [sys.executable, __file__, "--db", db, "--plan", way],
                check=True,
                capture_output=True,
                text=True,
            )
            runs[way] = json.loads(out.stdout.strip().splitlines()[-1])
    pairs = {w: {(k, o) for k, v in r["merged"].items() for o in v} for w, r in runs.items()}
    found = None
    if "words" in pairs and "nearest" in pairs:
        found = len(pairs["words"] & pairs["nearest"])
    rows = [
        [w, r["seconds"], r["peak_mib"], len(r["merged"]), len(pairs[w])] for w, r in runs.items()
    ]
    print(f"{held} facts on {args.backend} (sentences and their twins); filled in {filled} s")
    print(table(["way", "seconds", "peak MiB", "groups", "folded"], rows))
    if found is not None:
        words = len(pairs["words"])
        print(f"folds the comparison of words plans that the nearest plan too: {found} of {words}")
    write_json(
        RESULTS_DIR / f"merge-{args.backend}-{held}.json",
        {
            "benchmark": "merge",
            "backend": args.backend,
            "facts": held,
            "fill_seconds": filled,
            "runs": {
                w: {k: v for k, v in r.items() if k != "merged"} | {"folded": len(pairs[w])}
                for w, r in runs.items()
            },
            "words_folds_found_by_nearest": found,
            "environment": environment(),
        },
    )


if __name__ == "__main__":
    main()
