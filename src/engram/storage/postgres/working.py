"""Working memory rows on PostgreSQL: one JSON value per (scope, key), versioned.

Keys use the "C" collation, so they order by their UTF-8 bytes as on SQLite.
"""

from __future__ import annotations

from typing import Any

import psycopg

from engram.core.models import WorkingEntry
from engram.storage.rows import WORKING_COLUMNS, to_entry
from engram.storage.rules import next_version

_LIVE = "(expires_at IS NULL OR expires_at > %s)"


def get(conn: psycopg.Connection[Any], scope: str, key: str, now_us: int) -> WorkingEntry | None:
    row = conn.execute(
        f"SELECT {WORKING_COLUMNS} FROM working WHERE scope = %s AND key = %s AND {_LIVE}",
        (scope, key, now_us),
    ).fetchone()
    return None if row is None else to_entry(row)


def put(
    conn: psycopg.Connection[Any],
    scope: str,
    key: str,
    value_json: str,
    expected_version: int | None,
    expires_at_us: int | None,
    now_us: int,
) -> WorkingEntry:
    """Sets the key; with ``expected_version``, only if the live version is that (0:
    unset or expired), else Conflict. The key's lock makes read-then-write atomic
    against every other process (a row lock alone cannot guard a key not yet there)."""
    # A hash collision between two keys only makes them wait for each other.
    conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"{scope}\x1f{key}",))
    row = conn.execute(
        "SELECT version, expires_at FROM working WHERE scope = %s AND key = %s", (scope, key)
    ).fetchone()
    version = next_version(key, row, expected_version, now_us)
    conn.execute(
        "INSERT INTO working (scope, key, value, version, updated_at, expires_at) "
        "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (scope, key) DO UPDATE SET "
        "value = excluded.value, version = excluded.version, "
        "updated_at = excluded.updated_at, expires_at = excluded.expires_at",
        (scope, key, value_json, version, now_us, expires_at_us),
    )
    return to_entry((key, value_json, version, now_us, expires_at_us))


def delete(conn: psycopg.Connection[Any], scope: str, key: str) -> bool:
    cursor = conn.execute("DELETE FROM working WHERE scope = %s AND key = %s", (scope, key))
    return cursor.rowcount > 0


def page(
    conn: psycopg.Connection[Any], scope: str, after: str | None, limit: int, now_us: int
) -> list[WorkingEntry]:
    """Live keys above ``after`` in ascending UTF-8 byte order."""
    rows = conn.execute(
        f"SELECT {WORKING_COLUMNS} FROM working WHERE scope = %s AND key > %s AND {_LIVE} "
        "ORDER BY key LIMIT %s",
        (scope, after or "", now_us, limit),
    ).fetchall()
    return [to_entry(r) for r in rows]
