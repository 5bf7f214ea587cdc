"""Connections to one PostgreSQL database: a pool, whole-transaction retries, and
translation of driver errors at this boundary: no pooled connection free within the pool's
timeout, or a lock not granted within the server's ``lock_timeout``, is Unavailable (503,
retryable); anything else is StorageFailure."""

from __future__ import annotations

import os
import select
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np
import psycopg
from pgvector.psycopg import register_vector
from psycopg import IsolationLevel
from psycopg import errors as pg_errors
from psycopg.conninfo import conninfo_to_dict
from psycopg.sql import SQL, Literal
from psycopg_pool import ConnectionPool, PoolTimeout

from engram.core.errors import Conflict, EngramError, StorageFailure, Unavailable
from engram.storage.postgres import batched
from engram.storage.postgres.schema import migrate
from engram.storage.sql.dialect import postgres_dialect
from engram.storage.sql.tx import SQLTx

T = TypeVar("T")
Conn = psycopg.Connection[tuple[Any, ...]]

READING, WRITING = IsolationLevel.REPEATABLE_READ, IsolationLevel.READ_COMMITTED
POOL_SIZE = 8
# How long a call waits for a free pooled connection before it is Unavailable.
POOL_TIMEOUT_S = 30.0
CONNECT_TIMEOUT_S = 10
PREPARE_AFTER = 5
# Work beside a transaction takes a pooled connection only if one is free at once: where
# none is, it waits BESIDE_WAIT_S (the pool grows meanwhile, for the next); where one is,
# BESIDE_READY_S bounds the taking, which a descheduled thread may begin past a deadline
# of 1 ms (the pool then refuses at once, though a connection waits in it).
BESIDE_WAIT_S = 0.001
BESIDE_READY_S = 0.05
# A transaction that lost a race (serialization failure, deadlock) runs again, whole.
RETRIES = 8
# Each process's pooled connections say whose they are, so maintenance can find the other
# engram processes on a database (see :func:`check_sole`).
APPLICATION = "engram (pid {pid})"
_RETRYABLE = (pg_errors.SerializationFailure, pg_errors.DeadlockDetected)
# Whether the database holds an engram store: its schema table.
HAS_SCHEMA = "SELECT to_regclass('engram_schema') IS NOT NULL"
# What a write that erased words for good records in its transaction, for a scrub.
ERASED = "INSERT INTO erasures DEFAULT VALUES"


def redact(url: str) -> str:
    """The URL as it may be shown: host, port, database and user, never a password."""
    try:
        parts = conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "postgresql://(unparseable URL)"
    user = f"{parts['user']}@" if parts.get("user") else ""
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"postgresql://{user}{parts.get('host', '')}{port}/{parts.get('dbname', '')}"


