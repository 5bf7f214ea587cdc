"""What engram says over the wire, defined once: request bodies and answers.

The HTTP service validates bodies with these models and answers with them (its OpenAPI
schema is theirs); ``engram.Client`` builds its request bodies from them; the command
line's ``--json`` prints the same answers. One casing per surface: the agent routes speak
camelCase (each answer's aliases), the people routes spec 003's snake_case, and the
command line prints field names (snake_case).

Bodies are strict and closed: ``true`` is not 1, ``"1"`` is not 1, and a field the body
does not have is refused, never ignored (a misspelt ``ttl_seconds`` would otherwise set a
key that never expires).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args, get_origin

from annotated_types import Interval
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
    create_model,
)
from pydantic.alias_generators import to_camel

from engram.core import fields, limits
from engram.core.agents import MAX_NAME_CHARS
from engram.core.conversations import MAX_SPEAKER_CHARS, Conversation, Turn
from engram.core.errors import InvalidInput
from engram.core.graph.rebuild import Difference, GraphDrift
from engram.core.health import HealthReport
from engram.core.models import (
    Change,
    ChangesPage,
    Compaction,
    DeletionReceipt,
    Fact,
    ForkResult,
    LedgerEntry,
    RecallHit,
    Trashed,
    WorkingEntry,
)
from engram.core.records import Agent, Entry, Session, SessionNode, Share
from engram.core.scopes import APP_PREFIX, MAX_PART_CHARS, PersonAppRef, ResourceRef, Scope
from engram.core.sessions import MAX_APPEND, MAX_ENTRY_BYTES
from engram.core.text import check_text
from engram.core.writing import KEPT


def parse_time(raw: object) -> object:
    """An ISO 8601 time with its UTC offset (``2024-05-01T09:30:00Z``); numbers are refused."""
    if isinstance(raw, datetime):
        return raw
    if not isinstance(raw, str):
        raise ValueError("must be an ISO 8601 time as a string, e.g. 2024-05-01T09:30:00Z")
    try:
        moment = datetime.fromisoformat(raw)
    except ValueError:
        raise ValueError(
            f"{raw[:40]!r} is not an ISO 8601 time, e.g. 2024-05-01T09:30:00Z"
        ) from None
    if moment.utcoffset() is None:
        raise ValueError("must carry its UTC offset (Z or +hh:mm)")
    return moment


Time = Annotated[
    datetime,
    BeforeValidator(parse_time),
    WithJsonSchema({"type": "string", "format": "date-time"}),
]


def whole(raw: object) -> object:
    """An integer as JSON Schema counts one: ``3.0`` is 3 (``3.5`` is left to be refused)."""
    if isinstance(raw, float) and raw.is_integer():
        return int(raw)
    return raw


Whole = BeforeValidator(whole)


def stored_id(value: str) -> str:
    """An id as the store could hold one: text without NUL or lone surrogates. Ids are
    looked up, not checked, by the library's calls, and PostgreSQL refuses a NUL
    outright: refused here, such an id is a 400 and never a storage failure."""
    try:
        return check_text(value, "id", max_chars=limits.MAX_ID_CHARS)
    except InvalidInput as exc:
        raise ValueError(exc.message) from None


StoredId = AfterValidator(stored_id)
FactId = Annotated[str, Field(min_length=1, max_length=limits.MAX_ID_CHARS), StoredId]


def shown(max_chars: int, *, blank: bool = True, empty: bool = False) -> WithJsonSchema:
    """Text's bounds as the library checks them (1 to ``max_chars`` characters, no NUL;
    ``blank``: whitespace alone is text too; ``empty``: so is no character), published as
    a declared parameter's are."""
    return WithJsonSchema(fields.Text(max_chars, strip=not blank, empty=empty).schema())


