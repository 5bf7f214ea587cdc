"""Every operation on a scope's knowledge graph, declared once (as the fact operations
are in :mod:`engram.core.ops`): entities, relation types, relations, walks and reading
facts for the graph. Each is offered on an agent's memory and on what an application
remembers of a person (``people=True``); the routes, the schema, the Client and
``Memory.run`` are built from these declarations.

An entity is named in a path by its id, name or alias; another scope's entity or
relation is not found, with no hint that it exists. Every write is one ledger entry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from engram.core import limits
from engram.core.errors import (
    CapabilityMissing,
    Conflict,
    NotFound,
    TooLarge,
    UpstreamFailure,
)
from engram.core.fields import Cli, Help, Items, Json, OneOf, Text, Whole, Wire
from engram.core.fields import Path as InPath
from engram.core.graph import models, walks
from engram.core.graph.models import Entity, ExtractionReport, Relation
from engram.core.graph.names import NAMED
from engram.core.graph.search import EntityHit
from engram.core.models import JSONValue
from engram.core.ops import FACT_ID, Method, Op, Order, Surface

if TYPE_CHECKING:
    from engram.core.graph.graph import Graph
    from engram.core.scopes import Scope

DEFAULT_SEARCH = 10  # entities a search answers unless asked
NAME = Text(models.MAX_NAME_CHARS, pattern=NAMED)
TYPE = Text(models.MAX_TYPE_CHARS)
Name = Annotated[str, NAME]
EntityRef = Annotated[
    str,
    Text(models.MAX_NAME_CHARS, called="entity", pattern=NAMED),
    InPath(),
    Help("an entity's id, name or alias, percent-encoded"),
]
RelationId = Annotated[
    str,
    Text(limits.MAX_ID_CHARS, strip=False, called="relation id"),
    InPath(),
    Help("a relation's id"),
]
Attributes = Annotated[
    dict[str, JSONValue] | None,
    Json(),
    Help("a JSON object up to 16 KiB, nested at most 64 levels"),
]
Types = Annotated[Sequence[str], Items(TYPE, limits.MAX_IDS, item="type")]
AsOf = Annotated[datetime | None, Wire("asOf"), Help("as engram knew the world then")]
WalkLimit = Annotated[
    int | None,
    Whole(1, walks.MAX_LIMIT),
    Help(
        "at most this many entities, relations and facts each "
        f"(default 50, at most {walks.MAX_LIMIT})"
    ),
]


def _on_graph(method: Method, path: str, **more: Any) -> Surface:
    """Where a graph operation is offered: on an agent's and on a person's memory."""
    return Surface(method, path, tag="graph", people=True, facts=False, **more)


# -- entities ----------------------------------------------------------------------------
@dataclass(frozen=True)
class UpsertEntity(Op[Entity]):
    """Create an entity, or give one these values.

    The entity called ``name`` (or holding it as an alias), created or given these
    values: a value left out stays as it is, and ``aliases`` join its own. A conflict
    when an alias is another entity's name or alias."""

    surface: ClassVar[Surface] = _on_graph(
        "PUT", "/graph/entities", writes=True, errors=(Conflict, TooLarge), cli="graph entity add"
    )

    name: Annotated[Name, Help("its name, or one of its aliases")]
    type: Annotated[str | None, TYPE, Help("what kind of thing it is")] = None
    aliases: Annotated[
        Sequence[str],
        Items(NAME, models.MAX_ALIASES, item="alias"),
        Cli("--alias"),
        Help("other names for it"),
    ] = ()
    summary: Annotated[
        str | None, Text(models.MAX_SUMMARY_CHARS, empty=True), Help("what is known of it")
    ] = None
    attributes: Attributes = None


@dataclass(frozen=True)
class SearchEntities(Op[list[EntityHit]]):
    """Find entities, best first.

    Names, aliases and summaries by full text and (``hybrid``) meaning through the facts
    that mention them, fused. Each with its ``score``, ``textRank`` and ``vectorRank``.
    Searching by meaning needs an embedder."""

    surface: ClassVar[Surface] = _on_graph(
        "GET",
        "/graph/entities",
        errors=(CapabilityMissing, UpstreamFailure),
        name="search",
        cli="graph entity search",
        tool="graph_search",
    )

    query: Annotated[
        str, Text(limits.MAX_QUERY_CHARS), Help("what to find: words of names, or a meaning")
    ]
    types: Annotated[
        Types, Wire("type"), Cli("--type"), Help("only entities of these types (repeat it)")
    ] = ()
    top_k: Annotated[
        int,
        Whole(1, limits.MAX_TOP_K),
        Help(f"how many entities (default {DEFAULT_SEARCH}, at most {limits.MAX_TOP_K})"),
    ] = DEFAULT_SEARCH
    mode: Annotated[
        Literal["hybrid", "text"],
        Help("hybrid: names by full text and meaning through facts; text: names only"),
    ] = "hybrid"

    def asks_embedder(self) -> bool:
        return self.mode == "hybrid"


