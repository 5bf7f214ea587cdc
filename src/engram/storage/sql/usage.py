"""Retrieval feedback's rows on both backends (see :class:`engram.core.ports.UsageRows`).
A fact's rows go with its deletion for good by the database's triggers (SQLite migration
12, PostgreSQL 8)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engram.core.clock import from_us, to_us
from engram.core.ports import Tx
from engram.core.records import Feedback
from engram.core.scopes import Scope
from engram.core.usage import SIGNALS
from engram.storage.sql.tx import sql

COLUMNS = "id, fact_id, signal, reason, score, query, at"


class UsageTable:
    def add(self, tx: Tx, scope: Scope, rows: Sequence[Feedback]) -> None:
        t = sql(tx).recorded()
        t.executemany(
            f"INSERT INTO retrieval_feedback (scope, {COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (scope.key, r.id, r.fact_id, r.signal, r.reason, r.score, r.query, to_us(r.at))
                for r in rows
            ],
        )

    def of_fact(self, tx: Tx, scope: Scope, fact_id: str) -> list[Feedback]:
        rows = sql(tx).rows(
            f"SELECT {COLUMNS} FROM retrieval_feedback WHERE fact_id = ? AND scope = ? "
            "ORDER BY at, seq",
            (fact_id, scope.key),
        )
        return [_feedback(r) for r in rows]

    def pending(self, tx: Tx, scope: Scope, limit: int) -> list[Feedback]:
        rows = sql(tx).rows(
            f"SELECT {COLUMNS} FROM retrieval_feedback r WHERE r.scope = ? AND r.applied = 0 "
            "AND EXISTS (SELECT 1 FROM facts f WHERE f.id = r.fact_id AND f.scope = r.scope) "
            "ORDER BY r.seq LIMIT ?",
            (scope.key, limit),
        )
        return [_feedback(r) for r in rows]

    def applied(self, tx: Tx, scope: Scope, fact_ids: Sequence[str]) -> list[Feedback]:
        if not fact_ids:
            return []
        t = sql(tx)
        member, params = t.dialect.in_list("fact_id", fact_ids)
        rows = t.rows(
            f"SELECT {COLUMNS} FROM retrieval_feedback WHERE {member} AND scope = ? "
            "AND applied = 1 ORDER BY at, seq",
            (*params, scope.key),
        )
        return [_feedback(r) for r in rows]

    def mark_applied(self, tx: Tx, scope: Scope, ids: Sequence[str], applied: bool) -> None:
        t = sql(tx).recorded()
        if not ids:
            return
        member, params = t.dialect.in_list("id", ids)
        t.execute(
            f"UPDATE retrieval_feedback SET applied = ? WHERE {member} AND scope = ?",
            (int(applied), *params, scope.key),
        )


def _feedback(row: Sequence[Any]) -> Feedback:
    signal = next(s for s in SIGNALS if s == row[2])
    return Feedback(
        id=str(row[0]),
        fact_id=str(row[1]),
        signal=signal,
        reason=None if row[3] is None else str(row[3]),
        score=None if row[4] is None else float(row[4]),
        query=None if row[5] is None else str(row[5]),
        at=from_us(int(row[6])),
    )
