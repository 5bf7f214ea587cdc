"""Connections to one SQLite file: per-thread connections, WAL, immediate write
transactions, and translation of driver errors at this boundary: a lock still held after
the busy timeout and the retries is Unavailable (503, retryable), anything else is
StorageFailure.

The writers of one process take turns on a mutex before ``BEGIN IMMEDIATE``, so only one
of them at a time waits in SQLite's busy handler (for another process). That handler
polls: it sleeps 1, 2, 5 … up to 100 ms between tries, so a thread that finds the file
locked often sleeps on past the moment it is freed. With 16 threads writing working
memory through the service, the mutex took p99 from 860-1,030 ms to 104-115 ms and
throughput from 183-227 to 244-263 requests/s (BENCHMARKS.md, "Writes at the embedder's
limit"). A mutex wakes its next waiter when it is released.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TypeVar
from urllib.parse import quote

from engram.core.errors import EngramError, StorageFailure, Unavailable
from engram.storage.sql.dialect import SQLITE
from engram.storage.sql.tx import SQLTx
from engram.storage.sqlite import forgetting, freespace, newfile, owner
from engram.storage.sqlite.driver import sqlite3
from engram.storage.sqlite.fulltext import VOCABULARIES
from engram.storage.sqlite.schema import (
    MIGRATIONS,
    STRIP_DUE,
    WORDS_LEFT,
    change_mark,
    check_ours,
    migrate,
)

T = TypeVar("T")

BUSY_TIMEOUT_MS = 30_000
CACHE_KIB = 16_384  # each connection's page cache
# A new file's page size. A stored vector (384 float32s, 1,540 bytes) left a 4 KiB page
# room for two rows and a quarter of it empty: 2,282 bytes on disk a fact, 726 of them
# waste. 8 KiB pages hold five (1,638 bytes a row). A file made before keeps its pages.
PAGE_BYTES = 8192
# Beyond busy_timeout, a whole transaction is retried while the file stays locked.
RETRY_FOR_S = 120.0


class Database:
    """One SQLite file shared by the threads of this process (and other processes).

    Each thread gets its own connection. Writes run in ``BEGIN IMMEDIATE`` so a writer
    waits for the lock up front instead of failing on upgrade; readers never block
    writers (WAL).
    """

    def __init__(self, path: str | os.PathLike[str], *, copied: bool = True) -> None:
        """Opens the store at ``path``, migrating it; a new one is written as a copy of
        the empty store this process made first (:mod:`newfile`) unless ``copied`` is
        False."""
        self.path = str(path)
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._guard = threading.Lock()
        self._writer = threading.Lock()  # held from BEGIN IMMEDIATE to COMMIT or ROLLBACK
        self._closed = False
        self._forgetting: list[Callable[[], None]] = []
        _check_path(self.path)
        version = _check_ours(self.path)
        if version == 0 and copied:
            newfile.place(self.path, _migrated)
        if 0 < version < len(MIGRATIONS):  # changing the schema under a running process
            owner.check_sole(
                Path(self.path),
                done=f"migrated (schema version {version} to {len(MIGRATIONS)})",
                then="open it again",
            )
        try:
            conn = self.connection()
            self.schema_version = migrate(conn, self.path)
            self._watch(conn)
            if conn.execute(STRIP_DUE).fetchone() is not None:  # marked by another program
                self.run(lambda tx: _strip_text_bases(tx.erasing().conn))
            if freespace.due(conn):  # an erasure's scrub that did not run, nor since
                forgetting.purge(conn, scrub=self.path)
        except sqlite3.Error as exc:
            self.close()
            raise failure(exc, f"cannot open the store at {self.path}") from exc
        except EngramError:
            self.close()
            raise
        except OSError as exc:  # a scrub due that cannot write the file
            self.close()
            raise StorageFailure(
                f"cannot open the store at {self.path}: {exc.strerror or exc}"
            ) from exc

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
        conn.execute(f"PRAGMA page_size = {PAGE_BYTES}")  # before WAL, which fixes it
        if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            _retry(lambda: conn.execute("PRAGMA journal_mode = WAL"))
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA secure_delete = ON")  # deleted rows are zeroed (forgetting.py)
        # 16 MiB of pages per connection, not SQLite's 2 MiB: a large write's inserts land
        # at random places in the content hash and graph-by-entity indexes (a 100k-fact
        # import: 7% faster, 14 MiB more at its peak; 32 and 64 MiB bought little more).
        conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        for vocabulary in VOCABULARIES:  # this connection's own (temp), before any read
            conn.execute(vocabulary)
        if hasattr(self, "schema_version"):  # else once the file is migrated (__init__)
            self._watch(conn)
        self._local.conn = conn
        with self._guard:
            self._all.append(conn)
        return conn

    @contextmanager
    def transaction(self, *, write: bool = True) -> Iterator[SQLTx]:
        """One transaction (a savepoint inside another of this thread): an immediate
        one for a write, so a writer waits for the lock up front instead of failing on
        upgrade; a read sees one snapshot throughout. A write that deleted or rewrote
        facts (the change log says so) is then purged from the file and its log
        (:mod:`forgetting`)."""
        with self._translated(), self._open(write) as tx:
            yield tx

    def run(self, work: Callable[[SQLTx], T], *, write: bool = True) -> T:
        """``work`` in :meth:`transaction`, run again whole while the file stays locked
        (up to ``RETRY_FOR_S``); once, as a savepoint, inside another transaction."""
        if getattr(self._local, "tx", None) is not None:
            with self.transaction(write=write) as tx:
                return work(tx)

        def attempt() -> T:  # no context managers: a small read costs ~20 us in all
            tx, mark = self._begin(write)
            try:
                result = work(tx)
            except BaseException:
                self._abort(tx)
                raise
            self._commit(tx, mark)
            return result

        try:
            return _retry(attempt)
        except sqlite3.Error as exc:
            raise failure(exc, f"the store at {self.path} failed") from exc

    @contextmanager
    def _open(self, write: bool) -> Iterator[SQLTx]:
        current: SQLTx | None = getattr(self._local, "tx", None)
        if current is not None:
            with current.nested(write=write):
                yield current
            return
        tx, mark = self._begin(write)
        try:
            yield tx
        except BaseException:
            self._abort(tx)
            raise
        self._commit(tx, mark)

    def _begin(self, write: bool) -> tuple[SQLTx, int]:
        """The thread's transaction, begun: immediate for a write. With the change log's
        mark, to tell afterwards whether the write forgot anything."""
        conn = self.connection()
        if write:
            self._take_writer()
        try:
            _retry(lambda: conn.execute("BEGIN IMMEDIATE" if write else "BEGIN"))
        except BaseException:
            if write:
                self._writer.release()
            raise
        tx = SQLTx(SQLITE, conn, write=write)
        self._local.tx = tx
        try:
            return tx, change_mark(conn) if write else 0
        except BaseException:
            self._abort(tx)
            raise

    def _commit(self, tx: SQLTx, mark: int) -> None:
        """Commits; a write that deleted or rewrote facts, or erased other words, is then
        purged from the file and its log; then the work that waited for the commit runs."""
        conn = tx.conn
        try:
            tx.committing()
            erased = tx.write and tx.erased
            forgot = erased or (tx.write and change_mark(conn) != mark)
            if erased:
                _strip_text_bases(conn)
                freespace.mark(conn, due=True)  # until its scrub has run
            conn.execute("COMMIT")
        except BaseException:
            self._abort(tx)
            raise
        self._local.tx = None
        try:
            try:
                if forgot:
                    scrub = self.path if erased else None
                    _retry(lambda: forgetting.purge(conn, scrub=scrub))
            finally:
                if tx.write:
                    self._writer.release()
            if forgot:  # after the writer's turn: an action may wait on a writer (below)
                for action in self._forgetting:
                    action()
        except OSError as exc:  # the commit stands: say so, and what is left to do
            raise StorageFailure(
                f"the write to {self.path} was committed, but a copy of what it erased "
                f"could not be removed from the files beside it yet: {exc.strerror or exc}",
                hint="it is removed at the next forget, or when a store next opens the file",
            ) from exc
        finally:
            tx.committed()  # what follows the commit in this process follows it regardless

    def _abort(self, tx: SQLTx) -> None:
        self._local.tx = None
        try:
            if tx.conn.in_transaction:
                tx.conn.execute("ROLLBACK")
        finally:
            if tx.write:
                self._writer.release()

    def _watch(self, conn: sqlite3.Connection) -> None:
        """The connection tells its transaction when words leave the store for good
        (the schema's own triggers count them): that commit's file is then scrubbed."""
        conn.create_function("engram_words_left", 0, self._words_left)
        conn.execute(WORDS_LEFT)

    def _words_left(self) -> None:
        tx: SQLTx | None = getattr(self._local, "tx", None)
        if tx is not None:
            tx.erasing()

    def _take_writer(self) -> None:
        """This process's turn to write; Unavailable when another of its writes keeps it
        past the time a lock held by another process would be waited for."""
        if not self._writer.acquire(timeout=BUSY_TIMEOUT_MS / 1000 + RETRY_FOR_S):
            raise Unavailable(
                f"the store at {self.path} stayed busy: another write of this process held it",
                hint="retry shortly; a long write holds the lock",
            )

    @contextmanager
    def _translated(self) -> Iterator[None]:
        """Driver errors become engram errors here, at the boundary."""
        try:
            yield
        except sqlite3.Error as exc:
            raise failure(exc, f"the store at {self.path} failed") from exc

    def after_forgetting(self, action: Callable[[], None]) -> None:
        """``action`` runs after each commit that deleted or rewrote facts, once the file
        and its log are purged (copies of the words kept in other files go with it), and
        once this thread's turn to write is over: the vector index's sweep takes the index
        folder's lock, which a build holds while it waits for a turn to write."""
        self._forgetting.append(action)

    def close(self) -> None:
        with self._guard:
            self._closed = True
            conns, self._all = self._all, []
        for conn in conns:
            with suppress(sqlite3.Error):
                conn.close()
        self._local = threading.local()


def _migrated(path: str) -> Database:
    """A new store at ``path`` made by running every migration: :mod:`newfile`'s image."""
    return Database(path, copied=False)


def _strip_text_bases(conn: sqlite3.Connection) -> None:
    """The words an erasing write took from a large scope leave its text base in the
    same write (index/textbase.py); numpy loads only where a base is marked."""
    if conn.execute(STRIP_DUE).fetchone() is not None:
        from engram.storage.sqlite.index import textbase

        textbase.strip(conn)


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


def read_only(path: str) -> sqlite3.Connection:
    """A connection that only reads the file at ``path`` (and never creates it)."""
    uri = f"file:{quote(str(Path(path).absolute()))}?mode=ro"
    return sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000)


def _check_ours(path: str) -> int:
    """Refuses another application's SQLite file through a read-only connection, before
    any connection of ours switches it to WAL or migrates it. Returns its schema version
    (0 for a new store)."""
    target = Path(path)
    if not target.exists() or target.stat().st_size == 0:
        return 0  # a new store
    try:
        conn = read_only(path)
    except sqlite3.Error as exc:
        raise failure(exc, f"cannot open the store at {path}") from exc
    try:
        check_ours(conn, path)
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
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
