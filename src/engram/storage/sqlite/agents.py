"""Agent rows: the persisted spec that resolves an agent's scope."""

from __future__ import annotations

from engram.core.agents import Agent
from engram.core.clock import to_us
from engram.storage.rows import AGENT_COLUMNS, to_agent
from engram.storage.sqlite.driver import sqlite3


def insert(conn: sqlite3.Connection, agent: Agent) -> None:
    conn.execute(
        f"INSERT INTO agents ({AGENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, NULL)",
        (agent.id, agent.name, agent.ref.key, agent.parent_id, to_us(agent.created_at)),
    )


def get(conn: sqlite3.Connection, agent_id: str) -> Agent | None:
    row = conn.execute(f"SELECT {AGENT_COLUMNS} FROM agents WHERE id = ?", (agent_id,)).fetchone()
    return None if row is None else to_agent(row)


def end(conn: sqlite3.Connection, agent_id: str, now_us: int) -> Agent | None:
    conn.execute(
        "UPDATE agents SET ended_at = ? WHERE id = ? AND ended_at IS NULL", (now_us, agent_id)
    )
    return get(conn, agent_id)


def page(conn: sqlite3.Connection, after: str | None, limit: int, name: str | None) -> list[Agent]:
    """Ascending id order from the primary key; ``name`` filters the same walk."""
    rows = conn.execute(
        f"SELECT {AGENT_COLUMNS} FROM agents WHERE id > ? AND (? IS NULL OR name = ?) "
        "ORDER BY id LIMIT ?",
        (after or "", name, name, limit),
    ).fetchall()
    return [to_agent(row) for row in rows]
