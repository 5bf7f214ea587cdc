"""The declared operations (:mod:`engram.core.ops`) as the wire carries them.

From one declaration this builds what the HTTP service and ``engram.Client`` both need:
the body model of an operation that takes one (camelCase, strict, closed), its query
parameters' names, how an operation is made from what was sent, and its answer model.
The bounds are the declaration's markers, said in JSON Schema; the library's checker
holds the values to them, with its own messages, on every surface alike.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Literal, Union, cast, get_args, get_origin
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Discriminator, Tag, WithJsonSchema, create_model
from pydantic import Field as PydanticField
from pydantic.alias_generators import to_camel
from pydantic.config import JsonDict

from engram.core import fields, ops
from engram.core.errors import NotFound
from engram.core.fields import Field, fields_of
from engram.core.graph import ops as graph_ops
from engram.core.models import SourceRef, WorkingPage
from engram.core.scopes import ResourceRef, Scope
from engram.wire import (
    ChangesOut,
    CompactionOut,
    DeletionOut,
    EntryOut,
    EntryPageOut,
    FactForgotten,
    FactOut,
    FactsForgotten,
    FactsOut,
    HealthReportOut,
    LedgerEntryOut,
    LedgerOut,
    RecalledFact,
    RecallOut,
    ResourceRefOut,
    SessionEntryOut,
    SessionNodeOut,
    SessionOut,
    SourceRefBody,
    Time,
    TrashedFact,
    TrashOut,
    TreeOut,
    Whole,
    WorkingPageOut,
)
from engram.wire.casing import snake
from engram.wire.consolidation import ConsolidationOut, WikiOut
from engram.wire.documents import DocumentOut, DocumentsOut, ProvenanceOut, ProvenancesOut
from engram.wire.graph import (
    EntitiesOut,
    EntityOut,
    ExtractionOut,
    FoundEntity,
    PathOut,
    PathsOut,
    PersonSubgraphOut,
    RelationOut,
    RelationsOut,
    RelationTypeOut,
    SubgraphOut,
)
from engram.wire.usage import FeedbackListOut, FeedbackOut, SignalOut, SignalsOut

Op = ops.Op[Any]
OpType = type[ops.Op[Any]]


@dataclass(frozen=True, slots=True)
class Where:
    """Whose memory a call acted on: the id the path named (an agent's), its scope, and
    whether the memory embeds."""

    key: str
    scope: Scope
    semantic: bool


@dataclass(frozen=True, slots=True)
class Answer:
    """What an operation answers over the wire, built from the operation and its result
    (no model: no body, as a 204 has none); ``placed``: built with the :class:`Where`
    of the call too, for an answer that says whose memory it is."""

    model: type[BaseModel] | None
    build: Callable[..., BaseModel | None]
    placed: bool = False

    def of(self, op: Any, result: Any, where: Where) -> BaseModel | None:
        return self.build(op, result, where) if self.placed else self.build(op, result)


def _working_page(op: ops.WorkingList, page: WorkingPage, where: Where) -> WorkingPageOut:
    assert isinstance(where.scope, ResourceRef), "working memory's routes are an agent's"
    return WorkingPageOut(
        agent_id=where.key,
        resource_ref=ResourceRefOut.of(where.scope),
        semantic=where.semantic,
        working=page.as_dict(),
        next_after=page.next_after,
        unreadable=list(page.unreadable) or None,
    )


def _forgotten_document(op: ops.ForgetDocument, existed: bool) -> None:
    if not existed:
        raise NotFound(f"no document {op.document_id!r} for this agent")


ANSWERS: dict[OpType, Answer] = {
    ops.Remember: Answer(FactOut, lambda op, fact: FactOut.of(fact)),
    ops.Recall: Answer(
        RecallOut, lambda op, hits: RecallOut(facts=[RecalledFact.of_hit(h) for h in hits])
    ),
    ops.Facts: Answer(
        FactsOut,
        lambda op, page: FactsOut(
            facts=[FactOut.of(f) for f in page.facts], next_before=page.next_before
        ),
    ),
    ops.GetFact: Answer(FactOut, lambda op, fact: FactOut.of(fact)),
    ops.FactProvenance: Answer(
        ProvenancesOut,
        lambda op, found: ProvenancesOut(provenance=[ProvenanceOut.of(p) for p in found]),
    ),
    ops.Correct: Answer(FactOut, lambda op, fact: FactOut.of(fact)),
    ops.Merge: Answer(FactOut, lambda op, fact: FactOut.of(fact)),
    ops.Forget: Answer(
        FactForgotten, lambda op, gone: FactForgotten(id=op.fact_id, forgotten=gone, hard=op.hard)
    ),
    ops.ForgetAll: Answer(FactsForgotten, lambda op, count: FactsForgotten(forgotten=count)),
    ops.Restore: Answer(FactOut, lambda op, fact: FactOut.of(fact)),
    ops.Compact: Answer(CompactionOut, lambda op, done: CompactionOut.of(done)),
    ops.DeleteTraces: Answer(DeletionOut, lambda op, receipt: DeletionOut.of(receipt)),
    ops.DeleteScope: Answer(DeletionOut, lambda op, receipt: DeletionOut.of(receipt)),
    ops.Trash: Answer(
        TrashOut,
        lambda op, page: TrashOut(
            facts=[TrashedFact.of_trashed(t) for t in page.facts], next_before=page.next_before
        ),
    ),
    ops.Ledger: Answer(
        LedgerOut,
        lambda op, page: LedgerOut(
            entries=[LedgerEntryOut.of(e) for e in page.entries], next_before=page.next_before
        ),
    ),
    ops.History: Answer(
        LedgerOut, lambda op, found: LedgerOut(entries=[LedgerEntryOut.of(e) for e in found])
    ),
    ops.LedgerChanges: Answer(ChangesOut, lambda op, page: ChangesOut.of(page)),
    ops.Revert: Answer(LedgerEntryOut, lambda op, entry: LedgerEntryOut.of(entry)),
    ops.Documents: Answer(
        DocumentsOut, lambda op, found: DocumentsOut(documents=[DocumentOut.of(d) for d in found])
    ),
    ops.GetDocument: Answer(DocumentOut, lambda op, doc: DocumentOut.of(doc, chunks=True)),
    ops.ForgetDocument: Answer(None, _forgotten_document),
    ops.EpisodicRecall: Answer(
        EntryPageOut,
        lambda op, page: EntryPageOut(
            entries=[SessionEntryOut.of(e) for e in page.entries], next_after=page.next_after
        ),
    ),
    ops.EpisodicTree: Answer(
        TreeOut, lambda op, roots: TreeOut(roots=[SessionNodeOut.of(n) for n in roots])
    ),
    ops.StartSession: Answer(SessionOut, lambda op, session: SessionOut.of(session)),
    ops.Health: Answer(HealthReportOut, lambda op, report: HealthReportOut.of(report)),
    ops.WorkingList: Answer(WorkingPageOut, _working_page, placed=True),
    ops.WorkingGet: Answer(EntryOut, lambda op, entry: EntryOut.of(entry)),
    ops.WorkingSet: Answer(EntryOut, lambda op, entry: EntryOut.of(entry)),
    ops.WorkingDelete: Answer(None, lambda op, existed: None),  # idempotent: 204 either way
    ops.Consolidate: Answer(ConsolidationOut, lambda op, report: ConsolidationOut.of(report)),
    ops.CompileWiki: Answer(WikiOut, lambda op, report: WikiOut.of(report)),
    ops.DetectFeedback: Answer(
        SignalsOut, lambda op, found: SignalsOut(signals=[SignalOut.of(s) for s in found])
    ),
    ops.RecordFeedback: Answer(FeedbackOut, lambda op, row: FeedbackOut.of(row)),
    ops.FactFeedback: Answer(
        FeedbackListOut,
        lambda op, rows: FeedbackListOut(feedback=[FeedbackOut.of(r) for r in rows]),
    ),
    graph_ops.UpsertEntity: Answer(EntityOut, lambda op, entity: EntityOut.of(entity)),
    graph_ops.SearchEntities: Answer(
        EntitiesOut, lambda op, hits: EntitiesOut(entities=[FoundEntity.of_hit(h) for h in hits])
    ),
    graph_ops.GetEntity: Answer(EntityOut, lambda op, entity: EntityOut.of(entity)),
    graph_ops.DeleteEntity: Answer(EntityOut, lambda op, entity: EntityOut.of(entity)),
    graph_ops.DeclareRelationType: Answer(
        RelationTypeOut,
        lambda op, changed: RelationTypeOut(
            type=op.relation_type, single_valued=op.single_valued, changed=changed
        ),
    ),
    graph_ops.Relate: Answer(RelationOut, lambda op, relation: RelationOut.of(relation)),
    graph_ops.Relations: Answer(
        RelationsOut,
        lambda op, found: RelationsOut(relations=[RelationOut.of(r) for r in found]),
    ),
    graph_ops.EndRelation: Answer(RelationOut, lambda op, relation: RelationOut.of(relation)),
    graph_ops.Neighbourhood: Answer(SubgraphOut, lambda op, found: SubgraphOut.of(found)),
    graph_ops.Traverse: Answer(
        PathsOut, lambda op, found: PathsOut(paths=[PathOut.of(p) for p in found])
    ),
    graph_ops.Extract: Answer(ExtractionOut, lambda op, report: ExtractionOut.of(report)),
}
# Where a person's answer holds more than other spelling: a fact is one of their memories.
PEOPLE_ANSWERS: dict[OpType, Answer] = {
    graph_ops.Neighbourhood: Answer(
        PersonSubgraphOut, lambda op, found: PersonSubgraphOut.of(found)
    ),
}


def answer(op: OpType, *, people: bool = False) -> Answer:
    """What the operation answers: on the people routes, the same answer in snake_case
    (spelled so when sent, see ``sent``)."""
    if not people:
        return ANSWERS[op]
    found = PEOPLE_ANSWERS.get(op)
    if found is not None:
        return found
    camel = ANSWERS[op]
    model = None if camel.model is None else snake(camel.model)
    return Answer(model, camel.build, camel.placed)


def sent(answer: BaseModel, *, people: bool = False) -> dict[str, Any]:
    """An answer as JSON, as the surface spells it (by alias: camelCase; for people, by
    field name: snake_case)."""
    dumped: dict[str, Any] = answer.model_dump(mode="json", by_alias=not people)
    return dumped


def sent_in_body(op: OpType) -> bool:
    return op.surface.method in ("POST", "PATCH", "PUT")


def wire_name(field: Field) -> str:
    return field.wire or to_camel(field.name)


def naming(op: OpType, *, people: bool = False) -> Callable[[Field], str]:
    """How a surface names the operation's parameters: on the wire, in its schema and
    in its messages."""
    if people and sent_in_body(op):
        return lambda f: wire_name(f) if f.in_path else (f.wire or f.name)  # snake_case
    return wire_name


def carried(op: OpType) -> tuple[Field, ...]:
    """The parameters sent in the body or the query (the path carries the rest)."""
    return tuple(f for f in fields_of(op) if not f.in_path)


def path_fields(op: OpType) -> tuple[Field, ...]:
    return tuple(f for f in fields_of(op) if f.in_path)


def wire_type(field: Field) -> Any:
    """The type a parameter is read as: strictly, with the declaration's schema."""
    base = field.base
    if base is SourceRef:
        kind: Any = SourceRefBody
    elif base is datetime:
        kind = Time
    elif base is int:
        kind = Annotated[int, Whole, WithJsonSchema(field.schema())]
    elif get_origin(base) in (Sequence, list, tuple):
        item: Any = get_args(base)[0]
        kind = Annotated[list[item], WithJsonSchema(field.schema())]
    elif get_origin(base) is Literal and all(isinstance(a, bool) for a in get_args(base)):
        kind = Annotated[bool, WithJsonSchema(field.schema())]  # 1 is not true (made() checks)
    elif get_origin(base) is Literal or field.marker is not None:
        kind = Annotated[base, WithJsonSchema(field.schema())]
    else:
        kind = base
    return kind | None if field.optional else kind


def body_model(op: OpType, *, people: bool = False) -> type[BaseModel]:
    """The request body of an operation sent in one: its carried parameters, camelCase
    (snake_case on the people routes)."""
    found = _BODIES.get((op, people))
    if found is None:
        found = _BODIES[(op, people)] = _body_model(op, people)
    return found


_BODIES: dict[tuple[OpType, bool], type[BaseModel]] = {}


def either_body(group: Sequence[OpType], *, people: bool = False) -> Any:
    """The body of a route that carries out one of several operations (``POST
    /deletions``: some facts, or a whole scope): exactly one of their closed bodies
    (``oneOf``), read as the one that shares the most parameters with what was sent
    (the first on a tie), so that a refusal names that operation's parameters."""
    names = {op.__name__: {naming(op, people=people)(f) for f in carried(op)} for op in group}

    def which(sent: Any) -> str:
        if isinstance(sent, BaseModel):
            return type(sent).__name__.removesuffix("Body").removeprefix("Person")
        keys = set(sent) if isinstance(sent, dict) else set()
        return max(names, key=lambda name: len(keys & names[name]))

    shapes = tuple(Annotated[body_model(op, people=people), Tag(op.__name__)] for op in group)
    return Annotated[Union[shapes], Discriminator(which)]  # noqa: UP007


def body_op(group: Sequence[OpType], body: BaseModel, *, people: bool = False) -> OpType:
    """Which of the route's operations a body read by :func:`either_body` is for."""
    return next(op for op in group if isinstance(body, body_model(op, people=people)))


def is_body_tag(part: object) -> bool:
    """Whether a place in a refused body is the name of the operation it was read as,
    which :func:`either_body` adds before the parameter's own name."""
    return part in _OP_NAMES


_OP_NAMES = frozenset(op.__name__ for op in ANSWERS)


def _body_model(op: OpType, people: bool) -> type[BaseModel]:
    spelt = naming(op, people=people)
    definitions: dict[str, Any] = {}
    for f in carried(op):
        default = ... if f.required else f.default
        if isinstance(default, tuple):
            default = None  # an empty list is the same as none
        kind = wire_type(f)
        if default is None and not f.optional:
            kind = kind | None
        definitions[f.name] = (kind, PydanticField(default, alias=spelt(f)))
    title = f"{'Person' if people else ''}{op.__name__}Body"
    config = ConfigDict(
        strict=True,
        extra="forbid",
        frozen=True,
        title=title,
        json_schema_extra=cast("JsonDict", dict(op.schema_rules)) or None,
    )
    doc = (op.__doc__ or "").strip()
    model = create_model(title, __config__=config, __doc__=doc, **definitions)
    built: type[BaseModel] = model
    return built


def made(op: OpType, given: dict[str, Any], *, people: bool = False) -> Op:
    """The operation from parameters read off the wire (by field name); ``None`` and
    absent are the same, and a nested source becomes the library's ``SourceRef``."""
    values: dict[str, Any] = {}
    for f in fields_of(op):
        value = given.get(f.name)
        if value is None and not (f.required and f.name in given):  # null may be a value
            continue
        if isinstance(value, SourceRefBody):
            value = SourceRef(value.sandbox_id, value.entry_index)
        values[f.name] = value
    made_op: Op = fields.made(op, values, naming(op, people=people))
    return made_op


def encoded(op: Op, *, people: bool = False) -> tuple[str, dict[str, Any]]:
    """The path of an operation (under its scope) and its other parameters as sent:
    camelCase (a person's bodies snake_case), JSON values, the unset and the defaults
    left out."""
    kind = type(op)
    spelt = naming(kind, people=people)
    values = {f.name: getattr(op, f.name) for f in path_fields(kind)}
    path = kind.surface.path.format(**{k: segment(str(v)) for k, v in values.items()})
    sent: dict[str, Any] = {}
    for f in carried(kind):
        value = getattr(op, f.name)
        if not f.required and (value is None or value == f.default):
            continue
        sent[spelt(f)] = _json(value)
    return path, sent


def segment(part: str) -> str:
    """One path segment, percent-encoded; dots too, so ``..`` is not a dot-segment."""
    return quote(part, safe="").replace(".", "%2E")


def _json(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, SourceRef):
        return {"sandboxId": value.sandbox_id, "entryIndex": value.entry_index}
    if isinstance(value, tuple):
        return list(value)
    return value
