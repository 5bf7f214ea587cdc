#!/usr/bin/env python3
"""The vector half of a large SQLite scope: pruned through its projection, and plain.

One file holds one scope of 100k facts with the real local model's vectors (the cached
pool of bench/backends.py). Two stores open it: one prunes through the projection
(``engram.storage.sqlite.index.projection``), one has it switched off and multiplies the whole
matrix. Their queries alternate, so both see the same machine; every answer of the
pruned store is checked to be the plain store's, id for id. Also printed: the cold load
(reading the scope's vectors, plus fitting the projection) and how many rows a pruned
query scored exactly.

    .venv/bin/python bench/vector_pruning.py [--facts 100000] [--json OUT]
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from backends import Lookup, one_big_scope
from harness import environment, latency_summary, one_line, one_scope_args, table, timed, write_json

import engram
from engram import Memory, ResourceRef
from engram.storage.sqlite.store import SQLiteStore

TOP_K = 10


def opened(path: Path, lookup: Lookup, *, pruned: bool) -> tuple[Memory, SQLiteStore]:
    mem = engram.open(path, embedder=lookup)  # type: ignore[arg-type]
    store = mem._store  # a diagnostic reaches inside on purpose
    assert isinstance(store, SQLiteStore)
    if not pruned:
        store.vectors.project_above = 1 << 62
    return mem, store


def rows_scored(store: SQLiteStore, ref: ResourceRef, query: np.ndarray) -> int | None:
    entry = store.vectors.held(ref.key)
    if entry is None or entry.projection is None:
        return None
    found = entry.projection.search(entry.matrix, entry.count, query, None, 50)
    return None if found is None else len(found[0])


def run(facts: int, queries: int) -> dict[str, Any]:
    ref = ResourceRef("big")
    with tempfile.TemporaryDirectory(prefix="engram-pruning-") as name:
        path, lookup, questions = one_big_scope(Path(name), facts, queries)
        stores = {"pruned": opened(path, lookup, pruned=True)}
        stores["plain"] = opened(path, lookup, pruned=False)
        cold = {
            name: timed(mem.recall, ref, questions[0], top_k=TOP_K, mode="vector")[1]
            for name, (mem, _) in stores.items()
        }
        samples: dict[str, list[float]] = {name: [] for name in stores}
        for text in questions:
            answers = {}
            for name, (mem, _) in stores.items():
                hits, ms = timed(mem.recall, ref, text, top_k=TOP_K, mode="vector")
                samples[name].append(ms)
                answers[name] = [h.fact.id for h in hits]
            if answers["pruned"] != answers["plain"]:
                raise SystemExit(f"the pruned answer differs for {text!r}")
        store = stores["pruned"][1]
        scored = [rows_scored(store, ref, lookup.embed([q], "query")[0]) for q in questions]
        held = store.vectors.held(ref.key)
        fitted = held.projection if held is not None else None
        for mem, _ in stores.values():
            mem.close()
    counted = [s for s in scored if s is not None]
    return {
        "facts": facts,
        "queries": queries,
        "environment": environment(),
        "projected_dimensions": None if fitted is None else int(fitted.basis.shape[1]),
        "cold_ms": {name: round(ms, 1) for name, ms in cold.items()},
        "recall_ms": {name: latency_summary(s) for name, s in samples.items()},
        "answers_identical": True,
        "rows_scored_exactly": {
            "p50": float(np.median(counted)) if counted else None,
            "p95": float(np.percentile(counted, 95)) if counted else None,
            "fallbacks": len(scored) - len(counted),
        },
    }


def main(argv: Sequence[str] | None = None) -> None:
    args = one_scope_args(__doc__, argv)
    result = run(args.facts, args.queries)
    rows = [
        [name, result["cold_ms"][name], s["p50_ms"], s["p95_ms"]]
        for name, s in result["recall_ms"].items()
    ]
    print(f"vector recall, one scope of {args.facts:,} facts, top_k={TOP_K} (ms):")
    print(table(["search", "cold", "p50", "p95"], rows))
    print(f"rows scored exactly per pruned query: {result['rows_scored_exactly']}")
    out = args.out or Path(__file__).parent / "results" / "vector_pruning.json"
    write_json(out, result)
    ratio = result["recall_ms"]["pruned"]["p50_ms"] / result["recall_ms"]["plain"]["p50_ms"]
    print(one_line({"benchmark": "vector_pruning", "facts": args.facts, "p50_ratio": ratio}))


if __name__ == "__main__":
    main()
