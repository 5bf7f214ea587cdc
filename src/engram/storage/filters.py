"""Recall filters as SQL, shared by both backends (only the placeholder differs), and as
a test of a candidate's traits where those carry every filter."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from engram.core.clock import to_us
from engram.core.models import Filters
from engram.core.ranking import Traits

# A fact's strength until feedback moves it: most facts keep it, and the index of a
# scope's facts by strength (``facts_by_strength``) holds only the others.
DEFAULT_STRENGTH = 1.0


def floor_alone(filters: Filters) -> float | None:
    """The strength floor where it is ``filters``' only one and at most
    :data:`DEFAULT_STRENGTH`: it keeps every fact of the default strength, so those it
    drops are among the few the index of other strengths holds; else None."""
    floor = filters.min_strength
    if floor is None or floor > DEFAULT_STRENGTH:
        return None
    return floor if filters == Filters(min_strength=floor) else None


def on_traits(filters: Filters) -> Callable[[Traits], bool] | None:
    """Whether a candidate passes ``filters``, read from its traits (its time and its
    strength, as its row holds them), where no other filter is set; else None."""
    if filters.type is not None or filters.tags or filters.verified_only:
        return None
    after, before, floor = filters.created_after, filters.created_before, filters.min_strength

    def passes(traits: Traits) -> bool:
        return (
            (after is None or traits.at > after)
            and (before is None or traits.at < before)
            and (floor is None or traits.strength >= floor)
        )

    return passes


def other_strength(alias: str) -> str:
    """The condition of the index of a scope's facts by strength (``facts_by_strength``,
    of facts ``alias``), which a statement states for a planner to read through it."""
    return f"{alias}.strength <> {DEFAULT_STRENGTH}"


def filter_sql(
    filters: Filters, scope: str, alias: str = "f", mark: str = "?", *, per_row: bool = False
) -> tuple[str, list[object]]:
    """A conjunction (starting with AND) restricting facts ``alias`` of ``scope`` to
    ``filters``; ``mark`` is the driver's parameter placeholder. ``per_row``: for given
    rows (a half's best, by id), each tested by its own tags through their primary key;
    else the scope's facts of the tags are gathered once (a statement over many facts)."""
    clauses: list[str] = []
    params: list[object] = []
    if filters.type is not None:
        clauses.append(f"{alias}.type = {mark}")
        params.append(filters.type)
    if filters.min_strength is not None:
        clauses.append(f"{alias}.strength >= {mark}")
        params.append(filters.min_strength)
        if filters.min_strength > DEFAULT_STRENGTH:  # implied; the index of those serves it
            clauses.append(other_strength(alias))
    if filters.verified_only:
        clauses.append(f"{alias}.source_sandbox IS NOT NULL")
    if filters.created_after is not None:
        clauses.append(f"{alias}.created_at > {mark}")
        params.append(to_us(filters.created_after))
    if filters.created_before is not None:
        clauses.append(f"{alias}.created_at < {mark}")
        params.append(to_us(filters.created_before))
    if filters.tags and per_row:
        # Gathered once, a common tag's facts cost a 1M scope's recall 113 ms a test of
        # its best 200; sought by each row, 0.35 ms.
        clauses.append(
            f"(SELECT count(*) FROM fact_tags u WHERE u.fact = {alias}.seq "
            f"AND u.tag IN ({marks(filters.tags, mark)})) = {mark}"
        )
        params.extend([*filters.tags, len(filters.tags)])
    elif filters.tags:
        # The scope as a value, not the outer row's: PostgreSQL ran a subquery tied to
        # the row once a fact (100,000 times in a 100k scope, 46 ms for no tagged fact).
        clauses.append(
            f"{alias}.seq IN (SELECT fact FROM fact_tags WHERE scope = {mark} "
            f"AND tag IN ({marks(filters.tags, mark)}) GROUP BY fact HAVING count(*) = {mark})"
        )
        params.extend([scope, *filters.tags, len(filters.tags)])
    return "".join(f" AND {c}" for c in clauses), params


def marks(values: Sequence[object], mark: str) -> str:
    """One placeholder ``mark`` for each of ``values``, as a statement's list."""
    return ", ".join(mark for _ in values)
