"""FTS5's ranking of a large scope, computed from the postings of the terms queries ask for.

FTS5's ``bm25()`` scores every row a query matches, about a microsecond each: a query
whose words are common in a scope of a million facts pays for hundreds of thousands of
rows. For scopes of at least ``INDEX_ABOVE`` facts, this index holds, for each term a query
has asked for, the term's posting in the scope: the facts holding it, its weighted count
in each, and each one's length (what ``bm25()`` reads per row). A posting is read from
FTS5's own index (``fts5vocab``'s instances) the first time a query asks for its term,
or from the scope's text base where it saved the term (:mod:`.textbase`, scopes of
``textbase.BASE_ABOVE`` facts); nothing tokenizes or loads a whole scope's postings. The
rows' lengths come from the scope's lengths (every fact's, 12 bytes each, read from the
``docsize`` table by the scope's first query, before its postings: at 1.15M facts 250 to
490 ms, under the first query's second, where a posting read meanwhile from each row's
own docsize record took four times as long, 11 to 14 ms, for every question asked until
they were held). Per query it reads the row count and total length (FTS5's averages
record) and each term's document count. The arithmetic is ``bm25()``'s, in its order, so
scores and order are the statement's (a test compares them); only the per-row work moves
to numpy.

A query asking for two or more terms not held reads about half of them on a second
connection at once, on its own thread, where that connection's snapshot holds the same
facts: their reads overlap, as far as their lengths allow. A large scope's lengths are
read so too, its newer half of seqs on the second connection.

Memory grows with the terms queries touch, not with the scope: the postings are kept to
a byte budget, least recently used terms dropped first. A posting is read from the whole
file's index, every scope's rows of the term, so in a file of many scopes a term held by
``READ_INLINE_BELOW`` rows or more is read on a thread of its own (:mod:`.background`)
and the query that asked goes to the statement meanwhile, which reads the scope's rows
alone. A scope holding at least ``OWN_SHARE`` of the file's rows reads every posting as
it is asked for: the file's rows of a term are then mostly the scope's, which the
statement scores too, at several times the cost of reading them (at 1M facts, first
queries' p95 116 against 33 ms).

Like the other copies, it follows ``scope_state``: appended facts are tokenized by FTS5's
own tokenizer (:mod:`.tokens`) and added to the terms held; facts the change log
(:mod:`.revision`) names are taken out of every term held and those still present are
tokenized again. A batch of more than ``FOLLOWED`` facts, or a cleared log, drops the
terms held instead: reading them again costs less. Queries it cannot answer exactly (a
filter, a word FTS5 splits into several tokens, a snapshot older than the terms held)
return None and go to the statement.
"""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from engram.core.ranking import Candidate
from engram.storage import summed
from engram.storage.background import Worker
from engram.storage.copies import ScopeCopies
from engram.storage.rows import FACT_COLUMNS, SEQ, to_traits
from engram.storage.sql.passing import Sifted
from engram.storage.sqlite.driver import sqlite3
from engram.storage.sqlite.fulltext import SCOPE_TOKEN
from engram.storage.sqlite.index import postings, revision, textbase
from engram.storage.sqlite.index.revision import logged_since
from engram.storage.sqlite.index.tokens import Tokenized, Tokenizer
from engram.storage.sqlite.schema import change_mark

INDEX_ABOVE = 20_000
DEFAULT_BUDGET_BYTES = 256 << 20
READ_INLINE_BELOW = 50_000  # rows holding a term (in the whole file)
OWN_SHARE = 0.5  # of the file's rows: a scope holding as many reads every posting inline
FOLLOWED = 2_000  # appended or changed facts followed in place; more drop the terms held
SPLIT_LENGTHS_ABOVE = 40_000  # seqs a scope spans: its lengths are read in two halves at once
K1 = 1.2  # bm25()'s constants
B = 0.75

R = TypeVar("R")
Ints = postings.Ints
Floats = npt.NDArray[np.float64]
# What a snapshot holds of a scope: its version and epoch, and the file's change mark.
Snapshot = tuple[int, int, tuple[int, int]]


