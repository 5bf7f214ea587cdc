"""The PostgreSQL store, for many processes at once: the shared SQL rows, with the fact
rows and candidates that are PostgreSQL's own (unnest inserts, pgvector, a scope's own
HNSW index, tsvector ranking).

The core takes a scope's transaction-level advisory lock before it checks and changes
the scope's facts (``lock=`` of a transaction), so forget-all's count, caps, fork and
deduplication never interleave across processes; scopes never wait for one another.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import psycopg

from engram.core.errors import StorageFailure
from engram.core.models import Fact, Filters
from engram.core.ports import ModelRecord, NewFact, Tx
from engram.core.ranking import Candidate
from engram.core.scopes import Scope
from engram.storage.background import Worker
from engram.storage.postgres import fulltext, vectors
from engram.storage.postgres.database import Conn, Database, PostgresTx
from engram.storage.postgres.health import PostgresHealth
from engram.storage.postgres.postings import Postings
from engram.storage.rows import (
    FACT_COLUMNS,
    PLAIN,
    PLAIN_COLUMNS,
    plain_columns,
    plain_values,
    stored_digest,
    to_fact,
)
from engram.storage.sql.graph import queue_selected
from engram.storage.sql.passing import Passing
from engram.storage.sql.queries import TRASH_COLUMNS
from engram.storage.sql.store import SQLStore
from engram.storage.sql.tables import FactTable, ModelTable
from engram.storage.sql.tx import sql

log = logging.getLogger("engram.storage")

if TYPE_CHECKING:
    from engram.core.ports import Vectors


class PostgresStore(SQLStore):
    """Working memory and facts in one PostgreSQL database with pgvector."""

    def __init__(self, url: str, *, apply_migrations: bool = True) -> None:
        db = Database(url, apply_migrations=apply_migrations)
        self.ann_above = vectors.ANN_ABOVE
        self.postings = Postings()  # those full text has read, summed in this process
        super().__init__(
            db,
            PostgresFacts(self),
            PostgresCandidates(db, self),
            PostgresHealth(),
            models=PostgresModels(),
        )
        self.pg = db
        self.builder = IndexBuilder(db, lambda: self.ann_above)

    def close(self) -> None:
        self.builder.close()
        self.postings.clear()
        super().close()

    def search_approximately_from(self, facts: int) -> None:
        self.ann_above = facts

    def keep_text_bases_from(self, facts: int) -> None:
        """No text base here: a question reads its words' postings from ``fact_terms``."""

    def index_vectors(self, scope: Scope, *, dry_run: bool = False) -> bool:
        def build(conn: psycopg.Connection[Any]) -> bool:
            if not vectors.due(conn, scope.key, self.ann_above, current=True):
                return False
            return True if dry_run else bool(vectors.build_index(conn, scope.key))

        return bool(self.pg.autocommit(build))

    @property
    def path(self) -> str:
        """Where the store is, as it may be shown (no password)."""
        return self.pg.name


# Each kind of column as an array of it, which the insert unnests.
_ARRAYS = {"text": "text[]", "integer": "bigint[]", "real": "float8[]"}
# New facts' rows, one array a column: their ids and scope, then their plain columns.
_INSERT = (
    f"INSERT INTO facts (id, scope, {PLAIN_COLUMNS}) "
    f"SELECT n.id, %s, {plain_columns('n.')} FROM unnest(%b::text[], "
    + ", ".join(f"%b::{_ARRAYS[c.kind.sql]}" for c in PLAIN)
    + f") AS n(id, {PLAIN_COLUMNS}) "
    "ON CONFLICT (scope, content_hash) DO NOTHING RETURNING seq, content_hash"
)
# A fork's copies of the parent's facts (p), with the given ids in the parent's order,
# each copy's row and its parent's noted.
_COPY = (
    "WITH copied AS ("
    f" INSERT INTO facts (id, scope, {PLAIN_COLUMNS}) "
    f" SELECT n.id, %s, {plain_columns('p.')} FROM (SELECT f.*, "
    " row_number() OVER (ORDER BY seq) AS i FROM facts f WHERE scope = %s) AS p "
    " JOIN unnest(%s::text[]) WITH ORDINALITY AS n(id, i) ON n.i = p.i "
    " ORDER BY p.seq ON CONFLICT (scope, content_hash) DO NOTHING "
    " RETURNING seq, content_hash) "
    "INSERT INTO fork_copies (parent, child) SELECT p.seq, c.seq FROM copied c "
    "JOIN facts p ON p.scope = %s AND p.content_hash = c.content_hash"
)


