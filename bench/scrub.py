#!/usr/bin/env python3
"""What ``engram scrub`` costs: a scope filled with the perf corpus, some of its facts
forgotten for good, then the scrub, while a reader asks full-text questions of the same
store on a connection of its own: how long the scrub took, how long a question waited
meanwhile (each table is held from reads while it is written anew), and the store's
bytes before and after (the rewrite also compacts).

    .venv/bin/python bench/scrub.py [--facts 100000] [--backend postgres|sqlite]
                                    [--forget 100] [--vectors] [--json OUT]

The scope's vector graph is not built (PostgreSQL's scrub leaves its table alone), but
with ``--vectors``: then it is, and waited for, and the scrub writes the vectors' table
anew too (``engram scrub --vectors``), which builds the graph again; the reader asks
vector questions then.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import sentences  # noqa: E402
from harness import environment, latency_summary, write_json  # noqa: E402
from scale import BATCH, DIMENSION, REF, SEED, build_index  # noqa: E402
from targets import Targets  # noqa: E402

import engram  # noqa: E402
from engram.backends import backend_for  # noqa: E402

NO_GRAPH = 1 << 40  # a threshold no scope reaches


def run(target: str, facts: int, forget: int, vectors: bool) -> dict[str, Any]:
    corpus = sentences.unique_sentences(facts, SEED)
    questions = sentences.questions(50, SEED + 1)
    mode = "vector" if vectors else "text"
    above = {} if vectors else {"vector_index_above": NO_GRAPH}
    with engram.open(target, embedder=engram.HashingEmbedder(DIMENSION), **above) as mem:
        started = time.perf_counter()
        made = []
        for start in range(0, facts, BATCH):
            made += mem.remember_many(REF, list(corpus[start : start + BATCH]))
        filled = time.perf_counter() - started
        graph = build_index(mem) if vectors else None
        step = max(len(made) // forget, 1)
        for fact in made[::step][:forget]:
            mem.forget(REF, fact.id, hard=True)
        before = _bytes(mem)
        for question in questions:  # warm
            mem.recall(REF, question, mode=mode)
        waits: list[float] = []
        done = threading.Event()

        def ask() -> None:
            n = 0
            while not done.is_set():
                t = time.perf_counter()
                mem.recall(REF, questions[n % len(questions)], mode=mode)
                waits.append((time.perf_counter() - t) * 1000)
                n += 1

        reader = threading.Thread(target=ask)
        reader.start()
        try:
            scrubbed = backend_for(target).scrub(target, vectors=vectors)
        finally:
            done.set()
            reader.join()
        after = _bytes(mem)
    return {
        "facts": facts,
        "fill_seconds": round(filled, 1),
        "forgotten_for_good": forget,
        "scrub_seconds": round(scrubbed.seconds, 2),
        "was_due": scrubbed.was_due,
        "tables_rewritten": len(scrubbed.rewritten),
        "vectors": vectors,
        "graph_before": graph,
        "left": list(scrubbed.left),
        "recall_meanwhile": {"mode": mode, **latency_summary(waits)},
        "bytes_before": before,
        "bytes_after": after,
    }


def _bytes(mem: engram.Memory) -> int:
    storage = mem.health().storage
    assert storage is not None
    return storage.bytes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--forget", type=int, default=100)
    parser.add_argument("--backend", choices=("postgres", "sqlite"), default="postgres")
    parser.add_argument("--vectors", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with Targets(args.backend) as targets:
        out = run(targets.fresh(), args.facts, args.forget, args.vectors)
    out = {"backend": args.backend, "at": datetime.now(UTC).isoformat(), **out}
    out["environment"] = environment()
    meanwhile = out["recall_meanwhile"]
    print(
        f"{args.backend}, {out['facts']} facts (filled in {out['fill_seconds']} s), "
        f"{out['forgotten_for_good']} forgotten for good: scrub {out['scrub_seconds']} s over "
        f"{out['tables_rewritten']} tables; {meanwhile['mode']} recall meanwhile p50 "
        f"{meanwhile.get('p50_ms')} ms, longest {meanwhile.get('max_ms')} ms "
        f"({meanwhile.get('n')} asked); bytes {out['bytes_before']} -> {out['bytes_after']}"
    )
    for left in out["left"]:
        print(f"left: {left}")
    name = f"scrub-{args.backend}-{out['facts'] // 1000}k{'-vectors' if args.vectors else ''}.json"
    write_json(args.json or HERE / "results" / name, out)


if __name__ == "__main__":
    main()
