"""Routes for the knowledge graph of what an application remembers of a person: the
agent routes' graph operations (``api/graph.py``), on the person's memory in ``{app}``.

As on the other people routes, the person is the subject of the verified bearer token,
never a field of the request, and answers are snake_case; query parameters are named as
on the agent routes (as the memories' search takes ``topK``). A graph is the person's in
one application: another person's, or another application's, is not found. Searching
by meaning without an embedder answers 503 in a sentence, as the memories' routes do.
"""

from __future__ import annotations

from fastapi import APIRouter, Request

from engram.api.context import Person, memory_of
from engram.api.graph import (
    End,
    EntityRef,
    RelationId,
    Relations,
    Search,
    TypeName,
    Walk,
    around,
    assert_relation,
    end_relation,
    find,
    list_relations,
    read_facts,
    upsert,
    walk,
)
from engram.api.openapi import errors
from engram.api.people import app_memory
from engram.core.graph import models
from engram.core.graph.graph import Graph
from engram.core.scopes import PersonAppRef
from engram.wire.graph import (
    EntitySpec,
    ExtractionSpec,
    PersonEntitiesOut,
    PersonEntityOut,
    PersonExtractionOut,
    PersonFoundEntity,
    PersonPathOut,
    PersonPathsOut,
    PersonRelationOut,
    PersonRelationsOut,
    PersonRelationSpec,
    PersonRelationTypeOut,
    PersonRelationTypeSpec,
    PersonSubgraphOut,
    TraversalSpec,
)

router = APIRouter(
    prefix="/api/v1/apps/{app}/graph",
    tags=["people"],
    responses=errors(400, 401, 403, 404, 500, 503),
)


def _graph(request: Request, app: str, person: str) -> tuple[Graph, PersonAppRef]:
    """The store's graph, and the person's scope in the application."""
    return memory_of(request).graph, app_memory(request, app).scope(person)


@router.put("/entities", responses=errors(409, 413))
def upsert_entity(app: str, body: EntitySpec, request: Request, person: Person) -> PersonEntityOut:
    """The entity called ``name`` in what ``{app}`` remembers of the person, created or
    given these values, as the agent route does."""
    graph, scope = _graph(request, app, person)
    return PersonEntityOut.of(upsert(graph, scope, body))


@router.get("/entities")
def search(app: str, request: Request, person: Person, asked: Search) -> PersonEntitiesOut:
    """The person's entities here for ``query``, best first, as the agent route finds them."""
    if asked.mode == "hybrid":
        app_memory(request, app).require_semantic()
    graph, scope = _graph(request, app, person)
    hits = find(graph, scope, asked)
    return PersonEntitiesOut(entities=[PersonFoundEntity.of_hit(h) for h in hits])


@router.get("/entities/{entity}")
def entity(app: str, entity: EntityRef, request: Request, person: Person) -> PersonEntityOut:
    """One entity of the person's graph here, by id, name or alias."""
    graph, scope = _graph(request, app, person)
    return PersonEntityOut.of(graph.entity(scope, entity))


@router.delete("/entities/{entity}")
def delete_entity(app: str, entity: EntityRef, request: Request, person: Person) -> PersonEntityOut:
    """Deletes the entity with its aliases, mentions and relations; answers it as it was."""
    graph, scope = _graph(request, app, person)
    return PersonEntityOut.of(graph.delete_entity(scope, entity))


@router.put("/relation-types/{relation_type}", responses=errors(413))
def declare_type(
    app: str,
    relation_type: TypeName,
    body: PersonRelationTypeSpec,
    request: Request,
    person: Person,
) -> PersonRelationTypeOut:
    """Whether a relation type holds one target per source at a time, here."""
    graph, scope = _graph(request, app, person)
    single = body.single_valued
    changed = graph.declare_relation_type(scope, relation_type, single_valued=single)
    return PersonRelationTypeOut(
        type=models.check_type(relation_type), single_valued=single, changed=changed
    )


@router.post("/relations", status_code=201, responses=errors(413))
def relate(
    app: str, body: PersonRelationSpec, request: Request, person: Person
) -> PersonRelationOut:
    """``source`` -[type]-> ``target`` in the person's graph here (201)."""
    graph, scope = _graph(request, app, person)
    return PersonRelationOut.of(assert_relation(graph, scope, body))


@router.get("/relations")
def relations(app: str, request: Request, person: Person, asked: Relations) -> PersonRelationsOut:
    """The person's relations here, oldest first, as the agent route lists them."""
    graph, scope = _graph(request, app, person)
    found = list_relations(graph, scope, asked)
    return PersonRelationsOut(relations=[PersonRelationOut.of(r) for r in found])


@router.delete("/relations/{relation_id}")
def expire(
    app: str, relation_id: RelationId, request: Request, person: Person, how: End
) -> PersonRelationOut:
    """Retires the relation (``hard=true``: deletes it), as the agent route does."""
    graph, scope = _graph(request, app, person)
    return PersonRelationOut.of(end_relation(graph, scope, relation_id, how))


@router.get("/entities/{entity}/neighbourhood")
def neighbourhood(
    app: str, entity: EntityRef, request: Request, person: Person, asked: Walk
) -> PersonSubgraphOut:
    """The entities, relations and mentioning facts within ``depth`` of the entity."""
    graph, scope = _graph(request, app, person)
    return PersonSubgraphOut.of(around(graph, scope, entity, asked))


@router.post("/traversals")
def traverse(app: str, body: TraversalSpec, request: Request, person: Person) -> PersonPathsOut:
    """The paths from ``start`` in the person's graph here (a read)."""
    graph, scope = _graph(request, app, person)
    return PersonPathsOut(paths=[PersonPathOut.of(p) for p in walk(graph, scope, body)])


@router.post("/extractions", responses=errors(501, 502))
def extract(
    app: str, body: ExtractionSpec, request: Request, person: Person
) -> PersonExtractionOut:
    """Reads the person's memories here for the graph, as the agent route does."""
    graph, scope = _graph(request, app, person)
    return PersonExtractionOut.of(read_facts(graph, scope, body))
