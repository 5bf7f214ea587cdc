#!/usr/bin/env python3
"""engram performance on this machine: writes, recall latency, list pages, forks.

- remember throughput with the real local model, one by one and in batches;
- recall latency p50/p95 in one scope of 1k, 10k and 100k facts for each mode. These
  scopes are filled with ``engram.HashingEmbedder(384)`` so 100k facts take seconds, not
  minutes: the vectors have the local model's 384 dimensions, and storage, full-text
  search, vector search and fusion do identical work. The query's embedding is timed on
  every call and reported apart (recall minus it is the store's own cost); the local
  model's single-query embedding latency is measured separately, to add back;
- list-page latency at the largest scope, first page and a page deep in (via cursor);
- fork time of a 10k-fact scope.

    .venv/bin/python bench/perf.py [--json OUT] [--quick]
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ParamSpec

import sentences
from harness import environment, latency_summary, one_line, table, timed, write_json

import engram
from engram import Memory, Note, ResourceRef
from engram.core.models import RecallMode
from engram.core.ports import Embedder, EmbedKind, Vectors

DIMENSION = 384
MODES: tuple[RecallMode, ...] = ("hybrid", "text", "vector")
TOP_K = 10
SEED = 20240501
P = ParamSpec("P")


@dataclass(frozen=True, slots=True)
class Plan:
    single_n: int = 500
    batch_n: int = 2000
    batch_size: int = 256
    sizes: tuple[int, ...] = (1_000, 10_000, 100_000)
    queries: int = 200
    fill_batch: int = 5_000
    fork_size: int = 10_000
    forks: int = 3
    deep_page: int = 500  # the page reached by following cursors
    page_repeats: int = 200


QUICK = Plan(
    single_n=40,
    batch_n=512,
    sizes=(1_000, 5_000),
    queries=30,
    fork_size=1_000,
    forks=2,
    deep_page=20,
    page_repeats=30,
)


class TimedEmbedder:
    """Delegates to an embedder and adds up the time spent in it."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.spent_ms = 0.0

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> Vectors:
        vectors, ms = timed(self.inner.embed, texts, kind)
        self.spent_ms += ms
        return vectors


def local_embedder() -> Embedder:
    from engram.embedders.local import LocalEmbedder

    return LocalEmbedder()


# -- embedding a query ----------------------------------------------------------------
def bench_query_embedding(embedder: Embedder, queries: Sequence[str]) -> dict[str, Any]:
    """Single-query embed latency: the first call apart, then one call per query."""
    _, first = timed(embedder.embed, [queries[0]], "query")
    samples = [timed(embedder.embed, [q], "query")[1] for q in queries[1:]]
    return {"model": embedder.model, "first_ms": round(first, 3), **latency_summary(samples)}


# -- writing with the local model -------------------------------------------------------
def bench_remember_single(tmp: Path, texts: Sequence[str]) -> dict[str, Any]:
    embedder = TimedEmbedder(local_embedder())
    embedder.embed(["warm-up"], "passage")
    embedder.spent_ms = 0.0
    with engram.open(tmp / "single.db", embedder=embedder) as mem:
        ref = ResourceRef("single")
        samples = [timed(mem.remember, ref, t)[1] for t in texts]
    total_s = sum(samples) / 1000
    return {
        "facts": len(texts),
        "seconds": round(total_s, 3),
        "facts_per_s": round(len(texts) / total_s, 1),
        "embedding_share": round(embedder.spent_ms / sum(samples), 3),
        "per_call": latency_summary(samples),
    }


def bench_remember_batched(tmp: Path, texts: Sequence[str], batch: int) -> dict[str, Any]:
    embedder = TimedEmbedder(local_embedder())
    embedder.embed(["warm-up"], "passage")
    embedder.spent_ms = 0.0
    with engram.open(tmp / "batched.db", embedder=embedder) as mem:
        ref = ResourceRef("batched")
        samples = [
            timed(mem.remember_many, ref, texts[i : i + batch])[1]
            for i in range(0, len(texts), batch)
        ]
    total_s = sum(samples) / 1000
    return {
        "facts": len(texts),
        "batch": batch,
        "seconds": round(total_s, 3),
        "facts_per_s": round(len(texts) / total_s, 1),
        "embedding_share": round(embedder.spent_ms / sum(samples), 3),
        "per_batch": latency_summary(samples),
    }


