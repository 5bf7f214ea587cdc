"""Agent rows: the persisted spec that resolves an agent's scope."""

from __future__ import annotations

import sqlite3

from engram.core.agents import Agent
from engram.core.clock import from_us, to_us
from engram.core.errors import StorageFailure
from engram.core.scopes import ResourceRef, parse_key

_COLUMNS = "id, name, scope, parent_id, created_at, ended_at"


def insert(conn: sqlite3.Connection, agent: Agent) -> None:
    conn.execute(
        f"INSERT INTO agents ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, NULL)",
        (agent.id, agent.name, agent.ref.key, agent.parent_id, to_us(agent.created_at)),
    )


def get(conn: sqlite3.Connection, agent_id: str) -> Agent | None:
    row = conn.execute(f"SELECT {_COLUMNS} FROM agents WHERE id = ?", (agent_id,)).fetchone()
    return None if row is None else _agent(row)


def end(conn: sqlite3.Connection, agent_id: str, now_us: int) -> Agent | None:
    conn.execute(
        "UPDATE agents SET ended_at = ? WHERE id = ? AND ended_at IS NULL", (now_us, agent_id)
    )
    return get(conn, agent_id)


def _agent(row: tuple[object, ...]) -> Agent:
    agent_id, name, scope, parent_id, created, ended = row
    ref = parse_key(str(scope))
    if not isinstance(ref, ResourceRef):
        raise StorageFailure(f"agent {agent_id} has a scope that is not an agent resource")
    return Agent(
        id=str(agent_id),
        name=str(name),
        ref=ref,
        parent_id=None if parent_id is None else str(parent_id),
        created_at=from_us(int(str(created))),
        ended_at=None if ended is None else from_us(int(str(ended))),
    )