@dataclass(frozen=True)
class GetEntity(Op[Entity]):
    """One entity, by id, name or alias."""

    surface: ClassVar[Surface] = _on_graph(
        "GET", "/graph/entities/{entity}", name="entity", cli="graph entity show"
    )

    entity: EntityRef


@dataclass(frozen=True)
class DeleteEntity(Op[Entity]):
    """Delete an entity with its aliases, mentions and relations.

    Never a fact. Answers the entity as it was."""

    surface: ClassVar[Surface] = _on_graph(
        "DELETE", "/graph/entities/{entity}", writes=True, errors=(Conflict,), cli="graph entity rm"
    )

    entity: EntityRef


# -- relation types and relations --------------------------------------------------------
@dataclass(frozen=True)
class DeclareRelationType(Op[bool]):
    """Declare whether a relation type is single-valued.

    Single-valued, a type holds one target per source at a time (``lives_in``: a new
    target retires the old relation); the answer's ``changed`` says whether this changed
    it."""

    surface: ClassVar[Surface] = _on_graph(
        "PUT",
        "/graph/relation-types/{relation_type}",
        writes=True,
        errors=(Conflict, TooLarge),
        cli="graph type",
    )

    relation_type: Annotated[str, TYPE, InPath(), Help("a relation type")]
    single_valued: Annotated[
        bool,
        Cli("--single-valued", off="--multi-valued"),
        Help("one target per source at a time: a new one retires the old"),
    ]


@dataclass(frozen=True)
class Relate(Op[Relation]):
    """Assert a relation, source -[type]-> target.

    Between entities of the scope (ids or names), supported by ``facts`` (its live
    facts), holding in the world from ``valid_at`` to ``invalid_at``. The same live
    relation asserted again gains the support and times given instead of a second copy."""

    surface: ClassVar[Surface] = _on_graph(
        "POST",
        "/graph/relations",
        status=201,
        writes=True,
        errors=(NotFound, Conflict, TooLarge),
        name="upsert_relation",
        cli="graph relate",
    )
    order: ClassVar[tuple[Order, ...]] = (Order("valid_at", "invalid_at", strict=False),)

    source: Annotated[Name, Help("the entity it goes from: an id, name or alias")]
    type: Annotated[str, TYPE, Help("its type, such as works_at")]
    target: Annotated[Name, Help("the entity it goes to: an id, name or alias")]
    facts: Annotated[
        Sequence[str],
        Items(FACT_ID, limits.MAX_IDS, item="fact id"),
        Cli("--fact"),
        Help("the facts that support it"),
    ] = ()
    valid_at: Annotated[datetime | None, Help("when it began to hold in the world")] = None
    invalid_at: Annotated[datetime | None, Help("when it stopped holding in the world")] = None
    attributes: Attributes = None


@dataclass(frozen=True)
class Relations(Op[list[Relation]]):
    """List relations, oldest first.

    Those that hold now; with ``as_of``, those that held then; with
    ``include_expired``, every one."""

    surface: ClassVar[Surface] = _on_graph("GET", "/graph/relations", cli="graph relations")

    entity: Annotated[str | None, NAME, Help("only relations touching it")] = None
    type: Annotated[str | None, TYPE, Help("only relations of this type")] = None
    as_of: AsOf = None
    include_expired: Annotated[bool, Cli("--all"), Help("retired relations too")] = False
    limit: Annotated[
        int,
        Whole(1, limits.MAX_PAGE),
        Help(f"at most this many (default {limits.DEFAULT_PAGE}, at most {limits.MAX_PAGE})"),
    ] = limits.DEFAULT_PAGE


@dataclass(frozen=True)
class EndRelation(Op[Relation]):
    """Retire a relation, or delete it.

    Retired, engram no longer holds it (it stays readable with ``as_of`` and
    ``include_expired``), from ``at`` in the world when given; ``hard`` deletes it, as if
    it never was (a time it stopped holding is then moot: a schema cannot say "not
    both", so both are taken). Answers it."""

    surface: ClassVar[Surface] = _on_graph(
        "DELETE",
        "/graph/relations/{relation_id}",
        writes=True,
        errors=(Conflict,),
        name="expire_relation",
        cli="graph expire",
    )

    relation_id: RelationId
    at: Annotated[
        datetime | None,
        Help("when it stopped holding in the world (moot when it is deleted)"),
    ] = None
    hard: Annotated[bool, Help("delete it, as if it never was")] = False


# -- walks -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Neighbourhood(Op[walks.Subgraph]):
    """What lies around an entity.

    The entities, relations and mentioning facts within ``depth`` of it: relations lead
    to their other ends, and facts to the entities they mention."""

    surface: ClassVar[Surface] = _on_graph(
        "GET",
        "/graph/entities/{entity}/neighbourhood",
        cli="graph neighbours",
        tool="graph_neighbourhood",
    )

    entity: EntityRef
    depth: Annotated[
        int, Whole(1, walks.MAX_DEPTH), Help(f"how many steps out (1 to {walks.MAX_DEPTH})")
    ] = 1
    limit: WalkLimit = None
    as_of: AsOf = None