# A turn's words that fit a fact beside any speaker's name: "speaker: text".
MAX_TURN_CHARS = limits.MAX_FACT_CHARS - MAX_SPEAKER_CHARS - len(": ")
Part = Annotated[str, Field(min_length=1, max_length=MAX_PART_CHARS), shown(MAX_PART_CHARS)]
# A kind, a role, a tag, a sandbox's id: text the library strips and refuses when blank
# (limits.check_label), so the schema says so too.
Label = Annotated[
    str,
    Field(min_length=1, max_length=limits.MAX_LABEL_CHARS),
    shown(limits.MAX_LABEL_CHARS, blank=False),
]
Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME_CHARS), shown(MAX_NAME_CHARS)]
After = Annotated[str, Field(min_length=1, max_length=64), shown(64)]  # an id to page after
Count = Annotated[int, Interval(ge=0, le=limits.MAX_COUNT), Whole]  # 3.0 is 3
# An application as a person's routes name it: ``app:<uid>``, or its uid alone.
APP = WithJsonSchema(
    {
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_PART_CHARS - len(APP_PREFIX),
        "pattern": r"^(?!app:$)[^\x00]+$",
        "description": "the application, app:<uid> or its uid",
    }
)
# An application as allowances name it: always ``app:<uid>``.
SHARED_APP = WithJsonSchema(
    {"type": "string", "maxLength": MAX_PART_CHARS, "pattern": r"^app:[^\x00]+$"}
)


# -- request bodies --------------------------------------------------------------------
class Body(BaseModel):
    """A request body: strictly typed (nothing coerced) and closed (unknown fields refused)."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class AgentSpec(Body):
    name: Name
    resource_id: Part | None = Field(default=None, alias="resourceId")
    team_id: Part | None = Field(default=None, alias="teamId")


class SpawnSpec(Body):
    """A child whose resource already holds memory is refused (409) unless
    ``intoExisting``: then the parent's keys overwrite the child's and the facts merge."""

    name: Name
    resource_id: Part | None = Field(default=None, alias="resourceId")
    into_existing: bool = Field(default=False, alias="intoExisting")


class SourceRefBody(Body):
    sandbox_id: Label = Field(alias="sandboxId")
    entry_index: Annotated[int, Whole] = Field(alias="entryIndex", ge=0, le=limits.MAX_COUNT)


class EntryBody(Body):
    kind: Label
    content: Annotated[str, shown(MAX_ENTRY_BYTES, empty=True)] = Field(
        max_length=MAX_ENTRY_BYTES, description="at most 64 KiB once UTF-8 encoded"
    )
    role: Label | None = None
    at: Time | None = Field(default=None, description="when it happened (default: now)")
    data: Any = Field(default=None, description="any JSON up to 64 KiB")

    def entry(self) -> Entry:
        return Entry(self.kind, self.content, role=self.role, at=self.at, data=self.data)


class TurnBody(Body):
    speaker: Annotated[str, shown(MAX_SPEAKER_CHARS, blank=False)] = Field(
        min_length=1, max_length=MAX_SPEAKER_CHARS
    )
    # Published shorter than the service reads it: the turn is remembered as "speaker:
    # text", at most a fact's 2,000 characters, and a schema cannot add two lengths.
    text: Annotated[str, shown(MAX_TURN_CHARS, blank=False)] = Field(
        min_length=1, max_length=limits.MAX_FACT_CHARS
    )
    at: Time | None = Field(default=None, description="when it was said (default: now)")
    metadata: dict[str, Any] | None = None

    def turn(self) -> Turn:
        return Turn(self.speaker, self.text, self.at, self.metadata)


class NewConversation(Body):
    """Turns of one session (``sessionId``; a new session without it), each remembered
    as ``"speaker: text"`` with ``contextTurns`` neighbouring turns as its context;
    ``expectedNext`` makes a retry idempotent."""

    turns: list[TurnBody] = Field(min_length=1, max_length=MAX_APPEND)
    session_id: Annotated[str, shown(64, blank=False)] | None = Field(
        default=None, alias="sessionId", min_length=1, max_length=64
    )
    expected_next: Count | None = Field(default=None, alias="expectedNext")
    context_turns: Annotated[int, Whole] = Field(default=1, alias="contextTurns", ge=0, le=5)


class NewEntries(Body):
    """``expectedNext`` is where the caller believes the session ends: a retry whose
    entries are already there answers the same range; any other stale value is a 409."""

    entries: list[EntryBody] = Field(max_length=MAX_APPEND)
    expected_next: Count | None = Field(default=None, alias="expectedNext")


class MemoryWords(Body):
    """A person's memory in words (spec 003: empty or over 2000 characters is a 422)."""

    memory: Annotated[str, shown(limits.MAX_FACT_CHARS, blank=False)]


