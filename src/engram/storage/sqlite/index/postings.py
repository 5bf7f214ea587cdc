"""FTS5's own records read as arrays: a term's posting in a scope, a scope's lengths, the
index's averages, and each term's document count, for :mod:`.textindex` to rank from.

A posting is read from ``fts5vocab``'s instances of its term
(:data:`~engram.storage.sqlite.fulltext.VOCABULARIES`), in one statement whose rows come
joined as one value, parsed in one C pass; each row's length comes from the scope's
lengths where they are held, else from the row's ``docsize`` record (the sum of its
varints, one per column).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from engram.storage.sqlite.driver import sqlite3
from engram.storage.sqlite.fulltext import COLUMNS, WEIGHTS
from engram.storage.sqlite.schema import change_mark

WORDS_COUNTED = 10_000  # document counts kept
DENSE_SPAN = 4  # a scope's seqs looked up by offset while they span at most this many times

# A term's posting: every instance of it, with its row's docsize record (one varint per
# column: their sum is the row's length) unless the scope's lengths are held. Weighted
# columns only, without saying so: the one column of weight zero holds a scope token and
# nothing else, and no term this index reads looks like one (those go to the statement).
_INSTANCES = "SELECT group_concat(doc) FROM temp.facts_fts_instances WHERE term = ?"
# The docsize records come joined as one blob (cast back from the text group_concat makes,
# every byte kept): hex-encoding them cost the statement and the parse a third more.
_POSTING = (
    "SELECT group_concat(i.doc), CAST(group_concat(d.sz, '') AS BLOB), "
    "group_concat(length(d.sz)) "
    "FROM temp.facts_fts_instances AS i CROSS JOIN facts_fts_docsize AS d ON d.id = i.doc"
    "{scoped} WHERE i.term = ?"
)
_LENGTHS = (
    "SELECT group_concat(d.id), CAST(group_concat(d.sz, '') AS BLOB), "
    "group_concat(length(d.sz)) "
    "FROM facts AS f CROSS JOIN facts_fts_docsize AS d ON d.id = f.seq WHERE f.scope = ?"
)
_IN_SCOPE = " CROSS JOIN facts AS f ON f.seq = i.doc AND f.scope = ?"
if [w for w in WEIGHTS.values() if w == 0.0] != [WEIGHTS["scope_token"]]:
    raise ValueError("the postings read assume scope_token is the one column of weight zero")

Ints = npt.NDArray[np.int64]
Counts = npt.NDArray[np.float32]  # whole numbers, exact in float32 below 2**24


@dataclass(frozen=True)
class Posting:
    """A term in a scope: the rows (seqs) holding it, its weighted count in each, and each
    row's length in tokens over every column."""

    seqs: Ints
    counts: Counts
    sizes: Counts

    @property
    def nbytes(self) -> int:
        return int(self.seqs.nbytes + self.counts.nbytes + self.sizes.nbytes) + 120

    def without(self, gone: Ints) -> Posting:
        keep = ~np.isin(self.seqs, gone)
        return self if keep.all() else Posting(self.seqs[keep], self.counts[keep], self.sizes[keep])

    def plus(self, seqs: Ints, counts: Counts, sizes: Counts) -> Posting:
        return Posting(
            np.concatenate([self.seqs, seqs]),
            np.concatenate([self.counts, counts]),
            np.concatenate([self.sizes, sizes]),
        )


