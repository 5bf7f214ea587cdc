#!/usr/bin/env python3
"""PostgreSQL's vector graph alone: links a node (``m``) against search width.

What a hybrid recall's vector half costs on PostgreSQL is mostly pgvector's graph search
at the width recall needs (BENCHMARKS.md, "PostgreSQL: a scope's own postings"). This
measures that search apart from engram: ``bench/scale.py``'s corpus hashed to 384
dimensions, one table, one HNSW index a graph (built exploring 200, one process, as
``engram.storage.postgres.vectors`` builds), each question's ``LIMIT 50`` nearest
through it; recall@10 against exact cosine, and the search's p50 / p95. Every question
is asked of one (graph, width), then of the next, the order reversed every other round.

    .venv/bin/python bench/pg_graph.py [--facts 100000] [--links 16 24 32]
        [--widths 100 150 200 300] [--questions 100] [--rounds 2] [--json OUT]

The last line of stdout is the summary as one line of JSON.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import sentences
from harness import RESULTS_DIR, environment, latency_summary, one_line, table, write_json
from pgvector.psycopg import register_vector
from scale import DIMENSION, SEED
from targets import postgres_server

import engram
from engram.storage.postgres.vectors import HNSW_EF_CONSTRUCTION

NEAREST = "SELECT id FROM {table} ORDER BY e <=> %s LIMIT 50"


def vectors(facts: int, questions: int) -> tuple[np.ndarray, np.ndarray]:
    embedder = engram.HashingEmbedder(DIMENSION)
    corpus = embedder.embed(list(sentences.unique_sentences(facts, SEED)), "passage")
    asked = embedder.embed(list(sentences.questions(questions, SEED + 1)), "query")
    return np.asarray(corpus, np.float32), np.asarray(asked, np.float32)


def exact_top10(corpus: np.ndarray, asked: np.ndarray) -> list[set[int]]:
    unit = corpus / np.linalg.norm(corpus, axis=1, keepdims=True)
    return [set(np.argsort(-(unit @ q))[:10].tolist()) for q in asked]


def load(conn: psycopg.Connection[Any], name: str, corpus: np.ndarray, links: int) -> float:
    """Fills table ``name`` and builds its graph; the build's seconds."""
    conn.execute(f"CREATE TABLE {name} (id int PRIMARY KEY, e vector({corpus.shape[1]}))")
    with conn.cursor().copy(f"COPY {name} (id, e) FROM STDIN WITH (FORMAT BINARY)") as copy:
        copy.set_types(["int4", "vector"])
        for i, row in enumerate(corpus):
            copy.write_row((i, row))
    started = time.perf_counter()
    conn.execute(
        f"CREATE INDEX ON {name} USING hnsw (e vector_cosine_ops) "
        f"WITH (m = {links}, ef_construction = {HNSW_EF_CONSTRUCTION})"
    )
    seconds = time.perf_counter() - started
    conn.execute(f"VACUUM ANALYZE {name}")
    return seconds


def run(
    facts: int, links: list[int], widths: list[int], questions: int, rounds: int
) -> dict[str, Any]:
    corpus, asked = vectors(facts, questions)
    exact = exact_top10(corpus, asked)
    cases = [(m, ef) for m in links for ef in widths]
    samples: dict[tuple[int, int], list[float]] = {case: [] for case in cases}
    found: dict[tuple[int, int], list[float]] = {case: [] for case in cases}
    builds: dict[int, float] = {}
    with (
        postgres_server.running_server() as admin,
        psycopg.connect(postgres_server.create_database(admin), autocommit=True) as conn,
    ):
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        register_vector(conn)
        conn.execute("SET maintenance_work_mem = '1GB'")
        conn.execute("SET max_parallel_maintenance_workers = 0")
        for m in links:
            builds[m] = load(conn, f"graph_{m}", corpus, m)
            print(f"built {m} links a node in {builds[m]:.1f} s", flush=True)
        for m, ef in cases:  # the pages each graph reads, warmed once
            conn.execute(f"SET hnsw.ef_search = {ef}")
            for q in asked[:20]:
                conn.execute(NEAREST.format(table=f"graph_{m}"), (q,)).fetchall()
        for round_ in range(rounds):
            # Every question of one (graph, width), then the next: a question asked again
            # right away of the same graph finds its pages warm (2 to 3 times faster).
            for m, ef in cases if round_ % 2 == 0 else cases[::-1]:
                conn.execute(f"SET hnsw.ef_search = {ef}")
                for q, best in zip(asked, exact, strict=True):
                    started = time.perf_counter()
                    rows = conn.execute(NEAREST.format(table=f"graph_{m}"), (q,)).fetchall()
                    samples[(m, ef)].append((time.perf_counter() - started) * 1000)
                    found[(m, ef)].append(len({r[0] for r in rows[:10]} & best) / 10)
    return {
        "benchmark": "pg_graph",
        "facts": facts,
        "questions": questions,
        "rounds": rounds,
        "built_exploring": HNSW_EF_CONSTRUCTION,
        "environment": environment(),
        "build_s": {str(m): round(s, 1) for m, s in builds.items()},
        "graphs": [
            {
                "links": m,
                "explored": ef,
                "recall_at_10": round(float(np.mean(found[(m, ef)])), 4),
                **latency_summary(samples[(m, ef)]),
            }
            for m, ef in cases
        ],
    }


def report(out: dict[str, Any]) -> str:
    rows = [
        [
            g["links"],
            out["build_s"][str(g["links"])],
            g["explored"],
            g["recall_at_10"],
            g["p50_ms"],
            g["p95_ms"],
        ]
        for g in out["graphs"]
    ]
    return table(["links", "build s", "explored", "recall@10", "p50 ms", "p95 ms"], rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--links", type=int, nargs="+", default=[16, 24, 32])
    parser.add_argument("--widths", type=int, nargs="+", default=[100, 150, 200, 300])
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", default=str(RESULTS_DIR / "pg_graph.json"))
    args = parser.parse_args()
    out = run(args.facts, args.links, args.widths, args.questions, args.rounds)
    print(report(out))
    write_json(Path(args.json), out)
    print(one_line(out))


if __name__ == "__main__":
    main()
