"""A filter's facts in one scope, read as a recall's half asks for them (both backends).

A filter narrows which facts answer, never how they score. Where few facts pass, their
row numbers are read once and a half ranks among them. Where many pass, reading every
row number costs more than the recall (a strength floor all 1.15M facts of a SQLite scope
pass: 470 ms of a 500 ms recall), so a half asks for its best ``FIRST_BEST`` times as
many as it wants and keeps those that pass, in its order (a time or a strength floor
tested on the traits the candidates carry); only where too few of those pass, even
asked again as wide as the share that passed says (:func:`wider`), are the row numbers
read. Asking the best first cost a narrow filter 20 to 35 ms more than its few rows
(BENCHMARKS.md), hence the count first (a strength floor that keeps the default
strength counted by the facts it drops).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any, Generic, TypeVar

from engram.core.models import Filters
from engram.core.ranking import Candidate
from engram.core.scopes import Scope
from engram.storage.filters import filter_sql, floor_alone, marks, on_traits, other_strength
from engram.storage.sql.tx import SQLTx

FEW = 20_000
FIRST_BEST = 4
ASKS = 2  # how many times a half's best is asked for before every passing row is read
MARGIN = 1.5  # the next ask holds this many times what the share seen passing says


def wider(limit: int, asked: int, passed: int) -> int:
    """How many of a half's best to ask for next, where ``passed`` of its best ``asked``
    passed a filter and ``limit`` are wanted: ``FIRST_BEST`` times ``asked``, or more
    where the share that passed says it holds fewer than ``limit`` (as many as that share
    says hold them, half as many again). Four times as wide found enough under half a
    100k scope's time (12 full-text questions of 100 read 50,000 row numbers after their
    best 200; asked 800, none did), but not a type a twentieth of a 1M scope has (about
    40 of 800), which then read its 50,000 rows."""
    wide = FIRST_BEST * asked
    return wide if passed == 0 else max(wide, -(-int(MARGIN * limit * asked) // passed))


@dataclass(frozen=True, slots=True)
class Sifted:
    """Those of a half's best that pass a filter, in its order, and whether that best was
    all the half has (fewer than were asked for: asking wider finds no more)."""

    found: list[Candidate]
    complete: bool


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
    if filters.tags:  # from the scope's facts of the tags, not each of the scope's tested
        where, params = filter_sql(replace(filters, tags=()), scope, mark=mark)
        tags = list(filters.tags)
        # one tag's facts come each once (its key), and stop at a count's limit; several
        # are grouped (a further tag sought a row at a time cost PostgreSQL more)
        every = "" if len(tags) == 1 else f" GROUP BY t.fact HAVING count(*) = {mark}"
        return (
            "SELECT t.fact AS seq FROM fact_tags t"
            + (" JOIN facts f ON f.seq = t.fact" if where else "")  # the tags' index alone
            + f" WHERE t.scope = {mark} AND t.tag IN ({marks(tags, mark)})"
            + where
            + every,
            [scope, *tags, *params, *([len(tags)] if every else [])],
        )
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
        self._where, self._params = filter_sql(filters, scope.key, per_row=True)  # by id
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
        self,
        rank: Callable[[int, R | None], list[Candidate] | None],
        limit: int,
        sift: Callable[[int], Sifted | None] | None = None,
    ) -> list[Candidate] | None:
        """``rank``'s best ``limit`` that pass (``rank(n, among)``: a half's best ``n``
        among those row numbers, None for every row; None where it cannot answer): among
        the few, else the first passing of its best, asked ``FIRST_BEST`` times ``limit``
        and then as :func:`wider` says, else among every passing row. ``sift(n)``, where
        the half has one: those of its best ``n`` that pass, sought before their rows are
        read (None where it cannot answer), for a filter the candidates' traits cannot
        test (a type, tags, verified facts: a 1M scope's best 1,500 read, then sought by
        id, for the 75 of a type a twentieth has)."""
        if self.few is not None:
            return rank(limit, self.few)
        if self._on_traits is not None:
            sift = None  # its best read with their traits, and tested on them
        asked = FIRST_BEST * limit
        for _ in range(ASKS):
            if sift is not None:
                sifted = sift(asked)
            elif (best := rank(asked, None)) is not None:
                sifted = Sifted(self.passed(best), complete=len(best) < asked)
            else:
                sifted = None
            if sifted is None:
                return None
            if len(sifted.found) >= limit or sifted.complete:
                return sifted.found[:limit]
            asked = wider(limit, asked, len(sifted.found))
        return rank(limit, self.rows)

    def passed(self, best: list[Candidate]) -> list[Candidate]:
        """Those of ``best`` that pass, in its order. A time or a strength floor is tested
        on the candidates' traits where they carry them (a statement by id took 1 ms of a
        SQLite recall, 2.4 of PostgreSQL's)."""
        test = self._on_traits
        if test is not None and all(c.traits is not None for c in best):
            return [c for c in best if c.traits is not None and test(c.traits)]
        kept = self._kept("id", [c.id for c in best])
        return [c for c in best if c.id in kept]

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