class PostgresFacts(FactTable):
    def __init__(self, store: PostgresStore) -> None:
        self._store = store

    def insert(self, tx: Tx, scope: Scope, facts: Sequence[NewFact]) -> set[str]:
        t = sql(tx).recorded()
        conn: Conn = t.conn
        if not facts:
            return set()
        columns = zip(*(plain_values(new) for new in facts), strict=True)
        ids = [new.fact.id for new in facts]
        rows = conn.execute(_INSERT, (scope.key, ids, *[list(c) for c in columns])).fetchall()
        by_hash = {stored_digest(new.content_hash): new for new in facts}
        if rows:
            _recounted(conn, len(rows), "facts", "fact_terms")
            t.executemany(
                "INSERT INTO fact_vectors (fact, scope, vector) VALUES (?, ?, ?)",
                [(seq, scope.key, by_hash[h].vector.astype(np.float32)) for seq, h in rows],
            )
            t.executemany(
                "INSERT INTO fact_tags (fact, scope, tag) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                [(seq, scope.key, tag) for seq, h in rows for tag in by_hash[h].fact.tags],
            )
            self._index_when_grown(tx, scope)
        return {by_hash[str(h)].content_hash for _, h in rows}

    def erase(self, tx: Tx, scope: Scope, ids: Sequence[str]) -> tuple[list[str], list[str]]:
        self._forget_copies(tx, scope)
        return super().erase(tx, scope, ids)

    def _forget_copies(self, tx: Tx, scope: Scope) -> None:
        """Erased words leave this process's copies of the scope's postings at the commit
        (another process's go at its next question there, by the scope's words_version)."""
        sql(tx).after_commit(lambda: self._store.postings.forget(scope.key))

    def erase_scope(self, tx: Tx, scope: Scope, *, turn_user: str | None = None) -> tuple[int, int]:
        self._forget_copies(tx, scope)
        if turn_user is None:
            vectors.cancel_builds(sql(tx).conn, scope.key)
        gone = super().erase_scope(tx, scope, turn_user=turn_user)
        if turn_user is None:
            vectors.drop_indexes(sql(tx).conn, scope.key)
        return gone

    def restore(self, tx: Tx, scope: Scope, ids: Sequence[str]) -> list[Fact]:
        if not ids:
            return []
        conn: Conn = sql(tx).recorded().conn
        _recounted(conn, len(ids), "fact_trash")
        # Each trash row is sought by its id, one lookup each (`_TRASHED`), in the order
        # given: the new rows are numbered as they come.
        rows = conn.execute(
            f"INSERT INTO facts ({TRASH_COLUMNS}) SELECT {TRASH_COLUMNS} "
            "FROM (SELECT t.*, j.position FROM unnest(%s::text[]) WITH ORDINALITY "
            f"AS j (id, position) {_TRASHED.format(key='j.id')} WHERE t.scope = %s) AS t "
            f"ORDER BY position ON CONFLICT DO NOTHING RETURNING {FACT_COLUMNS}",
            (list(ids), scope.key),
        ).fetchall()
        _recounted(conn, len(rows), "facts", "fact_terms")
        facts = {str(r[0]): to_fact(r) for r in rows}
        moved = ([str(r[0]) for r in rows], [int(r[-1]) for r in rows])
        listed = f"unnest(%s::text[], %s::bigint[]) AS m (id, seq) {_TRASHED.format(key='m.id')}"
        conn.execute(
            "INSERT INTO fact_vectors (fact, scope, vector) SELECT m.seq, t.scope, t.vector "
            f"FROM {listed} WHERE t.vector IS NOT NULL ORDER BY m.seq",
            moved,
        )
        conn.execute(
            "INSERT INTO fact_tags (fact, scope, tag) SELECT DISTINCT m.seq, t.scope, x.tag "
            f"FROM {listed}, jsonb_array_elements_text(t.tags::jsonb) AS x (tag)",
            moved,
        )
        # Deleted by where each row lies, found as above: a join of the trash to the list
        # is the planner's to turn round.
        conn.execute(
            "DELETE FROM fact_trash WHERE ctid = ANY(ARRAY(SELECT t.ctid FROM unnest(%s::text[]) "
            f"AS m (id) {_TRASHED.format(key='m.id')}))",
            (moved[0],),
        )
        return [facts[i] for i in ids if i in facts]

    def copy_scope(self, tx: Tx, parent: Scope, child: Scope, ids: Sequence[str]) -> list[str]:
        conn: Conn = sql(tx).recorded().conn
        # Set-based: copies get the given ids in the parent's order; vectors and tags
        # follow them by content hash (unique in a scope) from the rows it returns.
        conn.execute(
            "CREATE TEMPORARY TABLE fork_copies (parent bigint, child bigint) ON COMMIT DROP"
        )
        conn.execute(_COPY, (child.key, parent.key, list(ids), parent.key))
        conn.execute(
            "INSERT INTO fact_vectors (fact, scope, vector) SELECT k.child, %s, v.vector "
            "FROM fork_copies k JOIN fact_vectors v ON v.fact = k.parent",
            (child.key,),
        )
        conn.execute(
            "INSERT INTO fact_tags (fact, scope, tag) SELECT k.child, %s, t.tag "
            "FROM fork_copies k JOIN fact_tags t ON t.fact = k.parent",
            (child.key,),
        )
        copied = conn.execute(
            "SELECT f.id FROM fork_copies k JOIN facts f ON f.seq = k.child ORDER BY k.child"
        ).fetchall()
        conn.execute("DROP TABLE fork_copies")
        return [str(r[0]) for r in copied]

    def add_vectors(self, tx: Tx, rows: Sequence[tuple[int, Vectors]]) -> None:
        sql(tx).recorded().executemany(
            "INSERT INTO fact_vectors (fact, scope, vector) SELECT seq, scope, ? FROM facts "
            "WHERE seq = ?",
            [(np.asarray(v, dtype=np.float32), seq) for seq, v in rows],
        )

    def replace_vectors(self, tx: Tx, rows: Sequence[tuple[int, Vectors]]) -> None:
        t = sql(tx)
        stored = self._store.models.get(tx)
        if rows and stored is not None and stored.dimension != rows[0][1].shape[0]:
            vectors.drop_indexes(t.conn)  # the new vectors would not fit their cast
        t.executemany(
            "UPDATE fact_vectors SET vector = ? WHERE fact = ?",
            [(np.asarray(v, dtype=np.float32), seq) for seq, v in rows],
        )

    def _index_when_grown(self, tx: Tx, scope: Scope) -> None:
        """Once the scope has grown past ``ann_above`` facts and its HNSW index is missing
        or leaves too many vectors out, asks for the next one after the commit (built
        concurrently, outside any transaction, in the background)."""
        if vectors.due(sql(tx).conn, scope.key, self._store.ann_above):
            builder = self._store.builder
            tx.after_commit(lambda: builder.want(scope.key))


