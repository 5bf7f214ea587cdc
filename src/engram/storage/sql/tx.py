"""A transaction as the SQL rows use it: statements in the dialect's spelling, locks, and
work to run once it has committed."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

from engram.core.errors import StorageFailure
from engram.core.ports import Tx
from engram.core.scopes import Scope
from engram.storage.sql.dialect import Dialect

# Lock spaces: a scope's facts, one working-memory key, the model record, one session.
SCOPES, KEYS, MODEL, SESSIONS = 1, 0, 2, 3


class Cursor(Protocol):
    rowcount: int

    def __iter__(self) -> Iterator[Any]: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class SQLTx:
    """One open transaction (or savepoint) on one connection. ``write`` says whether it
    may write."""

    def __init__(self, dialect: Dialect, conn: Any, *, write: bool) -> None:
        self.dialect = dialect
        self.conn = conn
        self.write = write
        self.depth = 0
        self.entries = 0  # ledger entries opened in this transaction
        self.erased = False  # whether it deleted words for good (see erasing)
        self._before: list[Callable[[], None]] = []
        self._after: list[Callable[[], None]] = []

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        cursor: Cursor = self.conn.execute(self.dialect.sql(sql), params)
        return cursor

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """One statement over many rows (none: nothing runs): as one statement where the
        dialect can (PostgreSQL's arrays), else once a row."""
        if len(rows) == 1:
            self.execute(sql, rows[0])
        elif rows:
            statement, batched = self.dialect.sql(sql), self.dialect.batched
            if hasattr(self.conn, "executemany"):  # sqlite3
                self.conn.executemany(statement, rows)
            elif batched is None or not batched(self.conn, statement, rows):  # psycopg
                with self.conn.cursor() as cursor:
                    cursor.executemany(statement, rows)

    def rows(self, sql: str, params: Sequence[Any] = (), *, binary: bool = False) -> list[Any]:
        """Every row (fetched at once: stepping a cursor row by row from Python costs
        more, measured on list pages). ``binary``: sent by the server in its binary form
        where the driver can (stored vectors: PostgreSQL's text of 50 took 4.9 ms to read
        back, their binary 0.7)."""
        if binary and self.dialect.binary_rows:
            rows: list[Any] = self.conn.execute(
                self.dialect.sql(sql), params, binary=True
            ).fetchall()
            return rows
        return self.execute(sql, params).fetchall()

    def one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """The first column of the first row."""
        return self.execute(sql, params).fetchone()[0]

    def hold(self, space: int, name: str) -> None:
        """Waits for, then holds until the transaction ends, the lock ``name`` of
        ``space``. A backend whose writers exclude each other anyway holds nothing."""

    def lock(self, scopes: Sequence[Scope]) -> None:
        """The scopes' locks, always in one order (two forks in opposite directions
        cannot deadlock)."""
        for key in sorted({scope.key for scope in scopes}):
            self.hold(SCOPES, key)

    def recorded(self) -> SQLTx:
        """This transaction, for a write to memory: refused (StorageFailure) unless a
        ledger entry was opened in it, so no write path can skip the ledger."""
        if not self.entries:
            raise StorageFailure(
                "a write to memory outside a ledger entry: open one with engram.core.ledger"
            )
        return self

    def erasing(self) -> SQLTx:
        """This transaction, for a statement that deletes words for good: a backend that
        keeps copies of deleted rows (SQLite's log) purges them after the commit."""
        self.erased = True
        return self

    def before_commit(self, action: Callable[[], None]) -> None:
        self._before.append(action)

    def after_commit(self, action: Callable[[], None]) -> None:
        self._after.append(action)

    @contextmanager
    def nested(self, *, write: bool) -> Iterator[SQLTx]:
        """A savepoint of this transaction (the same SQL on both backends): undone alone
        when it raises, with the work it left for after the commit."""
        if write and not self.write:
            raise StorageFailure("a write cannot run inside a read-only transaction")
        name, start, settling = f"engram_{self.depth}", len(self._after), len(self._before)
        self.depth += 1
        self.execute(f"SAVEPOINT {name}")
        try:
            yield self
        except BaseException:
            del self._after[start:]
            del self._before[settling:]
            self.execute(f"ROLLBACK TO SAVEPOINT {name}")
            self.execute(f"RELEASE SAVEPOINT {name}")
            raise
        else:
            self.execute(f"RELEASE SAVEPOINT {name}")
        finally:
            self.depth -= 1

    def committing(self) -> None:
        """Runs the work that waits for the commit inside the transaction, in order,
        until none is left (an action may add more)."""
        while self._before:
            self._before.pop(0)()

    def committed(self) -> None:
        """Runs the work that waited for the commit, in order."""
        actions, self._after = self._after, []
        for action in actions:
            action()


def sql(tx: Tx) -> SQLTx:
    """The SQL transaction behind the core's ``tx``."""
    assert isinstance(tx, SQLTx), f"not a transaction of this store: {tx!r}"
    return tx