class ShareSpec(Body):
    source: Annotated[str, SHARED_APP]
    reader: Annotated[str, SHARED_APP]


# -- answers of the agent routes (camelCase) -------------------------------------------
class Answer(BaseModel):
    """An answer: built by field name, sent by alias (camelCase), printed by field name."""

    model_config = ConfigDict(
        alias_generator=to_camel, validate_by_name=True, frozen=True, defer_build=True
    )


def _unset_when_none() -> Any:
    return Field(default=None, exclude_if=lambda value: value is None)


class ErrorDetail(Answer):
    code: str
    message: str
    hint: str | None = _unset_when_none()


class ErrorAnswer(Answer):
    """Every refusal and failure: ``{"error": {"code", "message", "hint"?}}``."""

    error: ErrorDetail


class ResourceRefOut(Answer):
    resource_id: str
    team_id: str | None = _unset_when_none()

    @classmethod
    def of(cls, ref: ResourceRef) -> ResourceRefOut:
        return cls(resource_id=ref.resource_id, team_id=ref.team_id)


class PersonScopeOut(Answer):
    person: str
    app: str


def scope_out(scope: Scope) -> ResourceRefOut | PersonScopeOut:
    if isinstance(scope, PersonAppRef):
        return PersonScopeOut(person=scope.person, app=scope.app)
    return ResourceRefOut.of(scope)


class AgentOut(Answer):
    id: str
    name: str
    resource_ref: ResourceRefOut
    parent_id: str | None
    status: Literal["running", "ended"]
    created_at: datetime
    ended_at: datetime | None

    @classmethod
    def of(cls, agent: Agent) -> AgentOut:
        return cls(
            id=agent.id,
            name=agent.name,
            resource_ref=ResourceRefOut.of(agent.ref),
            parent_id=agent.parent_id,
            status=agent.status,
            created_at=agent.created_at,
            ended_at=agent.ended_at,
        )


class AgentPageOut(Answer):
    agents: list[AgentOut]
    next_after: str | None = _unset_when_none()


class ForkOut(Answer):
    """``sessionId``: the child's session a spawn started, forked from the parent's
    last entry (absent when the parent had none to continue)."""

    resource_ref: ResourceRefOut
    working_keys_copied: int
    semantic_facts_copied: int
    session_id: str | None = _unset_when_none()

    @classmethod
    def of(cls, fork: ForkResult) -> ForkOut:
        return cls(
            resource_ref=ResourceRefOut.of(fork.ref),
            working_keys_copied=fork.working_keys_copied,
            semantic_facts_copied=fork.facts_copied,
            session_id=fork.session_id,
        )


class SpawnOut(Answer):
    agent: AgentOut
    fork: ForkOut


class SessionOut(Answer):
    id: str
    scope: ResourceRefOut | PersonScopeOut
    name: str | None
    fork_of: SourceRefOut | None
    depth: int
    created_at: datetime
    next_index: int

    @classmethod
    def of(cls, session: Session) -> SessionOut:
        fork = session.fork_of
        return cls(
            id=session.id,
            scope=scope_out(session.scope),
            name=session.name,
            fork_of=None
            if fork is None
            else SourceRefOut(sandbox_id=fork.sandbox_id, entry_index=fork.entry_index),
            depth=session.depth,
            created_at=session.created_at,
            next_index=session.next_index,
        )


class AppendOut(Answer):
    """The indexes written: ``start`` up to (not including) ``stop``."""

    session_id: str
    start: int
    stop: int


class SessionEntryOut(Answer):
    session_id: str
    index: int
    kind: str
    role: str | None
    content: str
    at: datetime
    data: Any

    @classmethod
    def of(cls, entry: Entry) -> SessionEntryOut:
        assert entry.session_id is not None and entry.index is not None and entry.at
        return cls(
            session_id=entry.session_id,
            index=entry.index,
            kind=entry.kind,
            role=entry.role,
            content=entry.content,
            at=entry.at,
            data=entry.data,
        )


class EntryPageOut(Answer):
    entries: list[SessionEntryOut]
    next_after: datetime | None = _unset_when_none()


class SessionNodeOut(Answer):
    session: SessionOut
    entries: list[SessionEntryOut]
    children: list[SessionNodeOut]

    @classmethod
    def of(cls, node: SessionNode) -> SessionNodeOut:
        return cls(
            session=SessionOut.of(node.session),
            entries=[SessionEntryOut.of(e) for e in node.entries],
            children=[cls.of(c) for c in node.children],
        )


