"""Words erased for good, out of the file (``engram scrub``).

A write that erases words scrubs the file itself, after its commit (:mod:`freespace`);
one that could not (a reader held the log, the process ended first) is run when a store
next opens the file, or by :func:`scrub`, which runs it whether or not one is due."""

from __future__ import annotations

import time

from engram.core.health import Scrubbed
from engram.storage.sqlite import forgetting, freespace
from engram.storage.sqlite.database import Database, read_only
from engram.storage.sqlite.driver import sqlite3


def scrub(path: str) -> Scrubbed:
    """Zeroes the unused space of the file's pages and truncates its log; what it did."""
    started = time.perf_counter()
    try:  # read before the opening below runs it
        peek = read_only(path)
        try:
            was_due = freespace.due(peek)
        finally:
            peek.close()
    except sqlite3.Error:
        was_due = False  # no store engram reads: the opening says why
    db = Database(path)  # which runs a scrub that is due
    try:
        conn = db.connection()
        forgetting.purge(conn, scrub=db.path)
        still = freespace.due(conn)
    finally:
        db.close()
    left = ("the file's log: a reader held it; the next forget or opening scrubs",) if still else ()
    return Scrubbed(
        was_due=was_due,
        still_due=still,
        rewritten=(),
        seconds=time.perf_counter() - started,
        left=left,
    )
