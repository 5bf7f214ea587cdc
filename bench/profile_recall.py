#!/usr/bin/env python3
"""Where a recall's time goes in one large scope: per-phase timings, cProfile, query plans.

Fills one scope with the perf corpus (HashingEmbedder(384), as bench/perf.py does), then
times each recall's phases by wrapping the store's candidate and row-fetch methods, runs
the same queries under cProfile, shows SQLite's plan for the row fetch, and times the
bare numpy product the vector half does.

    .venv/bin/python bench/profile_recall.py [--facts 100000] [--mode hybrid] [--json OUT]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import tempfile
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import sentences
from harness import environment, latency_summary, one_line, table, timed, write_json

import engram
from engram import Memory, ResourceRef
from engram.core import query
from engram.core.models import RecallMode
from engram.storage.rows import FACT_COLUMNS
from engram.storage.sqlite.driver import sqlite3
from engram.storage.sqlite.fulltext import fts_query, scope_token

SEED = 20240501
DIMENSION = 384
# (the store's part, its method, the phase's name): the steps of a recall's one read
STEPS = (
    ("candidates", "text", "text candidates"),
    ("candidates", "vector", "vector candidates"),
    ("facts", "traits", "candidates' traits"),
    ("facts", "strengths", "strengths"),
    ("facts", "by_ids", "rows"),
    ("facts", "vectors", "text-only hits' vectors"),
)
PHASES = ("embed", *(phase for _, _, phase in STEPS))


class Phases:
    """Wraps methods so each call's time is added to the current query's phase."""

    def __init__(self) -> None:
        self.current: dict[str, float] = defaultdict(float)

    def wrap(self, owner: object, method: str, phase: str) -> None:
        original: Callable[..., Any] = getattr(owner, method)

        def measured(*args: Any, **kwargs: Any) -> Any:
            result, ms = timed(original, *args, **kwargs)
            self.current[phase] += ms
            return result

        setattr(owner, method, measured)


def fill(path: Path, ref: ResourceRef, facts: int) -> None:
    corpus = sentences.unique_sentences(facts, SEED)
    with engram.open(path, embedder=engram.HashingEmbedder(DIMENSION)) as mem:
        for start in range(0, facts, 5_000):
            mem.remember_many(ref, corpus[start : start + 5_000])


def phase_timings(
    mem: Memory, ref: ResourceRef, mode: RecallMode, queries: Sequence[str]
) -> dict[str, Any]:
    phases = Phases()
    store = mem._store  # a diagnostic reaches inside on purpose
    assert mem.embedder is not None
    phases.wrap(mem.embedder, "embed", "embed")
    for part, method, phase in STEPS:
        phases.wrap(getattr(store, part), method, phase)
    rows: dict[str, list[float]] = defaultdict(list)
    for text in queries:
        phases.current.clear()
        _, total = timed(mem.recall, ref, text, top_k=10, mode=mode)
        for phase in PHASES:
            rows[phase].append(phases.current.get(phase, 0.0))
        rows["rest (validation, fusion, hits)"].append(total - sum(phases.current.values()))
        rows["total"].append(total)
    return {phase: latency_summary(samples) for phase, samples in rows.items()}


def profile(mem: Memory, ref: ResourceRef, mode: RecallMode, queries: Sequence[str]) -> str:
    profiler = cProfile.Profile()
    profiler.enable()
    for text in queries:
        mem.recall(ref, text, top_k=10, mode=mode)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(12)
    return out.getvalue()


def row_fetch_plans(path: Path, ref: ResourceRef, ids: Sequence[str]) -> dict[str, Any]:
    """The plan and cost of the row fetch as engram writes it (the scope comparison kept
    off the index, ``+scope``) and as it was first written (``scope = ?``, which SQLite
    served from the scope index), for the same ten ids."""
    marks = ", ".join("?" for _ in ids)
    variants = {
        "scope = ? (first version)": (
            f"SELECT {FACT_COLUMNS} FROM facts WHERE scope = ? AND id IN ({marks})"
        ),
        "+scope = ? (as engram runs it)": (
            f"SELECT {FACT_COLUMNS} FROM facts WHERE +scope = ? AND id IN ({marks})"
        ),
    }
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        out = {}
        for name, sql in variants.items():
            params = (ref.key, *ids)
            plan = [str(r[3]) for r in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params)]
            conn.execute(sql, params).fetchall()
            samples = [timed(fetch_all, conn, sql, params)[1] for _ in range(20)]
            out[name] = {"plan": plan, **latency_summary(samples)}
        return out
    finally:
        conn.close()


def fetch_all(conn: sqlite3.Connection, sql: str, params: Sequence[object]) -> list[Any]:
    return conn.execute(sql, params).fetchall()


_BM25 = "bm25(facts_fts, 1.0, 0.0, 1.0)"
TEXT_VARIANTS = {
    "joined, then cut (first version; the filtered path)": (
        True,
        f"SELECT f.id FROM facts_fts JOIN facts f ON f.seq = facts_fts.rowid "
        f"WHERE facts_fts MATCH ? AND f.scope = ? ORDER BY {_BM25}, f.seq LIMIT 50",
    ),
    "cut in FTS5, scope token (a scope among many)": (
        True,
        f"SELECT rowid FROM facts_fts WHERE facts_fts MATCH ? AND ? IS NOT NULL "
        f"ORDER BY {_BM25} LIMIT 50",
    ),
    "cut in FTS5, no scope token (a one-scope store)": (
        False,
        f"SELECT rowid FROM facts_fts WHERE facts_fts MATCH ? AND ? IS NOT NULL "
        f"ORDER BY {_BM25} LIMIT 50",
    ),
    "match only, no scoring (count)": (
        True,
        "SELECT count(*) FROM facts_fts WHERE facts_fts MATCH ? AND ? IS NOT NULL",
    ),
}


def match_for(ref: ResourceRef, text: str, *, scoped: bool) -> str:
    """The MATCH expression engram builds for ``text`` (with or without the scope token)."""
    words = f"{{content context}} : ({fts_query(query.terms(text))})"
    return f'scope_token : "{scope_token(ref.key)}" AND {words}' if scoped else words


def text_variants(path: Path, ref: ResourceRef, queries: Sequence[str]) -> dict[str, Any]:
    """The full-text half's statement timed whole and with parts taken away, plus how
    many rows each query's MATCH hands to bm25 (every matched row is scored)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        out: dict[str, Any] = {"variants": {}}
        for name, (scoped, sql) in TEXT_VARIANTS.items():
            samples = [
                timed(fetch_all, conn, sql, (match_for(ref, t, scoped=scoped), ref.key))[1]
                for t in queries
            ]
            out["variants"][name] = latency_summary(samples)
        count_sql = TEXT_VARIANTS["match only, no scoring (count)"][1]
        counts = [
            int(fetch_all(conn, count_sql, (match_for(ref, t, scoped=True), ref.key))[0][0])
            for t in queries
        ]
        out["rows_matched"] = {"p50": float(np.median(counts)), "max": max(counts)}
        return out
    finally:
        conn.close()