@dataclass(frozen=True)
class Lengths:
    """Each fact's length in tokens over every column, by seq (ascending): with them a
    term's posting is read from its instances alone, without a docsize record a row."""

    seqs: Ints
    sizes: Counts

    @property
    def nbytes(self) -> int:
        positions = self.__dict__.get("_positions")  # once computed
        held = 0 if positions is None else positions.nbytes
        return int(self.seqs.nbytes + self.sizes.nbytes + held) + 120

    def where(self, seqs: Ints) -> tuple[npt.NDArray[np.bool_], Ints]:
        """Which of ``seqs`` are the scope's, and their positions here: looked up by seq
        where the scope's seqs lie close together (a binary search of a million seqs for
        each of a common term's 50k rows cost 3 ms, its first query's slowest part)."""
        dense = self._positions
        if dense is not None:
            offsets = seqs - self.seqs[0]
            if offsets.shape[0] and offsets.min() >= 0 and offsets.max() < dense.shape[0]:
                # all within the scope's span, as a one-scope file's are: no mask to index by
                at = dense[offsets].astype(np.int64)
                held = at >= 0
                at[~held] = 0
                return held, at
            inside = (offsets >= 0) & (offsets < dense.shape[0])
            at = np.zeros(seqs.shape, np.int64)
            at[inside] = dense[offsets[inside]]
            held = inside & (at >= 0)
            at[~held] = 0
            return held, at
        at = np.minimum(np.searchsorted(self.seqs, seqs), max(self.seqs.shape[0] - 1, 0))
        held = self.seqs[at] == seqs if self.seqs.shape[0] else np.zeros(seqs.shape, np.bool_)
        return held, at

    @cached_property
    def _positions(self) -> npt.NDArray[np.int32] | None:
        """Each seq's position here, by its offset from the first (-1: not the scope's),
        where that array is at most ``DENSE_SPAN`` times the seqs held; else None."""
        count = self.seqs.shape[0]
        if count == 0 or count >= 1 << 31:
            return None
        span = int(self.seqs[-1] - self.seqs[0]) + 1
        if span > DENSE_SPAN * count:
            return None
        positions = np.full(span, -1, np.int32)
        positions[self.seqs - self.seqs[0]] = np.arange(count, dtype=np.int32)
        return positions

    def without(self, gone: Ints) -> Lengths:
        keep = ~np.isin(self.seqs, gone)
        return self if keep.all() else Lengths(self.seqs[keep], self.sizes[keep])

    def then(self, newer: Lengths) -> Lengths:
        """These, then ``newer``'s, whose seqs all follow these."""
        return Lengths(
            np.concatenate([self.seqs, newer.seqs]), np.concatenate([self.sizes, newer.sizes])
        )

    def plus(self, seqs: Ints, sizes: Counts) -> Lengths:
        """With ``seqs`` (not held: a changed fact is taken out first) added."""
        merged, lengths = np.concatenate([self.seqs, seqs]), np.concatenate([self.sizes, sizes])
        order = np.argsort(merged, kind="stable")
        return Lengths(merged[order], lengths[order])


def read(
    conn: sqlite3.Connection, scope: str, token: str, lengths: Lengths | None
) -> tuple[Posting, int | None]:
    """``token``'s posting in ``scope``, from the file's full-text index: its instances,
    with each row's length from ``lengths`` (which also tell the scope's rows) where held,
    else from the row's docsize record; and how many rows of the whole file hold it, where
    the instances read were the whole file's (else None)."""
    empty = Posting(np.empty(0, np.int64), np.empty(0, np.float32), np.empty(0, np.float32))
    if lengths is not None:
        row = _vocabulary(conn, _INSTANCES, (token,))
        if row is None or row[0] is None:
            return empty, 0
        seqs, _, counts = runs(np.fromstring(row[0], np.int64, sep=","))
        rows = int(seqs.shape[0])
        held, at = lengths.where(seqs)
        if not held.all():  # the file's rows of other scopes left out
            seqs, counts, at = seqs[held], counts[held], at[held]
        return Posting(seqs, counts.astype(np.float32), lengths.sizes[at]), rows
    outside = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM scope_state WHERE scope != ? AND facts > 0)", (scope,)
    ).fetchone()[0]
    sql = _POSTING.format(scoped=_IN_SCOPE if outside else "")
    row = _vocabulary(conn, sql, (scope, token) if outside else (token,))
    whole = None if outside else 0  # the file's rows are the scope's alone
    if row is None or row[0] is None:
        return empty, whole
    instances = np.fromstring(row[0], np.int64, sep=",")  # parsed in one C pass
    sizes = _sizes(row[1], np.fromstring(row[2], np.int64, sep=","))
    seqs, first, counts = runs(instances)
    posting = Posting(seqs, counts.astype(np.float32), sizes[first])
    return posting, None if outside else int(seqs.shape[0])


def runs(instances: Ints) -> tuple[Ints, Ints, Ints]:
    """The distinct rows of a term's instances, where each one's first is, and how many
    each holds, as ``np.unique`` gives them: read off the runs where the instances come
    in row order, as FTS5 gives a term's (0.65 against 1.65 ms for 38,558 instances),
    sorted again where they do not."""
    if instances.shape[0] == 0 or bool((instances[1:] < instances[:-1]).any()):
        seqs, first, counts = np.unique(instances, return_index=True, return_counts=True)
        return seqs, first, counts
    starts = np.empty(instances.shape[0], np.bool_)
    starts[0] = True
    np.not_equal(instances[1:], instances[:-1], out=starts[1:])
    first = np.flatnonzero(starts)
    return instances[first], first, np.diff(first, append=instances.shape[0])


