"""Connections to one SQLite file: per-thread connections, WAL, immediate write
transactions, and translation of driver errors at this boundary: a lock still held after
the busy timeout and the retries is Unavailable (503, retryable), anything else is
StorageFailure."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import TypeVar
from urllib.parse import quote

from engram.core.errors import EngramError, StorageFailure, Unavailable
from engram.storage.sqlite import forgetting
from engram.storage.sqlite.driver import sqlite3
from engram.storage.sqlite.schema import change_mark, check_ours, migrate

T = TypeVar("T")

BUSY_TIMEOUT_MS = 30_000
# Beyond busy_timeout, a whole transaction is retried while the file stays locked.
RETRY_FOR_S = 120.0


class Database:
    """One SQLite file shared by the threads of this process (and other processes).

    Each thread gets its own connection. Writes run in ``BEGIN IMMEDIATE`` so a writer
    waits for the lock up front instead of failing on upgrade; readers never block
    writers (WAL).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = str(path)
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._guard = threading.Lock()
        self._closed = False
        _check_path(self.path)
        _check_ours(self.path)
        try:
            conn = self.connection()
            self.schema_version = migrate(conn, self.path)
        except sqlite3.Error as exc:
            self.close()
            raise failure(exc, f"cannot open the store at {self.path}") from exc
        except EngramError:
            self.close()
            raise

    def connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        if self._closed:
            raise StorageFailure(f"the store at {self.path} is closed")
        conn = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000
        )
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            _retry(lambda: conn.execute("PRAGMA journal_mode = WAL"))
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA secure_delete = ON")  # deleted rows are zeroed (forgetting.py)
        self._local.conn = conn
        with self._guard:
            self._all.append(conn)
        return conn

    def write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Runs ``work`` in one immediate transaction: all of it commits, or none. A write
        that deleted or rewrote facts (the change log says so) is then purged from the
        file and its log (:mod:`forgetting`)."""

        def attempt() -> tuple[T, bool]:
            conn = self.connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                mark = change_mark(conn)
                result = work(conn)
                forgot = change_mark(conn) != mark
                conn.execute("COMMIT")
                return result, forgot
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

        result, forgot = self._translate(lambda: _retry(attempt))
        if forgot:
            self._translate(lambda: _retry(lambda: forgetting.purge(self.connection())))
        return result

    def read(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Runs ``work`` in one read transaction: every statement sees the same snapshot."""

        def attempt() -> T:
            conn = self.connection()
            conn.execute("BEGIN")
            try:
                return work(conn)
            finally:
                if conn.in_transaction:
                    conn.execute("COMMIT")

        return self._translate(lambda: _retry(attempt))

    def _translate(self, run: Callable[[], T]) -> T:
        """Driver errors become engram errors here, at the boundary."""
        try:
            return run()
        except sqlite3.Error as exc:
            raise failure(exc, f"the store at {self.path} failed") from exc

    def close(self) -> None:
        with self._guard:
            self._closed = True
            conns, self._all = self._all, []
        for conn in conns:
            with suppress(sqlite3.Error):
                conn.close()
        self._local = threading.local()


def _retry(attempt: Callable[[], T]) -> T:
    deadline = time.monotonic() + RETRY_FOR_S
    delay = 0.005
    while True:
        try:
            return attempt()
        except sqlite3.OperationalError as exc:
            if not _busy(exc) or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.25)


def _busy(exc: sqlite3.Error) -> bool:
    message = str(exc)
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in message or "busy" in message)


def failure(exc: sqlite3.Error, what: str) -> EngramError:
    """The engram error for a driver error: Unavailable while another connection holds
    the lock (it was waited for and retried; the caller may retry later), else
    StorageFailure."""
    if _busy(exc):
        return Unavailable(
            f"{what}: the file stayed locked by another connection ({exc})",
            hint="retry shortly; a long write, a backup or a restore holds the lock",
        )
    return StorageFailure(f"{what}: {exc}")


def _check_ours(path: str) -> None:
    """Refuses another application's SQLite file through a read-only connection, before
    any connection of ours switches it to WAL or migrates it."""
    target = Path(path)
    if not target.exists() or target.stat().st_size == 0:
        return  # a new store
    uri = f"file:{quote(str(target.absolute()))}?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
    except sqlite3.Error as exc:
        raise failure(exc, f"cannot open the store at {path}") from exc
    try:
        check_ours(conn, path)
    except sqlite3.Error as exc:
        raise failure(exc, f"cannot open the store at {path}") from exc
    finally:
        conn.close()


def _check_path(path: str) -> None:
    if path == ":memory:":
        raise StorageFailure("engram stores live in a file; ':memory:' is not one")
    target = Path(path)
    if target.is_dir():
        raise StorageFailure(f"cannot open the store at {path}: it is a directory")
    if not target.parent.exists():
        raise StorageFailure(f"cannot open the store at {path}: {target.parent} does not exist")
    if not target.parent.is_dir():
        raise StorageFailure(f"cannot open the store at {path}: {target.parent} is not a directory")
    if target.exists() and not os.access(target, os.R_OK | os.W_OK):
        raise StorageFailure(
            f"cannot open the store at {path}: the file is not readable "
            "and writable by this process"
        )
    if not target.exists() and not os.access(target.parent, os.W_OK):
        raise StorageFailure(f"cannot open the store at {path}: {target.parent} is not writable")
