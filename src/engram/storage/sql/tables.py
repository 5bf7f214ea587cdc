"""The rows of every table, in the SQL both backends speak (see :mod:`engram.core.ports`
for each method's contract). A backend subclasses only what it does its own way: how
facts are inserted and copied, their vectors, and recall's candidates."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from engram.core.agents import Agent
from engram.core.clock import from_us, to_us
from engram.core.models import Fact, WorkingEntry
from engram.core.ports import ModelRecord, NewFact, Tx
from engram.core.scopes import Scope, parse_key
from engram.core.sharing import Share
from engram.storage.rows import (
    AGENT_COLUMNS,
    FACT_COLUMNS,
    WORKING_COLUMNS,
    to_agent,
    to_entry,
    to_fact,
)
from engram.storage.sql.tx import KEYS, MODEL, sql

if TYPE_CHECKING:
    from engram.core.ports import Vectors

SELECT_FACT = f"SELECT {FACT_COLUMNS} FROM facts"
_LIVE = "(expires_at IS NULL OR expires_at > ?)"


class WorkingTable:
    def get(self, tx: Tx, scope: Scope, key: str, now_us: int) -> WorkingEntry | None:
        row = (
            sql(tx)
            .execute(
                f"SELECT {WORKING_COLUMNS} FROM working WHERE scope = ? AND key = ? AND {_LIVE}",
                (scope.key, key, now_us),
            )
            .fetchone()
        )
        return None if row is None else to_entry(row)

    def claim(self, tx: Tx, scope: Scope, key: str) -> tuple[int, int | None] | None:
        t = sql(tx)
        # A hash collision between two keys only makes them wait for each other.
        t.hold(KEYS, f"{scope.key}\x1f{key}")
        row = t.execute(
            "SELECT version, expires_at FROM working WHERE scope = ? AND key = ?",
            (scope.key, key),
        ).fetchone()
        return None if row is None else (int(row[0]), None if row[1] is None else int(row[1]))

    def put(
        self,
        tx: Tx,
        scope: Scope,
        key: str,
        value_json: str,
        version: int,
        now_us: int,
        expires_at_us: int | None,
    ) -> None:
        sql(tx).execute(
            "INSERT INTO working (scope, key, value, version, updated_at, expires_at) "
            "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (scope, key) DO UPDATE SET "
            "value = excluded.value, version = excluded.version, "
            "updated_at = excluded.updated_at, expires_at = excluded.expires_at",
            (scope.key, key, value_json, version, now_us, expires_at_us),
        )

    def delete(self, tx: Tx, scope: Scope, key: str) -> bool:
        gone = sql(tx).execute("DELETE FROM working WHERE scope = ? AND key = ?", (scope.key, key))
        return gone.rowcount > 0

    def page(
        self, tx: Tx, scope: Scope, after: str | None, limit: int, now_us: int
    ) -> list[WorkingEntry]:
        # Both order keys by their UTF-8 bytes: SQLite's BINARY collation, PostgreSQL's "C".
        rows = sql(tx).rows(
            f"SELECT {WORKING_COLUMNS} FROM working WHERE scope = ? AND key > ? AND {_LIVE} "
            "ORDER BY key LIMIT ?",
            (scope.key, after or "", now_us, limit),
        )
        return [to_entry(r) for r in rows]

    def live_count(self, tx: Tx, scope: Scope, now_us: int) -> int:
        return int(
            sql(tx).one(
                f"SELECT count(*) FROM working WHERE scope = ? AND {_LIVE}", (scope.key, now_us)
            )
        )

    def copy_scope(self, tx: Tx, parent: Scope, child: Scope, now_us: int) -> int:
        copied = sql(tx).execute(
            "INSERT INTO working (scope, key, value, version, updated_at, expires_at) "
            f"SELECT ?, key, value, 1, ?, expires_at FROM working WHERE scope = ? AND {_LIVE} "
            "ON CONFLICT (scope, key) DO UPDATE SET value = excluded.value, "
            "version = working.version + 1, updated_at = excluded.updated_at, "
            "expires_at = excluded.expires_at",
            (child.key, now_us, parent.key, now_us),
        )
        return int(copied.rowcount)


class FactTable:
    """Facts as both backends keep them; the insert paths, a fork's copy and vectors
    are each backend's own."""

    def get(self, tx: Tx, scope: Scope, fact_id: str) -> Fact | None:
        t = sql(tx)
        row = t.execute(
            f"{SELECT_FACT} WHERE id = ? AND {t.dialect.scope_by_id}", (fact_id, scope.key)
        ).fetchone()
        return None if row is None else to_fact(row)

    def by_ids(self, tx: Tx, scope: Scope, ids: Sequence[str]) -> dict[str, Fact]:
        if not ids:
            return {}
        t = sql(tx)
        member, params = t.dialect.in_list("id", ids)
        rows = t.rows(
            f"{SELECT_FACT} WHERE {member} AND {t.dialect.scope_by_id}", (*params, scope.key)
        )
        return {str(r[0]): to_fact(r) for r in rows}

    def by_hashes(self, tx: Tx, scope: Scope, hashes: Sequence[str]) -> dict[str, Fact]:
        if not hashes:
            return {}
        t = sql(tx)
        member, params = t.dialect.in_list("content_hash", list(dict.fromkeys(hashes)))
        rows = t.rows(
            f"SELECT content_hash, {FACT_COLUMNS} FROM facts WHERE scope = ? AND {member}",
            (scope.key, *params),
        )
        return {str(r[0]): to_fact(r[1:]) for r in rows}

    def page(
        self, tx: Tx, scope: Scope, before: tuple[int, int] | None, limit: int
    ) -> list[tuple[Fact, tuple[int, int]]]:
        created, seq = before if before is not None else (1 << 62, 1 << 62)
        rows = sql(tx).rows(
            f"{SELECT_FACT} WHERE scope = ? AND (created_at, seq) < (?, ?) "
            "ORDER BY created_at DESC, seq DESC LIMIT ?",
            (scope.key, created, seq, limit),
        )
        return [(to_fact(r), (int(r[3]), int(r[-1]))) for r in rows]

    def count(self, tx: Tx, scope: Scope) -> int:
        return int(sql(tx).one("SELECT count(*) FROM facts WHERE scope = ?", (scope.key,)))

    def any(self, tx: Tx, scope: Scope | None = None) -> bool:
        t = sql(tx)
        if scope is None:
            return t.execute("SELECT 1 FROM facts LIMIT 1").fetchone() is not None
        found = t.execute("SELECT 1 FROM facts WHERE scope = ? LIMIT 1", (scope.key,))
        return found.fetchone() is not None

    def scope_of(self, tx: Tx, fact_id: str) -> Scope | None:
        row = sql(tx).execute("SELECT scope FROM facts WHERE id = ?", (fact_id,)).fetchone()
        return None if row is None else parse_key(str(row[0]))

    def insert(self, tx: Tx, scope: Scope, facts: Sequence[NewFact]) -> set[str]:
        raise NotImplementedError

    def rewrite(
        self,
        tx: Tx,
        scope: Scope,
        fact_id: str,
        content: str,
        content_hash: str,
        vector: Vectors | None,
        by: str | None,
        now_us: int,
    ) -> Fact | None:
        t = sql(tx)
        row = t.execute(
            "UPDATE facts SET content = ?, content_hash = ?, updated_at = ?, corrected_by = ?, "
            f"corrected_at = ? WHERE id = ? AND {t.dialect.scope_by_id} RETURNING {FACT_COLUMNS}",
            (content, content_hash, now_us, by, now_us, fact_id, scope.key),
        ).fetchone()
        if row is None:
            return None
        if vector is not None:  # without one the fact keeps the vector of its old words
            t.execute(
                "UPDATE fact_vectors SET vector = ? WHERE fact = ?",
                (t.dialect.vector(vector), row[-1]),
            )
        return to_fact(row)

    def delete(self, tx: Tx, scope: Scope, fact_id: str) -> bool:
        t = sql(tx)
        gone = t.execute(
            f"DELETE FROM facts WHERE id = ? AND {t.dialect.scope_by_id}", (fact_id, scope.key)
        )
        return gone.rowcount > 0

    def delete_scope(self, tx: Tx, scope: Scope) -> int:
        return int(sql(tx).execute("DELETE FROM facts WHERE scope = ?", (scope.key,)).rowcount)

    def delete_created_before(self, tx: Tx, scope: Scope, cutoff_us: int) -> list[str]:
        rows = sql(tx).rows(
            "DELETE FROM facts WHERE scope = ? AND created_at < ? RETURNING id",
            (scope.key, cutoff_us),
        )
        return [str(r[0]) for r in rows]

    def delete_oldest(self, tx: Tx, scope: Scope, count: int) -> list[str]:
        rows = sql(tx).rows(
            "DELETE FROM facts WHERE seq IN (SELECT seq FROM facts WHERE scope = ? "
            "ORDER BY created_at, seq LIMIT ?) RETURNING id",
            (scope.key, count),
        )
        return [str(r[0]) for r in rows]

    def copy_scope(self, tx: Tx, parent: Scope, child: Scope, ids: Sequence[str]) -> int:
        raise NotImplementedError

    def texts_after(self, tx: Tx, after_seq: int, limit: int) -> list[tuple[int, str]]:
        rows = sql(tx).rows(
            "SELECT seq, content FROM facts WHERE seq > ? ORDER BY seq LIMIT ?", (after_seq, limit)
        )
        return [(int(r[0]), str(r[1])) for r in rows]

    def replace_vectors(self, tx: Tx, rows: Sequence[tuple[int, Vectors]]) -> None:
        t = sql(tx)
        for seq, vector in rows:
            t.execute(
                "UPDATE fact_vectors SET vector = ? WHERE fact = ?", (t.dialect.vector(vector), seq)
            )