class TreeOut(Answer):
    roots: list[SessionNodeOut]


class EntryOut(Answer):
    key: str
    value: Any
    version: int
    updated_at: datetime
    expires_at: datetime | None

    @classmethod
    def of(cls, entry: WorkingEntry) -> EntryOut:
        return cls(
            key=entry.key,
            value=entry.value,
            version=entry.version,
            updated_at=entry.updated_at,
            expires_at=entry.expires_at,
        )


class WorkingPageOut(Answer):
    agent_id: str
    resource_ref: ResourceRefOut
    semantic: bool
    working: dict[str, Any]
    next_after: str | None = _unset_when_none()
    # Keys whose value was stored before values' depth was limited and nests deeper:
    # reading one answers 422; overwrite or delete it.
    unreadable: list[str] | None = _unset_when_none()


class SourceRefOut(Answer):
    sandbox_id: str
    entry_index: int


class _FactOut(Answer):
    id: str
    scope: ResourceRefOut | PersonScopeOut
    content: str
    source_ref: SourceRefOut | None
    verified: bool
    metadata: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    corrected_by: str | None
    corrected_at: datetime | None


def _kept(field: fields.Field) -> tuple[Any, Any]:
    kind = field.base
    if get_origin(kind) in (Sequence, tuple):  # sent as a JSON list, read back as one
        kind = list[get_args(kind)[0]]  # type: ignore[misc]
    return (kind | None if field.optional else kind), ...


if TYPE_CHECKING:
    _Kept = _FactOut
else:
    # A fact's kept fields (its type, tags, context, strength, expiry, ...), answered
    # under their own names and typed as the remember operation declares them.
    _Kept = create_model("_Kept", __base__=_FactOut, **{f.name: _kept(f) for f in KEPT})


class FactOut(_Kept):
    @classmethod
    def of(cls, fact: Fact) -> FactOut:
        return cls(**_fact_fields(fact))


def _fact_fields(fact: Fact) -> dict[str, Any]:
    source = fact.source_ref
    return {
        "id": fact.id,
        "scope": scope_out(fact.scope),
        "content": fact.content,
        "source_ref": None
        if source is None
        else SourceRefOut(sandbox_id=source.sandbox_id, entry_index=source.entry_index),
        "verified": fact.verified,
        "metadata": fact.metadata,
        "created_at": fact.created_at,
        "updated_at": fact.updated_at,
        "corrected_by": fact.corrected_by,
        "corrected_at": fact.corrected_at,
        **{f.name: getattr(fact, f.name) for f in KEPT},
    }


class RecalledFact(FactOut):
    """A recalled fact: its fused score (the order of this query's hits), its rank in each
    half (1-based, or null), its relevance to the query in [0, 1], one scale for every
    query (``minScore`` filters by it), and, when a reranker is configured, the reranker's
    score, which orders the best hits of a hybrid recall ahead of the rest (null on the
    hits it did not read)."""

    score: float
    text_rank: int | None
    vector_rank: int | None
    relevance: float
    rerank_score: float | None

    @classmethod
    def of_hit(cls, hit: RecallHit) -> RecalledFact:
        return cls(
            **_fact_fields(hit.fact),
            score=hit.score,
            text_rank=hit.text_rank,
            vector_rank=hit.vector_rank,
            relevance=hit.relevance,
            rerank_score=hit.rerank_score,
        )


class FactsOut(Answer):
    facts: list[FactOut]
    next_before: str | None = _unset_when_none()


class RecallOut(Answer):
    facts: list[RecalledFact]


class FactForgotten(Answer):
    id: str
    forgotten: bool
    hard: bool = False


class FactsForgotten(Answer):
    forgotten: int


class ConversationOut(Answer):
    """The session the turns went to, the entry indexes they took (``first`` to
    ``first + count - 1``), and one fact per turn, in order."""

    session_id: str
    first: int
    count: int
    facts: list[FactOut]

    @classmethod
    def of(cls, done: Conversation) -> ConversationOut:
        return cls(
            session_id=done.session_id,
            first=done.entries.start,
            count=len(done.entries),
            facts=[FactOut.of(f) for f in done.facts],
        )