@dataclass(frozen=True)
class Traverse(Op[list[walks.Path]]):
    """The paths from an entity, shortest first.

    Along relations that hold now: 1 to ``depth`` relations long, of ``types`` when
    given, following ``direction``, no entity twice on a path. A read: nothing is
    written."""

    surface: ClassVar[Surface] = _on_graph("POST", "/graph/traversals", cli="graph traverse")

    start: Annotated[Name, Help("the entity the paths start from")]
    depth: Annotated[
        int,
        Whole(1, walks.MAX_DEPTH),
        Help(f"at most this many relations (1 to {walks.MAX_DEPTH})"),
    ] = 2
    types: Annotated[Types, Cli("--type"), Help("only relations of these types")] = ()
    direction: Annotated[
        Literal["out", "in", "both"], Help("out, in or both ways along a relation")
    ] = "both"
    limit: WalkLimit = None


# -- reading facts for the graph ---------------------------------------------------------
@dataclass(frozen=True)
class Extract(Op[ExtractionReport]):
    """Read facts for the graph, by rules or a model.

    ``rules`` reads every fact (or ``facts``) again, as every write does inline; ``llm``
    reads up to ``limit`` (default 50) of the facts the chat model has not read, keeping
    only what each fact's words hold, and a second call reads the next ones; ``spacy``
    does the same with a spaCy pipeline (default 500), for entities. A model that fails
    writes nothing."""

    surface: ClassVar[Surface] = _on_graph(
        "POST",
        "/graph/extractions",
        writes=True,
        errors=(NotFound, Conflict, CapabilityMissing, UpstreamFailure),
        cli="graph extract",
    )

    # ``limit`` bounds a model extractor's batch; the rules read every fact.
    schema_rules: ClassVar[dict[str, object]] = {
        "if": {"required": ["limit"]},
        "then": {
            "required": ["extractor"],
            "properties": {"extractor": {"enum": [e for e in models.EXTRACTORS if e != "rules"]}},
        },
    }

    extractor: Annotated[
        models.Extractor,
        OneOf(models.EXTRACTORS),
        Cli("--with"),
        Help("rules: every fact again; llm, spacy: the facts that model has not read"),
    ] = "rules"
    facts: Annotated[
        Sequence[str] | None,
        Items(FACT_ID, limits.MAX_IDS, low=1, item="fact id"),
        Cli("--fact"),
        Help("only these facts"),
    ] = None
    limit: Annotated[
        int | None,
        Whole(1, limits.MAX_PAGE),
        Help(f"a model extractor's batch (at most {limits.MAX_PAGE})"),
    ] = None


OPS: tuple[type[Op[object]], ...] = (
    UpsertEntity,
    SearchEntities,
    GetEntity,
    DeleteEntity,
    DeclareRelationType,
    Relate,
    Relations,
    EndRelation,
    Neighbourhood,
    Traverse,
    Extract,
)


def _end(graph: Graph, scope: Scope, op: EndRelation) -> Relation:
    if op.hard:
        return graph.delete_relation(scope, op.relation_id)
    return graph.expire_relation(scope, op.relation_id, at=op.at)


# How the graph carries each out (``Memory.run`` reads this).
RUNS: dict[type, Callable[[Graph, Scope, Any], Any]] = {
    UpsertEntity: lambda g, scope, op: g.upsert_entity(
        scope,
        op.name,
        type=op.type,
        aliases=op.aliases,
        summary=op.summary,
        attributes=op.attributes,
    ),
    SearchEntities: lambda g, scope, op: g.search(
        scope, op.query, top_k=op.top_k, types=op.types, mode=op.mode
    ),
    GetEntity: lambda g, scope, op: g.entity(scope, op.entity),
    DeleteEntity: lambda g, scope, op: g.delete_entity(scope, op.entity),
    DeclareRelationType: lambda g, scope, op: g.declare_relation_type(
        scope, op.relation_type, single_valued=op.single_valued
    ),
    Relate: lambda g, scope, op: g.upsert_relation(
        scope,
        op.source,
        op.target,
        op.type,
        facts=op.facts,
        valid_at=op.valid_at,
        invalid_at=op.invalid_at,
        attributes=op.attributes,
    ),
    Relations: lambda g, scope, op: g.relations(
        scope,
        entity=op.entity,
        type=op.type,
        as_of=op.as_of,
        include_expired=op.include_expired,
        limit=op.limit,
    ),
    EndRelation: _end,
    Neighbourhood: lambda g, scope, op: g.neighbourhood(
        scope, op.entity, depth=op.depth, limit=op.limit, as_of=op.as_of
    ),
    Traverse: lambda g, scope, op: g.traverse(
        scope, op.start, depth=op.depth, types=op.types, direction=op.direction, limit=op.limit
    ),
    Extract: lambda g, scope, op: g.extract(
        scope, extractor=op.extractor, fact_ids=op.facts, limit=op.limit
    ),
}
