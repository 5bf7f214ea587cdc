#!/usr/bin/env python3
"""One scope at scale: fill, size on disk, a cold process's first recall, p50/p95 per
mode, memory, and vector recall against exact search.

The scope is filled with the perf corpus (``sentences``) and ``HashingEmbedder(384)``,
as bench/perf.py does: the vectors have the local model's width and every store-side
cost is the same, while 1M facts fill in minutes, not hours. Recall times exclude the
query's embedding (timed and subtracted on every call).

Each measuring pass is a process of its own, started after the fill, so its first
query is what a service that just started sees: the cold first query (with the time
the process took to open the store), then one query per remaining question, then the
process's peak resident memory; then the same questions again (what a process that has
answered them once gives: its copies warm). Vector recall@10 compares the vector half's ten
against the exact ten by cosine, computed here with numpy over every stored vector
(read from a copy of the file, so the store under test is not warmed by it).

    .venv/bin/python bench/scale.py [--facts 100000] [--backend sqlite|postgres]
                                     [--queries 100] [--json OUT] [--store FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import sentences  # noqa: E402
from harness import environment, latency_summary, table, write_json  # noqa: E402
from perf import TimedEmbedder  # noqa: E402
from targets import Targets  # noqa: E402

import engram  # noqa: E402
from engram import ResourceRef  # noqa: E402

DIMENSION, TOP_K, SEED, BATCH = 384, 10, 20240501, 10_000
MODES = ("text", "vector", "hybrid")
REF = ResourceRef("scale")


def fill(target: str, facts: int) -> dict[str, Any]:
    corpus = sentences.unique_sentences(facts, SEED)
    started = time.perf_counter()
    with engram.open(target, embedder=engram.HashingEmbedder(DIMENSION)) as mem:
        for start in range(0, facts, BATCH):
            mem.remember_many(REF, list(corpus[start : start + BATCH]))
        held = mem.count(REF)
        seconds = time.perf_counter() - started
        indexed = build_index(mem)
        size = mem.health().storage
    assert held == facts, (held, facts)
    stored = size.bytes if size is not None else 0  # the database; the log apart
    total = stored + indexed["bytes"]
    return {
        "facts": facts,
        "seconds": round(seconds, 1),
        "facts_per_s": round(facts / seconds),
        "bytes": stored,
        "bytes_per_fact": round(stored / facts),
        "wal_bytes": None if size is None else size.wal_bytes,
        "vector_index": indexed,
        "bytes_per_fact_with_index": round(total / facts),
    }


def kept(target: str, facts: int) -> dict[str, Any]:
    """A store this benchmark filled before (``--store``), filled now if it is new: its
    size, and its index built where missing (the fill's time is that run's)."""
    with engram.open(target, embedder=engram.HashingEmbedder(DIMENSION)) as mem:
        held = mem.count(REF)
    if held == 0:
        return fill(target, facts)
    assert held == facts, f"{target} holds {held} facts, not {facts}"
    with engram.open(target, embedder=engram.HashingEmbedder(DIMENSION)) as mem:
        indexed = build_index(mem)
        size = mem.health().storage
    stored = size.bytes if size is not None else 0
    return {
        "facts": facts,
        "seconds": None,
        "facts_per_s": None,
        "bytes": stored,
        "bytes_per_fact": round(stored / facts),
        "wal_bytes": None if size is None else size.wal_bytes,
        "vector_index": indexed,
        "bytes_per_fact_with_index": round((stored + indexed["bytes"]) / facts),
    }


def build_index(mem: engram.Memory) -> dict[str, Any]:
    """On SQLite, builds the scope's approximate vector index now (a store builds it in
    the background once a search finds it missing): its time and its file's size."""
    approximate = getattr(getattr(mem._store, "index", None), "approximate", None)
    if approximate is None or not approximate.available:
        return {"seconds": None, "bytes": 0}
    started = time.perf_counter()
    built = any(approximate.directory.glob("*.usearch")) or approximate.build(REF.key)
    assert built
    seconds = time.perf_counter() - started
    held = sum(p.stat().st_size for p in approximate.directory.glob("*.usearch"))
    return {"seconds": round(seconds, 1), "bytes": held}


def measure(target: str, mode: str, queries: int) -> dict[str, Any]:
    """In this process (run as a child): open, the cold first query, then the rest."""
    asked = sentences.questions(queries, SEED + 1)
    embedder = TimedEmbedder(engram.HashingEmbedder(DIMENSION))
    started = time.perf_counter()
    mem = engram.open(target, embedder=embedder)
    opened = time.perf_counter() - started
    passes: list[list[float]] = []
    found: list[list[str]] = []
    for _ in range(2):
        times = []
        found = []
        for question in asked:
            before, at = embedder.spent_ms, time.perf_counter()
            hits = mem.recall(REF, question, top_k=TOP_K, mode=mode)  # type: ignore[arg-type]
            times.append((time.perf_counter() - at) * 1000 - (embedder.spent_ms - before))
            found.append([h.fact.id for h in hits])
        passes.append(times)
    mem.close()
    rss = peak_rss_kib()
    return {
        "mode": mode,
        "open_ms": round(opened * 1000, 1),
        "first_ms": round(passes[0][0], 1),
        "warm": latency_summary(passes[0][1:]),
        "again": latency_summary(passes[1]),
        "peak_rss_mib": round(rss / 1024, 1),
        "hits": found,
    }