@dataclass
class _ScopeTerms:
    version: int
    epoch: int
    mark: int  # how far into the change log the terms held have read (revision.py)
    last_seq: int  # the newest fact they hold, or would hold had they its words
    terms: OrderedDict[str, postings.Posting] = field(default_factory=OrderedDict)
    lengths: postings.Lengths | None = None  # read by the scope's first query
    term_bytes: int = 0  # kept as terms come and go: summing them per search would cost
    base: textbase.View | None = None  # the scope's saved base, followed as the terms are
    refused: int | None = None  # a build of it too far behind to follow

    @property
    def nbytes(self) -> int:
        return self.term_bytes + (0 if self.lengths is None else self.lengths.nbytes)

    def put(self, token: str, posting: postings.Posting) -> None:
        held = self.terms.pop(token, None)
        self.term_bytes += posting.nbytes - (0 if held is None else held.nbytes)
        self.terms[token] = posting

    def get(self, token: str) -> postings.Posting:
        self.terms.move_to_end(token)
        return self.terms[token]

    def trim(self, budget: int) -> None:
        """Drops the least recently used terms past ``budget`` bytes (the newest stays)."""
        while self.nbytes > budget and len(self.terms) > 1:
            _, dropped = self.terms.popitem(last=False)
            self.term_bytes -= dropped.nbytes

    def remove(self, gone: Ints) -> None:
        for token, posting in list(self.terms.items()):
            self.put(token, posting.without(gone))
        if self.lengths is not None:
            self.lengths = self.lengths.without(gone)
        if self.base is not None:
            self.base.remove(gone)

    def add(self, tokenized: Tokenized, facts: int) -> None:
        """Adds ``facts`` facts' tokens to the terms held (other terms are read when asked
        for) and to what the base's view holds beside it."""
        if self.base is not None:
            self.base.add(tokenized, facts)
        docs, sizes = tokenized.lengths
        if self.lengths is not None:
            self.lengths = self.lengths.plus(docs, sizes.astype(np.float32))
        for token, posting in list(self.terms.items()):
            found = tokenized.postings.get(token)
            if found is not None:
                seqs, counts = found
                size = sizes[np.searchsorted(docs, seqs)].astype(np.float32)
                self.put(token, posting.plus(seqs, counts.astype(np.float32), size))


