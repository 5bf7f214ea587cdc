"""Working memory rows: one JSON value per (scope, key), with a version and an expiry."""

from __future__ import annotations

from engram.core.models import WorkingEntry
from engram.storage.rows import WORKING_COLUMNS, to_entry
from engram.storage.rules import next_version
from engram.storage.sqlite.driver import sqlite3

_LIVE = "(expires_at IS NULL OR expires_at > ?)"


def get(conn: sqlite3.Connection, scope: str, key: str, now_us: int) -> WorkingEntry | None:
    row = conn.execute(
        f"SELECT {WORKING_COLUMNS} FROM working WHERE scope = ? AND key = ? AND {_LIVE}",
        (scope, key, now_us),
    ).fetchone()
    return None if row is None else to_entry(row)


def put(
    conn: sqlite3.Connection,
    scope: str,
    key: str,
    value_json: str,
    expected_version: int | None,
    expires_at_us: int | None,
    now_us: int,
) -> WorkingEntry:
    """Sets the key; with ``expected_version``, only if the live version is that (0:
    unset or expired), else Conflict. Versions keep growing across expiry."""
    row = conn.execute(
        "SELECT version, expires_at FROM working WHERE scope = ? AND key = ?", (scope, key)
    ).fetchone()
    version = next_version(key, row, expected_version, now_us)
    conn.execute(
        "INSERT INTO working (scope, key, value, version, updated_at, expires_at) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (scope, key) DO UPDATE SET "
        "value = excluded.value, version = excluded.version, "
        "updated_at = excluded.updated_at, expires_at = excluded.expires_at",
        (scope, key, value_json, version, now_us, expires_at_us),
    )
    return to_entry((key, value_json, version, now_us, expires_at_us))


def delete(conn: sqlite3.Connection, scope: str, key: str) -> bool:
    return (
        conn.execute("DELETE FROM working WHERE scope = ? AND key = ?", (scope, key)).rowcount > 0
    )


def page(
    conn: sqlite3.Connection, scope: str, after: str | None, limit: int, now_us: int
) -> list[WorkingEntry]:
    """Live keys above ``after`` in ascending UTF-8 byte order (SQLite's BINARY collation
    compares the UTF-8 bytes)."""
    rows = conn.execute(
        f"SELECT {WORKING_COLUMNS} FROM working WHERE scope = ? AND key > ? AND {_LIVE} "
        "ORDER BY key LIMIT ?",
        (scope, after or "", now_us, limit),
    ).fetchall()
    return [to_entry(r) for r in rows]