# -- filling large scopes -----------------------------------------------------------------
def open_hashing(path: Path) -> tuple[Memory, TimedEmbedder]:
    embedder = TimedEmbedder(engram.HashingEmbedder(DIMENSION))
    return engram.open(path, embedder=embedder), embedder


def fill(path: Path, ref: ResourceRef, texts: Sequence[str], batch: int) -> dict[str, Any]:
    """Fills one scope with ``texts`` (HashingEmbedder), in batches of ``batch``."""
    mem, embedder = open_hashing(path)
    with mem:
        for start in range(0, len(texts), batch):
            notes: list[Note | str] = list(texts[start : start + batch])
            mem.remember_many(ref, notes)
        count = mem.count(ref)
    return {
        "facts": count,
        "file_bytes": file_bytes(path),
        "embed_s": round(embedder.spent_ms / 1000, 2),
    }


def file_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


# -- recall ----------------------------------------------------------------------------
def bench_recall(
    path: Path, ref: ResourceRef, mode: RecallMode, queries: Sequence[str]
) -> dict[str, Any]:
    """A fresh Memory on the file: the first query is cold (for hybrid and vector it loads
    the scope's vectors into memory), then one recall per remaining query."""
    mem, embedder = open_hashing(path)
    with mem:
        first = recall_once(mem, embedder, ref, mode, queries[0])
        samples = [recall_once(mem, embedder, ref, mode, q) for q in queries[1:]]
    totals = [s[0] for s in samples]
    embeds = [s[1] for s in samples]
    store_only = [total - embed for total, embed, _ in samples]
    return {
        "mode": mode,
        "first_ms": round(first[0], 3),
        "total": latency_summary(totals),
        "excluding_query_embedding": latency_summary(store_only),
        "query_embedding": latency_summary(embeds),
        "hits_p50": sorted(s[2] for s in samples)[len(samples) // 2],
    }


def recall_once(
    mem: Memory, embedder: TimedEmbedder, ref: ResourceRef, mode: RecallMode, query: str
) -> tuple[float, float, int]:
    before = embedder.spent_ms
    hits, ms = timed(mem.recall, ref, query, top_k=TOP_K, mode=mode)
    return ms, embedder.spent_ms - before, len(hits)


# -- list pages and forks ---------------------------------------------------------------
def bench_pages(path: Path, ref: ResourceRef, deep_page: int, repeats: int) -> dict[str, Any]:
    mem, _ = open_hashing(path)
    with mem:
        first = [timed(mem.facts, ref, limit=100)[1] for _ in range(repeats)]
        cursor, walk_ms = timed(follow_cursors, mem, ref, deep_page)
        deep = [timed(mem.facts, ref, limit=100, before=cursor)[1] for _ in range(repeats)]
    return {
        "page_size": 100,
        "first_page": latency_summary(first),
        "deep_page_index": deep_page,
        "deep_page_offset": deep_page * 100,
        "deep_page": latency_summary(deep),
        "cursor_walk_ms_per_page": round(walk_ms / deep_page, 3),
    }


def follow_cursors(mem: Memory, ref: ResourceRef, pages: int) -> str | None:
    cursor: str | None = None
    for _ in range(pages):
        cursor = mem.facts(ref, limit=100, before=cursor).next_before
        if cursor is None:
            raise RuntimeError(f"the scope has fewer than {pages} pages of 100")
    return cursor


def bench_fork(path: Path, ref: ResourceRef, forks: int) -> dict[str, Any]:
    mem, _ = open_hashing(path)
    runs = []
    with mem:
        for n in range(forks):
            result, ms = timed(mem.fork, ref, f"{ref.resource_id}-fork-{n}")
            runs.append({"ms": round(ms, 1), "facts_copied": result.facts_copied})
    return {
        "runs": runs,
        "facts_per_s": round(
            sum(r["facts_copied"] for r in runs) / (sum(r["ms"] for r in runs) / 1000), 1
        ),
    }


# -- the whole run ---------------------------------------------------------------------
def step(
    label: str, work: Callable[P, dict[str, Any]], *args: P.args, **kwargs: P.kwargs
) -> dict[str, Any]:
    """One measured section: progress on stderr, its wall time kept in the result."""
    print(f"... {label}", file=sys.stderr, flush=True)
    gc.collect()
    result, ms = timed(work, *args, **kwargs)
    result["wall_s"] = round(ms / 1000, 2)
    return result


def run(plan: Plan) -> dict[str, Any]:
    queries = sentences.questions(plan.queries + 1, SEED + 1)
    corpus = sentences.unique_sentences(max(*plan.sizes, plan.single_n + plan.batch_n), SEED)
    out: dict[str, Any] = {
        "benchmark": "perf",
        "plan": asdict(plan),
        "environment": environment(),
        "corpus": {
            "vocabulary_words": sentences.vocabulary_size(),
            "example_facts": corpus[:3],
            "example_queries": queries[:3],
        },
    }
    with tempfile.TemporaryDirectory(prefix="engram-perf-") as name:
        tmp = Path(name)
        out["query_embedding"] = {
            "local": step(
                "local query embedding", bench_query_embedding, local_embedder(), queries
            ),
            "hashing": step(
                "hashing query embedding",
                bench_query_embedding,
                engram.HashingEmbedder(DIMENSION),
                queries,
            ),
        }
        out["remember"] = {
            "single": step(
                "remember one by one", bench_remember_single, tmp, corpus[: plan.single_n]
            ),
            "batched": step(
                "remember_many",
                bench_remember_batched,
                tmp,
                corpus[plan.single_n : plan.single_n + plan.batch_n],
                plan.batch_size,
            ),
        }
        out["scopes"] = [scope_section(tmp, plan, size, corpus, queries) for size in plan.sizes]
        biggest = max(plan.sizes)
        out["pages"] = step(
            "list pages",
            bench_pages,
            scope_path(tmp, biggest),
            scope_ref(biggest),
            plan.deep_page,
            plan.page_repeats,
        )
        out["pages"]["scope_facts"] = biggest
        out["fork"] = step("fork", fork_section, tmp, plan, corpus)
    return out


def scope_path(tmp: Path, size: int) -> Path:
    return tmp / f"scope-{size}.db"


def scope_ref(size: int) -> ResourceRef:
    return ResourceRef(f"scope-{size}")


def scope_section(
    tmp: Path, plan: Plan, size: int, corpus: Sequence[str], queries: Sequence[str]
) -> dict[str, Any]:
    path, ref = scope_path(tmp, size), scope_ref(size)
    filled = step(f"fill {size}", fill, path, ref, corpus[:size], plan.fill_batch)
    recalls = {
        mode: step(f"recall {size} {mode}", bench_recall, path, ref, mode, queries)
        for mode in MODES
    }
    return {"facts": size, "fill": filled, "recall": recalls}


def fork_section(tmp: Path, plan: Plan, corpus: Sequence[str]) -> dict[str, Any]:
    path, ref = scope_path(tmp, plan.fork_size), scope_ref(plan.fork_size)
    if not path.exists():
        fill(path, ref, corpus[: plan.fork_size], plan.fill_batch)
    return {"scope_facts": plan.fork_size, **bench_fork(path, ref, plan.forks)}


# -- reporting --------------------------------------------------------------------------
def report(result: dict[str, Any]) -> str:
    env = result["environment"]
    lines = [
        f"engram perf: {env['cpu_count']} CPUs, Python {env['python']}, "
        f"SQLite {env['sqlite']}, numpy {env['numpy']}, onnxruntime {env['onnxruntime']}",
        "",
        "remember with the local model (all-MiniLM-L6-v2 int8):",
    ]
    rem = result["remember"]
    lines.append(
        table(
            ["call", "facts", "facts/s", "p50 ms/call", "p95 ms/call", "embedding share"],
            [
                [
                    "remember (1 by 1)",
                    rem["single"]["facts"],
                    rem["single"]["facts_per_s"],
                    rem["single"]["per_call"]["p50_ms"],
                    rem["single"]["per_call"]["p95_ms"],
                    rem["single"]["embedding_share"],
                ],
                [
                    f"remember_many ({rem['batched']['batch']})",
                    rem["batched"]["facts"],
                    rem["batched"]["facts_per_s"],
                    rem["batched"]["per_batch"]["p50_ms"],
                    rem["batched"]["per_batch"]["p95_ms"],
                    rem["batched"]["embedding_share"],
                ],
            ],
        )
    )
    emb = result["query_embedding"]
    lines += [
        "",
        "one query's embedding (add to recall below for the local model):",
        table(
            ["embedder", "first ms", "p50 ms", "p95 ms"],
            [[name, e["first_ms"], e["p50_ms"], e["p95_ms"]] for name, e in emb.items()],
        ),
    ]
    lines += [
        "",
        "recall top_k=10, one scope, HashingEmbedder(384) stores; ms excluding the "
        "query's embedding (total in brackets):",
        recall_table(result["scopes"]),
    ]
    pages = result["pages"]
    lines += [
        "",
        f"facts(limit=100) at {pages['scope_facts']} facts: first page p50 "
        f"{pages['first_page']['p50_ms']} ms / p95 {pages['first_page']['p95_ms']} ms; "
        f"page {pages['deep_page_index']} (offset {pages['deep_page_offset']}) p50 "
        f"{pages['deep_page']['p50_ms']} ms / p95 {pages['deep_page']['p95_ms']} ms",
    ]
    fork = result["fork"]
    lines.append(
        f"fork of {fork['scope_facts']} facts: "
        + ", ".join(f"{r['ms']} ms" for r in fork["runs"])
        + f" ({fork['facts_per_s']} facts/s)"
    )
    return "\n".join(lines)


def recall_table(scopes: Sequence[dict[str, Any]]) -> str:
    rows = []
    for scope in scopes:
        for mode, r in scope["recall"].items():
            own, total = r["excluding_query_embedding"], r["total"]
            rows.append(
                [
                    f"{scope['facts']:,}",
                    mode,
                    r["first_ms"],
                    f"{own['p50_ms']:.3f} ({total['p50_ms']:.3f})",
                    f"{own['p95_ms']:.3f} ({total['p95_ms']:.3f})",
                ]
            )
    return table(["facts", "mode", "first (cold) ms", "p50 ms", "p95 ms"], rows)


def summary(result: dict[str, Any]) -> dict[str, Any]:
    recall = {
        f"{s['facts']}": {
            m: r["excluding_query_embedding"]["p50_ms"] for m, r in s["recall"].items()
        }
        for s in result["scopes"]
    }
    return {
        "benchmark": "perf",
        "remember_facts_per_s": result["remember"]["single"]["facts_per_s"],
        "remember_many_facts_per_s": result["remember"]["batched"]["facts_per_s"],
        "local_query_embed_p50_ms": result["query_embedding"]["local"]["p50_ms"],
        "recall_p50_ms_excluding_embedding": recall,
        "first_page_p50_ms": result["pages"]["first_page"]["p50_ms"],
        "deep_page_p50_ms": result["pages"]["deep_page"]["p50_ms"],
        "fork_ms": [r["ms"] for r in result["fork"]["runs"]],
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="engram performance on this machine")
    parser.add_argument("--json", type=Path, dest="out", help="write the full result here")
    parser.add_argument("--quick", action="store_true", help="a small smoke run")
    args = parser.parse_args(argv)
    result = run(QUICK if args.quick else Plan())
    result["environment"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    print(report(result))
    if args.out:
        write_json(args.out, result)
    print(one_line(summary(result)))


if __name__ == "__main__":
    main()
