"""A large scope's common terms' postings saved in the file, so that a process's first
query of such a term reads one row instead of FTS5's instances of it.

Reading a term's posting from ``fts5vocab``'s instances costs about 57 ns an instance:
at a million facts a common word's 40k rows take 2.3 ms, and a question's first pass
reads three or four of them (BENCHMARKS.md, "A large scope's common terms saved in the
file"). A scope of at least ``BASE_ABOVE`` facts gets a base, built on a thread of its
own (:class:`Builder`): every term at least ``TERM_ROWS`` of its facts hold, as two
arrays a term (its facts' seqs, packed as the gaps between them, and its count in each:
:func:`packed`), in ``text_base_terms`` under the build named in ``text_bases`` with the
change-log mark it was read at and the newest fact it holds (schema migrations 28, 33).

The rows stay the one source of truth and FTS5's index the one ranking; the base is a
copy that follows them as the in-memory terms do (:class:`View`): the facts the change
log names since its mark are never taken from it, and those still present, with the
facts appended since, are tokenized once per process and held beside it. A view that
would follow more than ``FOLLOWED`` facts is let go and the base built again.

Words that leave the store for good leave the base too, in the same transaction, since
its postings would still tell which common words a fact held: a fact erased (not
trashed) or purged from the trash, a context rewritten, a before-state erased from the
ledger or dropped by its retention (a correction alone does not: the ledger keeps the old
words, for a revert, until then). The schema's triggers mark the base ``strip_due``, and
the erasing write's commit (:func:`strip`) takes out of its postings every fact the
change log names since its mark: those a view never takes from it. A marked base is read
by no search until then. A build that read the scope before such an erasure
(``scope_state.words_erased`` moved) is not installed.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engram.storage.background import Worker
from engram.storage.sqlite.driver import sqlite3
from engram.storage.sqlite.fulltext import SCOPE_TOKEN
from engram.storage.sqlite.index import postings, revision
from engram.storage.sqlite.index.revision import logged_since
from engram.storage.sqlite.index.tokens import Tokenized, Tokenizer
from engram.storage.sqlite.schema import STRIP_DUE, change_mark

log = logging.getLogger("engram.storage")

BASE_ABOVE = 100_000  # facts in a scope
TERM_ROWS = 1_000  # facts of the scope holding a term, for the term to be saved
FOLLOWED = 2_000  # facts changed or appended since a base that a view holds beside it
# A saved term's facts, as the gaps between their seqs (the first from 0): two bytes a
# fact where every gap fits, as it nearly always does for a term at least TERM_ROWS facts
# hold, else four (a scope with a seq past 2**32 gets no base); the blob's first byte says
# which. Its count in each, one byte (a term counted more in a fact is not saved). A seq
# and a count took six bytes before, 50 a fact at 100k (BENCHMARKS.md, "A text base's
# postings as gaps").
_GAPS = (np.dtype("<u2"), np.dtype("<u4"))
_COUNTS = np.dtype("u1")

Ints = postings.Ints


@dataclass
class View:
    """A scope's base as one process follows it: which terms it saved, the seqs changed
    since it (its rows for them not taken), and the postings of the facts read since
    (changed and still present, or appended), with how many facts those are."""

    build: int
    terms: frozenset[str]
    excluded: set[int] = field(default_factory=set)
    since: dict[str, list[tuple[Ints, Ints]]] = field(default_factory=dict)
    followed: int = 0

    def remove(self, gone: Ints) -> None:
        """Facts changed since: their saved rows, and any read since, no longer taken."""
        self.excluded.update(gone.tolist())
        for token, parts in list(self.since.items()):
            kept = [(s[keep], c[keep]) for s, c in parts if (keep := ~np.isin(s, gone)).any()]
            if kept:
                self.since[token] = kept
            else:
                del self.since[token]

    def add(self, tokenized: Tokenized, facts: int) -> None:
        """Facts read since the base (changed and still present, or appended)."""
        for token, (seqs, counts) in tokenized.postings.items():
            self.since.setdefault(token, []).append((seqs, counts.astype(np.int64)))
        self.followed += facts

    def posting(
        self, conn: sqlite3.Connection, scope: str, token: str, lengths: postings.Lengths
    ) -> postings.Posting | None:
        """``token``'s posting in this snapshot: its saved rows less those changed since,
        with those read since; None where the base no longer holds it (built again
        meanwhile) or a row's length is not held (the instances are read instead)."""
        row = conn.execute(
            "SELECT seqs, counts FROM text_base_terms WHERE scope = ? AND term = ?",
            (scope, token),
        ).fetchone()
        if row is None:
            return None
        seqs = unpacked(row[0])
        counts = np.frombuffer(row[1], _COUNTS).astype(np.int64)
        if self.excluded:
            keep = ~np.isin(seqs, np.fromiter(self.excluded, np.int64, len(self.excluded)))
            seqs, counts = seqs[keep], counts[keep]
        parts = self.since.get(token, [])
        if parts:
            seqs = np.concatenate([seqs, *(s for s, _ in parts)])
            counts = np.concatenate([counts, *(c for _, c in parts)])
        held, at = lengths.where(seqs)
        if not held.all():
            return None
        return postings.Posting(seqs, counts.astype(np.float32), lengths.sizes[at])