def fact_columns(facts: Sequence[NewFact]) -> list[tuple[Any, ...]]:
    """The facts as the columns id, content, content_hash, context, source_sandbox,
    source_entry, type, tags, metadata, created_at, updated_at."""
    rows = []
    for new in facts:
        fact = new.fact
        source = fact.source_ref
        rows.append(
            (
                fact.id,
                fact.content,
                new.content_hash,
                fact.context,
                source.sandbox_id if source else None,
                source.entry_index if source else None,
                fact.type,
                json.dumps(list(fact.tags)),
                new.metadata_json,
                to_us(fact.created_at),
                to_us(fact.updated_at),
            )
        )
    return rows


class ModelTable:
    def get(self, tx: Tx, *, hold: bool = False) -> ModelRecord | None:
        t = sql(tx)
        if hold:
            t.hold(MODEL, "embedding model")
        rows = dict(
            t.execute(
                "SELECT key, value FROM meta "
                "WHERE key IN ('embedding_model', 'embedding_dimension')"
            ).fetchall()
        )
        if "embedding_model" not in rows:
            return None
        return ModelRecord(str(rows["embedding_model"]), int(str(rows["embedding_dimension"])))

    def put(self, tx: Tx, record: ModelRecord) -> None:
        t = sql(tx)
        for key, value in (
            ("embedding_model", record.model),
            ("embedding_dimension", str(record.dimension)),
        ):
            t.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )


class AgentTable:
    def insert(self, tx: Tx, agent: Agent) -> None:
        sql(tx).execute(
            f"INSERT INTO agents ({AGENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, NULL)",
            (agent.id, agent.name, agent.ref.key, agent.parent_id, to_us(agent.created_at)),
        )

    def get(self, tx: Tx, agent_id: str) -> Agent | None:
        row = (
            sql(tx)
            .execute(f"SELECT {AGENT_COLUMNS} FROM agents WHERE id = ?", (agent_id,))
            .fetchone()
        )
        return None if row is None else to_agent(row)

    def end(self, tx: Tx, agent_id: str, now_us: int) -> None:
        sql(tx).execute(
            "UPDATE agents SET ended_at = ? WHERE id = ? AND ended_at IS NULL", (now_us, agent_id)
        )

    def page(self, tx: Tx, after: str | None, limit: int, name: str | None) -> list[Agent]:
        # Ascending id order from the primary key; ``name`` filters the same walk.
        rows = sql(tx).rows(
            f"SELECT {AGENT_COLUMNS} FROM agents WHERE id > ? "
            "AND (CAST(? AS TEXT) IS NULL OR name = ?) ORDER BY id LIMIT ?",
            (after or "", name, name, limit),
        )
        return [to_agent(row) for row in rows]


class ShareTable:
    def put(self, tx: Tx, share: Share) -> None:
        sql(tx).execute(
            "INSERT INTO shares (person, source, reader, allowed_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (person, source, reader) DO NOTHING",
            (share.person, share.source, share.reader, to_us(share.allowed_at)),
        )

    def get(self, tx: Tx, person: str, source: str, reader: str) -> Share | None:
        row = (
            sql(tx)
            .execute(
                "SELECT allowed_at FROM shares WHERE person = ? AND source = ? AND reader = ?",
                (person, source, reader),
            )
            .fetchone()
        )
        return None if row is None else Share(person, source, reader, from_us(int(row[0])))

    def delete(self, tx: Tx, person: str, source: str, reader: str) -> bool:
        gone = sql(tx).execute(
            "DELETE FROM shares WHERE person = ? AND source = ? AND reader = ?",
            (person, source, reader),
        )
        return gone.rowcount > 0

    def listed(self, tx: Tx, person: str, source: str | None, reader: str | None) -> list[Share]:
        column, value = ("source", source) if source is not None else ("reader", reader)
        rows = sql(tx).rows(
            "SELECT source, reader, allowed_at FROM shares WHERE person = ? "
            f"AND (CAST(? AS TEXT) IS NULL OR {column} = ?) ORDER BY allowed_at, source, reader",
            (person, value, value),
        )
        return [Share(person, str(s), str(r), from_us(int(at))) for s, r, at in rows]
