"""The SQLite store: the shared SQL rows, with the fact rows and candidates that are
SQLite's own (FTS5's scope token, vectors as float32 BLOBs, the in-process copies)."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING

from engram.core.models import Fact, Filters
from engram.core.ports import NewFact, Tx
from engram.core.ranking import Candidate
from engram.core.scopes import Scope
from engram.storage.rows import (
    FACT_COLUMNS,
    PLAIN,
    PLAIN_COLUMNS,
    plain_columns,
    plain_values,
    to_fact,
)
from engram.storage.sql.dialect import sqlite_vector
from engram.storage.sql.graph import queue_selected
from engram.storage.sql.passing import ASKS, FIRST_BEST, Passing, wider
from engram.storage.sql.queries import TRASH_COLUMNS
from engram.storage.sql.store import SQLStore
from engram.storage.sql.tables import FactTable
from engram.storage.sql.tx import SQLTx, sql
from engram.storage.sqlite import forgetting
from engram.storage.sqlite.database import Database
from engram.storage.sqlite.driver import sqlite3
from engram.storage.sqlite.fulltext import (
    SCOPE_TOKEN_ABOVE,
    holding_sql,
    scope_token,
    text_candidates_sql,
)
from engram.storage.sqlite.health import SQLiteHealth
from engram.storage.sqlite.index import RecallIndex
from engram.storage.sqlite.schema import scope_facts

if TYPE_CHECKING:
    from engram.core.ports import Vectors
    from engram.storage.sqlite.index.textindex import TextIndex
    from engram.storage.sqlite.index.vectors import VectorIndex


class SQLiteStore(SQLStore):
    """Working memory and facts in one SQLite file (see :class:`engram.core.ports.Store`)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        db = Database(path)
        self.index = RecallIndex(db.path, db.run)
        db.after_forgetting(self.index.sweep)
        self.index.sweep()  # what a process stopped between a commit and its sweep left
        super().__init__(
            db, SQLiteFacts(self.index), SQLiteCandidates(self.index), SQLiteHealth(db.path)
        )

    def search_approximately_from(self, facts: int) -> None:
        self.index.approximate.above = facts

    def keep_text_bases_from(self, facts: int) -> None:
        if self.texts.bases is not None:
            self.texts.bases.above = facts

    def index_vectors(self, scope: Scope, *, dry_run: bool = False) -> bool:
        approximate = self.index.approximate
        if not approximate.available:
            return False
        # a build reads the scope's state once, and returns at once when it is current
        return approximate.stale(scope.key) if dry_run else approximate.build(scope.key)

    def close(self) -> None:
        self.index.close()
        super().close()

    @property
    def path(self) -> str:
        return str(self.db.path)  # type: ignore[attr-defined]

    @property
    def vectors(self) -> VectorIndex:
        return self.index.vectors

    @property
    def texts(self) -> TextIndex:
        return self.index.texts


# A new fact's row: its id, scope and scope token, then its plain columns.
_INSERT = (
    f"INSERT INTO facts (id, scope, scope_token, {PLAIN_COLUMNS}) "
    f"VALUES (?, ?, ?, {', '.join('?' for _ in PLAIN)}) "
    "ON CONFLICT (scope, content_hash) DO NOTHING"
)
# A fork's copies of the parent's facts (p), with the given ids in the parent's order.
_COPY = (
    f"INSERT INTO facts (id, scope, scope_token, {PLAIN_COLUMNS}) "
    # Materialized, the ids get an automatic index on their position: json_each
    # alone is a virtual table, joined by a scan per row.
    "WITH n AS MATERIALIZED (SELECT key AS i, value AS id FROM json_each(?)) "
    f"SELECT n.id, ?, ?, {plain_columns('p.')} FROM (SELECT *, "
    "row_number() OVER (ORDER BY seq) "
    "- 1 AS i FROM facts WHERE scope = ?) AS p JOIN n ON n.i = p.i "
    "WHERE true ORDER BY p.seq ON CONFLICT (scope, content_hash) DO NOTHING "
    "RETURNING id"
)