def load(
    conn: sqlite3.Connection, scope: str, tokenizer: Tokenizer, followed: int = FOLLOWED
) -> View | None:
    """The scope's base as this snapshot has it, brought to this snapshot; None where it
    has none, or following it would read more than ``followed`` facts (or the change log
    no longer reaches back to it)."""
    row = conn.execute(
        "SELECT build, mark, last_seq FROM text_bases WHERE scope = ? AND strip_due = 0",
        (scope,),
    ).fetchone()
    if row is None:
        return None
    build, mark, last_seq = (int(v) for v in row)
    touched = logged_since(conn, scope, mark)
    if touched is None or len(touched) > followed:
        return None
    appended = revision.appended(conn, scope, last_seq, followed + 1)
    again = revision.present(conn, scope, last_seq, touched)
    if len(appended) + len(again) > followed:
        return None
    terms = frozenset(
        t for (t,) in conn.execute("SELECT term FROM text_base_terms WHERE scope = ?", (scope,))
    )
    view = View(build, terms, excluded=set(touched))
    if appended or again:
        view.add(tokenizer.facts(again + appended), len(again) + len(appended))
    return view


def strip(conn: sqlite3.Connection) -> None:
    """Takes out of each base marked ``strip_due`` every fact its scope's change log names
    since the base's mark (a term left with none goes), inside the write that marked it;
    a base the log no longer reaches back from goes whole."""
    for (scope,) in conn.execute(STRIP_DUE).fetchall():
        (mark,) = conn.execute("SELECT mark FROM text_bases WHERE scope = ?", (scope,)).fetchone()
        touched = logged_since(conn, scope, int(mark))
        if touched is None:
            conn.execute("DELETE FROM text_base_terms WHERE scope = ?", (scope,))
            conn.execute("DELETE FROM text_bases WHERE scope = ?", (scope,))
            continue
        if touched:
            gone = np.asarray(touched, np.int64)
            held = conn.execute("SELECT term, seqs FROM text_base_terms WHERE scope = ?", (scope,))
            changed = [
                (term, keep)
                for term, seqs in held
                if not (keep := ~np.isin(unpacked(seqs), gone)).all()
            ]
            for term, keep in changed:
                _strip_term(conn, scope, term, keep)
        conn.execute("UPDATE text_bases SET strip_due = 0 WHERE scope = ?", (scope,))


def _strip_term(conn: sqlite3.Connection, scope: str, term: str, keep: np.ndarray) -> None:
    if not keep.any():
        conn.execute("DELETE FROM text_base_terms WHERE scope = ? AND term = ?", (scope, term))
        return
    seqs, counts = conn.execute(
        "SELECT seqs, counts FROM text_base_terms WHERE scope = ? AND term = ?", (scope, term)
    ).fetchone()
    conn.execute(
        "UPDATE text_base_terms SET seqs = ?, counts = ? WHERE scope = ? AND term = ?",
        (
            packed(unpacked(seqs)[keep]),
            np.frombuffer(counts, _COUNTS)[keep].tobytes(),
            scope,
            term,
        ),
    )


def packed(seqs: Ints) -> bytes:
    """A saved term's seqs (ascending, below 2**32) as the gaps between them, after a
    byte saying their width."""
    gaps = np.diff(seqs, prepend=0)
    width = _GAPS[0] if gaps.shape[0] and gaps.max() <= np.iinfo(_GAPS[0]).max else _GAPS[1]
    return bytes([width.itemsize]) + gaps.astype(width).tobytes()


