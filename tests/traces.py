"""Where a word still is in a store, read raw: every file of a SQLite store's folder, or
every row of every table of a PostgreSQL database, as text. Erasure tests plant unique
random words, so a hit is never a coincidence."""

from __future__ import annotations

from pathlib import Path

import psycopg
from psycopg import sql

from stores import Target


def traces(target: Target, word: str) -> list[str]:
    """The files (SQLite) or tables (PostgreSQL) whose bytes hold ``word``, any case."""
    if isinstance(target, Path):
        needle = word.lower().encode()
        return sorted(
            p.name
            for p in target.parent.iterdir()
            if p.is_file() and needle in p.read_bytes().lower()
        )
    with psycopg.connect(str(target)) as conn:
        tables = [
            str(r[0])
            for r in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
            )
        ]
        hits = []
        for table in tables:
            query = sql.SQL("SELECT 1 FROM {} t WHERE strpos(lower(t::text), %s) > 0 LIMIT 1")
            if conn.execute(query.format(sql.Identifier(table)), (word.lower(),)).fetchone():
                hits.append(table)
        return hits
