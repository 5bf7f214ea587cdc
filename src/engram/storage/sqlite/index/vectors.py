"""Exact vector search per scope, from an in-process cache of the file's vectors.

The SQLite file is the one source of truth; this cache is rebuilt from it, a chunk of
rows at a time. Each scope's ``scope_state`` row says whether the cache is current: an
unchanged ``epoch`` with a higher ``version`` means facts were only appended, so only
rows after the last one read are loaded; a new ``epoch`` (delete, correct, a replaced
vector) is followed through the change log (:mod:`.revision`: gone facts masked, changed
ones read again). Exact search (one matrix product, or in large scopes a pruned one, see
:mod:`.projection`) keeps recall perfect however narrow a filter is.

A scope whose copy alone would pass the cache's budget (one past ``ANN_ABOVE`` whose
index file is missing or still being built) is not copied: each search reads its rows a
chunk at a time and keeps only the best (:func:`scanned`), so a process's memory grows
with what a query reads, not with the scope."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from engram.core.errors import EmbedderMismatch
from engram.core.ranking import Candidate
from engram.storage.copies import ScopeCopies
from engram.storage.neighbours import usearch_module
from engram.storage.sql.dialect import SQLITE_VECTOR, cosines, sqlite_matrix
from engram.storage.sqlite.driver import sqlite3
from engram.storage.sqlite.index.projection import PROJECT_ABOVE, Projection
from engram.storage.sqlite.index.revision import follow
from engram.storage.sqlite.schema import change_mark

DEFAULT_BUDGET_BYTES = 1 << 30
CHUNK_ROWS = 20_000  # rows read, and scored, at a time
ID_BYTES = 100  # what a copy counts for a fact's id
# A scan scores exactly only what a search of the stored values shortlists, where its
# rows are more than this many times the limit (and it asks this many times as many).
SHORTLIST_FROM = 2
SLACK = 1e-3  # how far a shortlist's cosine may be from the exact one (2**-11 bounds it)


ROWS = "SELECT f.seq, f.id, v.vector FROM facts f JOIN fact_vectors v ON v.fact = f.seq "
# Given seqs, a JSON array: each found by its rowid and its scope checked (the unary +
# keeps SQLite from walking the scope's index instead: 0.8 against 1.1 ms for a graph's
# best 100 at 1M).
AMONG = "+f.scope = ? AND f.seq IN (SELECT value FROM json_each(?))"
Floats = npt.NDArray[np.float32]


def arrays(rows: list[Any]) -> tuple[npt.NDArray[np.int64], Floats]:
    """(seq, id, vector) rows as their seqs and their vectors' matrix."""
    seqs = np.fromiter((r[0] for r in rows), np.int64, len(rows))
    return seqs, sqlite_matrix([r[2] for r in rows])


