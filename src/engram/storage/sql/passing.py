"""A filter's facts in one scope, read as a recall's half asks for them (both backends).

A filter narrows which facts answer, never how they score. Where few facts pass, their
row numbers are read once and a half ranks among them. Where many pass, reading every
row number costs more than the recall (a strength floor all 1.15M facts of a SQLite scope
pass: 470 ms of a 500 ms recall), so a half asks for its best ``FIRST_BEST`` times as
many as it wants and keeps those that pass, in its order (a time or a strength floor
tested on the traits the candidates carry); only where too few of those pass, even
asked again as wide again, are the row numbers read. Asking the best first cost a
narrow filter 20 to 35 ms more than its few rows (BENCHMARKS.md), hence the count first
(a strength floor that keeps the default strength counted by the facts it drops).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from functools import cached_property
from typing import Any, Generic, TypeVar

from engram.core.models import Filters
from engram.core.ranking import Candidate
from engram.core.scopes import Scope
from engram.storage.filters import filter_sql, floor_alone, on_traits, other_strength
from engram.storage.sql.tx import SQLTx

FEW = 20_000
FIRST_BEST = 4

# Row numbers as a backend holds them for its halves (SQLite: a set; PostgreSQL: an array).
R = TypeVar("R", bound=Collection[int])
# How a backend reads the row numbers a statement (of one column, ``seq``) selects.
Read = Callable[[SQLTx, str, Sequence[object]], R]


def selected(filters: Filters, scope: str, mark: str = "?") -> tuple[str, list[object]]:
    """The statement selecting the row numbers (``seq``) of ``scope``'s facts that pass
    ``filters``, with its parameters (``mark``: the driver's placeholder). Each filter is
    read through an index of its own (a type, verified facts, a time, tags, a strength
    above the default) but a strength floor at or under the default, which most facts
    pass, read with the scope's rows."""
    where, params = filter_sql(filters, scope, mark=mark)
    return f"SELECT f.seq FROM facts f WHERE f.scope = {mark}{where}", [scope, *params]


def counted(
    filters: Filters, scope: str, at_most: int, mark: str = "?"
) -> tuple[str, list[object]]:
    """The statement counting ``scope``'s facts that pass ``filters`` (at least up to
    ``at_most`` + 1), with its parameters. A strength floor alone at or under the default
    is the scope's count less the facts of other strengths under it (both read through
    indexes: counting the 20,001 it keeps read as many rows, 4 ms at 100k facts)."""
    floor = floor_alone(filters)
    if floor is not None:
        return (
            f"SELECT coalesce((SELECT facts FROM scope_state WHERE scope = {mark}), 0) - "
            f"(SELECT count(*) FROM facts f WHERE f.scope = {mark} AND {other_strength('f')} "
            f"AND f.strength < {mark})",
            [scope, scope, floor],
        )
    statement, params = selected(filters, scope, mark)
    return f"SELECT count(*) FROM ({statement} LIMIT {mark}) AS p", [*params, at_most + 1]


class Passing(Generic[R]):
    """A filter's facts of one scope: their row numbers where they are :attr:`few`; else
    among a half's best candidates, or (:attr:`rows`) every one; row numbers are read by
    ``read``."""

    def __init__(
        self, t: SQLTx, scope: Scope, filters: Filters, read: Read[R], *, count_first: bool
    ) -> None:
        self._t, self._scope, self._read_rows = t, scope.key, read
        # a count where it is cheaper than reading the row numbers that pass
        self._count_first = count_first or floor_alone(filters) is not None
        self._where, self._params = filter_sql(filters, scope.key)
        self._selected = selected(filters, scope.key)  # the statement the tests read
        self._counted = counted(filters, scope.key, FEW)
        self._on_traits = on_traits(filters)  # a candidate's traits tested, where they tell

    @classmethod
    def of(
        cls, t: SQLTx, scope: Scope, filters: Filters, read: Read[R], *, count_first: bool
    ) -> Passing[R] | None:
        """The filter's facts, or None for no filter. ``count_first``: whether they are
        counted before their row numbers are read, where reading rows costs more than
        the statement (see :attr:`few`)."""
        return None if filters.empty else cls(t, scope, filters, read, count_first=count_first)

    def ranked(
        self, rank: Callable[[int, R | None], list[Candidate] | None], limit: int
    ) -> list[Candidate] | None:
        """``rank``'s best ``limit`` that pass (``rank(n, among)``: a half's best ``n``
        among those row numbers, None for every row; None where it cannot answer): among
        the few, else the first passing of its best, asked once more as wide again where
        too few of those pass, else among every passing row (under half a 100k scope's
        time, 12 questions of 100 found too few among their best 200 and read 50,000 row
        numbers; asked 800, none did)."""
        if self.few is not None:
            return rank(limit, self.few)
        asked = FIRST_BEST * limit
        for _ in range(2):
            best = rank(asked, None)
            if best is None:
                return None
            found = self.first(best, asked, limit)
            if found is not None:
                return found
            asked *= FIRST_BEST
        return rank(limit, self.rows)

    def first(self, best: list[Candidate], asked: int, limit: int) -> list[Candidate] | None:
        """The first ``limit`` of ``best`` (a half's first ``asked``, in order) that pass;
        None where fewer pass and ``best`` is cut short (more may follow). A time or a
        strength floor is tested on the candidates' traits where they carry them (a
        statement by id took 1 ms of a SQLite recall, 2.4 of PostgreSQL's)."""
        test = self._on_traits
        if test is not None and all(c.traits is not None for c in best):
            found = [c for c in best if c.traits is not None and test(c.traits)]
        else:
            kept = self._kept("id", [c.id for c in best])
            found = [c for c in best if c.id in kept]
        return found[:limit] if len(found) >= limit or len(best) < asked else None

    def among(self, seqs: Sequence[int]) -> set[int]:
        """Those of the scope's row numbers ``seqs`` that pass."""
        return {int(seq) for seq in self._kept("seq", seqs)}

    def _kept(self, column: str, values: Sequence[object]) -> set[Any]:
        """Those of ``values`` (the scope's facts' ``column``: id or seq) whose facts pass,
        each sought by its value."""
        member, listed = self._t.dialect.in_list(f"f.{column}", values)
        statement = (
            f"SELECT f.{column} FROM facts f WHERE {member} AND {self._t.dialect.scope_by_id}"
            f"{self._where}"
        )
        return {r[0] for r in self._t.rows(statement, (*listed, self._scope, *self._params))}

    @cached_property
    def few(self) -> R | None:
        """The row numbers of the facts that pass, where no more than :data:`FEW` do.
        Counted first where the backend asks (SQLite: reading 20,001 row numbers into a
        set to learn that more pass took 6.3 ms of a 100k scope's filtered recall,
        counting them 0.7; PostgreSQL reads them as one string, 2.8 ms, where counting
        took 3.3), and for a strength floor the scope's count serves (:func:`counted`)."""
        if self._count_first:
            return self._read() if self._t.one(*self._counted) <= FEW else None
        statement, params = self._selected
        found = self._read_rows(self._t, f"{statement} LIMIT ?", [*params, FEW + 1])
        return found if len(found) <= FEW else None

    @cached_property
    def rows(self) -> R:
        """The row numbers of every fact that passes."""
        return self.few if self.few is not None else self._read()

    def _read(self) -> R:
        statement, params = self._selected
        return self._read_rows(self._t, statement, params)