def matvec(facts: int) -> dict[str, Any]:
    """The bare product the vector half computes, on a matrix of the same shape."""
    rng = np.random.default_rng(SEED)
    matrix = rng.standard_normal((facts, DIMENSION), dtype=np.float32)
    vector = rng.standard_normal(DIMENSION, dtype=np.float32)
    for _ in range(3):
        matrix @ vector
    samples = [timed(matrix.__matmul__, vector)[1] for _ in range(50)]
    return {
        "matrix_mb": round(matrix.nbytes / 1e6, 1),
        "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"),
        **latency_summary(samples),
    }


def run(facts: int, mode: RecallMode, count: int) -> dict[str, Any]:
    queries = sentences.questions(count + 1, SEED + 1)
    ref = ResourceRef("profiled")
    with tempfile.TemporaryDirectory(prefix="engram-profile-") as name:
        path = Path(name) / "profile.db"
        fill(path, ref, facts)
        with engram.open(path, embedder=engram.HashingEmbedder(DIMENSION)) as mem:
            hits = mem.recall(ref, queries[0], top_k=10, mode=mode)  # warm-up (loads vectors)
            phases = phase_timings(mem, ref, mode, queries[1:])
            report = profile(mem, ref, mode, queries[1:])
        return {
            "facts": facts,
            "mode": mode,
            "queries": count,
            "environment": environment(),
            "phases": phases,
            "row_fetch": row_fetch_plans(path, ref, [h.fact.id for h in hits]),
            "text_statement": text_variants(path, ref, queries[1:]),
            "numpy_matvec": matvec(facts),
            "cprofile": report,
        }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="where a recall's time goes")
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--mode", choices=["hybrid", "text", "vector"], default="hybrid")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--json", type=Path, dest="out")
    args = parser.parse_args(argv)
    result = run(args.facts, args.mode, args.queries)
    print(f"recall phases, {args.facts:,} facts, mode={args.mode} (ms per query):")
    rows = [[p, s["p50_ms"], s["p95_ms"], s["mean_ms"]] for p, s in result["phases"].items()]
    print(table(["phase", "p50", "p95", "mean"], rows))
    for name, fetch in result["row_fetch"].items():
        print(f"row fetch ({name}): p50 {fetch['p50_ms']} ms, plan {fetch['plan']}")
    text = result["text_statement"]
    print(f"full-text rows matched per query: {text['rows_matched']}")
    print(
        table(
            ["full-text statement", "p50", "p95"],
            [[name, t["p50_ms"], t["p95_ms"]] for name, t in text["variants"].items()],
        )
    )
    print(f"numpy matrix @ vector alone: {result['numpy_matvec']}")
    print(result["cprofile"])
    if args.out:
        write_json(args.out, result)
    summary = {k: v["p50_ms"] for k, v in result["phases"].items()}
    print(one_line({"benchmark": "profile_recall", "facts": args.facts, "p50_ms": summary}))


if __name__ == "__main__":
    main()
