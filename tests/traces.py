"""Where a word still is in a store, read raw: every file of a SQLite store's folder, or
every row of every table of a PostgreSQL database, as text, or (:func:`in_files`) every
file the database's relations are kept in. Erasure tests plant unique random words, so a
hit is never a coincidence."""

from __future__ import annotations

import random
import re
from pathlib import Path

import psycopg
from psycopg import sql

from stores import Target

# A planted word: "zq" and ten of these letters (no vowel and no s, so the stemmer leaves
# it whole), which no store's own bytes spell by chance.
LETTERS = "bcdfghjkmnpvwx"
_PLANTED = re.compile(f"zq[{LETTERS}]{{10}}".encode())


def planted_word(rng: random.Random) -> str:
    return "zq" + "".join(rng.choice(LETTERS) for _ in range(10))


def planted_in(data: bytes) -> set[str]:
    """Every planted word these bytes hold, read in one pass."""
    return {found.decode() for found in _PLANTED.findall(data)}


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


def on_disk(url: str) -> tuple[Path, Path]:
    """The PostgreSQL server's folder, and the folder of the database's relations in it,
    once their pages are on disk (a checkpoint)."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CHECKPOINT")
        row = conn.execute(
            "SELECT current_setting('data_directory'), oid FROM pg_database "
            "WHERE datname = current_database()"
        ).fetchone()
    assert row is not None
    data = Path(row[0])
    return data, data / "base" / str(row[1])


def in_files(url: str, words: list[str]) -> dict[str, list[str]]:
    """Of ``words``, those some file of the PostgreSQL database's relations holds (any
    case; the server's WAL apart), once its pages are on disk: each with those files."""
    found: dict[str, list[str]] = {}
    for path in sorted(on_disk(url)[1].iterdir()):
        if path.is_file():
            held = path.read_bytes().lower()
            for word in words:
                if word.lower().encode() in held:
                    found.setdefault(word, []).append(path.name)
    return found
