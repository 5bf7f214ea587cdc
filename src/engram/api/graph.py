"""Routes for an agent's knowledge graph: entities (upsert, search, one by id or name,
delete), relation types, relations (assert, list as of a time, expire or delete), and
walks (an entity's neighbourhood, traversals).

An ``{entity}`` in a path is an entity's id, name or alias, percent-encoded; a name
holding a slash is reached by its id. Another agent's entity or relation is not found,
with no hint that it exists. Every write is one ledger entry naming the caller.

The query parameters and the calls both surfaces make are declared here once; the
people routes (``api/people_graph.py``) take them with a person's scope.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Path, Query, Request

from engram.api.context import agent_memory
from engram.api.openapi import errors
from engram.api.params import Flag, Integer, Limit, Time
from engram.core import limits
from engram.core.errors import InvalidInput
from engram.core.graph import models, walks
from engram.core.graph.graph import Graph
from engram.core.graph.models import Entity, Relation
from engram.core.graph.search import EntityHit
from engram.core.scopes import Scope
from engram.wire.graph import (
    EntitiesOut,
    EntityOut,
    EntitySpec,
    ExtractionOut,
    ExtractionSpec,
    FoundEntity,
    PathOut,
    PathsOut,
    PersonRelationSpec,
    RelationOut,
    RelationsOut,
    RelationSpec,
    RelationTypeOut,
    RelationTypeSpec,
    StoredId,
    SubgraphOut,
    TraversalSpec,
)

router = APIRouter(
    prefix="/agents/{agent_id}/graph",
    tags=["graph"],
    responses=errors(400, 401, 403, 404, 500, 501, 503),
)

DEFAULT_SEARCH = 10
EntityRef = Annotated[
    str,
    Path(
        min_length=1,
        max_length=models.MAX_NAME_CHARS,
        description="an entity's id, name or alias, percent-encoded",
    ),
]
RelationId = Annotated[
    str, Path(min_length=1, max_length=64, description="a relation's id"), StoredId
]
TypeName = Annotated[
    str, Path(min_length=1, max_length=models.MAX_TYPE_CHARS, description="a relation type")
]
SearchTopK = Annotated[
    int,
    Query(
        alias="topK",
        ge=1,
        le=limits.MAX_TOP_K,
        description=f"how many entities (default {DEFAULT_SEARCH}, at most {limits.MAX_TOP_K})",
    ),
    Integer,
]
SearchMode = Annotated[
    Literal["hybrid", "text"],
    Query(description="hybrid: names by full text and meaning through facts; text: names only"),
]
Types = Annotated[
    list[str] | None,
    Query(alias="type", description="only entities of these types (repeat it)"),
]
AsOf = Annotated[Time, Query(alias="asOf", description="as engram knows the world then")]
Depth = Annotated[
    int, Query(ge=1, le=walks.MAX_DEPTH, description="how many steps out (1 to 3)"), Integer
]
WalkLimit = Annotated[
    int | None,
    Query(
        ge=1,
        le=walks.MAX_LIMIT,
        description="at most this many entities, relations and facts each (default 50)",
    ),
    Integer,
]


# -- the query parameters both surfaces take, declared once ----------------------------------
@dataclass(frozen=True, slots=True)
class EntityQuery:
    text: str
    types: list[str]
    top_k: int
    mode: Literal["hybrid", "text"]


def entity_query(
    query: Annotated[str, Query(description="what to find: words of names, or a meaning")],
    types: Types = None,
    top_k: SearchTopK = DEFAULT_SEARCH,
    mode: SearchMode = "hybrid",
) -> EntityQuery:
    return EntityQuery(query, types or [], top_k, mode)


@dataclass(frozen=True, slots=True)
class RelationQuery:
    entity: str | None
    type: str | None
    as_of: datetime | None
    include_expired: bool
    limit: int


def relation_query(
    entity: Annotated[str | None, Query(description="only relations touching it")] = None,
    type: Annotated[str | None, Query(description="only relations of this type")] = None,
    as_of: AsOf = None,
    include_expired: Annotated[bool, Query(alias="includeExpired"), Flag] = False,
    limit: Limit = limits.DEFAULT_PAGE,
) -> RelationQuery:
    return RelationQuery(entity, type, as_of, include_expired, limit)


@dataclass(frozen=True, slots=True)
class WalkQuery:
    depth: int
    limit: int | None
    as_of: datetime | None


def walk_query(depth: Depth = 1, limit: WalkLimit = None, as_of: AsOf = None) -> WalkQuery:
    return WalkQuery(depth, limit, as_of)


@dataclass(frozen=True, slots=True)
class Ending:
    at: datetime | None
    hard: bool


def ending(
    at: Annotated[Time, Query(description="when it stopped holding in the world")] = None,
    hard: Annotated[bool, Query(description="delete it, as if it never was"), Flag] = False,
) -> Ending:
    if hard and at is not None:
        raise InvalidInput("at goes with expiring a relation, not with hard=true")
    return Ending(at, hard)


Search = Annotated[EntityQuery, Depends(entity_query)]
Relations = Annotated[RelationQuery, Depends(relation_query)]
Walk = Annotated[WalkQuery, Depends(walk_query)]
End = Annotated[Ending, Depends(ending)]


# -- entities ------------------------------------------------------------------------------
@router.put("/entities", responses=errors(409, 413))
def upsert_entity(agent_id: str, body: EntitySpec, request: Request) -> EntityOut:
    """The entity called ``name`` (or holding it as an alias), created or given these
    values; a value left out stays as it is, and ``aliases`` join its own. 409 when an
    alias is another entity's name or alias."""
    memory, agent = agent_memory(request, agent_id, write=True)
    return EntityOut.of(upsert(memory.graph, agent.ref, body))