class TrashedFact(FactOut):
    deleted_at: datetime
    purge_at: datetime | None

    @classmethod
    def of_trashed(cls, trashed: Trashed) -> TrashedFact:
        return cls(
            **_fact_fields(trashed.fact), deleted_at=trashed.deleted_at, purge_at=trashed.purge_at
        )


class TrashOut(Answer):
    facts: list[TrashedFact]
    next_before: str | None = _unset_when_none()


class DeletionOut(Answer):
    """What a deletion for good removed: live facts, trashed facts, and the ledger items
    whose before-states it erased."""

    facts: int
    trashed: int
    ledger_items_scrubbed: int

    @classmethod
    def of(cls, receipt: DeletionReceipt) -> DeletionOut:
        return cls(
            facts=receipt.facts,
            trashed=receipt.trashed,
            ledger_items_scrubbed=receipt.ledger_items_scrubbed,
        )


class ChangeOut(Answer):
    kind: str
    object_id: str
    action: str

    @classmethod
    def of(cls, change: Change) -> ChangeOut:
        return cls(kind=change.kind, object_id=change.object_id, action=change.action)


class ChangesOut(Answer):
    """What one ledger entry changed, a page of it (``nextAfter`` when more follow)."""

    changes: list[ChangeOut]
    next_after: int | None = _unset_when_none()

    @classmethod
    def of(cls, page: ChangesPage) -> ChangesOut:
        return cls(changes=[ChangeOut.of(c) for c in page.changes], next_after=page.next_after)


class LedgerEntryOut(Answer):
    """One write: what (``op``), who (``actor``) and through what (``via``), when, what it
    changed, and its links to the entry it reverts and the one that reverted it."""

    seq: int
    op: str
    at: datetime
    actor: str
    via: str
    turn_user: str | None
    request_id: str | None
    reverts: int | None
    reverted_by: int | None
    scrubbed: bool
    changes: list[ChangeOut]
    change_count: int

    @classmethod
    def of(cls, entry: LedgerEntry) -> LedgerEntryOut:
        return cls(
            seq=entry.seq,
            op=entry.op,
            at=entry.at,
            actor=entry.actor,
            via=entry.via,
            turn_user=entry.turn_user,
            request_id=entry.request_id,
            reverts=entry.reverts,
            reverted_by=entry.reverted_by,
            scrubbed=entry.scrubbed,
            changes=[ChangeOut.of(c) for c in entry.changes],
            change_count=entry.change_count,
        )


class LedgerOut(Answer):
    entries: list[LedgerEntryOut]
    next_before: int | None = _unset_when_none()


class CompactionOut(Answer):
    removed: int
    expired: list[str]
    over_cap: list[str]

    @classmethod
    def of(cls, result: Compaction) -> CompactionOut:
        return cls(removed=result.removed, expired=result.expired, over_cap=result.over_cap)


class Health(Answer):
    ok: bool
    semantic: bool


class TypeCountOut(Answer):
    type: str | None
    live: int
    trashed: int


class StrengthOut(Answer):
    """The live facts' strengths (null without facts); ``offDefault``: not at 1.0."""

    min: float | None
    p50: float | None
    max: float | None
    off_default: int


class FactHealthOut(Answer):
    live: int
    trashed: int
    by_type: list[TypeCountOut]
    verified: int
    without_vector: int
    strength: StrengthOut


class FullTextOut(Answer):
    """SQLite: rows of the FTS5 index; PostgreSQL: facts whose words hold a lexeme."""

    rows: int
    facts: int
    in_step: bool


class VectorIndexOut(Answer):
    """The scopes' own approximate vector indexes: how many have one, the vectors they
    were built with, the live ones searched exactly beside them, their bytes (SQLite:
    files beside the database; PostgreSQL: indexes, in the database's bytes), and on
    SQLite the erased vectors a file still holds (null on PostgreSQL)."""

    scopes: int
    vectors: int
    beside: int
    bytes: int
    to_overwrite: int | None


class LedgerHealthOut(Answer):
    entries: int
    scrubbed: int


class SessionHealthOut(Answer):
    sessions: int
    entries: int


class EntityCountsOut(Answer):
    """Entities by origin; ``total`` counts every one."""

    total: int
    asserted: int
    extracted: int
    imported: int


