"""The in-process copies a SQLite store recalls from: each scope's vectors (exact search,
pruned in large scopes) and, in large scopes, its full-text postings.

They never hear of a write. Each search reads, in the caller's snapshot, what the file
records of its own changes (``scope_state`` and the change log, both kept by the triggers
of schema migration 6) and brings its copy up to that point first, so any write path,
raw SQL included, is followed. numpy and the copies load on the first search.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING

from engram.core.ranking import Candidate
from engram.storage.sqlite.driver import sqlite3

if TYPE_CHECKING:
    from engram.core.ports import Vectors
    from engram.storage.sqlite.index.textindex import TextIndex
    from engram.storage.sqlite.index.vectors import VectorIndex


class RecallIndex:
    @cached_property
    def vectors(self) -> VectorIndex:
        from engram.storage.sqlite.index.vectors import VectorIndex

        return VectorIndex()

    @cached_property
    def texts(self) -> TextIndex:
        from engram.storage.sqlite.index.textindex import TextIndex

        return TextIndex()

    def nearest(
        self,
        conn: sqlite3.Connection,
        scope: str,
        vector: Vectors,
        allowed: set[int] | None,
        limit: int,
    ) -> list[Candidate]:
        """The ``limit`` facts of ``scope`` nearest ``vector`` (among the row numbers
        ``allowed``, when given), best first. ``conn`` is inside a read transaction."""
        return self.vectors.search(conn, scope, vector, allowed, limit)

    def ranked(
        self, conn: sqlite3.Connection, scope: str, terms: Sequence[str], limit: int
    ) -> list[Candidate] | None:
        """The ``limit`` best full-text matches of ``terms`` in ``scope``, ranked exactly as
        FTS5's statement ranks them; None when the scope is too small to keep postings
        for (or the terms need the statement)."""
        return self.texts.search(conn, scope, terms, limit)

    def forget(self, scope: str) -> None:
        """Drops the scope's copies (an emptied scope), where loaded."""
        for name in ("vectors", "texts"):
            if name in self.__dict__:
                self.__dict__[name].forget(scope)