def scanned(
    conn: sqlite3.Connection,
    scope: str,
    query: Floats,
    limit: int,
    among: list[int] | None = None,
) -> list[Candidate]:
    """The ``limit`` nearest of the scope's rows (those among the seqs ``among``, when
    given: the scope's own, as a filter selected them), exact cosines, best first, ties
    by seq: read from the file ``CHUNK_ROWS`` at a time, holding only the best, whose ids
    are read last. ``conn`` is inside a read transaction."""
    seqs, scores = np.empty(0, np.int64), np.empty(0, np.float32)
    for rows in _chunks(conn, scope, among):
        found = np.fromiter((r[0] for r in rows), np.int64, len(rows))
        blobs = [r[1] for r in rows]
        _same_width(len(blobs[0]) // np.dtype(SQLITE_VECTOR).itemsize, query)
        exact = None
        if (near := _shortlist(blobs, query, limit)) is not None:
            exact = cosines(sqlite_matrix([blobs[i] for i in near[0].tolist()]), query)
            # a search that strays past the slack from the exact scores is not trusted
            if np.max(np.abs(exact - near[1]), initial=0.0) <= SLACK:
                found = found[near[0]]
            else:
                exact = None
        if exact is None:
            exact = cosines(sqlite_matrix(blobs), query)
        seqs = np.concatenate([seqs, found])
        scores = np.concatenate([scores, exact])
        best = np.lexsort((seqs, -scores))[:limit]
        seqs, scores = seqs[best], scores[best]
    ids = dict(conn.execute(_IDS, (json.dumps(seqs.tolist()),)).fetchall())
    return [Candidate(ids[s], float(x)) for s, x in zip(seqs.tolist(), scores, strict=True)]


def _shortlist(
    blobs: list[bytes], query: Floats, limit: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]] | None:
    """The positions in ``blobs`` (stored vectors) of every row that may be among the
    ``limit`` nearest the query, with the scores found for them, by usearch's exact
    search of the stored half-precision values (its SIMD kernels: 1.5 ms for 10,000 rows
    of 384 where converting them to float32 and scoring took 5.4); None where every row
    is to be scored (few rows, or no usearch). The query is rounded to half precision
    there, which moves a unit row's cosine by at most 2**-11 (measured here: at most
    4.7e-5 over 10,000 rows), so each row within twice :data:`SLACK` of the
    ``limit``-th score found is kept: every row of the exact ``limit`` nearest is, as
    long as no score found is more than :data:`SLACK` off (which the caller checks)."""
    if len(blobs) <= SHORTLIST_FROM * limit or (module := usearch_module()) is None:
        return None
    matrix = np.frombuffer(b"".join(blobs), SQLITE_VECTOR).reshape(len(blobs), -1)
    half = query.astype(SQLITE_VECTOR)
    count = SHORTLIST_FROM * limit
    while True:
        found = module.search(matrix, half, count, module.MetricKind.Cos, exact=True, threads=1)
        scores = 1.0 - np.asarray(found.distances, np.float64)
        floor = scores[limit - 1] - 2 * SLACK
        if count >= len(blobs) or scores[-1] < floor:
            kept = scores >= floor
            return np.asarray(found.keys, np.int64)[kept], scores[kept]
        count = min(len(blobs), count * SHORTLIST_FROM)


# A scan's rows: their seqs and vectors (ids are read for the best only: a third less).
_SCAN = "SELECT f.seq, v.vector FROM facts f JOIN fact_vectors v ON v.fact = f.seq "
_IDS = "SELECT seq, id FROM facts WHERE seq IN (SELECT value FROM json_each(?))"
# Given seqs (a filter's, selected in the scope), their vectors alone, each by its row
# number: joined to the facts to check the scope again, 9,999 scattered rows of a 1M
# scope took 71 to 79 ms, read alone 36 to 46.
_GIVEN = (
    "SELECT v.fact, v.vector FROM fact_vectors v WHERE v.fact IN (SELECT value FROM json_each(?))"
)


def _chunks(conn: sqlite3.Connection, scope: str, among: list[int] | None) -> Iterator[list[Any]]:
    if among is None:
        cursor = conn.execute(f"{_SCAN}WHERE f.scope = ?", (scope,))
        while rows := cursor.fetchmany(CHUNK_ROWS):
            yield rows
        return
    for at in range(0, len(among), CHUNK_ROWS):
        chunk = json.dumps(among[at : at + CHUNK_ROWS])
        if rows := conn.execute(_GIVEN, (chunk,)).fetchall():
            yield rows


def _same_width(dimension: int, query: Floats) -> None:
    if dimension != query.shape[-1]:
        raise EmbedderMismatch(
            f"this scope's vectors have {dimension} dimensions; the query's has {query.shape[-1]}"
        )