class Database:
    """One PostgreSQL database shared by the threads of this process and by other
    processes. A transaction holds one pooled connection; a transaction opened inside
    it by the same thread is a savepoint on that connection."""

    def __init__(
        self,
        url: str,
        *,
        pool_size: int | None = None,
        pool_timeout: float | None = None,
        apply_migrations: bool = True,
    ):
        self.url = url
        self.name = redact(url)
        self.dialect = postgres_dialect(
            lambda v: np.asarray(v, dtype=np.float32), batched.Batcher().run
        )
        self._local = threading.local()
        self._helping = threading.Lock()
        self._helpers: ThreadPoolExecutor | None = None
        try:
            with psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S, autocommit=True) as conn:
                encoding = conn.execute("SHOW server_encoding").fetchone()
                if encoding is None or encoding[0] != "UTF8":
                    raise StorageFailure(
                        f"the database at {self.name} is not UTF8-encoded "
                        f"({encoding[0] if encoding else 'unknown'})",
                        hint="create it with ENCODING 'UTF8'",
                    )
                self.schema_version = migrate(conn, self.name, apply=apply_migrations)
        except psycopg.Error as exc:
            reason = _first_line(exc)
            raise StorageFailure(f"cannot open the store at {self.name}: {reason}") from exc
        self._pool: ConnectionPool[Conn] = ConnectionPool(
            url,
            # two from the start: a hybrid recall's halves each take one (``beside``)
            min_size=min(2, pool_size or POOL_SIZE),
            max_size=pool_size or POOL_SIZE,
            timeout=pool_timeout or POOL_TIMEOUT_S,
            kwargs={
                # a statement run PREPARE_AFTER times on a connection is prepared there:
                # the server parses it once (a hybrid recall 0.3 ms less at 100k facts)
                "prepare_threshold": PREPARE_AFTER,
                "connect_timeout": CONNECT_TIMEOUT_S,
                "application_name": APPLICATION.format(pid=os.getpid()),
            },
            configure=_configure,
            check=_alive,
            open=False,
        )
        try:
            self._pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
        except PoolTimeout as exc:
            self._pool.close()
            raise StorageFailure(f"cannot open the store at {self.name}: {exc}") from exc

    @contextmanager
    def transaction(self, *, write: bool = True) -> Iterator[SQLTx]:
        """One transaction on a pooled connection (a savepoint inside another of this
        thread): read-committed for a write, all of it committed or none;
        repeatable-read and read-only for a read, one snapshot throughout."""
        with self._translated(), self._open(write) as tx:
            yield tx

    def run(self, work: Callable[[SQLTx], T], *, write: bool = True) -> T:
        """``work`` in :meth:`transaction`, run again whole when it lost a race (a
        serialization failure, a deadlock), up to ``RETRIES`` times; once, as a savepoint,
        inside another transaction."""
        if getattr(self._local, "tx", None) is not None:
            with self.transaction(write=write) as tx:
                return work(tx)
        with self._translated():
            for tries in range(RETRIES):
                try:
                    with self._open(write) as tx:
                        return work(tx)
                except _RETRYABLE:
                    if tries == RETRIES - 1:
                        raise
                    time.sleep(0.005 * 2**tries)
        raise AssertionError("unreachable")

    @contextmanager
    def _open(self, write: bool) -> Iterator[SQLTx]:
        current: SQLTx | None = getattr(self._local, "tx", None)
        if current is not None:
            with current.nested(write=write):
                yield current
            return
        with self._pool.connection() as conn:
            # Set on the connection, these go out with BEGIN: no round trip.
            conn.isolation_level = WRITING if write else READING
            conn.read_only = not write
            tx = PostgresTx(self.dialect, conn, write=write)
            self._local.tx = tx
            try:
                with conn.transaction():
                    yield tx
                    tx.committing()
                    if tx.write and tx.erased:  # a scrub is due (scrub.py)
                        conn.execute(ERASED)
            finally:
                self._local.tx = None
        tx.committed()

    @staticmethod
    def may_beside(tx: SQLTx) -> bool:
        """Whether work may run :meth:`beside` ``tx``: it reads, and is no savepoint
        (whose snapshot cannot be exported)."""
        return not tx.write and not tx.depth

    def beside(
        self, tx: SQLTx, work: Callable[[Conn], T], exported: str | None = None
    ) -> Future[T] | None:
        """Starts ``work`` on a thread, on another pooled connection in a read-only
        transaction that sees ``tx``'s snapshot (``exported`` by a statement of ``tx``
        already, else exported here, then imported): the server does both at once. None
        where that cannot be: not :meth:`may_beside`, or no pooled connection is free at
        once (waiting for one while holding ``tx``'s could deadlock a full pool); the
        caller then does ``work`` in ``tx``."""
        if not self.may_beside(tx):
            return None
        free = self._pool.get_stats().get("pool_available", 0) > 0
        try:
            conn = self._pool.getconn(timeout=BESIDE_READY_S if free else BESIDE_WAIT_S)
        except PoolTimeout:
            return None
        snapshot = exported
        if snapshot is None:
            try:
                row = tx.conn.execute("SELECT pg_export_snapshot()").fetchone()
            except BaseException:
                self._pool.putconn(conn)
                raise
            assert row is not None
            snapshot = str(row[0])
        answer: Future[T] = Future()

        def run() -> None:
            try:
                conn.isolation_level = READING
                conn.read_only = True
                with conn.transaction():
                    conn.execute(SQL("SET TRANSACTION SNAPSHOT {}").format(Literal(snapshot)))
                    # answered before the read-only transaction's end, which only ends it
                    answer.set_result(work(conn))
            except BaseException as exc:
                if not answer.done():
                    answer.set_exception(exc)
            finally:
                self._pool.putconn(conn)

        with self._helping:
            if self._helpers is None:
                self._helpers = ThreadPoolExecutor(thread_name_prefix="engram-beside")
            self._helpers.submit(run)
        return answer

    def joined(self, started: Future[T]) -> T:
        """The result of work started :meth:`beside` a transaction, its driver errors
        translated as the transaction's are."""
        with self._translated():
            return started.result()

    def autocommit(self, work: Callable[[Conn], T]) -> T:
        """Runs ``work`` outside a transaction (e.g. CREATE INDEX CONCURRENTLY)."""

        with self._translated(), self._pool.connection() as conn:
            conn.autocommit = True
            try:
                return work(conn)
            finally:
                conn.autocommit = False

    @contextmanager
    def _translated(self) -> Iterator[None]:
        try:
            yield
        except (psycopg.Error, PoolTimeout) as exc:
            raise failure(exc, f"the store at {self.name}") from exc

    def close(self) -> None:
        with self._helping:
            helpers, self._helpers = self._helpers, None
        if helpers is not None:
            helpers.shutdown()
        self._pool.close()


