"""The health report's SQLite part: rows of the FTS5 index, and the file's bytes.

The index is read, never checked: FTS5's ``integrity-check`` is an INSERT, and a report
writes nothing. A scope's rows are those filed under its token (a MATCH on the token's
postings, which costs what the scope holds); the store's are the rows of the index's
``docsize`` table, one per indexed fact. A row the triggers failed to add or remove
therefore shows as rows against facts.
"""

from __future__ import annotations

import os

from engram.core.health import StorageHealth
from engram.core.scopes import Scope
from engram.storage.sql.health import HealthTable
from engram.storage.sql.tx import SQLTx
from engram.storage.sqlite.fulltext import scope_token


class SQLiteHealth(HealthTable):
    def __init__(self, path: str) -> None:
        self._path = path

    def fulltext_rows(self, t: SQLTx, scope: Scope | None) -> int:
        if scope is None:
            return int(t.one("SELECT count(*) FROM facts_fts_docsize"))
        token = f'scope_token : "{scope_token(scope.key)}"'
        return int(t.one("SELECT count(*) FROM facts_fts WHERE facts_fts MATCH ?", (token,)))

    def storage(self, t: SQLTx) -> StorageHealth:
        page = int(t.one("PRAGMA page_size"))
        pages, free = int(t.one("PRAGMA page_count")), int(t.one("PRAGMA freelist_count"))
        try:
            wal = os.stat(self._path + "-wal").st_size
        except FileNotFoundError:
            wal = 0
        return StorageHealth("sqlite", bytes=pages * page, wal_bytes=wal, free_bytes=free * page)
