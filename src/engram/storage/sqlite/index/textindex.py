"""FTS5's ranking of a large scope, computed from an in-process copy of its postings.

FTS5's ``bm25()`` scores every row a query matches, about a microsecond each: a query
whose words are common in a scope of 100k facts pays for thousands of rows. For scopes
of at least ``INDEX_ABOVE`` facts, this index keeps what ``bm25()`` reads per row (each
token's weighted count in each fact, each fact's length) as arrays, tokenized by FTS5's
own tokenizer (:mod:`.tokens`), and takes what it reads per query from the file's index:
the row count and total length (FTS5's averages record) and each token's document count
(``fts5vocab``). The arithmetic is ``bm25()``'s, in its order, so scores and order are
the statement's (a test compares them); only the per-row work moves to numpy.

Like the vector cache, it follows ``scope_state``: appends are tokenized and added; other
changes are read from the change log (:mod:`.revision`): facts gone are masked out,
changed ones are masked and tokenized again; past half the scope masked, or behind a
cleared log, it is rebuilt. Queries
it cannot answer exactly (a filter, a word FTS5 splits into several tokens) return None
and go to the statement.

A scope's postings are loaded, and rebuilt, on a thread of their own (:mod:`.background`):
a process's first query of a large scope goes to the statement instead of waiting
seconds for them, as does every query until they are held.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from engram.core.ranking import Candidate
from engram.storage.sqlite.driver import sqlite3
from engram.storage.sqlite.fulltext import COLUMNS, SCOPE_TOKEN
from engram.storage.sqlite.index.background import Worker
from engram.storage.sqlite.index.copies import ScopeCopies
from engram.storage.sqlite.index.revision import follow
from engram.storage.sqlite.index.tokens import Tokenizer
from engram.storage.sqlite.schema import change_mark

INDEX_ABOVE = 20_000
DEFAULT_BUDGET_BYTES = 512 << 20
K1 = 1.2  # bm25()'s constants
B = 0.75
_COLUMNS = "seq, id, content, scope_token, context"

Floats = npt.NDArray[np.float64]
Rows = npt.NDArray[np.int32]


@dataclass
class _ScopeText:
    version: int
    epoch: int
    mark: int  # how far into the change log this copy has read (revision.py)
    last_seq: int = -1
    seqs: list[int] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    alive: npt.NDArray[np.bool_] = field(default_factory=lambda: np.empty(0, np.bool_))
    lengths: Floats = field(default_factory=lambda: np.empty(0, np.float64))
    postings: dict[str, tuple[Rows, Floats]] = field(default_factory=dict)

    posting_bytes: int = 0  # kept as postings change: summing them per search would cost

    @property
    def count(self) -> int:
        return len(self.seqs)

    @property
    def nbytes(self) -> int:
        return self.posting_bytes + int(self.lengths.nbytes) + 120 * self.count

    def append(self, tokenizer: Tokenizer, rows: Sequence[tuple[Any, ...]]) -> None:
        """Adds facts (seq, id, content, scope token, context), in
        ascending seq, after those held."""
        if not rows:
            return
        first = self.count
        seqs = np.fromiter((r[0] for r in rows), np.int64, len(rows))
        tokenized = tokenizer.facts([(r[0], r[2], r[3], r[4]) for r in rows])
        self.seqs.extend(seqs.tolist())
        self.ids.extend(r[1] for r in rows)
        self.alive = np.concatenate([self.alive, np.ones(len(rows), np.bool_)])
        self.last_seq = max(self.last_seq, int(seqs[-1]))
        lengths = np.zeros(self.count, np.float64)
        lengths[:first] = self.lengths[:first]
        docs, sizes = tokenized.lengths
        lengths[first + np.searchsorted(seqs, docs)] = sizes
        self.lengths = lengths
        for term, (docs, counts) in tokenized.postings.items():
            where = (first + np.searchsorted(seqs, docs)).astype(np.int32)
            held = self.postings.get(term)
            if held is not None:
                self.posting_bytes -= held[0].nbytes + held[1].nbytes + 80
                where, counts = np.concatenate([held[0], where]), np.concatenate([held[1], counts])
            self.postings[term] = (where, counts)
            self.posting_bytes += where.nbytes + counts.nbytes + 80


class _LoadAgain(Exception):
    """A scope's postings must be built whole: on the loader's thread, not the query's."""


