"""What a SQLite store recalls from besides its statements: each scope's vectors (exact
search from an in-process copy, pruned in large scopes; in the largest, an approximate
index in a file beside the database, :mod:`.approximate`) and, in large scopes, the
full-text postings of the words its queries ask for.

They never hear of a write. Each search reads, in the caller's snapshot, what the file
records of its own changes (``scope_state`` and the change log, both kept by the triggers
of schema migration 6) and brings its copy up to that point first, so any write path,
raw SQL included, is followed. numpy and the copies load on the first search.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

from engram.core.ranking import Candidate
from engram.storage.sqlite.driver import sqlite3
from engram.storage.sqlite.index import vectorfiles
from engram.storage.sqlite.schema import scope_facts

if TYPE_CHECKING:
    from engram.core.ports import Vectors
    from engram.storage.sql.passing import Sifted
    from engram.storage.sqlite.index.approximate import ApproximateIndex
    from engram.storage.sqlite.index.textindex import TextIndex
    from engram.storage.sqlite.index.vectors import VectorIndex


class RecallIndex:
    def __init__(self, database: str = "", run: Callable[..., Any] | None = None) -> None:
        """``database`` is the file's path, ``run`` its :meth:`Database.run` (the
        approximate index's builds); without them, every vector search is exact."""
        self._database, self._run = database, run

    @cached_property
    def approximate(self) -> ApproximateIndex:
        from engram.storage.sqlite.index.approximate import ApproximateIndex

        return ApproximateIndex(self._database, self._run)

    @cached_property
    def vectors(self) -> VectorIndex:
        from engram.storage.sqlite.index.vectors import VectorIndex

        return VectorIndex()

    @cached_property
    def texts(self) -> TextIndex:
        from engram.storage.sqlite.index.textindex import TextIndex

        return TextIndex(run=self._run)

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
        facts = scope_facts(conn, scope)
        if facts is not None:
            found = self.approximate.search(conn, scope, vector, allowed, limit, facts)
            if found is not None:
                return found
        return self.vectors.search(conn, scope, vector, allowed, limit, facts or 0)

    def nearest_passing(
        self,
        conn: sqlite3.Connection,
        scope: str,
        vector: Vectors,
        limit: int,
        passes: Callable[[list[int]], set[int]],
    ) -> list[Candidate] | None:
        """Those of the ``limit`` facts of ``scope`` nearest ``vector`` that pass a filter
        (``passes``: of given row numbers, those that do), best first, read from the
        file only once they pass; None where the scope's graph does not answer."""
        facts = scope_facts(conn, scope)
        if facts is None:
            return None
        return self.approximate.search(conn, scope, vector, None, limit, facts, passes)

    def by_graph(self, facts: int) -> bool:
        """Whether a scope of ``facts`` facts is searched through its graph (once built)."""
        return facts >= self.approximate.above and self.approximate.available

    def ranked(
        self,
        conn: sqlite3.Connection,
        scope: str,
        terms: Sequence[str],
        limit: int,
        allowed: set[int] | None = None,
    ) -> list[Candidate] | None:
        """The ``limit`` best full-text matches of ``terms`` in ``scope`` (among the row
        numbers ``allowed``, when given), ranked exactly as FTS5's statement ranks them;
        None when the scope is too small to keep postings for (or the terms need the
        statement)."""
        return self.texts.search(conn, scope, terms, limit, allowed)

    def ranked_passing(
        self,
        conn: sqlite3.Connection,
        scope: str,
        terms: Sequence[str],
        asked: int,
        passes: Callable[[list[int]], set[int]],
    ) -> Sifted | None:
        """Those of the ``asked`` best full-text matches of ``terms`` in ``scope`` that
        pass a filter (``passes``), only their rows read; None as :meth:`ranked`."""
        return self.texts.search_passing(conn, scope, terms, asked, passes)

    def forget(self, scope: str) -> None:
        """Drops the scope's copies (an emptied scope), where loaded."""
        for name in ("approximate", "vectors", "texts"):
            if name in self.__dict__:
                self.__dict__[name].forget(scope)

    def sweep(self) -> None:
        """Overwrites in their index files the vectors of the facts erased since, and
        deletes the files no row names (after a commit that forgot something, and as a
        store opens: what a process left undone)."""
        if self._run is None:
            return
        if "approximate" in self.__dict__ or vectorfiles.scrubbing(self._run):
            self.approximate.sweep()
        else:  # nothing to overwrite: numpy stays unloaded
            vectorfiles.sweep(vectorfiles.directory_of(self._database), self._run)

    def close(self) -> None:
        """Stops the threads that build and load on the side (a build under way is
        dropped)."""
        for name in ("approximate", "texts"):
            if name in self.__dict__:
                self.__dict__[name].close()
