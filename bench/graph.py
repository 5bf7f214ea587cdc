#!/usr/bin/env python3
"""What the knowledge graph costs and how fast it walks.

- **Writes**: ``remember_many`` of the first 1,000 LoCoMo dev turns (each with its
  speaker), into a fresh SQLite store, with the rule extractor and with
  ``extractor="off"``, alternating, ``--rounds`` times each; the median and the ratio.
  The embedder is the local model by default (what a user's writes cost), or
  ``--hashing`` (no model time: the store's own work).
- **Walks**: a scope of ``--entities`` extracted entities (synthetic names, three to a
  fact) and as many asserted relations between random pairs; the p50/p95 of
  ``neighbourhood(depth=2)`` and ``traverse(depth=2)`` from 300 random entities, and of
  an entity search.

    .venv/bin/python bench/graph.py /work/shared/data/locomo/locomo-dev.json [--json OUT]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from harness import RESULTS_DIR, environment, latency_summary, table, timed, write_json
from locomo import load_samples

import engram
from engram import Note, ResourceRef

SYLLABLES = "ka lo mi ra ven dor tal zu bri gan fel or quin sar ty mo".split()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path, help="the LoCoMo dev file")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--entities", type=int, default=10_000)
    parser.add_argument("--hashing", action="store_true", help="no model: the store's work")
    parser.add_argument("--json", type=Path, default=RESULTS_DIR / "graph.json")
    args = parser.parse_args()
    writes = measure_writes(args)
    walks = measure_walks(args)
    rows = [
        [f"remember_many {args.turns:,} turns, rules (median ms)", writes["rules_ms"]],
        [f"remember_many {args.turns:,} turns, off (median ms)", writes["off_ms"]],
        ["extraction's share of the write", f"{writes['overhead']:+.1%}"],
        ["entities / mentions after the write", f"{writes['entities']} / {writes['mentions']}"],
        [
            f"neighbourhood depth 2, {walks['entities']:,} entities (p50 / p95 ms)",
            f"{walks['neighbourhood']['p50_ms']:.2f} / {walks['neighbourhood']['p95_ms']:.2f}",
        ],
        [
            "traverse depth 2 (p50 / p95 ms)",
            f"{walks['traverse']['p50_ms']:.2f} / {walks['traverse']['p95_ms']:.2f}",
        ],
        [
            "entity search, text (p50 / p95 ms)",
            f"{walks['search']['p50_ms']:.2f} / {walks['search']['p95_ms']:.2f}",
        ],
    ]
    print(table(["what", "figure"], rows))
    write_json(args.json, {"environment": environment(), "writes": writes, "walks": walks})


def measure_writes(args: argparse.Namespace) -> dict[str, Any]:
    turns = [t for s in load_samples(args.path) for t in s.turns][: args.turns]
    notes = [Note(t.memory(), metadata={"speaker": t.speaker}, created_at=t.at) for t in turns]
    embedder: Any = engram.HashingEmbedder(384) if args.hashing else "local"
    times: dict[str, list[float]] = {"rules": [], "off": []}
    counts = (0, 0)
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(args.rounds):
            for mode in ("rules", "off"):
                path = Path(tmp) / f"{mode}-{n}.db"
                with engram.open(path, embedder=embedder, extractor=mode) as mem:
                    if mem.embedder is not None:
                        mem.embedder.embed(["warm-up"], "passage")
                    _, ms = timed(mem.remember_many, ResourceRef("w"), notes)
                    times[mode].append(ms)
                    if mode == "rules":
                        counts = _counts(path)
                print(f"round {n + 1}: {mode} {ms:.0f} ms", file=sys.stderr)
    rules, off = statistics.median(times["rules"]), statistics.median(times["off"])
    return {
        "turns": len(notes),
        "embedder": "hashing-384" if args.hashing else "local",
        "rules_ms": round(rules, 1),
        "off_ms": round(off, 1),
        "overhead": rules / off - 1,
        "rounds_ms": times,
        "entities": counts[0],
        "mentions": counts[1],
    }


def _counts(path: Path) -> tuple[int, int]:
    import sqlite3

    with sqlite3.connect(path) as conn:
        entities = conn.execute("SELECT count(*) FROM entities").fetchone()[0]
        mentions = conn.execute("SELECT count(*) FROM mentions").fetchone()[0]
    return int(entities), int(mentions)


def _name(rng: random.Random, taken: set[str]) -> str:
    while True:
        first = "".join(rng.choice(SYLLABLES) for _ in range(2)).capitalize()
        last = "".join(rng.choice(SYLLABLES) for _ in range(3)).capitalize()
        name = f"{first} {last}"
        if name not in taken:
            taken.add(name)
            return name


def measure_walks(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(7)
    taken: set[str] = set()
    names = [_name(rng, taken) for _ in range(args.entities)]
    ref = ResourceRef("walks")
    with (
        tempfile.TemporaryDirectory() as tmp,
        engram.open(Path(tmp) / "walks.db", embedder=engram.HashingEmbedder(64)) as mem,
    ):
        notes = []
        for i in range(0, len(names), 3):
            trio = names[i : i + 3] + names[:1] * (3 - len(names[i : i + 3]))
            notes.append(f"Yesterday {trio[0]} met {trio[1]} and {trio[2]} at noon.")
        for start in range(0, len(notes), 1000):
            mem.remember_many(ref, notes[start : start + 1000])
        for _ in range(args.entities):
            a, b = rng.sample(names, 2)
            mem.graph.upsert_relation(ref, a, b, rng.choice(["knows", "works_with"]))
        starts = rng.sample(names, 300)
        near = [timed(mem.graph.neighbourhood, ref, s, depth=2)[1] for s in starts]
        paths = [timed(mem.graph.traverse, ref, s, depth=2)[1] for s in starts]
        found = [timed(mem.graph.search, ref, s.split()[1], mode="text")[1] for s in starts]
    return {
        "entities": len(names),
        "relations": args.entities,
        "neighbourhood": latency_summary(near),
        "traverse": latency_summary(paths),
        "search": latency_summary(found),
    }


if __name__ == "__main__":
    main()
