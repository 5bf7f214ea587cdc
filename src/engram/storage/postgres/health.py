"""The health report's PostgreSQL part: facts full text can find, the scopes' own HNSW
indexes, and the database's size.

Full text is the generated ``words`` column (schema migration 1), which the database
keeps in step with the words itself: it cannot go missing the way an index row of
SQLite's can. What it can be is empty, for a fact of stopwords and punctuation only,
which full text then never finds; such facts show as rows below facts.

A scope's HNSW index (:mod:`engram.storage.postgres.vectors`) holds its vectors up to
one fact (``ann_through``; all of them for an index from before that scheme, NULL), and
its recent graph those after it up to another (``recent_through``); the vectors after
both are searched exactly beside them.
"""

from __future__ import annotations

from engram.core.health import StorageHealth, VectorIndexHealth
from engram.core.scopes import Scope
from engram.storage.postgres import scrub
from engram.storage.sql.health import HealthTable, scoped
from engram.storage.sql.tx import SQLTx


class PostgresHealth(HealthTable):
    def fulltext_rows(self, t: SQLTx, scope: Scope | None) -> int:
        where, params = scoped("scope", None if scope is None else scope.key, "AND")
        return int(t.one(f"SELECT count(*) FROM facts WHERE length(words) > 0{where}", params))

    def vector_index(self, t: SQLTx, scope: str | None) -> VectorIndexHealth:
        where, params = scoped("s.scope", scope, "AND")
        scopes, vectors, beside, size = t.execute(
            "SELECT count(*), coalesce(sum(coalesce(s.ann_rows, s.facts) "
            "+ coalesce(s.recent_rows, 0)), 0), coalesce(sum((SELECT count(*) FROM "
            "fact_vectors v WHERE v.scope = s.scope "
            "AND v.fact > coalesce(s.recent_through, s.ann_through))), 0), "
            "coalesce(sum(pg_relation_size(to_regclass(quote_ident(s.ann_index))) "
            "+ coalesce(pg_relation_size(to_regclass(quote_ident(s.recent_index))), 0)), 0) "
            f"FROM scope_state s WHERE s.ann_index IS NOT NULL{where}",
            params,
        ).fetchone()
        return VectorIndexHealth(
            scopes=int(scopes),
            vectors=int(vectors),
            beside=int(beside),
            bytes=int(size),
            to_overwrite=None,
        )

    def storage(self, t: SQLTx) -> StorageHealth:
        size = int(t.one("SELECT pg_database_size(current_database())"))
        due = bool(t.one(scrub.DUE))
        return StorageHealth("postgres", size, wal_bytes=None, free_bytes=None, scrub_due=due)