class RelationCountsOut(Answer):
    """``live``: neither ended nor retired; ``ended``: ``invalidAt`` set, not retired;
    ``expired``: retired."""

    live: int
    ended: int
    expired: int


class BacklogOut(Answer):
    """Live facts each model extractor has not read for their current words."""

    llm: int
    spacy: int


class DifferenceOut(Answer):
    """``missing``: in the rules' rebuild, not stored; ``extra``: stored, not rebuilt."""

    missing: int
    extra: int


class GraphDriftOut(Answer):
    """The stored graph against the rules' rebuild from the scope's live facts."""

    facts_read: int
    entities: DifferenceOut
    mentions: DifferenceOut
    groundings: DifferenceOut
    relations: DifferenceOut
    in_step: bool


class GraphHealthOut(Answer):
    """``orphans``: extracted entities no live fact grounds; ``queued``: facts waiting
    for the rules; ``drift``: null unless asked for (``graphDrift=true``)."""

    entities: EntityCountsOut
    relations: RelationCountsOut
    aliases: int
    mentions: int
    orphans: int
    queued: int
    backlog: BacklogOut
    drift: GraphDriftOut | None


class DocumentHealthOut(Answer):
    documents: int
    chunks: int
    chunks_without_fact: int


class FeedbackHealthOut(Answer):
    """Retrieval feedback signals, and those consolidation has not applied yet."""

    signals: int
    pending: int


class StaleOut(Answer):
    """What is kept past its time: expired working keys, facts in the trash and ledger
    entries older than their retention (``null``: kept for ever), the oldest entry's
    time, and session entries hidden while their facts are in the trash."""

    working_keys: int
    trash_past_retention: int
    trash_retention_seconds: int | None
    ledger_past_retention: int
    ledger_retention_seconds: int | None
    ledger_oldest_at: datetime | None
    session_entries_hidden: int


class ModelOut(Answer):
    model: str
    dimension: int


class StorageOut(Answer):
    """SQLite: the file's, its log's and its free pages' bytes; PostgreSQL: the
    database's bytes (``walBytes`` and ``freeBytes`` null). ``scrubDue``: a write erased
    words for good since the store's files were last scrubbed (``engram scrub``)."""

    backend: str
    bytes: int
    wal_bytes: int | None
    free_bytes: int | None
    scrub_due: bool


class HealthReportOut(Answer):
    """A scope's health (``storage`` null), or the store's (``scope`` null)."""

    scope: ResourceRefOut | PersonScopeOut | None
    schema_version: int
    model: ModelOut | None
    facts: FactHealthOut
    full_text: FullTextOut
    vector_index: VectorIndexOut
    working_keys: int
    ledger: LedgerHealthOut
    sessions: SessionHealthOut
    graph: GraphHealthOut
    documents: DocumentHealthOut
    feedback: FeedbackHealthOut
    stale: StaleOut
    storage: StorageOut | None

    @classmethod
    def of(cls, report: HealthReport) -> HealthReportOut:
        facts, strength, model, storage = (
            report.facts,
            report.facts.strength,
            report.model,
            report.storage,
        )
        graph, stale, index = report.graph, report.stale, report.vector_index
        return cls(
            scope=None if report.scope is None else scope_out(report.scope),
            schema_version=report.schema_version,
            model=None if model is None else ModelOut(model=model.model, dimension=model.dimension),
            facts=FactHealthOut(
                live=facts.live,
                trashed=facts.trashed,
                by_type=[
                    TypeCountOut(type=t.type, live=t.live, trashed=t.trashed) for t in facts.by_type
                ],
                verified=facts.verified,
                without_vector=facts.without_vector,
                strength=StrengthOut(
                    min=strength.min,
                    p50=strength.p50,
                    max=strength.max,
                    off_default=strength.off_default,
                ),
            ),
            full_text=FullTextOut(
                rows=report.fulltext.rows,
                facts=report.fulltext.facts,
                in_step=report.fulltext.in_step,
            ),
            vector_index=VectorIndexOut(
                scopes=index.scopes,
                vectors=index.vectors,
                beside=index.beside,
                bytes=index.bytes,
                to_overwrite=index.to_overwrite,
            ),
            working_keys=report.working_keys,
            ledger=LedgerHealthOut(entries=report.ledger.entries, scrubbed=report.ledger.scrubbed),
            sessions=SessionHealthOut(
                sessions=report.sessions.sessions, entries=report.sessions.entries
            ),
            graph=GraphHealthOut(
                entities=EntityCountsOut(
                    total=graph.entities.total,
                    asserted=graph.entities.asserted,
                    extracted=graph.entities.extracted,
                    imported=graph.entities.imported,
                ),
                relations=RelationCountsOut(
                    live=graph.relations.live,
                    ended=graph.relations.ended,
                    expired=graph.relations.expired,
                ),
                aliases=graph.aliases,
                mentions=graph.mentions,
                orphans=graph.orphans,
                queued=graph.queued,
                backlog=BacklogOut(llm=graph.backlog.llm, spacy=graph.backlog.spacy),
                drift=None if graph.drift is None else _drift_out(graph.drift),
            ),
            documents=DocumentHealthOut(
                documents=report.documents.documents,
                chunks=report.documents.chunks,
                chunks_without_fact=report.documents.chunks_without_fact,
            ),
            feedback=FeedbackHealthOut(
                signals=report.feedback.signals, pending=report.feedback.pending
            ),
            stale=StaleOut(
                working_keys=stale.working_keys,
                trash_past_retention=stale.trash_past_retention,
                trash_retention_seconds=_seconds(stale.trash_retention),
                ledger_past_retention=stale.ledger_past_retention,
                ledger_retention_seconds=_seconds(stale.ledger_retention),
                ledger_oldest_at=stale.ledger_oldest,
                session_entries_hidden=stale.session_entries_hidden,
            ),
            storage=None
            if storage is None
            else StorageOut(
                backend=storage.backend,
                bytes=storage.bytes,
                wal_bytes=storage.wal_bytes,
                free_bytes=storage.free_bytes,
                scrub_due=storage.scrub_due,
            ),
        )


