"""The health report's counts on both backends (see :class:`engram.core.ports.HealthRows`).

Every count is one aggregate over the scope's own index (``scope`` leads the facts', the
trash's, working memory's, the ledger's, the sessions', the entities', their aliases', the
relations', the reading queue's and the documents' indexes; a session's entries, a
document's chunks and an entity's mentions and groundings are reached through them), or
over the table for the whole store. Retrieval feedback has no index led by its scope: its
total reads the table (the pending signals have one). A backend gives only what its SQL
truly does its own way: how many rows its full-text index holds, its approximate vector
indexes, and the bytes the store takes.
"""

from __future__ import annotations

from typing import Any

from engram.core.graph.rebuild import StoredGraph
from engram.core.health import (
    Backlog,
    DocumentHealth,
    EntityCounts,
    FactHealth,
    FeedbackHealth,
    FullTextHealth,
    GraphHealth,
    HealthCounts,
    LedgerHealth,
    RelationCounts,
    SessionHealth,
    StaleCounts,
    StorageHealth,
    StrengthSummary,
    TypeCount,
    VectorIndexHealth,
)
from engram.core.ports import Tx
from engram.core.scopes import Scope
from engram.storage.filters import DEFAULT_STRENGTH
from engram.storage.sql.graph import grounding_pairs, grounding_sources
from engram.storage.sql.tx import SQLTx, sql

Query = tuple[str, tuple[Any, ...]]


def scoped(column: str, scope: str | None, joiner: str = "WHERE") -> Query:
    """``WHERE column = ?`` for a scope; nothing for the whole store."""
    return ("", ()) if scope is None else (f" {joiner} {column} = ?", (scope,))


