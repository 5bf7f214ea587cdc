"""Many rows of one statement sent to PostgreSQL as one statement over arrays.

A write's rows of an ``INSERT ... VALUES`` (mentions, ledger items, tags) or of a
``DELETE`` by equal columns (a graph queue's items), run once a row as a pipeline,
cost the server a statement each: 40,000 of them for a batch of 10,000 facts
(BENCHMARKS.md, "PostgreSQL: a batch's rows in one statement"). Each column's values go
instead as one array, typed as the table's column, and the statement reads them through
``unnest``: the same rows, in one statement.

What changes with it, and where it is refused (the rows then go one a statement, as
before):

- Row triggers fire for each row: BEFORE each as it is written, AFTER at the end of the
  statement rather than after each row. What the store's triggers derive (the graph's
  entities and groundings, the change log) comes out the same: a test writes one batch
  both ways and compares every table it touches.
- ``ON CONFLICT (key) DO UPDATE`` cannot touch one row twice in one statement: rows that
  share their key among them are refused.
- A column whose values are of several Python types is refused (the driver types an
  array by its first value, and cannot dump the rest), but for integers among a float
  column's values, which go as floats as the server would take them.
- A statement of another shape (an ``INSERT ... SELECT``, a ``DELETE`` with another
  test) is refused.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import Any

_INSERT = re.compile(
    r"INSERT INTO (\w+) \(([^()]*)\) VALUES \(%s(?:, %s)*\)"
    r"(?P<rest> ON CONFLICT(?: \((?P<key>[^()]*)\))? DO (?P<action>NOTHING|UPDATE SET .*))?",
    re.S,
)
_DELETE = re.compile(r"DELETE FROM (\w+) WHERE ((?:\"?\w+\"? = %s AND )*\"?\w+\"? = %s)")
# Rows a statement holds at most (a batch's vectors: 15 MB of one message at 384 floats),
# far under the server's 1 GB a value.
AT_ONCE = 10_000
FLOATS = ("real", "double precision")  # columns an integer goes into as a float


class Batcher:
    """Turns many rows of a statement into one statement, the columns' types read from
    the catalog once a table (the schema does not change under a running store)."""

    def __init__(self) -> None:
        self._types: dict[str, dict[str, str]] = {}
        self._lock = threading.Lock()

    def run(self, conn: Any, statement: str, rows: Sequence[Sequence[Any]]) -> bool:
        """Runs ``statement`` (in the driver's spelling) over ``rows`` as one statement;
        False where it cannot be, and nothing ran."""
        if (inserting := _INSERT.fullmatch(statement)) is not None:
            table, listed = inserting.group(1), _columns(inserting.group(2))
            if inserting.group("action") not in (None, "NOTHING") and _repeats(
                listed, _columns(inserting.group("key") or ""), rows
            ):
                return False
            typed = self._typed(conn, table, listed)
            if typed is None:
                return False
            names = ", ".join(listed)
            one = (
                f"INSERT INTO {table} ({names}) SELECT * FROM unnest({_arrays(typed)})"
                f"{inserting.group('rest') or ''}"
            )
        elif (deleting := _DELETE.fullmatch(statement)) is not None:
            table = deleting.group(1)
            listed = [part.split(" = ")[0] for part in deleting.group(2).split(" AND ")]
            typed = self._typed(conn, table, listed)
            if typed is None:
                return False
            names = ", ".join(listed)
            one = f"DELETE FROM {table} WHERE ({names}) IN (SELECT * FROM unnest({_arrays(typed)}))"
        else:
            return False
        columns: list[list[Any]] = []
        for values, kind in zip(zip(*rows, strict=True), typed, strict=True):
            column = _alike(list(values), kind)
            if column is None:
                return False
            columns.append(column)
        for start in range(0, len(rows), AT_ONCE):
            conn.execute(one, [column[start : start + AT_ONCE] for column in columns])
        return True

    def _typed(self, conn: Any, table: str, columns: Sequence[str]) -> list[str] | None:
        """Each column's type, in order; None where one is not the table's."""
        types = self._types_of(conn, table)
        try:
            return [types[c.strip('"')] for c in columns]
        except KeyError:
            return None

    def _types_of(self, conn: Any, table: str) -> dict[str, str]:
        with self._lock:
            known = self._types.get(table)
        if known is None:
            rows = conn.execute(
                "SELECT a.attname, format_type(a.atttypid, NULL) FROM pg_attribute a "
                "WHERE a.attrelid = to_regclass(%s) AND a.attnum > 0 AND NOT a.attisdropped",
                (table,),
            ).fetchall()
            known = {str(name): str(kind) for name, kind in rows}
            with self._lock:
                self._types[table] = known
        return known


def _arrays(types: Sequence[str]) -> str:
    """A binary array parameter typed as each column (as text, the driver tested every
    string for the quotes it needs, and 10,000 vectors took 3.8 s to send where a
    statement a row took 0.4)."""
    return ", ".join(f"%b::{k}[]" for k in types)


def _alike(values: list[Any], kind: str) -> list[Any] | None:
    """A column's values as one array takes them: of one Python type (the driver dumps
    an array by its first value's), integers among a float column's as floats; None
    where the types differ otherwise (each row's value is then dumped on its own)."""
    types = {type(v) for v in values if v is not None}
    if len(types) <= 1:
        return values
    if types <= {int, float} and kind in FLOATS:
        return [None if v is None else float(v) for v in values]
    return None


def _columns(listed: str) -> list[str]:
    return [c.strip() for c in listed.split(",") if c.strip()]


def _repeats(columns: Sequence[str], key: Sequence[str], rows: Sequence[Sequence[Any]]) -> bool:
    """Whether two of ``rows`` share their ``key`` columns (all of them where no key is
    named, or where one is not among ``columns``)."""
    try:
        at = [columns.index(c) for c in key] or range(len(columns))
    except ValueError:
        at = range(len(columns))
    seen = {tuple(row[i] for i in at) for row in rows}
    return len(seen) < len(rows)
