"""A transaction as the SQL rows use it: statements in the dialect's spelling, locks, and
work to run once it has committed."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from engram.core.ports import Tx
from engram.core.scopes import Scope
from engram.storage.sql.dialect import Dialect

# Lock spaces: a scope's facts, one working-memory key, the model record.
SCOPES, KEYS, MODEL = 1, 0, 2


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
        self._after: list[Callable[[], None]] = []

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        cursor: Cursor = self.conn.execute(self.dialect.sql(sql), params)
        return cursor

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """Every row (fetched at once: stepping a cursor row by row from Python costs
        more, measured on list pages)."""
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

    def after_commit(self, action: Callable[[], None]) -> None:
        self._after.append(action)

    def savepoint(self) -> int:
        """Where a savepoint starts, for :meth:`undone`."""
        return len(self._after)

    def undone(self, start: int) -> None:
        """The savepoint begun at ``start`` was rolled back: its waiting work goes too."""
        del self._after[start:]

    def committed(self) -> None:
        """Runs the work that waited for the commit, in order."""
        actions, self._after = self._after, []
        for action in actions:
            action()


def sql(tx: Tx) -> SQLTx:
    """The SQL transaction behind the core's ``tx``."""
    assert isinstance(tx, SQLTx), f"not a transaction of this store: {tx!r}"
    return tx