def has_schema(url: str) -> bool:
    """Whether the database at ``url`` holds an engram store (its schema table): opening
    one that does not creates it."""
    return schema_version(url) is not None


def schema_version(url: str) -> int | None:
    """The schema version of the engram store in the database at ``url`` (0: none
    applied yet), or None when it holds none."""
    try:
        with psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S, autocommit=True) as conn:
            row = conn.execute(HAS_SCHEMA).fetchone()
            if not row or not row[0]:
                return None
            row = conn.execute("SELECT coalesce(max(version), 0) FROM engram_schema").fetchone()
    except psycopg.Error as exc:
        raise StorageFailure(f"cannot open the store at {redact(url)}: {_first_line(exc)}") from exc
    return int(row[0]) if row else 0


def check_sole(url: str, *, done: str, then: str) -> None:
    """Raises Conflict naming the other engram processes connected to the database at
    ``url`` (their pooled connections carry their pid: ``APPLICATION``), if any is."""
    name = redact(url)
    mine = APPLICATION.format(pid=os.getpid())
    pattern = APPLICATION.format(pid="%")
    try:
        with psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT DISTINCT application_name, coalesce(host(client_addr), 'local') "
                "FROM pg_stat_activity WHERE datname = current_database() "
                "AND application_name LIKE %s AND application_name <> %s ORDER BY 1",
                (pattern, mine),
            ).fetchall()
    except psycopg.Error as exc:
        raise StorageFailure(f"cannot open the store at {name}: {_first_line(exc)}") from exc
    if rows:
        who = ", ".join(f"{app.removeprefix('engram (')[:-1]} on {host}" for app, host in rows)
        raise Conflict(
            f"the store at {name} is in use by engram processes ({who}); nothing was {done}",
            hint=f"stop the service (and every other engram process on this database), then {then}",
        )


class PostgresTx(SQLTx):
    def hold(self, space: int, name: str) -> None:
        self.conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, %s))", (name, space))


def failure(exc: psycopg.Error | PoolTimeout, where: str) -> EngramError:
    """The engram error for a driver error: Unavailable when the pool had no free
    connection in time or a lock timed out (the caller may retry later), else
    StorageFailure."""
    if isinstance(exc, PoolTimeout):
        return Unavailable(
            f"{where} is busy: no pooled connection was free in time ({exc})",
            hint="retry shortly",
        )
    if isinstance(exc, pg_errors.LockNotAvailable):
        return Unavailable(
            f"{where} is busy: a lock was not granted in time ({_first_line(exc)})",
            hint="retry shortly",
        )
    return StorageFailure(f"{where} failed: {_first_line(exc)}")


def _configure(conn: Conn) -> None:
    register_vector(conn)
    # A prepared statement is still planned for its values and the settings of its
    # transaction (a scope's size decides its plan: ``enable_bitmapscan``), never from a
    # generic plan cached by another scope's.
    conn.execute("SET plan_cache_mode = force_custom_plan")
    conn.commit()


def _alive(conn: Conn) -> None:
    """The pool's check of a connection before it hands it out, without a round trip
    where none is needed: a pooled connection is idle, so the server has sent it nothing
    unless it closed it (a terminated backend, a restart: its last message and its end
    wait on the socket) or has something to say. Only then is it pinged, which raises
    where it is dead and the pool opens another. Pinged every time, a hybrid recall's two
    connections cost it two round trips before its first statement."""
    if _waiting(conn.fileno()):
        ConnectionPool.check_connection(conn)


def _waiting(fd: int) -> bool:
    """Whether anything (bytes, an end, an error) waits on ``fd``, without waiting for
    it. ``poll`` where the platform has it: ``select`` cannot watch a descriptor past
    1023, which a service holding many files hands its connections."""
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        return bool(poller.poll(0))
    return bool(select.select([fd], [], [], 0)[0])


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