def read_lengths(
    conn: sqlite3.Connection, scope: str, since: int | None = None, below: int | None = None
) -> Lengths:
    """Every fact of ``scope``'s length (those with seqs from ``since`` and below
    ``below``, where given), from the docsize records."""
    sql = _LENGTHS
    params: list[object] = [scope]
    if since is not None:
        sql, params = sql + " AND f.seq >= ?", [*params, since]
    if below is not None:
        sql, params = sql + " AND f.seq < ?", [*params, below]
    row = conn.execute(sql, params).fetchone()
    if row is None or row[0] is None:
        return Lengths(np.empty(0, np.int64), np.empty(0, np.float32))
    seqs = np.fromstring(row[0], np.int64, sep=",")
    sizes = _sizes(row[1], np.fromstring(row[2], np.int64, sep=","))
    order = np.argsort(seqs, kind="stable")
    return Lengths(seqs[order], sizes[order])


def _vocabulary(
    conn: sqlite3.Connection, sql: str, params: tuple[str, ...]
) -> tuple[Any, ...] | None:
    """``sql``'s one row, made with ``temp.facts_fts_instances`` (FTS5's instances of each
    term, :data:`~engram.storage.sqlite.fulltext.VOCABULARIES`)."""
    row: tuple[Any, ...] | None = conn.execute(sql, params).fetchone()
    return row


def _sizes(records: bytes, lengths: Ints) -> Counts:
    """Each row's length from its docsize records (one after another, and their lengths
    in bytes): the sum of its varints, one per column."""
    raw = np.frombuffer(records, np.uint8)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    sizes = np.add.reduceat(raw.astype(np.int64), starts).astype(np.float32)
    longer = np.add.reduceat((raw >= 0x80).astype(np.int64), starts) > 0  # a varint > 127
    for i in np.flatnonzero(longer).tolist():
        blob = raw[starts[i] : starts[i] + lengths[i]].tobytes()
        sizes[i] = sum(_varints(blob, len(COLUMNS)))
    return sizes


def averages(conn: sqlite3.Connection) -> tuple[int, int]:
    """FTS5's row count and total length over every column, from its averages record
    (``%_data`` row 1: a varint row count, then one varint total per column)."""
    row = conn.execute("SELECT block FROM facts_fts_data WHERE id = 1").fetchone()
    if row is None:
        return 0, 0
    values = _varints(bytes(row[0]), 1 + len(COLUMNS))
    return values[0], sum(values[1:])


def _varints(blob: bytes, wanted: int) -> list[int]:
    """SQLite's variable-length integers (big-endian groups of 7 bits, the 9th byte whole)."""
    out: list[int] = []
    at = 0
    while len(out) < wanted and at < len(blob):
        value = 0
        for i in range(9):
            byte = blob[at]
            at += 1
            if i == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(value)
    return out + [0] * (wanted - len(out))


class DocumentCounts:
    """Each term's document count in the whole index, kept while the file's facts stay as
    they are: fts5vocab counts them by walking the term's whole doclist (0.6 to 2.3 ms a
    term at 1M facts, more than the rest of a query). The facts are as they were while
    the change log's newest id and the newest seq both stand: any delete or rewrite
    moves the first, and without one an insert can only raise the second."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._at: tuple[int, int] | None = None
        self._counts: dict[str, int] = {}

    def mark(self, conn: sqlite3.Connection) -> tuple[int, int]:
        """Where the file's facts stand in ``conn``'s snapshot."""
        newest = conn.execute("SELECT max(seq) FROM facts").fetchone()[0]
        return change_mark(conn), -1 if newest is None else int(newest)

    def held(self, at: tuple[int, int], tokens: Sequence[str]) -> dict[str, int]:
        """The counts held of ``tokens`` while the facts stand ``at``."""
        with self._lock:
            if at != self._at:
                return {}
            return {t: self._counts[t] for t in tokens if t in self._counts}

    def put(self, at: tuple[int, int], counts: dict[str, int]) -> None:
        """Keeps ``counts``, read while the facts stood ``at``."""
        if not counts:
            return
        with self._lock:
            if at != self._at:  # newer or older: the last snapshot asked for is kept
                self._at, self._counts = at, {}
            if len(self._counts) > WORDS_COUNTED:
                self._counts.clear()
            self._counts.update(counts)


def documents_with(conn: sqlite3.Connection, token: str) -> int:
    """How many rows of the whole index hold ``token`` (bm25()'s document frequency)."""
    row = conn.execute("SELECT doc FROM temp.facts_fts_rows WHERE term = ?", (token,)).fetchone()
    return int(row[0]) if row else 0
