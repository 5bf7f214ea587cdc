"""Forgetting for real: what a forget removes leaves no copy in the file or its log.

Three things keep deleted words in a SQLite file: the free space of the pages the rows
were on, the full-text index's segments, and the frames of the write-ahead log.
``PRAGMA secure_delete`` (set on every connection) zeroes the first; FTS5's
``secure-delete`` option removes a deleted fact's terms from the segments that hold them
(where the driver's SQLite has it: see :mod:`driver`; below 3.44 the whole index is
merged instead, which drops every deleted entry); and after each write that deleted or
rewrote facts, the log is checkpointed into the file and truncated. A page SQLite lays
out again keeps old copies of rows in its unused space, which ``secure_delete`` does not
reach: after a write that erased words for good, that space is zeroed too
(:mod:`freespace`).

A checkpoint waits for readers that still use the log at most ``CHECKPOINT_WAIT_MS``; if
one outlasts it, the log is truncated by the next forgetting write or when the last
connection to the file closes.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from engram.core.errors import StorageFailure
from engram.storage.sqlite import freespace
from engram.storage.sqlite.driver import SECURE_FTS, sqlite3

log = logging.getLogger("engram.storage")

CHECKPOINT_WAIT_MS = 2_000
FTS_FORMAT_SECURE = 5  # the FTS5 format version that the secure-delete option writes


def secure_index(conn: sqlite3.Connection, path: str) -> bool:
    """Turns on FTS5's secure-delete option once per store (in the migration's transaction),
    merging the index once so nothing forgotten before it stays behind; True when it did
    (the store's rows then go through :func:`rewrite`). Raises StorageFailure when the
    index was written by a newer SQLite than this driver."""
    config = dict(conn.execute("SELECT k, v FROM facts_fts_config").fetchall())
    if int(config.get("version", 4)) >= FTS_FORMAT_SECURE and not SECURE_FTS:
        raise StorageFailure(
            f"the store at {path} was written with SQLite 3.44 or newer, and this Python's "
            f"SQLite is {sqlite3.sqlite_version}: its full-text index cannot be read",
            hint="install pysqlite3-binary, or use a Python whose sqlite3 is 3.44 or newer",
        )
    if SECURE_FTS and int(config.get("secure-delete", 0)) != 1:
        conn.execute("INSERT INTO facts_fts (facts_fts, rank) VALUES ('secure-delete', 1)")
        conn.execute("INSERT INTO facts_fts (facts_fts) VALUES ('optimize')")
        return True
    return False


def rewrite(conn: sqlite3.Connection) -> None:
    """Writes the whole file anew, once, for a store whose forgets before this were only
    logical: a row deleted without ``secure_delete`` leaves its bytes in its page's free
    space (or a free page) until something happens to write over them, which merging the
    index does not do. Outside any transaction; waits for other connections as a write."""
    conn.execute("VACUUM")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


# A secure delete rewrites the index leaves holding the fact's terms: ~0.35-0.65 ms a
# fact, measured at 10k-100k facts (BENCHMARKS.md), while merging the whole index costs
# ~0.85 us a fact it holds. A forget of more than 1/BULK_RATIO of the store merges.
BULK_RATIO = 500


def facts_held(conn: sqlite3.Connection, scopes: int, besides: str | None = None) -> int:
    """The facts of the store (of every scope but ``besides``), summed over at most
    ``scopes`` scopes that hold any: exact where fewer hold facts, and at least
    ``scopes`` otherwise (each holds one or more). So a question "does the store hold
    N facts?" reads at most N scopes' rows, not a row per scope of a large store."""
    row = conn.execute(
        "SELECT coalesce(sum(facts), 0) FROM (SELECT facts FROM scope_state "
        "WHERE facts > 0 AND scope IS NOT ? LIMIT ?)",
        (besides, scopes),
    ).fetchone()
    return int(row[0])


@contextmanager
def deleting(conn: sqlite3.Connection, count: int) -> Iterator[None]:
    """Wraps a delete of ``count`` facts in the caller's transaction: a delete large
    against the store deletes with the option off and merges the index once after it
    (which drops every deleted entry), instead of rewriting leaves fact by fact."""
    large = count * BULK_RATIO
    if not SECURE_FTS or large <= facts_held(conn, large):
        yield
        return
    conn.execute("INSERT INTO facts_fts (facts_fts, rank) VALUES ('secure-delete', 0)")
    yield
    conn.execute("INSERT INTO facts_fts (facts_fts, rank) VALUES ('secure-delete', 1)")
    conn.execute("INSERT INTO facts_fts (facts_fts) VALUES ('optimize')")


def purge(conn: sqlite3.Connection, *, scrub: str | None = None) -> None:
    """After a committed write that deleted or rewrote facts: merges the full-text index
    where FTS5 cannot delete securely, then checkpoints the log and truncates it. For a
    write that erased words for good, ``scrub`` is the file whose pages' unused space is
    then zeroed (:mod:`freespace`), and the log truncated again after the scrub's write."""
    if not SECURE_FTS:
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute("INSERT INTO facts_fts (facts_fts) VALUES ('optimize')")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    busy = int(conn.execute("PRAGMA busy_timeout").fetchone()[0])
    if _checkpoint(conn, busy):
        log.info("a reader held the log past a forget; it is truncated at the next one")
    elif scrub is not None and freespace.scrub(scrub, busy_ms=busy) is not None:
        _checkpoint(conn, busy)


def _checkpoint(conn: sqlite3.Connection, busy: int) -> bool:
    """Checkpoints the log into the file and truncates it, waiting for readers that
    still use it at most ``CHECKPOINT_WAIT_MS``; True when one held it past that."""
    conn.execute(f"PRAGMA busy_timeout = {CHECKPOINT_WAIT_MS}")
    try:
        return bool(conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0])
    finally:
        conn.execute(f"PRAGMA busy_timeout = {busy}")