def unpacked(blob: bytes) -> Ints:
    """The seqs :func:`packed` saved."""
    width = _GAPS[0] if blob[0] == _GAPS[0].itemsize else _GAPS[1]
    return np.cumsum(np.frombuffer(blob, width, offset=1), dtype=np.int64)


def build_number(conn: sqlite3.Connection, scope: str) -> int | None:
    """The build of the scope's base in this snapshot, if it has one."""
    row = conn.execute("SELECT build FROM text_bases WHERE scope = ?", (scope,)).fetchone()
    return None if row is None else int(row[0])


class Builder:
    """Builds scopes' bases on a thread of its own, as searches ask for them."""

    def __init__(self, run: Callable[..., Any]) -> None:
        self._run = run
        self.above = BASE_ABOVE
        self.term_rows = TERM_ROWS
        self._worker: Worker[str] = Worker("engram-text-base", self._work)

    def want(self, scope: str) -> None:
        self._worker.want(scope)

    def settle(self, timeout: float | None = None) -> bool:
        return self._worker.settle(timeout)

    def close(self) -> None:
        self._worker.close()

    def _work(self, scope: str) -> None:
        if not self.build(scope):
            log.debug("the text base of a scope was not installed; asked again later")

    def build(self, scope: str) -> bool:
        """Reads the scope's common terms' postings in one snapshot and saves them as its
        base; False when the scope is too small or changed for good meanwhile, or its
        base is the one that snapshot would give."""
        read = self._run(lambda tx: _read(tx.conn, scope, self.above, self.term_rows), write=False)
        if read is None or self._worker.closed:
            return False
        return bool(self._run(lambda tx: _install(tx.conn, scope, read)))


@dataclass(frozen=True)
class _Read:
    erased: int  # the scope's words erased for good, as counted when it was read
    mark: int
    last_seq: int
    terms: list[tuple[str, bytes, bytes]]


def _read(conn: sqlite3.Connection, scope: str, above: int, term_rows: int) -> _Read | None:
    state = conn.execute(
        "SELECT facts, words_erased FROM scope_state WHERE scope = ?", (scope,)
    ).fetchone()
    if state is None or int(state[0]) < above:
        return None
    mark = change_mark(conn)
    last_seq = conn.execute("SELECT max(seq) FROM facts WHERE scope = ?", (scope,)).fetchone()[0]
    if last_seq is None or last_seq >= 1 << 32:
        return None
    saved = conn.execute(
        "SELECT build, mark, last_seq FROM text_bases WHERE scope = ? AND strip_due = 0",
        (scope,),
    ).fetchone()
    if saved is not None and (int(saved[1]), int(saved[2])) == (mark, int(last_seq)):
        return None  # the base holds this snapshot already
    lengths = postings.read_lengths(conn, scope)
    common = [
        str(t)
        for (t,) in conn.execute(
            "SELECT term FROM temp.facts_fts_rows WHERE doc >= ?", (term_rows,)
        )
        if not SCOPE_TOKEN.fullmatch(str(t))
    ]
    terms = []
    for token in common:
        posting, _ = postings.read(conn, scope, token, lengths)
        held = posting.seqs.shape[0]
        if not held or held < term_rows or posting.counts.max() > np.iinfo(_COUNTS).max:
            continue
        order = np.argsort(posting.seqs, kind="stable")
        counts = posting.counts[order].astype(_COUNTS).tobytes()
        terms.append((token, packed(posting.seqs[order]), counts))
    return _Read(int(state[1]), mark, int(last_seq), terms)


def _install(conn: sqlite3.Connection, scope: str, read: _Read) -> bool:
    """Saves ``read`` as the scope's base, in place of any it had, unless a fact's words
    left the store for good since it was read."""
    now = conn.execute("SELECT words_erased FROM scope_state WHERE scope = ?", (scope,)).fetchone()
    if now is None or int(now[0]) != read.erased:
        return False
    conn.execute("DELETE FROM text_base_terms WHERE scope = ?", (scope,))
    conn.execute(
        "INSERT INTO text_bases (scope, build, mark, last_seq) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (scope) DO UPDATE SET build = excluded.build, mark = excluded.mark, "
        "last_seq = excluded.last_seq, strip_due = 0",
        (scope, random.getrandbits(62), read.mark, read.last_seq),
    )
    conn.executemany(
        "INSERT INTO text_base_terms (scope, term, seqs, counts) VALUES (?, ?, ?, ?)",
        [(scope, *term) for term in read.terms],
    )
    return True
