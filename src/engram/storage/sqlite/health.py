"""The health report's SQLite part: rows of the FTS5 index, the approximate vector indexes'
files, and the database file's bytes.

The index is read, never checked: FTS5's ``integrity-check`` is an INSERT, and a report
writes nothing. A scope's rows are those filed under its token (a MATCH on the token's
postings, which costs what the scope holds); the store's are the rows of the index's
``docsize`` table, one per indexed fact. A row the triggers failed to add or remove
therefore shows as rows against facts.

A scope's vector index file (:mod:`engram.storage.sqlite.index.approximate`) holds its
facts up to the row it was built at; the facts after it, and those the change log names
since its mark, are searched beside it (all of them where the log was cleared past the
mark: the file is then used no more, until the next build).
"""

from __future__ import annotations

import os

from engram.core.health import StorageHealth, VectorIndexHealth
from engram.core.scopes import Scope
from engram.storage.sql.health import HealthTable, scoped
from engram.storage.sql.tx import SQLTx
from engram.storage.sqlite import freespace
from engram.storage.sqlite.fulltext import scope_token
from engram.storage.sqlite.index import vectorfiles

# The scope's live facts with a vector: past the file's newest row, and up to it those the
# change log names since the file's mark (each a walk of what it counts, not the scope's).
_WITH_VECTOR = (
    "SELECT count(*) FROM facts f JOIN fact_vectors v ON v.fact = f.seq WHERE f.scope = ?"
)
_AFTER = f"{_WITH_VECTOR} AND f.seq > ?"
_REWRITTEN = (
    f"{_WITH_VECTOR} AND f.seq <= ? AND f.seq IN "
    "(SELECT seq FROM fact_changes WHERE scope = ? AND id > ?)"
)


class SQLiteHealth(HealthTable):
    def __init__(self, path: str) -> None:
        self._path = path

    def fulltext_rows(self, t: SQLTx, scope: Scope | None) -> int:
        if scope is None:
            return int(t.one("SELECT count(*) FROM facts_fts_docsize"))
        token = f'scope_token : "{scope_token(scope.key)}"'
        return int(t.one("SELECT count(*) FROM facts_fts WHERE facts_fts MATCH ?", (token,)))

    def vector_index(self, t: SQLTx, scope: str | None) -> VectorIndexHealth:
        where, params = scoped("i.scope", scope)
        indexes = t.rows(
            "SELECT i.scope, i.file, i.size, i.mark, i.last_seq, s.changes_from > i.mark "
            f"FROM vector_indexes i LEFT JOIN scope_state s ON s.scope = i.scope{where}",
            params,
        )
        beside = 0
        for key, _, _, mark, last_seq, cleared in indexes:
            if cleared:  # the file is used no more: every vector is searched exactly
                beside += int(t.one(_WITH_VECTOR, (key,)))
            else:
                beside += int(t.one(_AFTER, (key, last_seq)))
                beside += int(t.one(_REWRITTEN, (key, last_seq, key, mark)))
        where, params = scoped("i.scope", scope, "AND")
        pending = t.one(
            f"SELECT count(*) FROM vector_scrubs s JOIN vector_indexes i ON i.file = s.file{where}",
            params,
        )
        directory = vectorfiles.directory_of(self._path)
        return VectorIndexHealth(
            scopes=len(indexes),
            vectors=sum(int(r[2]) for r in indexes),
            beside=beside,
            bytes=0 if directory is None else sum(_size(directory / r[1]) for r in indexes),
            to_overwrite=int(pending),
        )

    def storage(self, t: SQLTx) -> StorageHealth:
        page = int(t.one("PRAGMA page_size"))
        pages, free = int(t.one("PRAGMA page_count")), int(t.one("PRAGMA freelist_count"))
        wal = freespace.log_bytes(self._path)
        due = freespace.due(t.conn)
        return StorageHealth("sqlite", pages * page, wal, free * page, scrub_due=due)


def _size(path: str | os.PathLike[str]) -> int:
    """A file's bytes; 0 where there is none (no log yet, an index file another process
    dropped meanwhile)."""
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return 0