def _drift_out(drift: GraphDrift) -> GraphDriftOut:
    def difference(d: Difference) -> DifferenceOut:
        return DifferenceOut(missing=d.missing, extra=d.extra)

    return GraphDriftOut(
        facts_read=drift.facts_read,
        entities=difference(drift.entities),
        mentions=difference(drift.mentions),
        groundings=difference(drift.groundings),
        relations=difference(drift.relations),
        in_step=drift.in_step,
    )


def _seconds(duration: timedelta | None) -> int | None:
    return None if duration is None else int(duration.total_seconds())


# -- answers of the people routes (spec 003: snake_case) -------------------------------
class PeopleAnswer(BaseModel):
    model_config = ConfigDict(validate_by_name=True, frozen=True, defer_build=True)


class PersonMemory(PeopleAnswer):
    id: str
    memory: str
    created_at: datetime
    updated_at: datetime
    corrected_by: str | None
    corrected_at: datetime | None

    @classmethod
    def of(cls, fact: Fact) -> PersonMemory:
        return cls(
            id=fact.id,
            memory=fact.content,
            created_at=fact.created_at,
            updated_at=fact.updated_at,
            corrected_by=fact.corrected_by,
            corrected_at=fact.corrected_at,
        )


class FoundMemory(PersonMemory):
    score: float
    remembered_by: str | None = Field(
        default=None, alias="rememberedBy", exclude_if=lambda value: value is None
    )


class AppRemembering(PeopleAnswer):
    app: str
    count: int


class AppsOut(PeopleAnswer):
    """The applications that remember the person, and how many memories each keeps."""

    apps: list[AppRemembering]


class AppMemories(PeopleAnswer):
    app: str
    count: int
    memories: list[PersonMemory]
    next_before: str | None = Field(
        default=None, alias="nextBefore", exclude_if=lambda value: value is None
    )


class FoundMemories(PeopleAnswer):
    app: str
    memories: list[FoundMemory]


class Corrected(PeopleAnswer):
    corrected: bool
    memory: PersonMemory


class Forgotten(PeopleAnswer):
    forgotten: int


class ShareOut(PeopleAnswer):
    source: str
    reader: str
    allowed_at: datetime

    @classmethod
    def of(cls, share: Share) -> ShareOut:
        return cls(source=share.source, reader=share.reader, allowed_at=share.allowed_at)


class SharesOut(PeopleAnswer):
    shares: list[ShareOut]