@router.get("/entities")
def search(agent_id: str, request: Request, asked: Search) -> EntitiesOut:
    """The agent's entities for ``query``, best first: names, aliases and summaries by
    full text and (``hybrid``) meaning through the facts that mention them, fused. Each
    with its ``score``, ``textRank`` and ``vectorRank``. Hybrid needs an embedder (501)."""
    memory, agent = agent_memory(request, agent_id)
    hits = find(memory.graph, agent.ref, asked)
    return EntitiesOut(entities=[FoundEntity.of_hit(h) for h in hits])


@router.get("/entities/{entity}")
def entity(agent_id: str, entity: EntityRef, request: Request) -> EntityOut:
    """One entity of the agent's graph, by id, name or alias."""
    memory, agent = agent_memory(request, agent_id)
    return EntityOut.of(memory.graph.entity(agent.ref, entity))


@router.delete("/entities/{entity}", responses=errors(409))
def delete_entity(agent_id: str, entity: EntityRef, request: Request) -> EntityOut:
    """Deletes the entity with its aliases, mentions and relations (never a fact);
    answers it as it was."""
    memory, agent = agent_memory(request, agent_id, write=True)
    return EntityOut.of(memory.graph.delete_entity(agent.ref, entity))


# -- relation types and relations ----------------------------------------------------------
@router.put("/relation-types/{relation_type}", responses=errors(409, 413))
def declare_type(
    agent_id: str, relation_type: TypeName, body: RelationTypeSpec, request: Request
) -> RelationTypeOut:
    """Whether a type holds one target per source at a time (``lives_in``: a new target
    retires the old relation); ``changed`` says whether this changed it."""
    memory, agent = agent_memory(request, agent_id, write=True)
    single = body.single_valued
    changed = memory.graph.declare_relation_type(agent.ref, relation_type, single_valued=single)
    return RelationTypeOut(
        type=models.check_type(relation_type), single_valued=single, changed=changed
    )


@router.post("/relations", status_code=201, responses=errors(409, 413))
def relate(agent_id: str, body: RelationSpec, request: Request) -> RelationOut:
    """``source`` -[type]-> ``target``: the same live relation asserted again gains the
    support and times given instead of a second copy. 404 for an entity or fact the
    agent does not have."""
    memory, agent = agent_memory(request, agent_id, write=True)
    return RelationOut.of(assert_relation(memory.graph, agent.ref, body))


@router.get("/relations")
def relations(agent_id: str, request: Request, asked: Relations) -> RelationsOut:
    """The agent's relations, oldest first: those that hold now; with ``asOf``, those
    that held then; with ``includeExpired``, every one."""
    memory, agent = agent_memory(request, agent_id)
    found = list_relations(memory.graph, agent.ref, asked)
    return RelationsOut(relations=[RelationOut.of(r) for r in found])