class SQLiteFacts(FactTable):
    def __init__(self, index: RecallIndex) -> None:
        self._index = index

    def insert(self, tx: Tx, scope: Scope, facts: Sequence[NewFact]) -> set[str]:
        if not facts:
            return set()
        t = sql(tx).recorded()
        conn, token = t.conn, scope_token(scope.key)
        # Rows go in as one statement; those written are the rows above the highest
        # seq before it that carry these ids (a hash the scope holds is skipped).
        before = conn.execute("SELECT coalesce(max(seq), 0) FROM facts").fetchone()[0]
        t.executemany(
            _INSERT, [(new.fact.id, scope.key, token, *plain_values(new)) for new in facts]
        )
        by_id = {new.fact.id: new for new in facts}
        # In seq order: the vectors then append to their table's last page, which fills
        # pages whole; in the id index's (random) order a batch split pages, 12% of the
        # table left empty.
        landed = conn.execute(
            "SELECT seq, id FROM facts WHERE seq > ? AND id IN (SELECT value FROM json_each(?)) "
            "ORDER BY seq",
            (before, json.dumps(list(by_id))),
        ).fetchall()
        t.executemany(
            "INSERT INTO fact_vectors (fact, vector) VALUES (?, ?)",
            [(seq, sqlite_vector(by_id[fact_id].vector)) for seq, fact_id in landed],
        )
        t.executemany(
            "INSERT INTO fact_tags (fact, scope, tag) VALUES (?, ?, ?)",
            [(seq, scope.key, tag) for seq, fact_id in landed for tag in by_id[fact_id].fact.tags],
        )
        return {by_id[fact_id].content_hash for _, fact_id in landed}

    def trash(self, tx: Tx, scope: Scope, ids: Sequence[str] | None, now_us: int) -> list[str]:
        # A soft forget takes the words out of the full-text index as a deletion does.
        if ids is not None and not ids:  # every write sweeps its scope's expired facts
            return []
        conn = sql(tx).conn
        count = len(ids) if ids is not None else _facts_in(conn, scope.key)
        if ids is None:
            _drop_index_file(tx, scope)
        with forgetting.deleting(conn, count):
            return super().trash(tx, scope, ids, now_us)

    def erase(self, tx: Tx, scope: Scope, ids: Sequence[str]) -> tuple[list[str], list[str]]:
        with forgetting.deleting(sql(tx).conn, len(ids)):
            return super().erase(tx, scope, ids)

    def erase_scope(self, tx: Tx, scope: Scope, *, turn_user: str | None = None) -> tuple[int, int]:
        t = sql(tx)
        if turn_user is None:
            _drop_index_file(tx, scope)
        # The triggers' count: how many facts the scope holds, at most, go.
        with forgetting.deleting(t.conn, _facts_in(t.conn, scope.key)):
            gone = super().erase_scope(tx, scope, turn_user=turn_user)
        if turn_user is None:
            t.after_commit(lambda: self._index.forget(scope.key))
        return gone

    def fulltext_sound(self, tx: Tx) -> bool:
        try:  # FTS5 compares its index with the facts it was built from
            sql(tx).conn.execute(
                "INSERT INTO facts_fts (facts_fts, rank) VALUES ('integrity-check', 1)"
            )
        except sqlite3.DatabaseError:
            return False
        return True

    def rebuild_fulltext(self, tx: Tx) -> None:
        sql(tx).recorded().conn.execute("INSERT INTO facts_fts (facts_fts) VALUES ('rebuild')")

    def restore(self, tx: Tx, scope: Scope, ids: Sequence[str]) -> list[Fact]:
        if not ids:
            return []
        t = sql(tx).recorded()
        conn = t.conn
        listed = json.dumps(list(ids), ensure_ascii=False)
        # In the order given (new rows numbered as they come), looked up by id.
        rows = conn.execute(
            f"INSERT INTO facts ({TRASH_COLUMNS}, scope_token) SELECT {TRASH_COLUMNS}, ? "
            "FROM (SELECT t.*, j.key AS position FROM json_each(?) AS j "
            "JOIN fact_trash AS t ON t.id = j.value WHERE +t.scope = ?) "
            f"WHERE true ORDER BY position ON CONFLICT DO NOTHING RETURNING {FACT_COLUMNS}",
            (scope_token(scope.key), listed, scope.key),
        ).fetchall()
        facts = {str(r[0]): to_fact(r) for r in rows}  # tags read by Python
        seqs = {str(r[0]): int(r[-1]) for r in rows}
        moved = json.dumps(list(facts), ensure_ascii=False)
        conn.execute(
            "INSERT INTO fact_vectors (fact, vector) SELECT f.seq, t.vector "
            "FROM fact_trash t JOIN facts f ON f.id = t.id "
            "WHERE t.id IN (SELECT value FROM json_each(?)) AND t.vector IS NOT NULL "
            "ORDER BY f.seq",
            (moved,),
        )
        t.executemany(
            "INSERT INTO fact_tags (fact, scope, tag) VALUES (?, ?, ?)",
            [(seqs[i], scope.key, tag) for i, f in facts.items() for tag in dict.fromkeys(f.tags)],
        )
        conn.execute(
            "DELETE FROM fact_trash WHERE id IN (SELECT value FROM json_each(?))", (moved,)
        )
        return [facts[i] for i in ids if i in facts]

    def copy_scope(self, tx: Tx, parent: Scope, child: Scope, ids: Sequence[str]) -> list[str]:
        conn = sql(tx).recorded().conn
        # Set-based: the copies get the given ids in the parent's order and row numbers
        # above every existing one, then vectors and tags follow them by content hash
        # (unique in a scope).
        before = conn.execute("SELECT coalesce(max(seq), 0) FROM facts").fetchone()[0]
        copied = conn.execute(
            _COPY, (json.dumps(list(ids)), child.key, scope_token(child.key), parent.key)
        ).fetchall()
        copy_of = (
            "FROM facts c JOIN facts p ON p.scope = ? AND p.content_hash = c.content_hash "
            "JOIN {table} x ON x.fact = p.seq WHERE c.scope = ? AND c.seq > ?"
        )
        conn.execute(
            "INSERT INTO fact_vectors (fact, vector) SELECT c.seq, x.vector "
            + copy_of.format(table="fact_vectors"),
            (parent.key, child.key, before),
        )
        conn.execute(
            "INSERT INTO fact_tags (fact, scope, tag) SELECT c.seq, c.scope, x.tag "
            + copy_of.format(table="fact_tags"),
            (parent.key, child.key, before),
        )
        return [str(r[0]) for r in copied]