class TextIndex:
    """The postings of the terms asked for, per large scope, to a byte budget."""

    def __init__(
        self,
        budget_bytes: int = DEFAULT_BUDGET_BYTES,
        index_above: int = INDEX_ABOVE,
        run: Callable[..., Any] | None = None,
    ) -> None:
        """With ``run`` (the database's :meth:`Database.run`), a long posting is read on a
        thread of its own and the statement answers until it is held. Without it, or
        with ``load_inline`` set, the search that asks for a term reads it."""
        self.index_above = index_above
        self.read_inline_below = READ_INLINE_BELOW
        self.followed = FOLLOWED
        self.split_lengths_above = SPLIT_LENGTHS_ABOVE
        self._copies: ScopeCopies[_ScopeTerms] = ScopeCopies(budget_bytes)
        self._tokenizer = Tokenizer()
        self._counts = postings.DocumentCounts()
        self._run = run
        self._loader = self._new_loader()
        self._second = None if run is None else _SecondReader(run)
        # Builds the largest scopes' bases (their common terms saved in the file).
        self.bases = None if run is None else textbase.Builder(run)

    @property
    def budget_bytes(self) -> int:
        """What the postings held may take, all scopes together."""
        return self._copies.budget_bytes

    @budget_bytes.setter
    def budget_bytes(self, budget: int) -> None:
        self._copies.budget_bytes = budget

    @property
    def load_inline(self) -> bool:
        return self._loader is None

    @load_inline.setter
    def load_inline(self, inline: bool) -> None:
        if self._loader is not None:
            self._loader.close()
        self._loader = None if inline else self._new_loader()

    def _new_loader(self) -> Worker[tuple[str, str]] | None:
        return None if self._run is None else Worker("engram-text-index", self._load)

    def settle(self, timeout: float | None = None) -> bool:
        """Waits until no posting is being read on the side and no base is being built;
        False when ``timeout`` passed."""
        loaded = True if self._loader is None else self._loader.settle(timeout)
        return loaded and (self.bases is None or self.bases.settle(timeout))

    def close(self) -> None:
        if self._loader is not None:
            self._loader.close()
        if self.bases is not None:
            self.bases.close()
        if self._second is not None:
            self._second.close()

    def _load(self, wanted: tuple[str, str]) -> None:
        """Reads a term's posting in a scope, in a snapshot of its own."""
        assert self._run is not None
        scope, token = wanted

        def load(conn: sqlite3.Connection) -> None:
            state = _state(conn, scope)
            if state is None or state[2] < self.index_above:
                return
            version, epoch = state[0], state[1]

            def read(held: _ScopeTerms) -> None:
                if held.version == version and token not in held.terms:
                    held.put(token, postings.read(conn, scope, token, held.lengths)[0])

            self._use(conn, scope, version, epoch, read)

        self._run(lambda tx: load(tx.conn), write=False)

    def search(
        self,
        conn: sqlite3.Connection,
        scope: str,
        words: Sequence[str],
        limit: int,
        allowed: Collection[int] | None = None,
    ) -> list[Candidate] | None:
        """The ``limit`` best facts of ``scope`` for any of ``words`` (among the row numbers
        ``allowed``, when given: a filter's), scored and ordered as the full-text statement
        would; None when this index does not answer.

        ``conn`` must be inside a read transaction, so the state and rows agree.
        """
        parts = self._parts(conn, scope, words)
        if parts is None:
            return None
        if allowed is not None:  # a filter narrows which rows answer, not their scores
            parts = summed.among(parts, allowed)
        seqs, scores = summed.best(parts, limit)
        return _candidates(conn, scope, seqs.tolist(), scores.tolist())

    def search_passing(
        self,
        conn: sqlite3.Connection,
        scope: str,
        words: Sequence[str],
        asked: int,
        passes: Callable[[list[int]], Collection[int]],
    ) -> Sifted | None:
        """Those of the ``asked`` best facts of ``scope`` for ``words`` that pass a filter
        (``passes``: of given row numbers, those that do), in order, only those rows read;
        None when this index does not answer (as :meth:`search`)."""
        parts = self._parts(conn, scope, words)
        if parts is None:
            return None
        seqs, scores = summed.best(parts, asked)
        best = seqs.tolist()
        kept = passes(best) if best else set()
        chosen = [(seq, x) for seq, x in zip(best, scores.tolist(), strict=True) if seq in kept]
        found = _candidates(conn, scope, [seq for seq, _ in chosen], [x for _, x in chosen])
        return Sifted(found, complete=len(best) < asked)

    def _parts(
        self, conn: sqlite3.Connection, scope: str, words: Sequence[str]
    ) -> list[tuple[Ints, Floats]] | None:
        """Each of ``words``' rows in ``scope`` and its score there, a part a word, as
        :func:`engram.storage.summed.best` sums them; None when this index does not answer."""
        state = _state(conn, scope)
        if state is None or state[2] < self.index_above:
            self.forget(scope)
            return None
        phrases = self._tokenizer.words(words)
        if any(len(p) != 1 or SCOPE_TOKEN.fullmatch(p[0]) for p in phrases):
            return None
        tokens = [p[0] for p in phrases]  # a token twice is two phrases, scored twice
        unique = list(dict.fromkeys(tokens))
        version, epoch, facts = state
        rows, total = postings.averages(conn)
        own = facts >= rows * OWN_SHARE
        beside = None if own else self._loader  # long postings read so
        # Each term's count of rows in the whole file (bm25()'s document frequency): held
        # while the file is unchanged; else, where a term's posting is read from the whole
        # file's instances (a scope holding most of it), counted off them, one walk of
        # its doclist instead of two; else walked.
        at = self._counts.mark(conn)
        rows_with = self._counts.held(at, unique)
        counted: dict[str, int] = {}

        def count(token: str, documents: int | None = None) -> int:
            if token not in rows_with:
                found = postings.documents_with(conn, token) if documents is None else documents
                rows_with[token] = counted[token] = found
            return rows_with[token]

        if not own:  # which postings are long enough to be read beside is asked first
            for token in unique:
                count(token)

        def read(held: _ScopeTerms) -> dict[str, postings.Posting] | None:
            if held.version != version:  # held terms are newer than this snapshot
                return None
            deferred = False
            state = (version, epoch, at)
            if held.lengths is None:
                held.lengths = self._lengths(conn, scope, state)
            view = self._base(conn, scope, held, facts)
            # A saved posting counts the term's rows in the file only where the scope's
            # rows are the file's; else it is read where the count is known already (a
            # term's instances, read instead, count every scope's rows as they come).
            whole = rows == facts
            inline: list[str] = []
            for token in unique:
                if token in held.terms:
                    count(token)
                elif (
                    view is not None
                    and token in view.terms
                    and (whole or token in rows_with)
                    and (saved := view.posting(conn, scope, token, held.lengths)) is not None
                ):
                    if count(token, saved.seqs.shape[0] if whole else None):
                        held.put(token, saved)
                elif token in rows_with and rows_with[token] == 0:
                    continue  # no row holds it
                elif beside is not None and rows_with[token] >= self.read_inline_below:
                    beside.want((scope, token))  # the statement answers meanwhile
                    deferred = True
                else:
                    inline.append(token)
            for token, (posting, documents) in self._read_all(
                conn, scope, inline, held.lengths, state, rows_with
            ):
                if count(token, documents):
                    held.put(token, posting)
            if deferred:
                return None
            return {t: held.get(t) for t in unique if rows_with[t]}

        asked = self._use(conn, scope, version, epoch, read)
        self._counts.put(at, counted)
        if asked is None:
            return None
        if rows == 0:
            return []
        average = total / rows
        parts: list[tuple[Ints, Floats]] = []
        for token in tokens:
            posting = asked.get(token)
            if posting is None or posting.seqs.shape[0] == 0:
                continue
            hits = rows_with[token]
            idf = math.log((rows - hits + 0.5) / (hits + 0.5))
            if idf <= 0.0:
                idf = 1e-6
            counts = posting.counts.astype(np.float64)
            size = posting.sizes.astype(np.float64)
            parts.append(
                (
                    posting.seqs,
                    idf * ((counts * (K1 + 1.0)) / (counts + K1 * (1 - B + B * size / average))),
                )
            )
        return parts

    def _base(
        self, conn: sqlite3.Connection, scope: str, held: _ScopeTerms, facts: int
    ) -> textbase.View | None:
        """The scope's base as ``held`` follows it, loaded where the snapshot has a new
        one; None where it has none, or one this process would follow too far: then it
        is asked for (built again)."""
        if self.bases is None or facts < self.bases.above:
            held.base = None
            return None
        build = textbase.build_number(conn, scope)
        view = held.base
        if view is not None and view.build == build and view.followed <= self.followed:
            return view
        held.base = None
        if build is not None and build != held.refused:
            held.base = textbase.load(conn, scope, self._tokenizer, self.followed)
            if held.base is None:
                held.refused = build  # not loaded again: the next build is
        if held.base is None:
            self.bases.want(scope)
        return held.base

    def _read_all(
        self,
        conn: sqlite3.Connection,
        scope: str,
        tokens: list[str],
        lengths: postings.Lengths,
        state: Snapshot,
        known: dict[str, int],
    ) -> list[tuple[str, tuple[postings.Posting, int | None]]]:
        """``tokens``' postings, in their order: two or more read half on ``conn``, half
        on a second connection at once, where its snapshot holds the same facts as
        ``conn``'s (``state``: the scope's version and epoch, the file's mark); else, or
        while another query has it, all on ``conn``."""

        def read(
            on: sqlite3.Connection, some: list[str]
        ) -> dict[str, tuple[postings.Posting, int | None]]:
            return {t: postings.read(on, scope, t, lengths) for t in some}

        theirs = _shared(tokens, known)
        started = self._beside(scope, state, lambda other: read(other, theirs)) if theirs else None
        if started is None:
            found = read(conn, tokens)
        else:
            found = read(conn, [t for t in tokens if t not in theirs])
            there = _result(started)
            found.update(read(conn, theirs) if there is None else there)
        return [(t, found[t]) for t in tokens]

    def _lengths(self, conn: sqlite3.Connection, scope: str, state: Snapshot) -> postings.Lengths:
        """The scope's lengths (:func:`postings.read_lengths`): those of its older half of seqs
        on ``conn`` and of its newer half on the second connection at once, where it can
        (as :meth:`_read_all`); else all on ``conn``."""
        ends = conn.execute("SELECT min(seq), max(seq) FROM facts WHERE scope = ?", (scope,))
        low, high = ends.fetchone()
        if low is None or high - low < self.split_lengths_above:
            return postings.read_lengths(conn, scope)
        middle = (low + high) // 2 + 1
        started = self._beside(
            scope, state, lambda other: postings.read_lengths(other, scope, middle)
        )
        if started is None:
            return postings.read_lengths(conn, scope)
        older = postings.read_lengths(conn, scope, below=middle)
        newer = _result(started)
        return older.then(postings.read_lengths(conn, scope, middle) if newer is None else newer)

    def _beside(
        self,
        scope: str,
        state: Snapshot,
        work: Callable[[sqlite3.Connection], R],
    ) -> Future[R | None] | None:
        """``work`` begun on the second connection, done only where its snapshot holds
        the same facts as the query's (``state``: the scope's version and epoch, the
        file's mark; else its result is None: what it read might differ); None where no
        second connection is free."""
        if self._second is None:
            return None

        def there(other: sqlite3.Connection) -> R | None:
            held = _state(other, scope)
            if held is None or (held[0], held[1], self._counts.mark(other)) != state:
                return None
            return work(other)

        return self._second.start(there)

    def _use(
        self,
        conn: sqlite3.Connection,
        scope: str,
        version: int,
        epoch: int,
        read: Callable[[_ScopeTerms], R],
    ) -> R:
        """``read`` of the scope's terms brought to this snapshot (it may read terms in),
        then the budget kept: the least recently used terms, then scopes, dropped."""

        def read_then_trim(held: _ScopeTerms) -> R:
            found = read(held)
            held.trim(self.budget_bytes)
            return found

        found = self._copies.use(
            scope,
            lambda held: (held.version, held.epoch) == (version, epoch),
            lambda held: self._update(conn, scope, held, version, epoch),
            read_then_trim,
        )
        self._copies.evict()
        return found

    def forget(self, scope: str) -> None:
        self._copies.forget(scope)

    def held(self, scope: str) -> _ScopeTerms | None:
        """The scope's terms, if held (for diagnostics and tests)."""
        return self._copies.held(scope)

    def _update(
        self,
        conn: sqlite3.Connection,
        scope: str,
        entry: _ScopeTerms | None,
        version: int,
        epoch: int,
    ) -> _ScopeTerms:
        """``entry`` brought to this snapshot, or a new one holding no terms where
        following costs more than reading the terms again."""

        def anew() -> _ScopeTerms:
            newest = conn.execute("SELECT max(seq) FROM facts WHERE scope = ?", (scope,))
            return _ScopeTerms(version, epoch, change_mark(conn), newest.fetchone()[0] or -1)

        if entry is None or (not entry.terms and entry.lengths is None):
            return anew()
        if version < entry.version:  # an older snapshot: left as it is, the statement answers
            return entry
        if entry.epoch != epoch:
            mark = change_mark(conn)
            touched = logged_since(conn, scope, entry.mark)
            if touched is None or len(touched) > self.followed:
                return anew()
            entry.remove(np.asarray(touched, np.int64))
            again = revision.present(conn, scope, entry.last_seq, touched)
            entry.add(self._tokenizer.facts(again), len(again))
            # SQLite gives a deleted newest row's seq to the next insert: appends are read
            # from the newest seq still present.
            newest = conn.execute(
                "SELECT max(seq) FROM facts WHERE scope = ? AND seq <= ?", (scope, entry.last_seq)
            ).fetchone()[0]
            entry.last_seq = -1 if newest is None else int(newest)
            entry.mark, entry.epoch = mark, epoch
        appended = revision.appended(conn, scope, entry.last_seq, self.followed + 1)
        if len(appended) > self.followed:
            return anew()
        if appended:
            entry.add(self._tokenizer.facts(appended), len(appended))
            entry.last_seq = int(appended[-1][0])
        entry.version = version
        return entry