# How long a process leaves a scope's index to another process it found building it:
# a build of 100k vectors takes minutes; one whose process died is asked for again after.
ELSEWHERE_FOR = 30.0


class IndexBuilder:
    """Builds scopes' HNSW indexes one at a time on a thread of its own, so no write
    waits for one (a 100k-vector scope's takes half a minute). A write that asks for a
    scope's index while it is being built asks for the next: once the build ends, the
    scope is looked at again and built again if it still wants an index (``above``
    gives the store's threshold). Closing cancels the build at hand: its invalid index
    is dropped by the next build of that scope."""

    def __init__(self, db: Database, above: Callable[[], int]) -> None:
        self._db = db
        self._above = above
        self._building: psycopg.Connection[Any] | None = None
        self._worker: Worker[str] = Worker("engram-hnsw", self._build, again=True)
        self._elsewhere: dict[str, float] = {}  # scope -> when another process held its build
        self.now: Callable[[], float] = time.monotonic

    def want(self, scope: str) -> None:
        """Asks for ``scope``'s next build, unless another process was found building it
        less than ``ELSEWHERE_FOR`` seconds ago: every search and write of the scope asks
        while that build runs (minutes), and each ask would read the scope's state and
        try the build's lock in vain."""
        found = self._elsewhere.get(scope)
        if found is not None and self.now() - found < ELSEWHERE_FOR:
            return
        self._worker.want(scope)

    def settle(self, timeout: float | None = None) -> bool:
        """Waits until no build is asked for or running; False when ``timeout`` passed."""
        return self._worker.settle(timeout)

    def close(self) -> None:
        self._worker.close(interrupt=self._cancel)

    def _cancel(self) -> None:
        building = self._building
        if building is not None:
            building.cancel_safe()

    def _build(self, scope: str) -> None:
        def build(conn: Conn) -> bool:
            self._building = conn
            try:
                # Set before this check, so a close after it cancels this connection's
                # statements until the build ends (the index's, or one before it).
                wanted = None if self._worker.closed else vectors.due(conn, scope, self._above())
                if wanted is None:
                    return False
                making = vectors.build_index if wanted == "graph" else vectors.build_recent
                built = making(conn, scope)
                if built is None:
                    self._elsewhere[scope] = self.now()
                else:
                    self._elsewhere.pop(scope, None)
                return bool(built)
            finally:
                self._building = None

        if self._worker.closed:
            return
        try:
            self._db.autocommit(build)
        except StorageFailure as failed:
            if not isinstance(failed.__cause__, psycopg.errors.QueryCanceled):
                raise
            # Closed, the scope erased, or the server's statement timeout: not a failure
            # (the next write past the threshold asks again).
            log.info("the HNSW index build of scope %s was cancelled: %s", scope, failed)


