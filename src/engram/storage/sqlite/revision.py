"""Bringing an in-memory copy of a scope up to date after a change that was not an append.

A scope's ``scope_state.epoch`` grows when facts are deleted or their words change. A copy
(the vector cache, the text index) then compares each fact it holds with the file by
content hash, since a fact's words change only with its hash: facts gone are masked out,
changed ones are masked and read again. That costs one pass over the scope's (seq, hash)
pairs instead of reading and processing every fact again. A copy then reads appends from
the newest seq still present: SQLite gives a deleted newest fact's seq to the next insert.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

Mask = npt.NDArray[np.bool_]


def revised(
    conn: sqlite3.Connection,
    scope: str,
    seqs: Sequence[int],
    hashes: Sequence[str],
    alive: Mask,
    last_seq: int,
) -> tuple[Mask, int, list[int]] | None:
    """After a new epoch, for a copy holding facts ``seqs`` (with ``hashes``) up to
    ``last_seq``: its new mask, the seq to read appends after, and the seqs to read
    again; None when the copy should be rebuilt."""
    current: dict[int, str] = dict(
        conn.execute(
            "SELECT seq, content_hash FROM facts WHERE scope = ? AND seq <= ?", (scope, last_seq)
        ).fetchall()
    )
    found = revise(seqs, hashes, alive, current)
    if found is None:
        return None
    mask, changed = found
    # A deleted newest fact's seq is taken again by the next insert (no AUTOINCREMENT):
    # appends are read from the newest seq still present.
    return mask, max(current, default=-1), changed


def revise(
    seqs: Sequence[int], hashes: Sequence[str], alive: Mask, current: dict[int, str]
) -> tuple[Mask, list[int]] | None:
    """The held positions still current (a new mask) and the seqs whose words changed,
    to be read again; None when more than half the positions would be masked, where
    reading the scope again costs less than carrying them."""
    alive = alive.copy()  # searches holding the old mask are unaffected
    changed = []
    for i in np.flatnonzero(alive).tolist():
        now = current.get(seqs[i])
        if now != hashes[i]:
            alive[i] = False
            if now is not None:
                changed.append(seqs[i])
    if 2 * (len(alive) - int(alive.sum())) > len(alive):
        return None
    return alive, sorted(changed)
