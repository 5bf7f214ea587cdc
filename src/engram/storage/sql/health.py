"""The health report's counts on both backends (see :class:`engram.core.ports.HealthRows`).

Every count is one aggregate over the scope's own index (``scope`` leads the facts', the
trash's, working memory's, the ledger's and the sessions' indexes), or over the table for
the whole store. A backend gives only what its SQL truly does its own way: how many rows
its full-text index holds, and the bytes the store takes.
"""

from __future__ import annotations

from typing import Any

from engram.core.health import (
    FactHealth,
    FullTextHealth,
    HealthCounts,
    LedgerHealth,
    SessionHealth,
    StorageHealth,
    StrengthSummary,
    TypeCount,
)
from engram.core.ports import Tx
from engram.core.scopes import Scope
from engram.storage.sql.tx import SQLTx, sql

Query = tuple[str, tuple[Any, ...]]
DEFAULT_STRENGTH = 1.0


def scoped(column: str, scope: str | None, joiner: str = "WHERE") -> Query:
    """``WHERE column = ?`` for a scope; nothing for the whole store."""
    return ("", ()) if scope is None else (f" {joiner} {column} = ?", (scope,))


def facts_by_type(scope: str | None) -> Query:
    where, params = scoped("scope", scope)
    return (
        "SELECT type, count(*), sum(CASE WHEN source_sandbox IS NULL THEN 0 ELSE 1 END), "
        "sum(CASE WHEN strength = ? THEN 0 ELSE 1 END), min(strength), max(strength) "
        f"FROM facts{where} GROUP BY type",
        (DEFAULT_STRENGTH, *params),
    )


def trash_by_type(scope: str | None) -> Query:
    where, params = scoped("scope", scope)
    return f"SELECT type, count(*) FROM fact_trash{where} GROUP BY type", params


def strength_at(scope: str | None, offset: int) -> Query:
    where, params = scoped("scope", scope)
    return f"SELECT strength FROM facts{where} ORDER BY strength LIMIT 1 OFFSET ?", (
        *params,
        offset,
    )


def without_vector(scope: str | None) -> Query:
    where, params = scoped("f.scope", scope, "AND")
    return (
        "SELECT count(*) FROM facts f WHERE NOT EXISTS "
        f"(SELECT 1 FROM fact_vectors v WHERE v.fact = f.seq){where}",
        params,
    )


def working_live(scope: str | None, now_us: int) -> Query:
    where, params = scoped("scope", scope, "AND")
    return (
        f"SELECT count(*) FROM working WHERE (expires_at IS NULL OR expires_at > ?){where}",
        (now_us, *params),
    )


def ledger_counts(scope: str | None) -> Query:
    where, params = scoped("scope", scope)
    return (
        f"SELECT count(*), sum(CASE WHEN scrubbed = 0 THEN 0 ELSE 1 END) FROM ledger{where}",
        params,
    )


def session_counts(scope: str | None) -> Query:
    where, params = scoped("scope", scope)
    return f"SELECT count(*) FROM sessions{where}", params


def session_entry_count(scope: str | None) -> Query:
    if scope is None:
        return "SELECT count(*) FROM session_entries", ()
    return (
        "SELECT count(*) FROM session_entries e JOIN sessions s ON s.id = e.session_id "
        "WHERE s.scope = ?",
        (scope,),
    )


class HealthTable:
    """The counts both backends take alike; :meth:`fulltext_rows` and :meth:`storage`
    are each backend's own."""

    def report(self, tx: Tx, scope: Scope | None, now_us: int) -> HealthCounts:
        t = sql(tx)
        key = None if scope is None else scope.key
        facts = self._facts(t, key)
        entries, scrubbed = t.execute(*ledger_counts(key)).fetchone()
        return HealthCounts(
            facts=facts,
            fulltext=FullTextHealth(rows=self.fulltext_rows(t, scope), facts=facts.live),
            working_keys=int(t.one(*working_live(key, now_us))),
            ledger=LedgerHealth(entries=int(entries), scrubbed=int(scrubbed or 0)),
            sessions=SessionHealth(
                sessions=int(t.one(*session_counts(key))),
                entries=int(t.one(*session_entry_count(key))),
            ),
            storage=None if scope is not None else self.storage(t),
        )

    def _facts(self, t: SQLTx, key: str | None) -> FactHealth:
        live = t.rows(*facts_by_type(key))
        trashed = {r[0]: int(r[1]) for r in t.rows(*trash_by_type(key))}
        counts = {r[0]: int(r[1]) for r in live}
        types = sorted(counts.keys() | trashed.keys(), key=lambda k: (k is not None, k or ""))
        total = sum(counts.values())
        return FactHealth(
            live=total,
            trashed=sum(trashed.values()),
            by_type=tuple(TypeCount(k, counts.get(k, 0), trashed.get(k, 0)) for k in types),
            verified=sum(int(r[2]) for r in live),
            without_vector=int(t.one(*without_vector(key))),
            strength=StrengthSummary(
                min=min((float(r[4]) for r in live), default=None),
                p50=None if not total else float(t.one(*strength_at(key, (total - 1) // 2))),
                max=max((float(r[5]) for r in live), default=None),
                off_default=sum(int(r[3]) for r in live),
            ),
        )

    def fulltext_rows(self, t: SQLTx, scope: Scope | None) -> int:
        """How many rows the full-text index holds for the scope (or in all)."""
        raise NotImplementedError

    def storage(self, t: SQLTx) -> StorageHealth:
        """The bytes the store takes."""
        raise NotImplementedError