def copy_bytes(facts: int, dimension: int, project_above: int = PROJECT_ABOVE) -> int:
    """What a copy of ``facts`` vectors of ``dimension`` holds: each row's float32 vector,
    seq and id, and in a scope projected (:mod:`.projection`) its coordinates and residual."""
    row = 4 * dimension + 8 + ID_BYTES
    if facts >= project_above:
        row += 4 * max(1, dimension // 3) + 4
    return facts * row


@dataclass
class _ScopeVectors:
    version: int
    epoch: int
    last_seq: int
    mark: int  # how far into the change log this copy has read (revision.py)
    count: int = 0
    expect: int = 0  # the scope's facts when last read: a first load allocates them once
    seqs: npt.NDArray[np.int64] = field(default_factory=lambda: np.empty(0, np.int64))
    ids: list[str] = field(default_factory=list)
    alive: npt.NDArray[np.bool_] = field(default_factory=lambda: np.empty(0, np.bool_))
    matrix: npt.NDArray[np.float32] = field(default_factory=lambda: np.empty((0, 0), np.float32))
    project_above: int = PROJECT_ABOVE
    projection: Projection | None = None
    fitted_at: int = 0  # the scope's size when a projection was last fitted (or refused)

    @property
    def nbytes(self) -> int:
        extra = self.projection.nbytes if self.projection is not None else 0
        return int(self.matrix.nbytes + self.seqs.nbytes) + ID_BYTES * len(self.ids) + extra

    def append(self, rows: list[tuple[int, str, bytes]], *, project: bool = True) -> None:
        """Adds (seq, id, vector) rows in any order; ``last_seq`` becomes the highest row
        number seen. Without ``project``, the projection is left for :meth:`fit`."""
        if not rows:
            return
        seqs, ids, blobs = (list(c) for c in zip(*rows, strict=True))
        self.alive = np.concatenate([self.alive, np.ones(len(rows), np.bool_)])
        self._add(seqs, ids, blobs, project)

    def _add(self, seqs: list[int], ids: list[str], blobs: list[bytes], project: bool) -> None:
        rows = sqlite_matrix(blobs)
        self.last_seq = max(self.last_seq, max(seqs))
        if self.count == 0:  # a fresh load: the matrix read is the copy, no second one
            self.matrix, self.seqs, self.ids = rows, np.array(seqs, np.int64), list(ids)
            self.count = len(seqs)
            if project:
                self._project(rows)
            return
        need = self.count + len(seqs)
        if need > self.matrix.shape[0]:
            capacity = max(need, 2 * self.matrix.shape[0], 64, self.expect)
            matrix = np.empty((capacity, rows.shape[1]), np.float32)
            matrix[: self.count] = self.matrix[: self.count]
            grown = np.empty(capacity, np.int64)
            grown[: self.count] = self.seqs[: self.count]
            self.matrix, self.seqs = matrix, grown
        self.matrix[self.count : need] = rows
        self.seqs[self.count : need] = seqs
        self.ids.extend(ids)
        self.count = need
        if project:
            self._project(rows)

    def _project(self, rows: npt.NDArray[np.float32]) -> None:
        """Keeps the projection in step: fitted once the scope is large, refitted each
        time it has doubled since (its directions may have moved), else extended."""
        if self.count >= self.project_above and self.count >= 2 * self.fitted_at:
            self.fit()
        elif self.projection is not None:
            self.projection.extend(rows)

    def fit(self) -> None:
        """Fits the projection to every row held, once the scope is large."""
        if self.count >= self.project_above:
            self.fitted_at = self.count
            self.projection = Projection.fit(self.matrix[: self.count])


class VectorIndex:
    """Per-scope vector matrices kept in memory, least recently used evicted first."""

    def __init__(
        self, budget_bytes: int = DEFAULT_BUDGET_BYTES, project_above: int = PROJECT_ABOVE
    ) -> None:
        self.project_above = project_above
        self._copies: ScopeCopies[_ScopeVectors] = ScopeCopies(budget_bytes)

    @property
    def budget_bytes(self) -> int:
        """What the copies may hold in all; a scope whose copy alone would pass it is
        searched by reading its rows instead."""
        return self._copies.budget_bytes

    @budget_bytes.setter
    def budget_bytes(self, budget: int) -> None:
        self._copies.budget_bytes = budget

    def search(
        self,
        conn: sqlite3.Connection,
        scope: str,
        query: npt.NDArray[np.float32],
        allowed: set[int] | None,
        limit: int,
        facts: int = 0,
    ) -> list[Candidate]:
        """The ``limit`` nearest facts of ``scope`` (``facts`` of them) with their cosine,
        best first.

        ``conn`` must be inside a read transaction, so the state and rows agree.
        ``allowed`` restricts the search to those row numbers (filters).
        """
        state = conn.execute(
            "SELECT version, epoch FROM scope_state WHERE scope = ?", (scope,)
        ).fetchone()
        if state is None:
            return []
        query = query.astype(np.float32, copy=False)
        dimension = query.shape[-1]
        if copy_bytes(facts, dimension, self.project_above) > self.budget_bytes:
            self._copies.forget(scope)  # held from when it was smaller
            among = None if allowed is None else sorted(allowed)
            return scanned(conn, scope, query, limit, among)
        count, seqs, ids, matrix, projection, alive = self._copies.use(
            scope,
            lambda held: (held.version, held.epoch) == tuple(state),
            lambda held: self._update(conn, scope, held, state[0], state[1], facts),
            lambda e: (e.count, e.seqs, e.ids, e.matrix, e.projection, e.alive),
        )
        if count == 0:
            return []
        _same_width(matrix.shape[1], query)
        mask = None if bool(alive[:count].all()) else alive[:count]  # forgotten: masked
        if allowed is not None:
            wanted = np.isin(seqs[:count], np.fromiter(allowed, np.int64, len(allowed)))
            mask = wanted if mask is None else mask & wanted
        if mask is not None:
            limit = min(limit, int(mask.sum()))
        if limit <= 0:
            return []
        found = None
        if projection is not None:
            found = projection.search(matrix, count, query, mask, limit)
        if found is None:
            rows, scores = np.arange(count), matrix[:count] @ query
            if mask is not None:
                scores = np.where(mask, scores, -np.inf)
        else:
            rows, scores = found
        if limit < rows.shape[0]:
            best = np.argpartition(-scores, limit - 1)[:limit]
            rows, scores = rows[best], scores[best]
        if found is None:  # the product's scores, as every search scores them
            scores = np.where(np.isfinite(scores), cosines(matrix[rows], query), scores)
        order = np.lexsort((seqs[rows], -scores))
        return [Candidate(ids[rows[i]], float(scores[i])) for i in order]

    def forget(self, scope: str) -> None:
        self._copies.forget(scope)

    def held(self, scope: str) -> _ScopeVectors | None:
        """The scope's copy, if one is held (for diagnostics and tests)."""
        return self._copies.held(scope)

    def _update(
        self,
        conn: sqlite3.Connection,
        scope: str,
        entry: _ScopeVectors | None,
        version: int,
        epoch: int,
        facts: int,
    ) -> _ScopeVectors:
        if entry is not None and entry.epoch != epoch:
            held = entry

            def reread(seqs: list[int]) -> None:
                sql = f"{ROWS}WHERE f.seq IN (SELECT value FROM json_each(?))"
                held.append(conn.execute(sql, (json.dumps(seqs),)).fetchall())

            if not follow(conn, scope, held, held.seqs[: held.count], epoch, reread):
                entry = None
        if entry is None:
            entry = _ScopeVectors(
                version,
                epoch,
                last_seq=-1,
                mark=change_mark(conn),
                project_above=self.project_above,
            )
        # No ORDER BY: sorting a scope's rows with their vectors would cost more than
        # the read; appends only need the highest row number, which append() keeps.
        # Read a chunk at a time into one matrix of the scope's size: read whole, the
        # rows' bytes, joined and converted, made three passing copies of it.
        fresh, entry.expect = entry.count == 0, facts
        cursor = conn.execute(f"{ROWS}WHERE f.scope = ? AND f.seq > ?", (scope, entry.last_seq))
        while rows := cursor.fetchmany(CHUNK_ROWS):
            entry.append(rows, project=not fresh)
        if fresh:
            entry.fit()
        entry.version = version
        return entry
