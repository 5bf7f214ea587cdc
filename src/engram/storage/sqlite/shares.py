"""Allowance rows: one per person and (source, reader) pair."""

from __future__ import annotations

from engram.core.clock import from_us
from engram.core.sharing import Share
from engram.storage.sqlite.driver import sqlite3


def put(conn: sqlite3.Connection, person: str, source: str, reader: str, now_us: int) -> Share:
    conn.execute(
        "INSERT INTO shares (person, source, reader, allowed_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (person, source, reader) DO NOTHING",
        (person, source, reader, now_us),
    )
    row = conn.execute(
        "SELECT allowed_at FROM shares WHERE person = ? AND source = ? AND reader = ?",
        (person, source, reader),
    ).fetchone()
    return Share(person, source, reader, from_us(int(row[0])))


def delete(conn: sqlite3.Connection, person: str, source: str, reader: str) -> bool:
    gone = conn.execute(
        "DELETE FROM shares WHERE person = ? AND source = ? AND reader = ?",
        (person, source, reader),
    )
    return gone.rowcount > 0


def listed(
    conn: sqlite3.Connection, person: str, source: str | None, reader: str | None
) -> list[Share]:
    column, value = ("source", source) if source is not None else ("reader", reader)
    rows = conn.execute(
        "SELECT source, reader, allowed_at FROM shares WHERE person = ? "
        f"AND (? IS NULL OR {column} = ?) ORDER BY allowed_at, source, reader",
        (person, value, value),
    ).fetchall()
    return [Share(person, str(s), str(r), from_us(int(at))) for s, r, at in rows]
