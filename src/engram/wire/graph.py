"""The knowledge graph's answers on the wire, declared once in camelCase; the people
routes speak them in snake_case, derived by :func:`engram.wire.casing.snake`. The one
answer that holds more than another spelling on a person's routes is the neighbourhood,
whose facts are the person's memories (:class:`PersonSubgraphOut`).
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any, Self

from engram.core.graph import models, walks
from engram.core.graph.models import Entity, Relation
from engram.core.graph.search import EntityHit
from engram.wire import Answer, FactOut, PeopleAnswer, PersonMemory
from engram.wire.casing import snake


class EntityOut(Answer):
    id: str
    name: str
    type: str | None
    aliases: list[str]
    summary: str | None
    attributes: dict[str, Any]
    origin: str
    created_at: datetime
    updated_at: datetime

    @classmethod
    def of(cls, entity: Entity) -> Self:
        return cls(**_entity_fields(entity))


def _entity_fields(entity: Entity) -> dict[str, Any]:
    return {
        "id": entity.id,
        "name": entity.name,
        "type": entity.type,
        "aliases": list(entity.aliases),
        "summary": entity.summary,
        "attributes": entity.attributes,
        "origin": entity.origin,
        "created_at": entity.created_at,
        "updated_at": entity.updated_at,
    }


class FoundEntity(EntityOut):
    """An entity found: its fused score (orders one search's hits) and its 1-based rank
    in each half (names by full text; meaning through the facts that mention it)."""

    score: float
    text_rank: int | None
    vector_rank: int | None

    @classmethod
    def of_hit(cls, hit: EntityHit) -> Self:
        return cls(
            **_entity_fields(hit.entity),
            score=hit.score,
            text_rank=hit.text_rank,
            vector_rank=hit.vector_rank,
        )


class EntitiesOut(Answer):
    entities: list[FoundEntity]


class RelationOut(Answer):
    """``source`` -[type]-> ``target`` (entity ids): it held in the world from
    ``valid_at`` to ``invalid_at`` (null: unknown), and engram held it from
    ``created_at`` to ``expired_at`` (null: still does)."""

    id: str
    source: str
    target: str
    type: str
    origin: str
    valid_at: datetime | None
    invalid_at: datetime | None
    created_at: datetime
    expired_at: datetime | None
    facts: list[str]
    attributes: dict[str, Any]
    extractor: str | None  # an extracted relation's: rules or llm

    @classmethod
    def of(cls, relation: Relation) -> Self:
        return cls(
            id=relation.id,
            source=relation.source,
            target=relation.target,
            type=relation.type,
            origin=relation.origin,
            valid_at=relation.valid_at,
            invalid_at=relation.invalid_at,
            created_at=relation.created_at,
            expired_at=relation.expired_at,
            facts=list(relation.facts),
            attributes=relation.attributes,
            extractor=relation.extractor,
        )


class RelationsOut(Answer):
    relations: list[RelationOut]


class RelationTypeOut(Answer):
    """Whether ``type`` is single-valued now, and whether this call changed it."""

    type: str
    single_valued: bool
    changed: bool


class PathOut(Answer):
    """Entities ``entities[0]`` to ``entities[-1]`` (ids), joined by ``relations`` in order."""

    entities: list[str]
    relations: list[RelationOut]

    @classmethod
    def of(cls, path: walks.Path) -> PathOut:
        return cls(
            entities=list(path.entities), relations=[RelationOut.of(r) for r in path.relations]
        )


class PathsOut(Answer):
    paths: list[PathOut]


class SubgraphOut(Answer):
    """What lies within ``depth`` of ``center``: the entities reached (the center first,
    then by distance and name), the relations between them, the facts that mention them
    (newest first); ``truncated`` when ``limit`` cut any of them short."""

    center: EntityOut
    entities: list[EntityOut]
    relations: list[RelationOut]
    facts: list[FactOut]
    truncated: bool

    @classmethod
    def of(cls, found: walks.Subgraph) -> SubgraphOut:
        return cls(
            center=EntityOut.of(found.center),
            entities=[EntityOut.of(e) for e in found.entities],
            relations=[RelationOut.of(r) for r in found.relations],
            facts=[FactOut.of(f) for f in found.facts],
            truncated=found.truncated,
        )


class ExtractionOut(Answer):
    """What one extraction did: the facts read, the entities and relations new to the
    scope, and (model extractors) what was dropped because the fact's words do not hold
    it, answers that were not the JSON asked for, and facts that changed while read."""

    extractor: str
    facts_read: int
    entities_added: int
    relations_added: int
    entities_dropped: int
    relations_dropped: int
    times_dropped: int
    answers_rejected: int
    facts_skipped: int

    @classmethod
    def of(cls, report: models.ExtractionReport) -> Self:
        return cls(**dataclasses.asdict(report))


PersonEntityOut = snake(EntityOut)
PersonRelationOut = snake(RelationOut)


class PersonSubgraphOut(PeopleAnswer):
    """As :class:`SubgraphOut`, the facts as the person's memories."""

    center: PersonEntityOut  # type: ignore[valid-type]
    entities: list[PersonEntityOut]  # type: ignore[valid-type]
    relations: list[PersonRelationOut]  # type: ignore[valid-type]
    memories: list[PersonMemory]
    truncated: bool

    @classmethod
    def of(cls, found: walks.Subgraph) -> PersonSubgraphOut:
        return cls(
            center=EntityOut.of(found.center).model_dump(),
            entities=[EntityOut.of(e).model_dump() for e in found.entities],
            relations=[RelationOut.of(r).model_dump() for r in found.relations],
            memories=[PersonMemory.of(f) for f in found.facts],
            truncated=found.truncated,
        )
