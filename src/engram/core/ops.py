"""Every operation on an agent's facts, declared once.

An operation is a frozen dataclass: its fields are its parameters, typed and bounded by
the markers of :mod:`engram.core.fields`; its docstring is its help; its ``surface``
names what the edges need (the HTTP method and path, the command line's name, the agent
tool's, whether it writes, which errors it can raise). Making one checks it: an
operation that exists is valid. ``Memory.run(scope, op)`` carries it out, and the
library's keyword methods (``remember``, ``recall``, …) are conveniences over it.

The HTTP routes and their OpenAPI schema, ``engram.Client``, the command line's options
and the agent tools are built from these declarations: a parameter added here is a
parameter everywhere.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, ClassVar, Generic, Literal, TypeVar

from engram.core import limits
from engram.core.documents.models import Document, Provenance
from engram.core.errors import (
    CapabilityMissing,
    Conflict,
    EngramError,
    InvalidInput,
    NotFound,
    TooLarge,
    Unavailable,
    Unprocessable,
    UpstreamFailure,
)
from engram.core.fields import (
    Checked,
    Cli,
    Help,
    Items,
    Json,
    OneOf,
    Path,
    Real,
    Text,
    Value,
    Whole,
    Wire,
    called,
    check,
)
from engram.core.health import HealthReport
from engram.core.models import (
    ChangesPage,
    Compaction,
    DeletionReceipt,
    Fact,
    FactPage,
    JSONValue,
    LedgerEntry,
    LedgerPage,
    RecallHit,
    SourceRef,
    TrashPage,
    WorkingEntry,
    WorkingPage,
)
from engram.core.records import (
    ConsolidationReport,
    EntryPage,
    Feedback,
    Session,
    SessionNode,
    Signal,
    WikiReport,
)

R = TypeVar("R", covariant=True)
Method = Literal["GET", "POST", "PATCH", "PUT", "DELETE"]
EMBEDS = (CapabilityMissing, UpstreamFailure, Unavailable)  # what asking the model can raise
MERGE_MIN, MERGE_MAX = 2, 10  # facts one merge folds
# A page's cursor, ``created.seq``: every text of this pattern is a position (a schema
# can say so; "a cursor a page gave" it cannot). Base64 cursors of old are read too.
CURSOR_PATTERN = r"^[0-9]{1,18}\.[0-9]{1,18}$"
TRASH_CURSOR_PATTERN = r"^[0-9]{1,18}\.[^\x00]{1,64}$"  # deleted_us.fact_id


@dataclass(frozen=True, slots=True)
class Surface:
    """Where an operation is offered. ``path`` is under ``/agents/{agent_id}``; a field
    marked :class:`~engram.core.fields.Path` fills its ``{name}``. ``errors`` are those a
    valid request can still meet (InvalidInput is every operation's)."""

    method: Method
    path: str
    status: int = 200
    writes: bool = False
    errors: tuple[type[EngramError], ...] = ()
    cli: str | None = None
    tool: str | None = None
    facts: bool = True  # offered where facts are: memory enabled, an embedder configured
    tag: str = "facts"  # the group it is listed under
    name: str = ""  # how the edges name it (default: the class's name in snake_case)
    # An older path that also answers it, beside another operation's, for the clients
    # written before it had its own; it is not published.
    legacy: str = ""
    # Also offered on what an application remembers of a person, under
    # ``/api/v1/apps/{app}`` (the person is the verified caller, never a parameter).
    people: bool = False
    # The parameter of a compare-and-set, which HTTP's conditional headers may also
    # give (``If-Match: "N"``; ``If-None-Match: *`` for 0, "must be unset"). An answer
    # that carries a ``version`` sends it as the ``ETag`` too.
    precondition: str = ""


@dataclass(frozen=True, slots=True)
class Order:
    """Two times of an operation in order: ``earlier`` before ``later`` (``strict``) or
    not after it. JSON Schema cannot compare two values, so an order is published as
    the operation's ``x-order`` beside its schema, and checked when it is made."""

    earlier: str
    later: str
    strict: bool = True

    def check(self, op: object) -> None:
        first, then = getattr(op, self.earlier), getattr(op, self.later)
        if first is None or then is None or (first < then if self.strict else first <= then):
            return
        kind = type(op)
        a, b = called(kind, self.earlier), called(kind, self.later)
        if self.strict:
            message = f"{a} ({first.isoformat()}) must be earlier than {b} ({then.isoformat()})"
        else:
            message = f"{a} ({first.isoformat()}) must not be later than {b} ({then.isoformat()})"
        raise InvalidInput(message)


class Op(Generic[R]):
    """An operation whose result is an ``R``; checked when made."""

    surface: ClassVar[Surface]
    order: ClassVar[tuple[Order, ...]] = ()  # its times that must come in order
    # Rules between the parameters of a body that JSON Schema can say (``if``/``then``
    # over the parameters' names, which are the same in both casings): published with
    # its body, so that a client generated from the schema never sends what they refuse.
    schema_rules: ClassVar[dict[str, object]] = {}

    def __post_init__(self) -> None:
        check(self)
        for order in self.order:
            order.check(self)
        self.rules()

    def rules(self) -> None:
        """Rules between parameters, beyond each one's own bounds."""

    def asks_embedder(self) -> bool:
        """Whether carrying it out needs the store's embedder (meaning, not only words)."""
        return type(self).surface.facts

    def changes(self) -> bool:
        """Whether carrying it out may write (an ended agent's memory is only read)."""
        return type(self).surface.writes


def summary(op: type[Op[object]]) -> str:
    """The first line of an operation's help, without its full stop."""
    return (op.__doc__ or "").strip().splitlines()[0].rstrip(".")


def name_of(op: type[Op[object]]) -> str:
    """How the edges name an operation: ``forget_all`` for ForgetAll. (Not a method: an
    operation's parameters may be called ``name`` or ``summary``.)"""
    return op.surface.name or re.sub(r"(?<!^)(?=[A-Z])", "_", op.__name__).lower()


# -- the parameters fact operations share ------------------------------------------------
FACT_ID = Text(limits.MAX_ID_CHARS, strip=False, called="fact id")  # as engram gives them
FactId = Annotated[str, FACT_ID, Path(), Help("a fact's id")]
Content = Annotated[str, Text(limits.MAX_FACT_CHARS), Help("the fact's words")]
Label = Annotated[str, Text(limits.MAX_LABEL_CHARS)]
Tags = Annotated[
    Sequence[str],
    Items(Text(limits.MAX_LABEL_CHARS), limits.MAX_TAGS, sort=True, item="tag"),
    Cli("--tag"),
]
Hard = Annotated[bool, Help("delete for good (no trash; the ledger keeps none of its words)")]
PageSize = Annotated[
    int | None,
    Whole(1, limits.MAX_PAGE),
    Help(f"page size (default {limits.DEFAULT_PAGE}, at most {limits.MAX_PAGE})"),
]
SOURCE_REF = Checked(
    lambda value, name: limits.check_source_ref(value),
    (("type", "object"),),
)


# -- writing -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Remember(Op[Fact]):
    """Remember a fact.

    The same words again answer the stored fact. ``context`` is text that helps find
    the fact without being part of it (say, the turns of a conversation around it):
    full-text recall matches it. ``verified`` is never given: it follows from
    ``source_ref``."""

    surface: ClassVar[Surface] = Surface(
        "POST",
        "/facts",
        status=201,
        writes=True,
        errors=(Conflict, TooLarge, *EMBEDS),
        cli="remember",
        tool="memory_add",
    )
    order: ClassVar[tuple[Order, ...]] = (Order("created_at", "expires_at"),)

    content: Content
    source_ref: Annotated[
        SourceRef | None,
        SOURCE_REF,
        Cli("--source"),
        Help("the session entry the fact came from (makes it verified)"),
    ] = None
    type: Annotated[Label | None, Help("the fact's type")] = None
    tags: Annotated[Tags, Help("labels to filter recall by")] = ()
    metadata: Annotated[
        dict[str, JSONValue] | None,
        Json(),
        Help("a JSON object up to 16 KiB, nested at most 64 levels"),
    ] = None
    created_at: Annotated[datetime | None, Help("when it was learned (default: now)")] = None
    context: Annotated[
        str | None,
        Text(limits.MAX_CONTEXT_CHARS, empty=True),
        Help("text that helps find the fact without being part of it"),
    ] = None
    strength: Annotated[
        float,
        Real(0, limits.MAX_STRENGTH),
        Help("0 to 10 (default 1): multiplies the fact's score in recall"),
    ] = 1.0
    expires_at: Annotated[
        datetime | None,
        Help("from then on it is not recalled or listed, and consolidation trashes it"),
    ] = None


@dataclass(frozen=True)
class Correct(Op[Fact]):
    """Change a fact's words.

    In place: embedded again, ``created_at`` stays; a conflict when another fact of the
    scope already holds these words."""

    surface: ClassVar[Surface] = Surface(
        "PATCH",
        "/facts/{fact_id}",
        writes=True,
        errors=(NotFound, Conflict, TooLarge, *EMBEDS),
        cli="correct",
        tool="memory_update",
    )

    fact_id: FactId
    content: Content
    by: Annotated[Label | None, Help("who corrects it")] = None


@dataclass(frozen=True)
class Merge(Op[Fact]):
    """Fold 2 to 10 facts into one.

    One fact of ``content``, in one ledger entry: the
    merged fact carries the union of their tags, their type when they share one, and
    the highest strength; the others go to the trash (``hard``: for good). When
    ``content`` is one of theirs (or another live fact's) words, that fact stays and
    takes the others' place. Without ``content``, the memory's chat model writes the
    merged words, which must cite every figure and name the facts hold."""

    surface: ClassVar[Surface] = Surface(
        "POST",
        "/merges",
        status=201,
        writes=True,
        errors=(NotFound, Conflict, TooLarge, *EMBEDS),
        cli="merge",
        tool="memory_merge",
    )

    fact_ids: Annotated[
        Sequence[str],
        Items(
            FACT_ID,
            MERGE_MAX,
            low=MERGE_MIN,
            item="id",
        ),
        Help(f"the facts to fold, {MERGE_MIN} to {MERGE_MAX}"),
    ]
    content: Annotated[
        str | None,
        Text(limits.MAX_FACT_CHARS),
        Help("the merged fact's words (default: the chat model writes them)"),
    ] = None
    hard: Hard = False

    def rules(self) -> None:
        if not MERGE_MIN <= len(self.fact_ids) <= MERGE_MAX:
            name = called(Merge, "fact_ids")
            raise InvalidInput(
                f"{name} must name {MERGE_MIN} to {MERGE_MAX} facts, got {len(self.fact_ids)}"
            )


@dataclass(frozen=True)
class Forget(Op[bool]):
    """Forget one fact (to the trash unless hard).

    Idempotent: the answer says whether it was there. Softly, the fact goes to the trash
    (restore brings it back); ``hard`` deletes it for good."""

    surface: ClassVar[Surface] = Surface(
        "DELETE",
        "/facts/{fact_id}",
        writes=True,
        errors=(Conflict,),
        cli="forget",
        tool="memory_delete",
    )

    fact_id: FactId
    hard: Hard = False


@dataclass(frozen=True)
class ForgetAll(Op[int]):
    """Forget every fact of the scope.

    Confirming ``expected_count``, how many the caller was shown: when there are more
    now, nothing is forgotten (a conflict). Softly (to the trash) unless ``hard``."""

    surface: ClassVar[Surface] = Surface(
        "DELETE",
        "/facts",
        writes=True,
        errors=(Conflict,),
        cli="forget-all",
    )

    expected_count: Annotated[
        int,
        Whole(),
        Wire("count"),
        Help("how many you were shown: when there are more now, none is forgotten"),
    ]
    hard: Hard = False


@dataclass(frozen=True)
class Restore(Op[Fact]):
    """Bring a softly forgotten fact back from the trash.

    Same id and times; a conflict when the scope holds its words again, as another
    fact."""

    surface: ClassVar[Surface] = Surface(
        "POST",
        "/trash/{fact_id}/restore",
        writes=True,
        errors=(NotFound, Conflict),
        cli="unforget",
        facts=False,
        tag="history",
    )

    fact_id: FactId


@dataclass(frozen=True)
class DeleteTraces(Op[DeletionReceipt]):
    """Delete facts for good, live or trashed.

    Unknown ids are skipped. Their words are then nowhere in the store: the ledger's
    before-states of them are erased too (those entries are marked scrubbed)."""

    surface: ClassVar[Surface] = Surface(
        "POST", "/deletions", writes=True, errors=(Conflict,), facts=False, tag="history"
    )

    fact_ids: Annotated[
        Sequence[str],
        Items(FACT_ID, limits.MAX_IDS, low=1, item="id"),
        Help(f"the facts to delete, 1 to {limits.MAX_IDS}"),
    ]


@dataclass(frozen=True)
class DeleteScope(Op[DeletionReceipt]):
    """Delete every fact of the scope for good, live and trashed.

    Confirming ``expected_count``, how many facts (live and trashed) the caller saw:
    when more would go, nothing is deleted (a conflict). With ``turn_user_id``, only the
    facts written for that second user. The ledger's before-states of them are erased
    too; working memory stays."""

    surface: ClassVar[Surface] = Surface(
        "POST", "/deletions", writes=True, errors=(Conflict,), facts=False, tag="history"
    )

    scope: Annotated[Literal[True], Help("every fact of the scope: always true")]
    expected_count: Annotated[
        int, Whole(), Help("how many facts you saw: when more would go, none is deleted")
    ]
    turn_user_id: Annotated[
        str | None, Text(limits.MAX_USER_CHARS), Help("only the facts written for this user")
    ] = None


@dataclass(frozen=True)
class Compact(Op[Compaction]):
    """Prune now.

    Facts older than ``max_age_ms`` first, then the oldest beyond
    ``max_facts`` (each unset: the store's caps); the trash's and the ledger's
    retention are applied too."""

    surface: ClassVar[Surface] = Surface(
        "POST",
        "/compactions",
        writes=True,
        errors=(Conflict, TooLarge),
    )

    max_facts: Annotated[int | None, Whole(), Help("keep at most this many facts")] = None
    max_age_ms: Annotated[
        int | None,
        Whole(0, limits.MAX_AGE_MS),
        Help("prune facts older than this many milliseconds"),
    ] = None


# -- reading -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Recall(Op[list[RecallHit]]):
    """Recall facts by meaning and words.

    Full-text and vector candidates, fused, each with its relevance to the query in
    [0, 1]; filters bind both halves before fusion."""

    surface: ClassVar[Surface] = Surface(
        "GET",
        "/recall",
        errors=EMBEDS,
        legacy="/facts",
        cli="recall",
        tool="memory_search",
    )
    order: ClassVar[tuple[Order, ...]] = (Order("created_after", "created_before"),)

    query: Annotated[str, Text(limits.MAX_QUERY_CHARS), Help("what to recall, in words")]
    top_k: Annotated[
        int | None,
        Whole(1, limits.MAX_TOP_K),
        Help(f"how many to recall (default {limits.DEFAULT_TOP_K}, at most {limits.MAX_TOP_K})"),
    ] = None
    type: Annotated[Label | None, Help("only facts of this type")] = None
    tags: Annotated[Tags, Help("only facts with all these tags")] = ()
    verified_only: Annotated[bool, Help("only facts with a source")] = False
    mode: Annotated[
        Literal["hybrid", "text", "vector"], Help("hybrid (default), text or vector")
    ] = "hybrid"
    created_after: Annotated[
        datetime | None, Cli("--after"), Help("only facts created after this")
    ] = None
    created_before: Annotated[
        datetime | None, Cli("--before"), Help("only facts created before this")
    ] = None
    min_strength: Annotated[
        float | None, Real(0, limits.MAX_STRENGTH), Help("only facts at least this strong")
    ] = None
    min_score: Annotated[
        float | None, Real(0, 1), Help("only hits at least this relevant (0 to 1)")
    ] = None


@dataclass(frozen=True)
class Facts(Op[FactPage]):
    """List facts, newest first.

    One page; pass ``next_before`` back as ``before``."""

    surface: ClassVar[Surface] = Surface("GET", "/facts", cli="facts", tool="memory_list")

    limit: PageSize = None
    before: Annotated[
        str | None,
        Text(256, strip=False, pattern=CURSOR_PATTERN),
        Help("next_before of the previous page"),
    ] = None


@dataclass(frozen=True)
class GetFact(Op[Fact]):
    """Show one fact by its id."""

    surface: ClassVar[Surface] = Surface(
        "GET", "/facts/{fact_id}", errors=(NotFound,), cli="fact", name="fact"
    )

    fact_id: FactId


@dataclass(frozen=True)
class FactProvenance(Op[list[Provenance]]):
    """Show the documents' chunks holding a fact's words.

    None for a fact no document holds; not found when the scope has no such fact, live
    or in the trash."""

    surface: ClassVar[Surface] = Surface(
        "GET",
        "/facts/{fact_id}/provenance",
        errors=(NotFound,),
        cli="provenance",
        name="provenance",
        facts=False,
    )

    fact_id: FactId


# -- history ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Trash(Op[TrashPage]):
    """List softly forgotten facts, most recently forgotten first.

    Each with when the trash deletes it for good (``purge_at``); pass ``next_before``
    back as ``before``."""

    surface: ClassVar[Surface] = Surface("GET", "/trash", cli="trash", tag="history", facts=False)

    limit: PageSize = None
    before: Annotated[
        str | None,
        Text(256, strip=False, pattern=TRASH_CURSOR_PATTERN),
        Help("next_before of the previous page"),
    ] = None


@dataclass(frozen=True)
class Ledger(Op[LedgerPage]):
    """List every write to the scope, newest first.

    Who, through what, when and what it changed (not the before-states): each entry's
    first 100 changes and how many it made (the rest: ledger-changes); ``object_id``
    keeps the entries that changed that fact or key, each with that object's changes.
    Pass ``next_before`` back as ``before``."""

    surface: ClassVar[Surface] = Surface("GET", "/ledger", cli="ledger", tag="history", facts=False)

    limit: PageSize = None
    before: Annotated[
        int | None, Whole(1, limits.MAX_COUNT), Help("next_before of the previous page")
    ] = None
    object_id: Annotated[
        str | None,
        Text(limits.MAX_KEY_CHARS, strip=False),
        Cli("--fact"),
        Help("only the writes that changed this fact or key"),
    ] = None


@dataclass(frozen=True)
class History(Op[list[LedgerEntry]]):
    """List the writes that changed one fact, newest first.

    Up to 1,000; a fact deleted for good keeps them. Not found when the scope never held
    such a fact."""

    surface: ClassVar[Surface] = Surface(
        "GET",
        "/facts/{fact_id}/history",
        errors=(NotFound,),
        cli="history",
        tag="history",
        facts=False,
    )

    fact_id: FactId


EntryId = Annotated[int, Whole(1, limits.MAX_COUNT), Path(), Help("a ledger entry")]


@dataclass(frozen=True)
class Revert(Op[LedgerEntry]):
    """Undo one ledger entry, as a new entry.

    An add is forgotten (to the trash), a correct gets back its old words and vector, a
    soft forget comes back from the trash, a working key gets back its old value;
    reverting a revert redoes it. A conflict, changing nothing, when later entries changed
    the same objects (``later`` names them), when a deletion for good erased its
    before-states, or for an entry that cannot be undone."""

    surface: ClassVar[Surface] = Surface(
        "POST",
        "/ledger/{entry_id}/revert",
        writes=True,
        errors=(NotFound, Conflict),
        cli="revert",
        tag="history",
        facts=False,
    )

    entry_id: EntryId


@dataclass(frozen=True)
class LedgerChanges(Op[ChangesPage]):
    """List what one ledger entry changed, a page at a time.

    In (kind, object) order, all of them (a listing of the ledger shows an entry's first
    100). Pass ``next_after`` back as ``after``. Not found when the scope has no such
    entry."""

    surface: ClassVar[Surface] = Surface(
        "GET",
        "/ledger/{entry_id}/changes",
        errors=(NotFound,),
        cli="ledger-changes",
        tag="history",
        facts=False,
    )

    entry_id: EntryId
    limit: PageSize = None
    after: Annotated[
        int | None, Whole(0, limits.MAX_COUNT), Help("next_after of the previous page")
    ] = None


# -- documents --------------------------------------------------------------------------
DocumentId = Annotated[
    str,
    Text(limits.MAX_ID_CHARS, strip=False, called="document id"),
    Path(),
    Help("a document's id"),
]


@dataclass(frozen=True)
class Documents(Op[list[Document]]):
    """List the documents, by source.

    Without their chunks; ``after`` is the last source of the previous page."""

    surface: ClassVar[Surface] = Surface(
        "GET", "/documents", cli="documents", tag="documents", facts=False
    )

    limit: PageSize = None
    after: Annotated[
        str | None,
        Text(limits.MAX_SOURCE_CHARS),
        Help("the last source of the previous page"),
    ] = None


@dataclass(frozen=True)
class GetDocument(Op[Document]):
    """Show one document with its chunks, in order."""

    surface: ClassVar[Surface] = Surface(
        "GET",
        "/documents/{document_id}",
        errors=(NotFound,),
        cli="document",
        tag="documents",
        facts=False,
        name="document",
    )

    document_id: DocumentId


@dataclass(frozen=True)
class ForgetDocument(Op[bool]):
    """Forget a document and the facts only its chunks name.

    In one ledger entry; softly (the facts to the trash; a revert brings all back) unless
    ``hard``. Not found when the scope has no such document."""

    surface: ClassVar[Surface] = Surface(
        "DELETE",
        "/documents/{document_id}",
        status=204,
        writes=True,
        errors=(NotFound, Conflict),
        cli="forget-document",
        tag="documents",
        facts=False,
    )

    document_id: DocumentId
    hard: Annotated[bool, Help("delete the facts for good")] = False


# -- episodes ---------------------------------------------------------------------------
@dataclass(frozen=True)
class EpisodicRecall(Op[EntryPage]):
    """The scope's session entries in time order.

    Its own, or with ``branch`` ``lineage`` each ancestor's up to its fork point too;
    ``next_after`` when more follow."""

    surface: ClassVar[Surface] = Surface(
        "GET", "/episodes", facts=False, tag="sessions", name="episodic_recall"
    )

    branch: Annotated[
        Literal["own", "lineage"], Help("own, or lineage: with each ancestor's entries too")
    ] = "own"
    limit: PageSize = None
    after: Annotated[datetime | None, Help("entries after this time (a page's nextAfter)")] = None
    query: Annotated[
        str | None, Text(limits.MAX_QUERY_CHARS), Help("entries holding every word (at most 16)")
    ] = None


@dataclass(frozen=True)
class EpisodicTree(Op[list[SessionNode]]):
    """The fork trees holding the scope's sessions.

    Each root with its entries and children, siblings kept apart."""

    surface: ClassVar[Surface] = Surface(
        "GET", "/episodes/tree", facts=False, tag="sessions", name="episodic_tree"
    )


@dataclass(frozen=True)
class StartSession(Op[Session]):
    """Start a session, perhaps forked from an entry of another.

    ``fork_of`` starts it from an entry of a session of the same team (not found
    otherwise). The same ``session_id`` again with the same name and fork point answers
    the session as it is."""

    surface: ClassVar[Surface] = Surface(
        "POST",
        "/sessions",
        status=201,
        writes=True,
        errors=(NotFound, Conflict, TooLarge),
        facts=False,
        tag="sessions",
        name="start",
    )

    session_id: Annotated[Label | None, Help("its id (default: a new one)")] = None
    name: Annotated[
        str | None, Text(limits.MAX_SESSION_NAME_CHARS), Help("what the session is about")
    ] = None
    fork_of: Annotated[
        SourceRef | None, SOURCE_REF, Help("the entry of another session it starts from")
    ] = None


@dataclass(frozen=True)
class Health(Op[HealthReport]):
    """What the scope's memory holds.

    Facts live and trashed by type, verified, without a vector, strengths; full-text
    rows against facts; the approximate vector indexes; working keys; the ledger;
    sessions; the graph (and, with ``graph_drift``, its drift from a rebuild); documents;
    retrieval feedback; what is kept past its time. Never writes, so an ended agent's
    memory answers too."""

    surface: ClassVar[Surface] = Surface("GET", "/health", facts=False, tag="health")

    graph_drift: Annotated[
        bool,
        Help(
            "also rebuild the graph from the facts by the rules and count how the stored "
            "one differs (reads every live fact)"
        ),
    ] = False


# -- working memory ----------------------------------------------------------------------
WORKING = "working memory"
KEY = Text(limits.MAX_KEY_CHARS, strip=False, called="key")  # any text but NUL
Key = Annotated[
    str, KEY, Path(rest=True), Help(f"the key: 1 to {limits.MAX_KEY_CHARS} characters, any but NUL")
]


@dataclass(frozen=True)
class WorkingList(Op[WorkingPage]):
    """One page of working memory, in ascending UTF-8 key order.

    ``next_after`` is set when more follow: pass it back as ``after``."""

    surface: ClassVar[Surface] = Surface(
        "GET", "/memory", facts=False, tag=WORKING, cli="working list", name="list"
    )

    after: Annotated[str | None, KEY, Help("a key: the page starts after it")] = None
    limit: PageSize = None


@dataclass(frozen=True)
class WorkingGet(Op[WorkingEntry]):
    """The value at a key, with its version.

    The version is the one a compare-and-set names. Not found when the key is unset."""

    surface: ClassVar[Surface] = Surface(
        "GET",
        "/memory/{key}",
        errors=(NotFound, Unprocessable),
        facts=False,
        tag=WORKING,
        cli="working get",
        tool="working_get",
        name="entry",
    )

    key: Key


@dataclass(frozen=True)
class WorkingSet(Op[WorkingEntry]):
    """Set a key to a JSON value.

    ``expected_version`` makes it a compare-and-set (0: the key must be unset): a
    conflict when the version is another, and nothing is written. ``ttl_seconds`` makes
    the key expire."""

    surface: ClassVar[Surface] = Surface(
        "PUT",
        "/memory/{key}",
        writes=True,
        errors=(Conflict, TooLarge),
        facts=False,
        tag=WORKING,
        cli="working set",
        tool="working_set",
        name="set",
        precondition="expected_version",
    )

    key: Key
    value: Annotated[Any, Value(), Help("any JSON value, up to 64 KiB, nested at most 64 levels")]
    expected_version: Annotated[
        int | None,
        Whole(),
        Help("compare-and-set: the version read (0: the key must be unset)"),
    ] = None
    ttl_seconds: Annotated[
        int | None, Whole(1, limits.MAX_TTL_SECONDS), Help("forget the key after this many seconds")
    ] = None


@dataclass(frozen=True)
class WorkingDelete(Op[bool]):
    """Remove a key.

    Idempotent: the answer says whether it was set."""

    surface: ClassVar[Surface] = Surface(
        "DELETE",
        "/memory/{key}",
        status=204,
        writes=True,
        errors=(Conflict,),
        facts=False,
        tag=WORKING,
        cli="working delete",
        name="delete",
    )

    key: Key


# -- tidying and compiling --------------------------------------------------------------
@dataclass(frozen=True)
class Consolidate(Op[ConsolidationReport]):
    """Tidy the memory: reindex, strengthen, prune, merge, derive, compact.

    Runs ``steps`` (all when absent), always in the cycle's order, each that changes
    something one ledger entry that can be reverted; ``dry_run`` says what each would
    change and writes nothing (an ended agent's memory too). A second run changes
    nothing. Not offered where self-improvement is off."""

    surface: ClassVar[Surface] = Surface(
        "POST",
        "/consolidations",
        writes=True,
        errors=(Conflict, TooLarge, CapabilityMissing, UpstreamFailure),
        cli="consolidate",
        tool="memory_reflect",
        facts=False,
        tag="consolidation",
        name="consolidate",
    )

    steps: Annotated[
        Sequence[str] | None,
        Items(OneOf(limits.STEPS), len(limits.STEPS), low=1, item="step"),
        Cli("--step"),
        Help(f"run only these ({', '.join(limits.STEPS)}); all when absent"),
    ] = None
    dry_run: Annotated[bool, Help("say what each step would change; write nothing")] = False

    def changes(self) -> bool:
        return not self.dry_run


@dataclass(frozen=True)
class CompileWiki(Op[WikiReport]):
    """Fold the facts written since the last compile into the wiki's pages.

    The pages they touch (index, entities, types, daily log; documents ``wiki:<path>``)
    are written again whole, ``batch`` facts at a time (each batch one ledger entry); a
    page whose words did not change writes nothing, and a second compile with no new
    fact changes nothing."""

    surface: ClassVar[Surface] = Surface(
        "POST",
        "/wiki/compilations",
        writes=True,
        errors=(Conflict, TooLarge, *EMBEDS),
        tag="wiki",
        name="compile_wiki",
    )

    batch: Annotated[
        int,
        Whole(1, limits.MAX_WIKI_BATCH),
        Help(f"facts folded at a time (default 500, at most {limits.MAX_WIKI_BATCH})"),
    ] = 500


# -- retrieval feedback -----------------------------------------------------------------
Query = Annotated[
    str | None, Text(limits.MAX_QUERY_CHARS), Help("what the facts were recalled for")
]


@dataclass(frozen=True)
class DetectFeedback(Op[list[Signal]]):
    """Which of the injected facts a response used, stored per fact.

    One signal per fact of ``fact_ids``, in their order (``[n]`` in the response cites
    the n-th), detected from ``response``: a citation, the fact's salient terms, or with
    an embedder a sentence near it. Stored as one ledger entry unless ``dry_run``; an id
    that is no fact of the scope stores nothing."""

    surface: ClassVar[Surface] = Surface(
        "POST",
        "/feedback",
        writes=True,
        errors=(NotFound, Conflict, TooLarge, UpstreamFailure),
        cli="feedback detect",
        facts=False,
        tag="feedback",
        name="detect",
    )

    fact_ids: Annotated[
        Sequence[str],
        Items(FACT_ID, limits.MAX_INJECTED, low=1, unique=False, item="fact id", distinct=True),
        Help("the facts injected into the prompt, in the order shown"),
    ]
    response: Annotated[
        str,
        Text(limits.MAX_RESPONSE_CHARS, strip=False, empty=True),
        Cli("--response"),
        Help("the assistant's final response ('-': standard input)"),
    ]
    query: Query = None
    dry_run: Annotated[bool, Help("answer only, store nothing")] = False

    def changes(self) -> bool:
        return not self.dry_run


@dataclass(frozen=True)
class RecordFeedback(Op[Feedback]):
    """Record that a response used or ignored a fact.

    Answers the stored signal."""

    surface: ClassVar[Surface] = Surface(
        "POST",
        "/feedback/{fact_id}",
        status=201,
        writes=True,
        errors=(NotFound, Conflict, TooLarge),
        cli="feedback record",
        facts=False,
        tag="feedback",
        name="record",
    )

    fact_id: FactId
    signal: Annotated[Literal["used", "ignored"], Help("used or ignored")]
    reason: Annotated[Label | None, Help("why, in a few words")] = None
    query: Query = None


@dataclass(frozen=True)
class FactFeedback(Op[list[Feedback]]):
    """A fact's stored signals, oldest first.

    None yet: an empty list; a fact the scope does not hold, live or in the trash, is
    not found."""

    surface: ClassVar[Surface] = Surface(
        "GET",
        "/feedback/{fact_id}",
        errors=(NotFound,),
        cli="feedback show",
        facts=False,
        tag="feedback",
        name="signals",
    )

    fact_id: FactId


OPS: tuple[type[Op[object]], ...] = (
    Remember,
    Facts,
    Recall,
    GetFact,
    FactProvenance,
    Correct,
    Merge,
    Forget,
    ForgetAll,
    Restore,
    DeleteTraces,
    DeleteScope,
    Compact,
    Trash,
    Ledger,
    History,
    LedgerChanges,
    Revert,
    Documents,
    GetDocument,
    ForgetDocument,
    DetectFeedback,
    RecordFeedback,
    FactFeedback,
    Consolidate,
    CompileWiki,
    EpisodicRecall,
    EpisodicTree,
    StartSession,
    Health,
    WorkingList,
    WorkingGet,
    WorkingSet,
    WorkingDelete,
)