def facts_by_type(scope: str | None) -> Query:
    where, params = scoped("scope", scope)
    return (
        "SELECT type, count(*), sum(CASE WHEN source_sandbox IS NULL THEN 0 ELSE 1 END), "
        "sum(CASE WHEN strength = ? THEN 0 ELSE 1 END), min(strength), max(strength), "
        "sum(CASE WHEN strength < ? THEN 1 ELSE 0 END) "
        f"FROM facts{where} GROUP BY type",
        (DEFAULT_STRENGTH, DEFAULT_STRENGTH, *params),
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


def working_expired(scope: str | None, now_us: int) -> Query:
    where, params = scoped("scope", scope, "AND")
    return (
        f"SELECT count(*) FROM working WHERE expires_at <= ?{where}",
        (now_us, *params),
    )


def trash_older(scope: str | None, cutoff_us: int) -> Query:
    where, params = scoped("scope", scope, "AND")
    return f"SELECT count(*) FROM fact_trash WHERE deleted_at < ?{where}", (cutoff_us, *params)


def ledger_older(scope: str | None, cutoff_us: int) -> Query:
    where, params = scoped("scope", scope, "AND")
    return f"SELECT count(*) FROM ledger WHERE at < ?{where}", (cutoff_us, *params)


def ledger_oldest(scope: str | None) -> Query:
    where, params = scoped("scope", scope)
    return f"SELECT min(at) FROM ledger{where}", params


def session_entries_hidden(scope: str | None) -> Query:
    if scope is None:
        return "SELECT count(*) FROM session_entries WHERE hidden <> 0", ()
    return (
        "SELECT count(*) FROM session_entries e JOIN sessions s ON s.id = e.session_id "
        "WHERE s.scope = ? AND e.hidden <> 0",
        (scope,),
    )


def entities_by_origin(scope: str | None) -> Query:
    where, params = scoped("scope", scope)
    return f"SELECT origin, count(*) FROM entities{where} GROUP BY origin", params


def relation_counts(scope: str | None) -> Query:
    where, params = scoped("scope", scope)
    return (
        "SELECT sum(CASE WHEN expired_at IS NULL AND invalid_at IS NULL THEN 1 ELSE 0 END), "
        "sum(CASE WHEN expired_at IS NULL AND invalid_at IS NOT NULL THEN 1 ELSE 0 END), "
        f"sum(CASE WHEN expired_at IS NULL THEN 0 ELSE 1 END) FROM relations{where}",
        params,
    )


def alias_count(scope: str | None) -> Query:
    where, params = scoped("scope", scope)
    return f"SELECT count(*) FROM entity_aliases{where}", params


def mention_count(scope: str | None) -> Query:
    """A scope's mentions through its entities (the mentions' index is by entity)."""
    if scope is None:
        return "SELECT count(*) FROM mentions", ()
    return (
        "SELECT count(*) FROM entities e JOIN mentions m ON m.entity = e.id WHERE e.scope = ?",
        (scope,),
    )


def orphan_count(scope: str | None) -> Query:
    """Extracted entities no live fact grounds, by any extractor: none of
    :func:`engram.storage.sql.graph.grounding_sources` holds a live fact's grounding of
    them. Asked of each entity through those tables' indexes by entity, and answered at
    its first live one: the pairs of a whole scope were 1.2M rows at a million facts
    (6.4 s), for a count of its few dozen entities."""
    where, params = scoped("e.scope", scope, "AND")
    none = " AND ".join(
        f"NOT EXISTS (SELECT 1 FROM {table} JOIN facts f ON f.id = x.fact_id "
        f"WHERE x.entity = e.id AND {held})"
        for table, held in grounding_sources()
    )
    return f"SELECT count(*) FROM entities e WHERE e.origin = 'extracted'{where} AND {none}", params


def queued_count(scope: str | None) -> Query:
    where, params = scoped("scope", scope)
    return f"SELECT count(*) FROM graph_dirty{where}", params


def backlog_counts(scope: str | None) -> Query:
    """Live facts each model extractor has not read for their current words, wiki pages
    aside (as :meth:`engram.core.ports.GraphRows.unread` finds them)."""
    unread = (
        "sum(CASE WHEN f.type = 'wiki' OR EXISTS (SELECT 1 FROM graph_reads r "
        "WHERE r.fact_id = f.id AND r.extractor = ? AND r.content_hash = f.content_hash) "
        "THEN 0 ELSE 1 END)"
    )
    where, params = scoped("f.scope", scope)
    return f"SELECT {unread}, {unread} FROM facts f{where}", ("llm", "spacy", *params)


def document_counts(scope: str | None) -> Query:
    where, params = scoped("d.scope", scope)
    return (
        "SELECT count(*), sum(CASE WHEN c.fact_id IS NULL THEN 1 ELSE 0 END) "
        f"FROM documents d JOIN document_chunks c ON c.document = d.id{where}",
        params,
    )


def documents_count(scope: str | None) -> Query:
    where, params = scoped("scope", scope)
    return f"SELECT count(*) FROM documents{where}", params


def feedback_counts(scope: str | None) -> Query:
    where, params = scoped("scope", scope)
    return f"SELECT count(*) FROM retrieval_feedback{where}", params


def feedback_pending(scope: str | None) -> Query:
    where, params = scoped("scope", scope, "AND")
    return f"SELECT count(*) FROM retrieval_feedback WHERE applied = 0{where}", params


class HealthTable:
    """The counts both backends take alike; :meth:`fulltext_rows`, :meth:`vector_index`
    and :meth:`storage` are each backend's own."""

    def report(
        self,
        tx: Tx,
        scope: Scope | None,
        now_us: int,
        trash_cutoff_us: int | None,
        ledger_cutoff_us: int | None,
    ) -> HealthCounts:
        t = sql(tx)
        key = None if scope is None else scope.key
        facts = self._facts(t, key)
        entries, scrubbed = t.execute(*ledger_counts(key)).fetchone()
        return HealthCounts(
            facts=facts,
            fulltext=FullTextHealth(rows=self.fulltext_rows(t, scope), facts=facts.live),
            vector_index=self.vector_index(t, key),
            working_keys=int(t.one(*working_live(key, now_us))),
            ledger=LedgerHealth(entries=int(entries), scrubbed=int(scrubbed or 0)),
            sessions=SessionHealth(
                sessions=int(t.one(*session_counts(key))),
                entries=int(t.one(*session_entry_count(key))),
            ),
            graph=self._graph(t, key),
            documents=self._documents(t, key),
            feedback=FeedbackHealth(
                signals=int(t.one(*feedback_counts(key))),
                pending=int(t.one(*feedback_pending(key))),
            ),
            stale=self._stale(t, key, now_us, trash_cutoff_us, ledger_cutoff_us),
            storage=None if scope is not None else self.storage(t),
        )

    def graph_rows(self, tx: Tx, scope: Scope) -> StoredGraph:
        t, key = sql(tx), scope.key
        entities = t.rows(
            "SELECT e.id, e.norm, e.origin, EXISTS (SELECT 1 FROM groundings g "
            "WHERE g.entity = e.id AND g.extractor <> 'rules') FROM entities e "
            "WHERE e.scope = ?",
            (key,),
        )
        aliases = t.rows("SELECT norm, entity FROM entity_aliases WHERE scope = ?", (key,))
        mentions = t.rows(
            'SELECT fact_id, start, "end", entity, type FROM mentions WHERE scope = ?', (key,)
        )
        groundings = t.rows(grounding_pairs("e.scope = ?", rules_only=True), (key, key))
        relations = t.rows(
            "SELECT s.fact_id, r.id, r.source, r.type, r.target, r.valid_at FROM relations r "
            "JOIN relation_support s ON s.relation = r.id "
            "WHERE r.scope = ? AND r.extractor = 'rules'",
            (key,),
        )
        return StoredGraph(
            entities=tuple((str(i), str(n), str(o), bool(k)) for i, n, o, k in entities),
            aliases=tuple((str(n), str(e)) for n, e in aliases),
            mentions=frozenset(
                (str(f), int(s), int(e), str(n), None if k is None else str(k))
                for f, s, e, n, k in mentions
            ),
            groundings=frozenset((str(f), str(e)) for f, e in groundings),
            relations=frozenset(
                (str(f), str(i), str(a), str(k), str(b), None if v is None else int(v))
                for f, i, a, k, b, v in relations
            ),
        )

    def _graph(self, t: SQLTx, key: str | None) -> GraphHealth:
        origins = {str(o): int(n) for o, n in t.rows(*entities_by_origin(key))}
        live, ended, expired = t.execute(*relation_counts(key)).fetchone()
        llm, spacy = t.execute(*backlog_counts(key)).fetchone()
        return GraphHealth(
            entities=EntityCounts(
                total=sum(origins.values()),
                asserted=origins.get("asserted", 0),
                extracted=origins.get("extracted", 0),
                imported=origins.get("imported", 0),
            ),
            relations=RelationCounts(
                live=int(live or 0), ended=int(ended or 0), expired=int(expired or 0)
            ),
            aliases=int(t.one(*alias_count(key))),
            mentions=int(t.one(*mention_count(key))),
            orphans=int(t.one(*orphan_count(key))),
            queued=int(t.one(*queued_count(key))),
            backlog=Backlog(llm=int(llm or 0), spacy=int(spacy or 0)),
        )

    def _documents(self, t: SQLTx, key: str | None) -> DocumentHealth:
        chunks, without = t.execute(*document_counts(key)).fetchone()
        return DocumentHealth(
            documents=int(t.one(*documents_count(key))),
            chunks=int(chunks),
            chunks_without_fact=int(without or 0),
        )

    def _stale(
        self,
        t: SQLTx,
        key: str | None,
        now_us: int,
        trash_cutoff_us: int | None,
        ledger_cutoff_us: int | None,
    ) -> StaleCounts:
        oldest = t.one(*ledger_oldest(key))
        return StaleCounts(
            working_keys=int(t.one(*working_expired(key, now_us))),
            trash_past_retention=0
            if trash_cutoff_us is None
            else int(t.one(*trash_older(key, trash_cutoff_us))),
            ledger_past_retention=0
            if ledger_cutoff_us is None
            else int(t.one(*ledger_older(key, ledger_cutoff_us))),
            ledger_oldest_us=None if oldest is None else int(oldest),
            session_entries_hidden=int(t.one(*session_entries_hidden(key))),
        )

    def _facts(self, t: SQLTx, key: str | None) -> FactHealth:
        live = t.rows(*facts_by_type(key))
        trashed = {r[0]: int(r[1]) for r in t.rows(*trash_by_type(key))}
        counts = {r[0]: int(r[1]) for r in live}
        types = sorted(counts.keys() | trashed.keys(), key=lambda k: (k is not None, k or ""))
        total = sum(counts.values())
        off_default = sum(int(r[3]) for r in live)
        below = sum(int(r[6]) for r in live)
        return FactHealth(
            live=total,
            trashed=sum(trashed.values()),
            by_type=tuple(TypeCount(k, counts.get(k, 0), trashed.get(k, 0)) for k in types),
            verified=sum(int(r[2]) for r in live),
            without_vector=int(t.one(*without_vector(key))),
            strength=StrengthSummary(
                min=min((float(r[4]) for r in live), default=None),
                p50=self._middle_strength(t, key, total, below, total - off_default),
                max=max((float(r[5]) for r in live), default=None),
                off_default=off_default,
            ),
        )

    @staticmethod
    def _middle_strength(
        t: SQLTx, key: str | None, total: int, below: int, at_default: int
    ) -> float | None:
        """The median strength of ``total`` facts, ``below`` of them under the default and
        ``at_default`` at it: the default where the middle one is among those at it (most
        facts, kept at it until consolidation moves them), else read in order (a sort of
        the scope: 0.6 s at a million facts)."""
        if not total:
            return None
        middle = (total - 1) // 2
        if below <= middle < below + at_default:
            return DEFAULT_STRENGTH
        return float(t.one(*strength_at(key, middle)))

    def fulltext_rows(self, t: SQLTx, scope: Scope | None) -> int:
        """How many rows the full-text index holds for the scope (or in all)."""
        raise NotImplementedError

    def vector_index(self, t: SQLTx, scope: str | None) -> VectorIndexHealth:
        """The approximate vector indexes of the scope (or of every scope)."""
        raise NotImplementedError

    def storage(self, t: SQLTx) -> StorageHealth:
        """The bytes the store takes."""
        raise NotImplementedError
