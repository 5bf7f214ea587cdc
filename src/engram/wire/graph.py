"""The knowledge graph on the wire: request bodies and answers, once per surface.

The agent routes speak camelCase and the people routes snake_case (as the rest of each
surface does). Each record's fields are declared once, in a mixin without a casing, and
each surface's model takes them with its own base: ``EntityOut`` (camelCase) and
``PersonEntityOut`` (snake_case) are the same fields. Bodies whose fields are single words
(an entity, a traversal) serve both surfaces as they are.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Annotated, Any, Literal, Self

from pydantic import AfterValidator, BaseModel, Field

from engram.core import limits
from engram.core.errors import InvalidInput
from engram.core.graph import models, walks
from engram.core.graph.models import Entity, Relation
from engram.core.graph.search import EntityHit
from engram.core.text import check_text
from engram.wire import Answer, Body, FactOut, PeopleAnswer, PersonMemory, Time

Name = Annotated[str, Field(min_length=1, max_length=models.MAX_NAME_CHARS)]
RelationType = Annotated[str, Field(min_length=1, max_length=models.MAX_TYPE_CHARS)]


def stored_id(value: str) -> str:
    """An id as the store could hold one: text without NUL or lone surrogates. Ids are
    looked up, not checked, by the graph's library calls, and PostgreSQL refuses a NUL
    outright: refused here, such an id is a 400 and never a storage failure."""
    try:
        return check_text(value, "id", max_chars=64)
    except InvalidInput as exc:
        raise ValueError(exc.message) from None


StoredId = AfterValidator(stored_id)
FactId = Annotated[str, Field(min_length=1, max_length=64), StoredId]
Attributes = dict[str, Any] | None
ATTRIBUTES = "a JSON object up to 16 KiB, nested at most 64 levels"
MAX_SUPPORT = limits.MAX_IDS


# -- request bodies --------------------------------------------------------------------
class EntitySpec(Body):
    """The entity called ``name`` (or holding it as an alias), created or given these
    values: a value left out stays as it is, and ``aliases`` join its own."""

    name: Name
    type: RelationType | None = None
    aliases: list[Name] | None = Field(default=None, max_length=models.MAX_ALIASES)
    summary: str | None = Field(default=None, max_length=models.MAX_SUMMARY_CHARS)
    attributes: Attributes = Field(default=None, description=ATTRIBUTES)


class TraversalSpec(Body):
    """The paths from ``start`` along relations that hold now: 1 to ``depth`` relations
    long, of ``types`` when given, following ``direction``; shortest first."""

    start: Name
    depth: int = Field(default=2, ge=1, le=walks.MAX_DEPTH)
    types: list[RelationType] | None = None
    direction: Literal["out", "in", "both"] = "both"
    limit: int | None = Field(default=None, ge=1, le=walks.MAX_LIMIT)


class _RelationTypeFields(BaseModel):
    single_valued: bool


class RelationTypeSpec(_RelationTypeFields, Body):
    """``singleValued``: one target per source at a time (a new one retires the old)."""

    single_valued: bool = Field(alias="singleValued")


class PersonRelationTypeSpec(_RelationTypeFields, Body):
    """``single_valued``: one target per source at a time (a new one retires the old)."""


class _RelationFields(BaseModel):
    source: Name
    target: Name
    type: RelationType
    facts: list[FactId] | None = Field(default=None, max_length=MAX_SUPPORT)
    valid_at: Time | None = None
    invalid_at: Time | None = None
    attributes: Attributes = Field(default=None, description=ATTRIBUTES)


class RelationSpec(_RelationFields, Body):
    """``source`` -[type]-> ``target`` (ids or names of the agent's entities), supported
    by ``facts`` (the agent's live facts), holding from ``validAt`` to ``invalidAt``."""

    valid_at: Time | None = Field(default=None, alias="validAt")
    invalid_at: Time | None = Field(default=None, alias="invalidAt")


class PersonRelationSpec(_RelationFields, Body):
    """``source`` -[type]-> ``target`` (ids or names of the entities), supported by
    ``facts`` (live memories here), holding from ``valid_at`` to ``invalid_at``."""


class ExtractionSpec(Body):
    """Read the scope's facts (``facts`` only, when given) with ``extractor``: ``rules``
    reads every one again; a model extractor reads up to ``limit`` of those it has not
    read for their current words (its backlog), oldest first."""

    extractor: models.Extractor = "rules"
    facts: list[FactId] | None = Field(default=None, min_length=1, max_length=limits.MAX_IDS)
    limit: int | None = Field(default=None, ge=1, le=limits.MAX_PAGE)


# -- the records' fields, once ---------------------------------------------------------
class _EntityFields(BaseModel):
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


class _FoundEntityFields(_EntityFields):
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


class _RelationFieldsOut(BaseModel):
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
        )


class _RelationTypeOutFields(BaseModel):
    """Whether ``type`` is single-valued now, and whether this call changed it."""

    type: str
    single_valued: bool
    changed: bool


# -- answers of the agent routes (camelCase) -------------------------------------------
class _ExtractionFields(BaseModel):
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


class EntityOut(_EntityFields, Answer):
    pass


class FoundEntity(_FoundEntityFields, Answer):
    pass


class EntitiesOut(Answer):
    entities: list[FoundEntity]


class RelationOut(_RelationFieldsOut, Answer):
    pass


class RelationsOut(Answer):
    relations: list[RelationOut]


class RelationTypeOut(_RelationTypeOutFields, Answer):
    pass


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


class ExtractionOut(_ExtractionFields, Answer):
    """What one extraction did: the facts read, the entities and relations new to the
    scope, and (model extractors) what was dropped because the fact's words do not hold
    it, answers that were not the JSON asked for, and facts that changed while read."""


# -- answers of the people routes (snake_case) -----------------------------------------
class PersonEntityOut(_EntityFields, PeopleAnswer):
    pass


class PersonFoundEntity(_FoundEntityFields, PeopleAnswer):
    pass


class PersonEntitiesOut(PeopleAnswer):
    entities: list[PersonFoundEntity]


class PersonRelationOut(_RelationFieldsOut, PeopleAnswer):
    pass


class PersonRelationsOut(PeopleAnswer):
    relations: list[PersonRelationOut]


class PersonRelationTypeOut(_RelationTypeOutFields, PeopleAnswer):
    pass


class PersonPathOut(PeopleAnswer):
    entities: list[str]
    relations: list[PersonRelationOut]

    @classmethod
    def of(cls, path: walks.Path) -> PersonPathOut:
        relations = [PersonRelationOut.of(r) for r in path.relations]
        return cls(entities=list(path.entities), relations=relations)


class PersonPathsOut(PeopleAnswer):
    paths: list[PersonPathOut]


class PersonSubgraphOut(PeopleAnswer):
    """As :class:`SubgraphOut`, the facts as the person's memories."""

    center: PersonEntityOut
    entities: list[PersonEntityOut]
    relations: list[PersonRelationOut]
    memories: list[PersonMemory]
    truncated: bool

    @classmethod
    def of(cls, found: walks.Subgraph) -> PersonSubgraphOut:
        return cls(
            center=PersonEntityOut.of(found.center),
            entities=[PersonEntityOut.of(e) for e in found.entities],
            relations=[PersonRelationOut.of(r) for r in found.relations],
            memories=[PersonMemory.of(f) for f in found.facts],
            truncated=found.truncated,
        )


class PersonExtractionOut(_ExtractionFields, PeopleAnswer):
    pass
