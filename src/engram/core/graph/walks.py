"""Walking the graph from an entity: its neighbourhood (relations, the facts that mention
it, and the entities those relations and facts lead to) and typed traversals (paths
along relations, each entity at most once on a path)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from engram.core.clock import to_us
from engram.core.errors import InvalidInput
from engram.core.graph import models
from engram.core.graph.models import Entity, Relation
from engram.core.models import Fact
from engram.core.ports import Store, Tx
from engram.core.scopes import Scope

Direction = Literal["out", "in", "both"]
MAX_DEPTH = 3
MAX_LIMIT = 1000
_ALL = 1 << 30


@dataclass(frozen=True, slots=True)
class Subgraph:
    """What lies within ``depth`` of ``center``: the entities reached (the center first,
    then by distance and name), the relations between them, and the facts that mention
    them (newest first); ``truncated`` when ``limit`` cut any of them short."""

    center: Entity
    entities: list[Entity]
    relations: list[Relation]
    facts: list[Fact]
    truncated: bool


@dataclass(frozen=True, slots=True)
class Path:
    """Entities ``entities[0]`` to ``entities[-1]`` joined by ``relations`` in order."""

    entities: tuple[str, ...]
    relations: tuple[Relation, ...]


def check_depth(depth: object) -> int:
    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= MAX_DEPTH:
        raise InvalidInput(f"depth must be an integer from 1 to {MAX_DEPTH}, got {depth!r}")
    return depth


def check_limit(limit: object, default: int) -> int:
    if limit is None:
        return default
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"limit must be an integer from 1 to {MAX_LIMIT}, got {limit!r}")
    return limit


def check_direction(direction: object) -> Direction:
    if direction == "out" or direction == "in" or direction == "both":
        return direction
    raise InvalidInput(f"direction must be out, in or both, got {direction!r}")


def check_types(types: object) -> tuple[str, ...]:
    if types is None:
        return ()
    if isinstance(types, str) or not isinstance(types, Sequence):
        raise InvalidInput("types must be a list of relation types")
    return tuple(dict.fromkeys(models.check_type(t) for t in types))


def neighbourhood(
    store: Store,
    tx: Tx,
    scope: Scope,
    center: Entity,
    *,
    depth: int,
    limit: int,
    as_of: datetime | None,
) -> Subgraph:
    """Breadth first from ``center``: at each step the relations (holding now, or at
    ``as_of``) and the mentioning facts (created by ``as_of``) of the entities reached
    last lead to the entities at their other ends. At most ``limit`` entities, relations
    and facts each."""
    distance = {center.id: 0}
    frontier = [center.id]
    relations: dict[str, Relation] = {}
    facts: dict[str, Fact] = {}
    truncated = False
    for step in range(1, depth + 1):
        reached: list[str] = []
        for relation in store.graph.relations(tx, scope, entities=frontier, limit=_ALL):
            if not relation.live(as_of):
                continue
            if relation.id not in relations:
                if len(relations) >= limit:
                    truncated = True
                    continue
                relations[relation.id] = relation
            reached += [relation.source, relation.target]
        mentioned = _facts(store, tx, scope, frontier, as_of, limit - len(facts))
        truncated = truncated or mentioned.truncated
        for fact in mentioned.facts:
            facts.setdefault(fact.id, fact)
        for mention in store.graph.mentions(tx, scope, facts=[f.id for f in mentioned.facts]):
            reached.append(mention.entity)
        frontier = []
        for entity_id in reached:
            if entity_id in distance:
                continue
            if len(distance) >= limit:
                truncated = True
                break
            distance[entity_id] = step
            frontier.append(entity_id)
        if not frontier:
            break
    found = store.graph.entities(tx, scope, list(distance))
    entities = sorted(found.values(), key=lambda e: (distance[e.id], e.name, e.id))
    kept = [r for r in relations.values() if r.source in found and r.target in found]
    ordered = sorted(facts.values(), key=lambda f: (f.created_at, f.id), reverse=True)
    return Subgraph(center, entities, kept, ordered, truncated)


@dataclass(frozen=True, slots=True)
class _Mentioned:
    facts: list[Fact]
    truncated: bool


def _facts(
    store: Store,
    tx: Tx,
    scope: Scope,
    entities: Sequence[str],
    as_of: datetime | None,
    room: int,
) -> _Mentioned:
    """The newest ``room`` facts that mention ``entities`` (created by ``as_of``): one
    more asked of the store, to know whether more are left, and only those read."""
    if room <= 0 or not entities:
        return _Mentioned([], bool(entities) and room <= 0)
    until = None if as_of is None else to_us(as_of)
    ids = store.graph.mentioning(tx, scope, entities, until_us=until, limit=room + 1)
    rows = store.facts.by_ids(tx, scope, ids[:room])
    found = [rows[i] for i in ids[:room] if i in rows]
    return _Mentioned(found, len(ids) > room)


def traverse(
    store: Store,
    tx: Tx,
    scope: Scope,
    start: Entity,
    *,
    depth: int,
    types: Sequence[str],
    direction: Direction,
    limit: int,
) -> list[Path]:
    """The paths from ``start`` along relations holding now (of ``types`` when given,
    following ``direction``), one to ``depth`` relations long, no entity twice on a path;
    shortest first, at most ``limit``."""
    paths: list[Path] = []
    layer = [Path((start.id,), ())]
    for _ in range(depth):
        ends = list(dict.fromkeys(p.entities[-1] for p in layer))
        rows = store.graph.relations(tx, scope, entities=ends, types=types, limit=_ALL)
        steps: dict[str, list[tuple[Relation, str]]] = {end: [] for end in ends}
        for relation in rows:
            if not relation.live():
                continue
            if direction != "in" and relation.source in steps:
                steps[relation.source].append((relation, relation.target))
            if direction != "out" and relation.target in steps:
                steps[relation.target].append((relation, relation.source))
        longer: list[Path] = []
        for path in layer:
            for relation, to in steps[path.entities[-1]]:
                if to in path.entities:  # the cycle guard
                    continue
                longer.append(Path((*path.entities, to), (*path.relations, relation)))
        longer.sort(key=lambda p: tuple(r.id for r in p.relations))
        room = limit - len(paths)
        paths += longer[:room]
        if len(longer) >= room or not longer:
            break
        layer = longer
    return paths
