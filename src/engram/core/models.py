"""Frozen domain values that cross the boundary between engram and its callers."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar, Literal

from engram.core.scopes import ResourceRef, Scope

JSONValue = Any  # any value json.dumps accepts; checked by working-memory validation
RecallMode = Literal["hybrid", "text", "vector"]
Via = Literal["library", "cli", "http", "mcp", "tool", "import", "ingest", "consolidation", "wiki"]
VIAS: tuple[str, ...] = (
    "library",
    "cli",
    "http",
    "mcp",
    "tool",
    "import",
    "ingest",
    "consolidation",
    "wiki",
)


@dataclass(frozen=True, slots=True)
class SourceRef:
    """The ledger entry a fact came from: a sandbox (session) and an entry index."""

    sandbox_id: str
    entry_index: int


@dataclass(frozen=True, slots=True)
class Fact:
    """A piece of text remembered in a scope.

    ``context`` is text that helps find the fact without being part of it (say, the
    turns around a remembered turn of a conversation): full-text recall matches it.

    ``verified`` is computed from ``source_ref``; it is never read from input.
    ``strength`` (0 to 10, 1.0 unless set) multiplies the fact's score in recall.
    From ``expires_at`` on, the fact is no longer recalled or listed, and consolidation
    moves it to the trash.
    """

    id: str
    scope: Scope
    content: str
    created_at: datetime
    updated_at: datetime
    source_ref: SourceRef | None = None
    type: str | None = None
    tags: tuple[str, ...] = ()
    metadata: dict[str, JSONValue] = field(default_factory=dict)
    corrected_by: str | None = None
    corrected_at: datetime | None = None
    context: str | None = None
    strength: float = 1.0
    turn_user: str | None = None
    expires_at: datetime | None = None

    @property
    def verified(self) -> bool:
        return self.source_ref is not None


@dataclass(frozen=True, slots=True)
class FactPage:
    """One page of facts, newest first; ``next_before`` is set when more follow."""

    facts: list[Fact]
    next_before: str | None


@dataclass(frozen=True, slots=True)
class RecallHit:
    """A recalled fact, its fused score (which orders one query's hits), its rank in each
    half (1-based, None if absent), and its ``relevance`` to the query in [0, 1], on one
    scale for every query (:mod:`engram.core.relevance`).

    With a reranker (hybrid recall only), the best candidates are ordered by
    ``rerank_score``, the reranker's score, ahead of the rest; ``score`` stays the fused
    score, and ``rerank_score`` is None on every hit the reranker did not read
    (:mod:`engram.core.reranking`)."""

    fact: Fact
    score: float
    text_rank: int | None
    vector_rank: int | None
    relevance: float = 0.0
    rerank_score: float | None = None


@dataclass(frozen=True, slots=True)
class Filters:
    """Recall filters; each binds both halves (full-text and vector) before fusion."""

    type: str | None = None
    tags: tuple[str, ...] = ()
    created_after: datetime | None = None
    created_before: datetime | None = None
    verified_only: bool = False
    min_strength: float | None = None

    @property
    def empty(self) -> bool:
        return self == Filters()


@dataclass(frozen=True, slots=True)
class WorkingEntry:
    """One key of working memory; ``version`` starts at 1 and grows on every set.

    ``too_deep``: the stored value nests deeper than values may (it was stored before
    that limit), so it cannot be served; ``value`` is then None. Reading the key raises
    Unprocessable; listings name it apart; overwriting or deleting it works."""

    key: str
    value: JSONValue
    version: int
    updated_at: datetime
    expires_at: datetime | None = None
    too_deep: bool = False


@dataclass(frozen=True, slots=True)
class Swept:
    """A working-memory key a sweep deleted once it had expired, with the value it held
    (None when it nests too deep to serve: see :attr:`WorkingEntry.too_deep`)."""

    scope: Scope
    key: str
    value: JSONValue


@dataclass(frozen=True, slots=True)
class WorkingPage:
    """One page of working memory in ascending UTF-8 key order."""

    entries: list[WorkingEntry]
    next_after: str | None
    # Keys of this page whose stored value cannot be served (see WorkingEntry.too_deep).
    unreadable: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, JSONValue]:
        return {entry.key: entry.value for entry in self.entries}


@dataclass(frozen=True, slots=True)
class ForkResult:
    """What a fork copied into the child's scope; a spawn also names the session it
    started for the child (forked from the parent's last entry), if any."""

    ref: ResourceRef
    working_keys_copied: int
    facts_copied: int
    session_id: str | None = None


@dataclass(frozen=True, slots=True)
class Compaction:
    """Ids of the facts a compaction removed: by age first, then by the cap."""

    expired: list[str]
    over_cap: list[str]

    @property
    def removed(self) -> int:
        return len(self.expired) + len(self.over_cap)


DAY_US = 86_400_000_000


@dataclass(frozen=True, slots=True)
class Caps:
    """Store-wide caps per scope: 0 / None means unbounded. The trash keeps a softly
    forgotten fact ``trash_retention_us`` (30 days) before deleting it for good; the
    ledger keeps entries ``ledger_retention_us`` (90 days), until a compaction."""

    max_facts: int = 0
    max_age_us: int = 0
    trash_retention_us: int = 30 * DAY_US
    ledger_retention_us: int = 90 * DAY_US


@dataclass(frozen=True, slots=True)
class Writer:
    """Who writes, through what: recorded on every ledger entry. The edges set it from
    what they verified (a token's subject, the service), never from a request body.
    ``turn_user`` names a second user a write on another's turn was for (facts keep it,
    and a scope's deletion can take only theirs); ``request_id`` ties an entry to the
    request that made it."""

    actor: str = "library"
    via: Via = "library"
    turn_user: str | None = None
    request_id: str | None = None


LIBRARY = Writer()  # the library's own calls


@dataclass(frozen=True, slots=True)
class Change:
    """One object a ledger entry changed: its kind (fact, working, share, agent), its id
    (a fact id, a working key, ...), what was done, the state before as JSON (None:
    nothing to restore, or scrubbed), and the token of the state it left (the entry
    that made that state; None for a state older than the ledger)."""

    kind: str
    object_id: str
    action: str
    before: str | None = None
    token: int | None = None


@dataclass(frozen=True, slots=True)
class LedgerEntry:
    """One logical write: ``op`` (remember, correct, forget, ...), who and through what,
    when, the changes, and its links: the entry it ``reverts``, the one that reverted it
    (``reverted_by``). ``scrubbed``: a hard deletion erased before-states it held, so it
    cannot be reverted."""

    seq: int
    scope: Scope
    op: str
    at: datetime
    actor: str
    via: str
    turn_user: str | None
    request_id: str | None
    reverts: int | None
    reverted_by: int | None
    scrubbed: bool
    changes: tuple[Change, ...] = ()
    # how many objects it changed: a listing shows the first CHANGES_SHOWN of them in
    # ``changes`` (those of the object asked for, where one is)
    change_count: int = 0


@dataclass(frozen=True, slots=True)
class ChangesPage:
    """What one entry changed, in (kind, object) order; ``next_after`` is set when more
    follow."""

    changes: list[Change]
    next_after: int | None


@dataclass(frozen=True, slots=True)
class LedgerPage:
    """Entries newest first; ``next_before`` is set when older ones follow."""

    entries: list[LedgerEntry]
    next_before: int | None


@dataclass(frozen=True, slots=True)
class Trashed:
    """A softly forgotten fact, as it was, with when it was forgotten and when the
    trash deletes it for good (None: the trash keeps it)."""

    fact: Fact
    deleted_at: datetime
    purge_at: datetime | None


@dataclass(frozen=True, slots=True)
class TrashPage:
    """Trashed facts, most recently forgotten first; ``next_before`` when more follow."""

    facts: list[Trashed]
    next_before: str | None


@dataclass(frozen=True, slots=True)
class DeletionReceipt:
    """What a hard deletion removed: live facts, trashed facts, and the ledger items
    whose before-states it erased."""

    facts: int
    trashed: int
    ledger_items_scrubbed: int


@dataclass(frozen=True, slots=True)
class ModelRecord:
    """The embedding model that wrote a store's vectors."""

    model: str
    dimension: int

    UNDER_WAY: ClassVar[str] = " (re-embedding unfinished)"

    def under_way(self) -> ModelRecord:
        """What a store records while a re-embedding to this model is under way: a model
        no embedder has, so every process refuses to write or compare its vectors."""
        return ModelRecord(f"{self.model}{self.UNDER_WAY}", self.dimension)

    @property
    def unfinished(self) -> bool:
        """Whether this records a re-embedding under way (or cut short): its vectors
        are of two models."""
        return self.model.endswith(self.UNDER_WAY)

    def mismatch(self, other: ModelRecord) -> str:
        """Why vectors of ``other`` cannot join vectors of this model."""
        if self.dimension != other.dimension:
            return (
                f"this store's vectors have {self.dimension} dimensions (model "
                f"{self.model!r}); the embedder {other.model!r} gives {other.dimension}. "
                "Nothing was written"
            )
        return (
            f"this store's vectors were written by model {self.model!r}; the embedder is "
            f"{other.model!r} (same dimension, but vectors are not comparable). "
            "Nothing was written"
        )
