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
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Mask = npt.NDArray[np.bool_]

LOG_FLOOR = 256  # a scope's log may always hold this many rows, however small the scope


@dataclass(frozen=True, slots=True)
class Revision:
    alive: Mask  # the held positions still current
    last_seq: int  # read appends after this seq
    changed: list[int]  # seqs whose facts are to be read again, ascending
    mark: int  # how far into the change log the copy now is


def change_mark(conn: sqlite3.Connection) -> int:
    """The newest change-log id ever given (0 before the first): a copy read in the same
    transaction has seen every change up to it."""
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'fact_changes'").fetchone()
    return int(row[0]) if row else 0


@dataclass(frozen=True, slots=True)
class Held:
    """What a copy holds: its facts' ``seqs``, which of them are ``alive``, the newest
    seq it has read (``last_seq``), and how far into the change log it has read
    (``mark``)."""

    seqs: Sequence[int] | npt.NDArray[np.int64]
    alive: Mask
    last_seq: int
    mark: int


def revised(conn: sqlite3.Connection, scope: str, held: Held) -> Revision | None:
    """How a copy of ``scope`` stands after a new epoch; None when it should be rebuilt."""
    now = change_mark(conn)
    touched = _logged_since(conn, scope, held.mark)
    if touched is None:
        return None
    seqs = np.asarray(held.seqs, np.int64)
    gone = held.alive & np.isin(seqs, np.fromiter(touched, np.int64, len(touched)))
    mask = held.alive & ~gone  # a new array: searches holding the old mask are unaffected
    if _mostly_masked(mask):
        return None
    present = [
        int(seq)
        for (seq,) in conn.execute(
            "SELECT seq FROM facts WHERE scope = ? AND seq <= ? "
            "AND seq IN (SELECT value FROM json_each(?)) ORDER BY seq",
            (scope, held.last_seq, json.dumps(touched)),
        )
    ]
    newest = max(int(seqs[mask].max()) if mask.any() else -1, present[-1] if present else -1)
    return Revision(mask, newest, present, now)


def _logged_since(conn: sqlite3.Connection, scope: str, mark: int) -> list[int] | None:
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


def _mostly_masked(alive: Mask) -> bool:
    return 2 * (len(alive) - int(alive.sum())) > len(alive)