class TextIndex:
    """Per-scope postings kept in memory, least recently used evicted first."""

    def __init__(
        self,
        budget_bytes: int = DEFAULT_BUDGET_BYTES,
        index_above: int = INDEX_ABOVE,
        run: Callable[..., Any] | None = None,
    ) -> None:
        """With ``run`` (the database's :meth:`Database.run`), a scope's postings are
        loaded (or rebuilt) on a thread of their own, and the statement answers until
        they are: a first query never waits for a whole scope. Without it, or with
        ``load_inline`` set, the search that finds them missing loads them."""
        self.index_above = index_above
        self._copies: ScopeCopies[_ScopeText] = ScopeCopies(budget_bytes)
        self._tokenizer = Tokenizer()
        self._run = run
        self._loader = self._new_loader()

    @property
    def load_inline(self) -> bool:
        return self._loader is None

    @load_inline.setter
    def load_inline(self, inline: bool) -> None:
        if self._loader is not None:
            self._loader.close()
        self._loader = None if inline else self._new_loader()

    def _new_loader(self) -> Worker | None:
        return None if self._run is None else Worker("engram-text-index", self._load)

    def settle(self, timeout: float | None = None) -> bool:
        """Waits until no scope's postings are being loaded; False when ``timeout`` passed."""
        return True if self._loader is None else self._loader.settle(timeout)

    def close(self) -> None:
        if self._loader is not None:
            self._loader.close()

    def _load(self, scope: str) -> None:
        """Loads (or brings up to date) the scope's postings, in a snapshot of its own."""
        assert self._run is not None

        def load(conn: sqlite3.Connection) -> None:
            state = conn.execute(
                "SELECT version, epoch, facts FROM scope_state WHERE scope = ?", (scope,)
            ).fetchone()
            if state is None or state[2] < self.index_above:
                return
            version, epoch = state[0], state[1]
            self._copies.use(
                scope,
                lambda held: (held.version, held.epoch) == (version, epoch),
                lambda held: self._update(conn, scope, held, version, epoch, inline=True),
                lambda e: None,
            )

        self._run(lambda tx: load(tx.conn), write=False)

    def search(
        self, conn: sqlite3.Connection, scope: str, words: Sequence[str], limit: int
    ) -> list[Candidate] | None:
        """The ``limit`` best facts of ``scope`` for any of ``words``, scored and ordered
        as the full-text statement would; None when this index does not answer.

        ``conn`` must be inside a read transaction, so the state and rows agree.
        """
        state = conn.execute(
            "SELECT version, epoch, facts FROM scope_state WHERE scope = ?", (scope,)
        ).fetchone()
        if state is None or state[2] < self.index_above:
            self.forget(scope)
            return None
        phrases = self._tokenizer.words(words)
        if any(len(p) != 1 or SCOPE_TOKEN.fullmatch(p[0]) for p in phrases):
            return None
        tokens = [p[0] for p in phrases]
        version, epoch = state[0], state[1]
        if self._loader is not None and self._copies.held(scope) is None:
            self._loader.want(scope)  # loaded on the side; the statement answers meanwhile
            return None
        try:
            found = self._copies.use(
                scope,
                lambda held: (held.version, held.epoch) == (version, epoch),
                lambda held: self._update(conn, scope, held, version, epoch),
                lambda e: (
                    e.count,
                    e.seqs,
                    e.ids,
                    e.lengths,
                    e.alive,
                    [e.postings.get(t) for t in tokens],
                ),
            )
        except _LoadAgain:
            self.forget(scope)
            assert self._loader is not None
            self._loader.want(scope)
            return None
        count, seqs, ids, lengths, alive, postings = found
        rows, total = _averages(conn)
        if count == 0 or rows == 0:
            return []
        average = total / rows
        scores = np.zeros(count, np.float64)
        for token, posting in zip(tokens, postings, strict=True):
            if posting is None:
                continue
            where, counts = posting
            hits = _documents_with(conn, token)
            idf = math.log((rows - hits + 0.5) / (hits + 0.5))
            if idf <= 0.0:
                idf = 1e-6
            size = lengths[where]
            scores[where] += idf * (
                (counts * (K1 + 1.0)) / (counts + K1 * (1 - B + B * size / average))
            )
        scores[~alive[:count]] = 0.0
        matched = np.flatnonzero(scores > 0.0)
        if matched.shape[0] > limit:  # every row tied with the last kept one stays in
            cut = np.partition(scores[matched], matched.shape[0] - limit)[-limit]
            matched = matched[scores[matched] >= cut]
        order = sorted(matched.tolist(), key=lambda i: (-scores[i], seqs[i]))[:limit]
        return [Candidate(ids[i], float(scores[i])) for i in order]

    def forget(self, scope: str) -> None:
        self._copies.forget(scope)

    def held(self, scope: str) -> _ScopeText | None:
        """The scope's postings, if held (for diagnostics and tests)."""
        return self._copies.held(scope)

    def _update(
        self,
        conn: sqlite3.Connection,
        scope: str,
        entry: _ScopeText | None,
        version: int,
        epoch: int,
        *,
        inline: bool = False,
    ) -> _ScopeText:
        """``entry`` brought to this snapshot; _LoadAgain where it must be built whole and
        a loader can do that on the side (unless ``inline``)."""
        if entry is not None and entry.epoch != epoch:
            held = entry

            def reread(seqs: list[int]) -> None:
                sql = (
                    f"SELECT {_COLUMNS} FROM facts "
                    "WHERE seq IN (SELECT value FROM json_each(?)) ORDER BY seq"
                )
                held.append(self._tokenizer, conn.execute(sql, (json.dumps(seqs),)).fetchall())

            if not follow(conn, scope, held, held.seqs, epoch, reread):
                entry = None
        if entry is None:
            if self._loader is not None and not inline:
                raise _LoadAgain
            entry = _ScopeText(version, epoch, mark=change_mark(conn))
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM facts WHERE scope = ? AND seq > ? ORDER BY seq",
            (scope, entry.last_seq),
        ).fetchall()
        entry.append(self._tokenizer, rows)
        entry.version = version
        return entry


def _averages(conn: sqlite3.Connection) -> tuple[int, int]:
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


def _documents_with(conn: sqlite3.Connection, token: str) -> int:
    """How many rows of the whole index hold ``token`` (bm25()'s document frequency)."""
    try:
        row = conn.execute(
            "SELECT doc FROM temp.facts_fts_rows WHERE term = ?", (token,)
        ).fetchone()
    except sqlite3.OperationalError:
        conn.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.facts_fts_rows "
            "USING fts5vocab(main, facts_fts, row)"
        )
        row = conn.execute(
            "SELECT doc FROM temp.facts_fts_rows WHERE term = ?", (token,)
        ).fetchone()
    return int(row[0]) if row else 0
