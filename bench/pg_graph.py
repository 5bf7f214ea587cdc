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
        [--widths 100 150 200 300] [--questions 100] [--rounds 2]
        [--precisions vector halfvec] [--builds 200 400] [--json OUT]

``halfvec`` graphs hold half-precision copies of the vectors (pgvector 0.7 and later);
``bit`` graphs their sign bits, a pool as wide as the search then ordered by exact cosine.

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

NEAREST = "SELECT id FROM {table} ORDER BY e{cast} <=> %s{cast} LIMIT 50"
# A graph of sign bits orders a wider pool by Hamming distance; the pool is then ordered
# by the stored vectors' exact cosines.
RERANKED = (
    "SELECT id FROM (SELECT id, e FROM {table} ORDER BY binary_quantize(e)::bit({dim}) "
    "<~> binary_quantize(%s::vector)::bit({dim}) LIMIT {pool}) AS p ORDER BY e <=> %s LIMIT 50"
)
# What a graph holds: the stored float32 vectors, half-precision copies (pgvector 0.7+),
# or sign bits (``bit``).
CASTS = {"vector": "", "halfvec": f"::halfvec({DIMENSION})", "bit": ""}
OPERATORS = {"vector": "vector_cosine_ops", "halfvec": "halfvec_cosine_ops", "bit": ""}


def vectors(facts: int, questions: int) -> tuple[np.ndarray, np.ndarray]:
    embedder = engram.HashingEmbedder(DIMENSION)
    corpus = embedder.embed(list(sentences.unique_sentences(facts, SEED)), "passage")
    asked = embedder.embed(list(sentences.questions(questions, SEED + 1)), "query")
    return np.asarray(corpus, np.float32), np.asarray(asked, np.float32)


def exact_top10(corpus: np.ndarray, asked: np.ndarray) -> list[set[int]]:
    unit = corpus / np.linalg.norm(corpus, axis=1, keepdims=True)
    return [set(np.argsort(-(unit @ q))[:10].tolist()) for q in asked]


def load(
    conn: psycopg.Connection[Any],
    name: str,
    corpus: np.ndarray,
    links: int,
    precision: str,
    exploring: int,
) -> float:
    """Fills table ``name`` and builds its graph of ``precision``, exploring ``exploring``
    candidates as each node is added; the build's seconds."""
    conn.execute(f"CREATE TABLE {name} (id int PRIMARY KEY, e vector({corpus.shape[1]}))")
    with conn.cursor().copy(f"COPY {name} (id, e) FROM STDIN WITH (FORMAT BINARY)") as copy:
        copy.set_types(["int4", "vector"])
        for i, row in enumerate(corpus):
            copy.write_row((i, row))
    started = time.perf_counter()
    indexed = f"(e{CASTS[precision]}) {OPERATORS[precision]}"
    if precision == "bit":
        indexed = f"(binary_quantize(e)::bit({corpus.shape[1]})) bit_hamming_ops"
    conn.execute(
        f"CREATE INDEX ON {name} USING hnsw ({indexed}) "
        f"WITH (m = {links}, ef_construction = {exploring})"
    )
    seconds = time.perf_counter() - started
    conn.execute(f"VACUUM ANALYZE {name}")
    return seconds


def run(
    facts: int,
    links: list[int],
    widths: list[int],
    questions: int,
    rounds: int,
    precisions: list[str],
    exploring: list[int],
) -> dict[str, Any]:
    corpus, asked = vectors(facts, questions)
    exact = exact_top10(corpus, asked)
    graphs = [(m, p, b) for m in links for p in precisions for b in exploring]
    cases = [(m, p, b, ef) for m, p, b in graphs for ef in widths]
    samples: dict[tuple[int, str, int, int], list[float]] = {case: [] for case in cases}
    found: dict[tuple[int, str, int, int], list[float]] = {case: [] for case in cases}
    builds: dict[tuple[int, str, int], float] = {}
    with (
        postgres_server.running_server() as admin,
        psycopg.connect(postgres_server.create_database(admin), autocommit=True) as conn,
    ):
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        register_vector(conn)
        version = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        pgvector = version.fetchone()[0]  # type: ignore[index]
        conn.execute("SET maintenance_work_mem = '1GB'")
        conn.execute("SET max_parallel_maintenance_workers = 0")
        for m, p, b in graphs:
            builds[(m, p, b)] = load(conn, f"graph_{m}_{p}_{b}", corpus, m, p, b)
            print(f"built {m} links a node, {p}, exploring {b}, in {builds[(m, p, b)]:.1f} s")

        def nearest(m: int, p: str, b: int, q: np.ndarray, ef: int) -> list[Any]:
            table = f"graph_{m}_{p}_{b}"
            if p == "bit":  # the pool is as wide as the search
                statement = RERANKED.format(table=table, dim=DIMENSION, pool=ef)
                return conn.execute(statement, (q, q)).fetchall()
            statement = NEAREST.format(table=table, cast=CASTS[p])
            return conn.execute(statement, (q,)).fetchall()

        for m, p, b, ef in cases:  # the pages each graph reads, warmed once
            conn.execute(f"SET hnsw.ef_search = {ef}")
            for q in asked[:20]:
                nearest(m, p, b, q, ef)
        for round_ in range(rounds):
            # Every question of one (graph, width), then the next: a question asked again
            # right away of the same graph finds its pages warm (2 to 3 times faster).
            for m, p, b, ef in cases if round_ % 2 == 0 else cases[::-1]:
                conn.execute(f"SET hnsw.ef_search = {ef}")
                for q, best in zip(asked, exact, strict=True):
                    started = time.perf_counter()
                    rows = nearest(m, p, b, q, ef)
                    samples[(m, p, b, ef)].append((time.perf_counter() - started) * 1000)
                    found[(m, p, b, ef)].append(len({r[0] for r in rows[:10]} & best) / 10)
    return {
        "benchmark": "pg_graph",
        "facts": facts,
        "questions": questions,
        "rounds": rounds,
        "pgvector": pgvector,
        "environment": environment(),
        "graphs": [
            {
                "links": m,
                "precision": p,
                "built_exploring": b,
                "build_s": round(builds[(m, p, b)], 1),
                "explored": ef,
                "recall_at_10": round(float(np.mean(found[(m, p, b, ef)])), 4),
                **latency_summary(samples[(m, p, b, ef)]),
            }
            for m, p, b, ef in cases
        ],
    }


def report(out: dict[str, Any]) -> str:
    heads = ["links", "precision", "built exploring", "build s", "explored", "recall@10"]
    heads += ["p50 ms", "p95 ms"]
    keys = ["links", "precision", "built_exploring", "build_s", "explored", "recall_at_10"]
    keys += ["p50_ms", "p95_ms"]
    return table(heads, [[g[k] for k in keys] for g in out["graphs"]])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--links", type=int, nargs="+", default=[16, 24, 32])
    parser.add_argument("--widths", type=int, nargs="+", default=[100, 150, 200, 300])
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--precisions", nargs="+", default=["vector"], choices=sorted(CASTS))
    parser.add_argument(
        "--builds", type=int, nargs="+", default=[HNSW_EF_CONSTRUCTION], help="ef_construction"
    )
    parser.add_argument("--json", default=str(RESULTS_DIR / "pg_graph.json"))
    args = parser.parse_args()
    out = run(
        args.facts,
        args.links,
        args.widths,
        args.questions,
        args.rounds,
        args.precisions,
        args.builds,
    )
    print(report(out))
    write_json(Path(args.json), out)
    print(one_line(out))


if __name__ == "__main__":
    main()
