"""Looking inside a store on either backend, for tests that check what was written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

Target = str | Path


def is_postgres(target: Target) -> bool:
    return isinstance(target, str) and target.startswith("postgresql://")


def rows(target: Target, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Runs ``sql`` (with ``?`` placeholders) straight against the store's database."""
    if is_postgres(target):
        import psycopg

        with psycopg.connect(str(target)) as conn:
            conn.execute("SET enable_seqscan = off")  # tiny test tables: show index use
            cursor = conn.execute(sql.replace("?", "%s"), params)
            return list(cursor.fetchall()) if cursor.description else []
    import sqlite3

    conn = sqlite3.connect(target)
    try:
        return list(conn.execute(sql, params).fetchall())
    finally:
        conn.close()


def plan(target: Target, sql: str, params: tuple[Any, ...] = ()) -> str:
    """The query plan of ``sql`` as one line of text."""
    if is_postgres(target):
        rows(target, "ANALYZE")  # plans follow statistics, as they do in service
        return " ".join(str(r[0]) for r in rows(target, f"EXPLAIN {sql}", params))
    return " ".join(str(r[-1]) for r in rows(target, f"EXPLAIN QUERY PLAN {sql}", params))


def vectors(target: Target) -> list[np.ndarray[Any, np.dtype[np.float32]]]:
    """Every stored vector, in the order the facts were written."""
    if is_postgres(target):
        found = rows(target, "SELECT vector::text FROM fact_vectors ORDER BY fact")
        return [np.array(json.loads(r[0]), dtype=np.float32) for r in found]  # "[1,2,...]"
    found = rows(target, "SELECT vector FROM fact_vectors ORDER BY fact")
    return [np.frombuffer(r[0], dtype="<f4") for r in found]


def env(target: Target) -> dict[str, str]:
    """The environment variable that points engram (CLI, service) at the store."""
    if is_postgres(target):
        return {"ENGRAM_DB_URL": str(target)}
    return {"ENGRAM_DB_PATH": str(target)}
