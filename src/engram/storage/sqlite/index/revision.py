"""Bringing an in-memory copy of a scope up to date after a change that was not an append.

A scope's ``scope_state.epoch`` grows when facts are deleted or their words change, and
each such fact's seq goes into the change log (``fact_changes``, migration 5). A copy
(the vector cache, the text index) remembers how far into the log it has read (its
mark). To revise itself, it masks the logged seqs it holds and reads again those still
present, so a forget costs what it touched, not the scope.

The log of a scope is cleared once it holds more rows than half the scope (and at least
``LOG_FLOOR``), or once the scope is empty; a copy whose mark lies before that
(``scope_state.changes_from``) is rebuilt, as is one with more than half its facts gone.

A revised copy reads appends from the newest seq still present: SQLite gives a deleted
newest fact's seq to the next insert.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from engram.storage.sqlite.driver import sqlite3
from engram.storage.sqlite.schema import change_mark

Mask = npt.NDArray[np.bool_]
Row = tuple[int, str, str, str | None]  # seq, content, scope token, context


class Copy(Protocol):
    """What an in-memory copy of a whole scope (the vector cache) keeps to follow the
    change log: the epoch it is at, which held positions are ``alive``, the newest seq
    read (``last_seq``), and how far into the log it has read (``mark``). The text index
    holds terms, not positions, and reads the log with :func:`logged_since` alone."""

    epoch: int
    alive: Mask
    last_seq: int
    mark: int


def follow(
    conn: sqlite3.Connection,
    scope: str,
    copy: Copy,
    seqs: Sequence[int] | npt.NDArray[np.int64],
    epoch: int,
    reread: Callable[[list[int]], None],
) -> bool:
    """Brings ``copy`` (holding facts ``seqs``) to ``epoch`` in place: facts the log says
    changed are masked, and those still present go to ``reread`` (ascending seqs), which
    adds them back. False, with ``copy`` untouched, when it must be rebuilt instead."""
    now = change_mark(conn)
    touched = logged_since(conn, scope, copy.mark)
    if touched is None:
        return False
    held = np.asarray(seqs, np.int64)
    gone = copy.alive & np.isin(held, np.fromiter(touched, np.int64, len(touched)))
    alive = copy.alive & ~gone  # a new array: searches holding the old mask are unaffected
    if 2 * (len(alive) - int(alive.sum())) > len(alive):  # carrying them costs more
        return False
    present = [
        int(seq)
        for (seq,) in conn.execute(
            "SELECT seq FROM facts WHERE scope = ? AND seq <= ? "
            "AND seq IN (SELECT value FROM json_each(?)) ORDER BY seq",
            (scope, copy.last_seq, json.dumps(touched)),
        )
    ]
    copy.alive, copy.mark, copy.epoch = alive, now, epoch
    copy.last_seq = max(int(held[alive].max()) if alive.any() else -1, max(present, default=-1))
    reread(present)
    return True


# A fact as the tokenizer reads it (:meth:`.tokens.Tokenizer.facts`).
_WORDS = "SELECT seq, content, scope_token, context FROM facts WHERE scope = ?"


def appended(conn: sqlite3.Connection, scope: str, after: int, limit: int) -> list[Row]:
    """The scope's facts after seq ``after`` (at most ``limit``), in seq order, as the
    tokenizer reads them."""
    rows: list[Row] = conn.execute(
        f"{_WORDS} AND seq > ? ORDER BY seq LIMIT ?", (scope, after, limit)
    ).fetchall()
    return rows


def present(conn: sqlite3.Connection, scope: str, upto: int, seqs: Sequence[int]) -> list[Row]:
    """Those of ``seqs`` up to ``upto`` whose facts the scope still holds, in seq order, as
    the tokenizer reads them (a copy reads a changed fact's words again)."""
    rows: list[Row] = conn.execute(
        f"{_WORDS} AND seq <= ? AND seq IN (SELECT value FROM json_each(?)) ORDER BY seq",
        (scope, upto, json.dumps(list(seqs))),
    ).fetchall()
    return rows


def logged_since(conn: sqlite3.Connection, scope: str, mark: int) -> list[int] | None:
    """The distinct seqs the scope's log holds after ``mark``; None when the log was
    cleared past ``mark``, so it no longer tells everything since."""
    row = conn.execute("SELECT changes_from FROM scope_state WHERE scope = ?", (scope,)).fetchone()
    if row is None or int(row[0]) > mark:
        return None
    return [
        int(seq)
        for (seq,) in conn.execute(
            "SELECT DISTINCT seq FROM fact_changes WHERE scope = ? AND id > ?", (scope, mark)
        )
    ]