@router.delete("/relations/{relation_id}", responses=errors(409))
def expire(agent_id: str, relation_id: RelationId, request: Request, how: End) -> RelationOut:
    """Retires the relation: engram no longer holds it (it stays readable with
    ``asOf`` and ``includeExpired``); ``hard=true`` deletes it instead. Answers it."""
    memory, agent = agent_memory(request, agent_id, write=True)
    return RelationOut.of(end_relation(memory.graph, agent.ref, relation_id, how))


# -- walks ---------------------------------------------------------------------------------
@router.get("/entities/{entity}/neighbourhood")
def neighbourhood(agent_id: str, entity: EntityRef, request: Request, asked: Walk) -> SubgraphOut:
    """The entities, relations and mentioning facts within ``depth`` of the entity."""
    memory, agent = agent_memory(request, agent_id)
    return SubgraphOut.of(around(memory.graph, agent.ref, entity, asked))


@router.post("/traversals")
def traverse(agent_id: str, body: TraversalSpec, request: Request) -> PathsOut:
    """The paths from ``start`` (a read: nothing is written)."""
    memory, agent = agent_memory(request, agent_id)
    return PathsOut(paths=[PathOut.of(p) for p in walk(memory.graph, agent.ref, body)])


# -- reading facts for the graph -------------------------------------------------------------
@router.post("/extractions", responses=errors(409, 502))
def extract(agent_id: str, body: ExtractionSpec, request: Request) -> ExtractionOut:
    """Reads the agent's facts for the graph with ``extractor`` and answers what it did.
    ``rules`` reads every fact (or ``facts``) again, as every write does inline; ``llm``
    reads up to ``limit`` (default 50) of the facts the chat model has not read, keeping
    only what each fact's words hold, and a second call reads the next ones; ``spacy``
    does the same with a spaCy pipeline (default 500), for entities. 501 when the
    service has no such model, 502 when it fails (nothing written), 404 for a fact the
    agent does not have."""
    memory, agent = agent_memory(request, agent_id, write=True)
    return ExtractionOut.of(read_facts(memory.graph, agent.ref, body))


# -- what both surfaces do -------------------------------------------------------------------
def upsert(graph: Graph, scope: Scope, body: EntitySpec) -> Entity:
    return graph.upsert_entity(
        scope,
        body.name,
        type=body.type,
        aliases=body.aliases or (),
        summary=body.summary,
        attributes=body.attributes,
    )


def assert_relation(
    graph: Graph, scope: Scope, body: RelationSpec | PersonRelationSpec
) -> Relation:
    return graph.upsert_relation(
        scope,
        body.source,
        body.target,
        body.type,
        facts=body.facts or (),
        valid_at=body.valid_at,
        invalid_at=body.invalid_at,
        attributes=body.attributes,
    )


def read_facts(graph: Graph, scope: Scope, body: ExtractionSpec) -> models.ExtractionReport:
    return graph.extract(scope, extractor=body.extractor, fact_ids=body.facts, limit=body.limit)


def find(graph: Graph, scope: Scope, asked: EntityQuery) -> list[EntityHit]:
    return graph.search(scope, asked.text, top_k=asked.top_k, types=asked.types, mode=asked.mode)


def list_relations(graph: Graph, scope: Scope, asked: RelationQuery) -> list[Relation]:
    return graph.relations(
        scope,
        entity=asked.entity,
        type=asked.type,
        as_of=asked.as_of,
        include_expired=asked.include_expired,
        limit=asked.limit,
    )


def end_relation(graph: Graph, scope: Scope, relation_id: str, how: Ending) -> Relation:
    """Expires the relation (at ``how.at``), or, ``how.hard``, deletes it."""
    if how.hard:
        return graph.delete_relation(scope, relation_id)
    return graph.expire_relation(scope, relation_id, at=how.at)


def around(graph: Graph, scope: Scope, entity: str, asked: WalkQuery) -> walks.Subgraph:
    return graph.neighbourhood(
        scope, entity, depth=asked.depth, limit=asked.limit, as_of=asked.as_of
    )


def walk(graph: Graph, scope: Scope, body: TraversalSpec) -> list[walks.Path]:
    return graph.traverse(
        scope,
        body.start,
        depth=body.depth,
        types=body.types or (),
        direction=body.direction,
        limit=body.limit,
    )