def peak_rss_kib() -> int:
    """This process's peak resident memory. Not getrusage's ru_maxrss: Linux carries the
    parent's peak into a child started by fork and exec, so every child reported the
    filling parent's peak (312 MiB in all three modes)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB; elsewhere


def exact_vector_hits(target: str, queries: int) -> list[list[str]]:
    """The exact ten by cosine for each question, over every stored vector."""
    import numpy as np

    asked = sentences.questions(queries, SEED + 1)
    ids: list[str] = []
    rows: list[Any] = []
    with engram.open(target, embedder=engram.HashingEmbedder(DIMENSION)) as mem:
        before: str | None = None
        while True:
            page = mem.facts(REF, limit=1000, before=before)
            held = mem.vectors(REF, [f.id for f in page.facts])
            ids += list(held)
            rows += [np.asarray(v, dtype=np.float32).reshape(-1) for v in held.values()]
            if page.next_before is None:
                break
            before = page.next_before
        query = np.asarray(engram.HashingEmbedder(DIMENSION).embed(asked, "query"))
    matrix = np.stack(rows)
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    query /= np.maximum(np.linalg.norm(query, axis=1, keepdims=True), 1e-12)
    scores = query @ matrix.T
    best = np.argsort(-scores, axis=1)[:, :TOP_K]
    return [[ids[i] for i in row] for row in best]


def child(target: str, mode: str, queries: int) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--measure", target, "--mode", mode, "--queries", str(queries)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(HERE)},
    )
    return dict(json.loads(done.stdout.splitlines()[-1]))


def run(backend: str, facts: int, queries: int, store: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "benchmark": "scale",
        "backend": backend,
        "environment": environment(),
    }
    with Targets(backend) as targets:
        target = store or targets.fresh()
        out["fill"] = kept(target, facts) if store else fill(target, facts)
        print(f"fill: {out['fill']}", flush=True)
        measured = {mode: child(target, mode, queries) for mode in MODES}
        exact = exact_vector_hits(target, queries)
    vector_hits = measured["vector"].pop("hits")
    for mode in ("text", "hybrid"):
        measured[mode].pop("hits")
    overlap = [len(set(a) & set(b)) / TOP_K for a, b in zip(vector_hits, exact, strict=True)]
    out["recall"] = measured
    out["vector_recall_at_10"] = round(sum(overlap) / len(overlap), 4)
    slower = max(measured["text"]["warm"]["p50_ms"], measured["vector"]["warm"]["p50_ms"])
    out["hybrid_over_slower_half"] = round(measured["hybrid"]["warm"]["p50_ms"] / slower, 2)
    return out


def report(out: dict[str, Any]) -> str:
    rows = [
        [
            mode,
            m["open_ms"],
            m["first_ms"],
            m["warm"]["p50_ms"],
            m["warm"]["p95_ms"],
            m["again"]["p50_ms"],
            m["again"]["p95_ms"],
            m["peak_rss_mib"],
        ]
        for mode, m in out["recall"].items()
    ]
    fill_ = out["fill"]
    index = fill_["vector_index"]
    filled = (
        "filled before (--store)"
        if fill_["seconds"] is None
        else f"filled in {fill_['seconds']} s ({fill_['facts_per_s']:,}/s)"
    )
    head = (
        f"{out['backend']}: {fill_['facts']:,} facts {filled}, "
        f"{fill_['bytes']:,} bytes ({fill_['bytes_per_fact']} a fact)"
        f"; vector index built in {index['seconds']} s, {index['bytes']:,} bytes "
        f"({fill_['bytes_per_fact_with_index']} a fact with it)"
    )
    tail = (
        f"vector recall@10 against exact: {out['vector_recall_at_10']}; "
        f"hybrid p50 / slower half's p50: {out['hybrid_over_slower_half']}"
    )
    heads = ["mode", "open ms", "first ms", "p50 ms", "p95 ms", "again p50", "again p95"]
    body = table([*heads, "peak RSS MiB"], rows)
    return f"{head}\n{body}\n{tail}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--store", help="a SQLite file to keep: filled on the first run, measured after"
    )
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--mode", choices=MODES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.mode, args.queries)))
        return
    out = run(args.backend, args.facts, args.queries, args.store)
    if args.json:  # first: a run at 1M is half an hour
        write_json(args.json, out)
    print(report(out))


if __name__ == "__main__":
    main()