def _state(conn: sqlite3.Connection, scope: str) -> tuple[int, int, int] | None:
    row = conn.execute(
        "SELECT version, epoch, facts FROM scope_state WHERE scope = ?", (scope,)
    ).fetchone()
    return None if row is None else (int(row[0]), int(row[1]), int(row[2]))


def _shared(tokens: list[str], known: dict[str, int]) -> list[str]:
    """Which of ``tokens`` a second connection reads while the query's own reads the
    rest: none of fewer than two; else about half of the rows they hold where each one's
    count is known (the longest first, each to the side holding fewer), else every
    second one."""
    if len(tokens) < 2:
        return []
    if any(t not in known for t in tokens):
        return tokens[1::2]
    mine, theirs, load = 0, [], 0
    for token in sorted(tokens, key=lambda t: -known[t]):
        if load < mine:
            theirs.append(token)
            load += known[token]
        else:
            mine += known[token]
    return theirs


def _result(started: Future[R | None]) -> R | None:
    """What the second connection read; None when it read nothing (another snapshot, or
    it failed: the query's own connection then reads it, and fails the same way if it
    must)."""
    try:
        return started.result()
    except Exception:  # read again on the query's own connection
        return None


class _SecondReader:
    """A second connection to the file, on a thread of its own, that reads part of what
    a query reads (its postings, a scope's lengths) while the query's connection reads
    the rest (SQLite lets go of the interpreter while it steps: BENCHMARKS.md, "A
    question's new words read on two connections at once"). One query at a time: another
    reads all on its own."""

    def __init__(self, run: Callable[..., Any]) -> None:
        self._run = run
        self._free = threading.Lock()
        self._threads: ThreadPoolExecutor | None = None
        self._closed = False

    def start(self, work: Callable[[sqlite3.Connection], R]) -> Future[R] | None:
        """``work`` begun on the second connection, in a read transaction of its own;
        None while another query has it, or once closed. It is free again as soon as the
        work ends, before its result is given: the query's next read may have it."""
        if not self._free.acquire(blocking=False):
            return None

        def read() -> R:
            try:
                result: R = self._run(lambda tx: work(tx.conn), write=False)
                return result
            finally:
                self._free.release()

        try:
            if self._closed:
                raise RuntimeError("closed")
            if self._threads is None:
                self._threads = ThreadPoolExecutor(1, thread_name_prefix="engram-postings")
            return self._threads.submit(read)
        except RuntimeError:  # closed, or shut down meanwhile
            self._free.release()
            return None

    def close(self) -> None:
        self._closed = True
        if self._threads is not None:
            self._threads.shutdown()


def _candidates(
    conn: sqlite3.Connection, scope: str, seqs: list[int], scores: list[float]
) -> list[Candidate]:
    """The rows ``seqs`` (scored ``scores``, in that order) as candidates named by their
    facts' ids, with their traits (read from the row the id is read from, whole, so that
    recall reads it no more)."""
    if not seqs:
        return []
    rows = {
        int(r[SEQ]): r  # by its seq
        for r in conn.execute(
            f"SELECT {FACT_COLUMNS} FROM facts "
            "WHERE seq IN (SELECT value FROM json_each(?)) "
            "AND +scope = ?",  # by the seqs, never a walk of the scope's index
            (json.dumps(seqs), scope),
        )
    }
    return [
        Candidate(str(rows[seq][0]), score, to_traits(rows[seq]))
        for seq, score in zip(seqs, scores, strict=True)
        if seq in rows
    ]