class SQLiteCandidates:
    def __init__(self, index: RecallIndex) -> None:
        self._index = index

    def text(
        self, tx: Tx, scope: Scope, terms: Sequence[str], filters: Filters, limit: int
    ) -> list[Candidate]:
        t = sql(tx)
        return self._text(t.conn, scope, terms, filters, limit, _passing(t, scope, filters))

    def _text(
        self,
        conn: sqlite3.Connection,
        scope: Scope,
        terms: Sequence[str],
        filters: Filters,
        limit: int,
        passing: Passing[set[int]] | None,
    ) -> list[Candidate]:
        """The full-text half; ``passing``: the filters' facts (None: no filter)."""
        if not terms:
            return []
        # Large scopes rank from memory, exactly as the statement (under a filter, as
        # ``passing`` reads it); the statement answers the rest.
        if passing is None:
            ranked = self._index.ranked(conn, scope.key, terms, limit)
        else:
            ranked = passing.ranked(
                lambda n, among: self._index.ranked(conn, scope.key, terms, n, among),
                limit,
                lambda n: self._index.ranked_passing(conn, scope.key, terms, n, passing.among),
            )
        if ranked is not None:
            return ranked
        outside = _facts_outside(conn, scope.key)
        statement, params = text_candidates_sql(terms, scope.key, filters, limit, outside)
        rows = conn.execute(statement, params).fetchall()
        return [Candidate(r[0], -float(r[1])) for r in rows]  # bm25(): lower is better

    def queue_holding(
        self, tx: Tx, scope: Scope, terms: Sequence[str], exclude: Collection[str] = ()
    ) -> None:
        if not terms:
            return
        # FTS5 itself, not the in-process postings: a write asks this inside its
        # transaction, and loading a large scope's postings there costs it their memory.
        statement, params = holding_sql(terms, scope.key)
        queue_selected(tx, scope, statement, params, sorted(exclude))

    def vector(
        self, tx: Tx, scope: Scope, vector: Vectors, filters: Filters, limit: int
    ) -> list[Candidate]:
        t = sql(tx)
        return self._vector(t.conn, scope, vector, limit, _passing(t, scope, filters))

    def _vector(
        self,
        conn: sqlite3.Connection,
        scope: Scope,
        vector: Vectors,
        limit: int,
        passing: Passing[set[int]] | None,
    ) -> list[Candidate]:
        """The vector half; ``passing``: the filters' facts (None: no filter). A scope
        searched through its graph keeps the first passing facts of its best (reading
        only those from the file), asked as wide as the full-text half asks
        (:meth:`Passing.ranked`), and reads the filter's rows only where too few of
        those pass."""
        if passing is None:
            return self._index.nearest(conn, scope.key, vector, None, limit)
        if passing.few is None and self._index.by_graph(_facts_in(conn, scope.key)):
            asked = FIRST_BEST * limit
            for _ in range(ASKS):
                found = self._index.nearest_passing(conn, scope.key, vector, asked, passing.among)
                if found is None:  # searched exactly (no graph yet): once, then the rows
                    best = self._index.nearest(conn, scope.key, vector, None, asked)
                    found = passing.passed(best)
                    if len(found) >= limit or len(best) < asked:
                        return found[:limit]
                    break
                if len(found) >= limit:
                    return found[:limit]
                asked = wider(limit, asked, len(found))
        return self._index.nearest(conn, scope.key, vector, passing.rows, limit)

    def both(
        self,
        tx: Tx,
        scope: Scope,
        terms: Sequence[str],
        vector: Vectors,
        filters: Filters,
        limit: int,
        then: Callable[[Tx, list[Candidate]], object] | None = None,
    ) -> tuple[list[Candidate], list[Candidate]]:
        conn = sql(tx).conn

        def text_half(passing: Passing[set[int]] | None = None) -> list[Candidate]:
            found = self._text(conn, scope, terms, filters, limit, passing)
            if then is not None:
                then(tx, found)
            return found

        # A filter's facts are counted, or read, once for both halves.
        passing = _passing(sql(tx), scope, filters)
        few = passing is not None and passing.few is not None
        if few or not self._index.by_graph(_facts_in(conn, scope.key)):
            # One after the other: exact search's product uses every core already, and
            # a few facts' search is over before a thread would start (at 1.15M, a
            # filter's few took 2.2 ms beside, 1.6 in turn).
            text = text_half(passing)
            return text, self._vector(conn, scope, vector, limit, passing)
        # usearch lets go of the GIL while it searches the graph, and SQLite while it
        # steps: started first on a thread of its own, on the same connection and read
        # (SQLite serializes the calls), the text half and ``then`` run beside the
        # search (BENCHMARKS.md, "SQLite's halves beside each other"), and so under a
        # filter many facts pass.
        found: list[list[Candidate]] = []
        failed: list[BaseException] = []

        def beside() -> None:
            try:
                found.append(text_half(passing))
            except BaseException as exc:  # raised again in the caller's thread
                failed.append(exc)

        thread = threading.Thread(target=beside, name="engram-text-half")
        thread.start()
        try:
            semantic = self._vector(conn, scope, vector, limit, passing)
        finally:
            thread.join()
        if failed:
            raise failed[0]
        return found[0], semantic


