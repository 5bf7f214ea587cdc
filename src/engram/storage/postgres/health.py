"""The health report's PostgreSQL part: facts full text can find, and the database's size.

Full text is the generated ``words`` column (schema migration 1), which the database
keeps in step with the words itself: it cannot go missing the way an index row of
SQLite's can. What it can be is empty, for a fact of stopwords and punctuation only,
which full text then never finds; such facts show as rows below facts.
"""

from __future__ import annotations

from engram.core.health import StorageHealth
from engram.core.scopes import Scope
from engram.storage.sql.health import HealthTable, scoped
from engram.storage.sql.tx import SQLTx


class PostgresHealth(HealthTable):
    def fulltext_rows(self, t: SQLTx, scope: Scope | None) -> int:
        where, params = scoped("scope", None if scope is None else scope.key, "AND")
        return int(t.one(f"SELECT count(*) FROM facts WHERE length(words) > 0{where}", params))

    def storage(self, t: SQLTx) -> StorageHealth:
        size = int(t.one("SELECT pg_database_size(current_database())"))
        return StorageHealth("postgres", bytes=size, wal_bytes=None, free_bytes=None)
