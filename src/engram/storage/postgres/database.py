"""Connections to one PostgreSQL database: a pool, whole-transaction retries, and
translation of driver errors at this boundary: no pooled connection free within the pool's
timeout, or a lock not granted within the server's ``lock_timeout``, is Unavailable (503,
retryable); anything else is StorageFailure."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

import psycopg
from pgvector.psycopg import register_vector
from psycopg import IsolationLevel
from psycopg import errors as pg_errors
from psycopg.conninfo import conninfo_to_dict
from psycopg_pool import ConnectionPool, PoolTimeout

from engram.core.errors import EngramError, StorageFailure, Unavailable
from engram.storage.postgres.schema import migrate

T = TypeVar("T")
Conn = psycopg.Connection[tuple[Any, ...]]

READING, WRITING = IsolationLevel.REPEATABLE_READ, IsolationLevel.READ_COMMITTED
POOL_SIZE = 8
# How long a call waits for a free pooled connection before it is Unavailable.
POOL_TIMEOUT_S = 30.0
CONNECT_TIMEOUT_S = 10
# A transaction that lost a race (serialization failure, deadlock) runs again, whole.
RETRIES = 8
_RETRYABLE = (pg_errors.SerializationFailure, pg_errors.DeadlockDetected)


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
    processes. Every call runs in its own transaction on a pooled connection."""

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
            min_size=1,
            max_size=pool_size or POOL_SIZE,
            timeout=pool_timeout or POOL_TIMEOUT_S,
            kwargs={"prepare_threshold": None, "connect_timeout": CONNECT_TIMEOUT_S},
            configure=_configure,
            check=ConnectionPool.check_connection,
            open=False,
        )
        try:
            self._pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
        except PoolTimeout as exc:
            self._pool.close()
            raise StorageFailure(f"cannot open the store at {self.name}: {exc}") from exc

    def write(self, work: Callable[[Conn], T]) -> T:
        """Runs ``work`` in one read-committed transaction: all of it commits, or none."""
        return self._run(work, reading=False)

    def read(self, work: Callable[[Conn], T]) -> T:
        """Runs ``work`` in one repeatable-read, read-only transaction: one snapshot
        throughout."""
        return self._run(work, reading=True)

    def autocommit(self, work: Callable[[Conn], T]) -> T:
        """Runs ``work`` outside a transaction (e.g. CREATE INDEX CONCURRENTLY)."""

        def attempt() -> T:
            with self._pool.connection() as conn:
                conn.autocommit = True
                try:
                    return work(conn)
                finally:
                    conn.autocommit = False

        return self._translate(attempt)

    def _run(self, work: Callable[[Conn], T], *, reading: bool) -> T:
        def attempt() -> T:
            for tries in range(RETRIES):
                try:
                    with self._pool.connection() as conn:
                        # Set on the connection, these go out with BEGIN: no round trip.
                        conn.isolation_level = READING if reading else WRITING
                        conn.read_only = reading
                        with conn.transaction():
                            return work(conn)
                except _RETRYABLE:
                    if tries == RETRIES - 1:
                        raise
                    time.sleep(0.005 * 2**tries)
            raise AssertionError("unreachable")

        return self._translate(attempt)

    def _translate(self, run: Callable[[], T]) -> T:
        try:
            return run()
        except (psycopg.Error, PoolTimeout) as exc:
            raise failure(exc, f"the store at {self.name}") from exc

    def close(self) -> None:
        self._pool.close()


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
    conn.commit()


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