def _passing(t: SQLTx, scope: Scope, filters: Filters) -> Passing[set[int]] | None:
    """A filter's facts as SQLite's halves read them: as a set of row numbers, counted
    before they are read (a Python set of 20,001 costs nine times their count)."""
    return Passing.of(t, scope, filters, as_set, count_first=True)


def as_set(t: SQLTx, statement: str, params: Sequence[object]) -> set[int]:
    """The row numbers ``statement`` selects, as a set, read as one JSON array: 10,000 of
    them in 1.9 ms, against 5.6 a row at a time."""
    found = t.rows(f"SELECT json_group_array(seq) FROM ({statement}) AS p", params)
    return set(json.loads(found[0][0]))


def _drop_index_file(tx: Tx, scope: Scope) -> None:
    """Drops the scope's approximate index file (the commit's sweep deletes it) before
    every one of its facts leaves: the file goes whole, not a row overwritten at a time."""
    sql(tx).recorded().execute("DELETE FROM vector_indexes WHERE scope = ?", (scope.key,))


def _facts_in(conn: sqlite3.Connection, scope: str) -> int:
    """How many facts the scope holds, as the triggers count them."""
    return scope_facts(conn, scope) or 0


def _facts_outside(conn: sqlite3.Connection, scope: str) -> int:
    """How many facts of the store lie outside ``scope``, exactly up to
    :data:`SCOPE_TOKEN_ABOVE` and above it when more: a bounded read however many scopes
    the store holds."""
    return forgetting.facts_held(conn, SCOPE_TOKEN_ABOVE + 1, besides=scope)