class PostgresModels(ModelTable):
    def put(self, tx: Tx, record: ModelRecord) -> None:
        stored = self.get(tx)
        if stored is not None and stored.dimension != record.dimension:
            vectors.drop_indexes(sql(tx).conn)  # their expression names the old dimension
        super().put(tx, record)


# One trash row by its id, as ``t``, for each row of the list before it. The LIMIT keeps
# it a lookup the planner cannot turn round: joined plainly, a trash its statistics last
# saw empty (analysed after a revert emptied it, before the next forget filled it) was
# scanned whole for each restored fact, 9.5 s a thousand with 100,000 in it; a trash its
# statistics saw full was scanned whole for each thousand (35 ms at 100,000).
_TRASHED = "CROSS JOIN LATERAL (SELECT *, ctid FROM fact_trash WHERE id = {key} LIMIT 1) AS t"


# The tables the planner counts fewer than %s rows: as it does, by the rows the last
# analysis counted a page, times the pages the table has now (one never analysed, or
# analysed with no page, it counts by its rows' width instead).
_UNDERCOUNTED = (
    "SELECT relname FROM pg_class WHERE oid = ANY(%s::regclass[]) AND relpages > 0 "
    "AND reltuples >= 0 AND reltuples / relpages "
    "* (pg_relation_size(oid) / current_setting('block_size')::int) < %s"
)


# Fewer rows than this, written in one transaction, are not checked (a read of the
# catalog, 0.45 ms a write): their own lookups are few, and the autovacuum counts a table
# counted empty again once 50 of its rows have changed (its threshold's default).
RECOUNT_FROM = 50


