#!/usr/bin/env python3
"""The full-text half of a large SQLite scope: from the in-memory index, and from FTS5.

One file holds one scope of 100k facts (the sentence pool of bench/backends.py, with the
real local model's cached vectors). Two stores open it: one ranks full text from its
in-memory index (``engram.storage.sqlite.index.textindex``), one always runs the FTS5
statement. Their queries alternate, in text and hybrid mode, and every answer must be
the same ids in the same order. Also measured: the index's cold load, hybrid recalls
each right after a forget (both halves revise themselves in place), and hybrid recalls
each right after a remember (the new fact is tokenized on the way).

    .venv/bin/python bench/text_index.py [--facts 100000] [--json OUT]
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import sentences
from backends import SEED, Lookup, one_big_scope
from harness import environment, latency_summary, one_line, one_scope_args, table, timed, write_json

import engram
from engram import Memory, ResourceRef
from engram.storage.sqlite.store import SQLiteStore

TOP_K = 10


def opened(path: Path, lookup: Lookup, *, indexed: bool) -> Memory:
    mem = engram.open(path, embedder=lookup)  # type: ignore[arg-type]
    store = mem._store  # a diagnostic reaches inside on purpose
    assert isinstance(store, SQLiteStore)
    if not indexed:
        store.texts.index_above = 1 << 62
    return mem


def alternate(
    stores: dict[str, Memory], ref: ResourceRef, questions: Sequence[str]
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for mode in ("text", "hybrid"):
        samples: dict[str, list[float]] = {name: [] for name in stores}
        for text in questions:
            answers = {}
            for name, mem in stores.items():
                hits, ms = timed(mem.recall, ref, text, top_k=TOP_K, mode=mode)
                samples[name].append(ms)
                answers[name] = [h.fact.id for h in hits]
            if answers["index"] != answers["statement"]:
                raise SystemExit(f"the answers differ for {text!r} ({mode})")
        out[mode] = {name: latency_summary(s) for name, s in samples.items()}
    return out


def run(facts: int, queries: int) -> dict[str, Any]:
    more = [f"{s} (later)" for s in sentences.unique_sentences(queries, SEED + 2)]
    ref = ResourceRef("big")
    with tempfile.TemporaryDirectory(prefix="engram-textindex-") as name:
        path, lookup, questions = one_big_scope(Path(name), facts, queries, more)
        stores = {"index": opened(path, lookup, indexed=True)}
        stores["statement"] = opened(path, lookup, indexed=False)
        cold = {
            n: timed(m.recall, ref, questions[0], top_k=TOP_K, mode="text")[1]
            for n, m in stores.items()
        }
        for mem in stores.values():
            mem.recall(ref, questions[0], top_k=TOP_K, mode="vector")  # vectors loaded
            store = mem._store  # postings load on the side: measured once they are held
            assert isinstance(store, SQLiteStore) and store.texts.settle()
        result = {"recall_ms": alternate(stores, ref, questions)}
        indexed = stores["index"]
        forgotten = []
        for text in questions[:20]:
            victim = indexed.facts(ref, limit=1).facts[0]
            indexed.forget(ref, victim.id)
            forgotten.append(timed(indexed.recall, ref, text, top_k=TOP_K, mode="hybrid")[1])
        written = []
        for text, new in zip(questions, more, strict=True):
            indexed.remember(ref, new)
            written.append(timed(indexed.recall, ref, text, top_k=TOP_K, mode="hybrid")[1])
        for mem in stores.values():
            mem.close()
    return {
        "facts": facts,
        "queries": queries,
        "environment": environment(),
        "cold_text_ms": {n: round(ms, 1) for n, ms in cold.items()},
        **result,
        "hybrid_after_a_forget_ms": latency_summary(forgotten),
        "hybrid_after_a_remember_ms": latency_summary(written),
        "answers_identical": True,
    }


def main(argv: Sequence[str] | None = None) -> None:
    args = one_scope_args(__doc__, argv)
    result = run(args.facts, args.queries)
    rows = []
    for mode, figures in result["recall_ms"].items():
        for name, s in figures.items():
            rows.append([mode, name, s["p50_ms"], s["p95_ms"]])
    print(f"recall, one scope of {args.facts:,} facts, top_k={TOP_K} (ms):")
    print(table(["mode", "full text from", "p50", "p95"], rows))
    print(f"cold text recall (ms): {result['cold_text_ms']}")
    print(f"hybrid recall right after a forget: {result['hybrid_after_a_forget_ms']}")
    print(f"hybrid recall right after a remember: {result['hybrid_after_a_remember_ms']}")
    out = args.out or Path(__file__).parent / "results" / "text_index.json"
    write_json(out, result)
    hybrid = result["recall_ms"]["hybrid"]
    summary = {
        "benchmark": "text_index",
        "facts": args.facts,
        "hybrid_p50_ms": {n: s["p50_ms"] for n, s in hybrid.items()},
    }
    print(one_line(summary))


if __name__ == "__main__":
    main()