def _recounted(conn: Conn, at_least: int, *tables: str) -> None:
    """Analyses each of ``tables`` the planner counts fewer rows in than ``at_least``, a
    number this transaction knows it holds (the facts it wrote; their postings, one or
    more a fact). Analysed empty after a mass delete (its pages still there), a table
    counts empty however many rows it holds, and every index holding a key looks as cheap
    to search as the key's own: a lookup by key may then scan a whole index. The trash
    analysed after a revert emptied it, before the forget that filled it again (2 s a
    thousand restored at 100,000); the facts analysed by the autovacuum after a forget
    committed, while its revert was bringing them back (19 ms to read 500 facts' words by
    id where 1.5 did); both facts and postings analysed after a scope's forget for good,
    then an import into it (each of a name's holders sought through the facts' index by
    age, and every posting read to find a name's: over 90 s a statement at 100k). Analysed
    in the transaction, the rows it wrote count, and the autovacuum leaves the table alone
    until it commits. Where another holds the table (the autovacuum, or another write
    analysing it), it is not waited for: two writes each holding one table and waiting for
    the other's would deadlock."""
    if at_least < RECOUNT_FROM:
        return
    stale = conn.execute(_UNDERCOUNTED, (list(tables), at_least)).fetchall()
    if stale:
        conn.execute(f"ANALYZE (SKIP_LOCKED) {', '.join(str(r[0]) for r in stale)}")


class PostgresCandidates:
    def __init__(self, db: Database, store: PostgresStore) -> None:
        self._db = db
        self._store = store

    def text(
        self, tx: Tx, scope: Scope, terms: Sequence[str], filters: Filters, limit: int
    ) -> list[Candidate]:
        if not terms:
            return []
        t, postings = sql(tx), self._store.postings
        passing = Passing.of(t, scope, filters, fulltext.seqs, count_first=False)
        return fulltext.candidates(t.conn, scope.key, terms, filters, limit, postings, passing)

    def queue_holding(
        self, tx: Tx, scope: Scope, terms: Sequence[str], exclude: Collection[str] = ()
    ) -> None:
        if not terms:
            return
        select, params = fulltext.holding(sql(tx).conn, scope.key, terms)
        queue_selected(tx, scope, select, params, sorted(exclude))

    def vector(
        self, tx: Tx, scope: Scope, vector: Vectors, filters: Filters, limit: int
    ) -> list[Candidate]:
        conn, above = sql(tx).conn, self._store.ann_above
        planned = self._planned(conn, scope, limit, above)
        return vectors.search(conn, scope.key, vector, filters, limit, above, planned)

    def _planned(
        self, conn: Conn, scope: Scope, limit: int, above: int, *, export: bool = False
    ) -> vectors.Plan:
        """How the scope's vectors are searched; where it wants its next index (a process
        that only reads, after another's import, meets it here), the index is asked for."""
        planned = vectors.plan(conn, scope.key, limit, above, export=export)
        if planned.due:
            self._store.builder.want(scope.key)
        return planned

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
        """The text half (and ``then``) on another connection sharing the snapshot, the
        vector half on this one, at once: each is the server's work. The vector half is
        the longer (at 100k facts its graph's search 5.4 ms, the text half 2 to 3), so it
        starts at once on this connection: its first statement reads how to search and
        exports the snapshot, the text half starts on the other connection with it, and
        the graph is searched meanwhile."""

        def text_half(on: Tx) -> list[Candidate]:
            found = self.text(on, scope, terms, filters, limit)
            if then is not None:
                then(on, found)
            return found

        def on_the_other(conn: Conn) -> list[Candidate]:
            return text_half(PostgresTx(self._db.dialect, conn, write=False))

        above, read = self._store.ann_above, sql(tx)
        export = bool(terms) and self._db.may_beside(read)
        planned = self._planned(read.conn, scope, limit, above, export=export)
        started = self._db.beside(read, on_the_other, planned.snapshot) if terms else None
        try:
            found = vectors.search(read.conn, scope.key, vector, filters, limit, above, planned)
        except BaseException:
            if started is not None:
                started.exception()  # waited for; the vector half's error is the one raised
            raise
        text = text_half(tx) if started is None else self._db.joined(started)
        return text, found
