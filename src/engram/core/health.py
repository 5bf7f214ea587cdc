"""The health report: what a scope, or the whole store, holds, counted in one snapshot.

Facts live and in the trash by type, the verified ones, those without a vector, their
strengths; full-text rows against fact rows; live working keys; ledger entries and how
many were scrubbed; sessions and their entries; the graph (entities by origin, relations
live, ended and retired, aliases, mentions, orphans, the reading queue and the model
extractors' backlogs); documents and their chunks; retrieval feedback and what
consolidation has not applied yet; what is kept past its time (expired working keys,
facts in the trash and ledger entries past their retention, session entries hidden);
for the whole store, the bytes it takes, its schema version and the embedding model that
wrote its vectors. Asked for, a scope's graph drift: the rules' graph rebuilt in memory
from the scope's live facts and assertions (:mod:`engram.core.graph.rebuild`) against
the stored one.

A report only reads: one read transaction, no statement that could write (no FTS5
``integrity-check``, which is an INSERT), so it works on an ended agent's read-only
memory and leaves the file, its log and the ledger as they were. Each count is exact;
the cost follows what the scope holds (the strength median sorts its facts' strengths;
the feedback counts read the feedback table; the drift reads every live fact).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from engram.core.graph.models import GraphDrift
from engram.core.models import ModelRecord
from engram.core.scopes import Scope

DRIFT_PER_SCOPE = (
    "graph drift is measured per scope (it rebuilds the scope's graph from its facts); "
    "ask for a scope's report"
)


@dataclass(frozen=True, slots=True)
class TypeCount:
    """How many facts of one ``type`` (None: untyped) are live, and how many trashed."""

    type: str | None
    live: int
    trashed: int


@dataclass(frozen=True, slots=True)
class StrengthSummary:
    """The live facts' strengths: the least, the median (the lower middle value, as
    nearest-rank p50 takes it) and the greatest, None without facts; ``off_default``
    counts those not at the neutral 1.0."""

    min: float | None
    p50: float | None
    max: float | None
    off_default: int


@dataclass(frozen=True, slots=True)
class FactHealth:
    """Facts: ``live`` and ``trashed`` (softly forgotten), ``by_type`` (ordered by type,
    untyped first), ``verified`` (live, with a source entry), ``without_vector`` (live
    facts vector search cannot find) and the strengths."""

    live: int
    trashed: int
    by_type: tuple[TypeCount, ...]
    verified: int
    without_vector: int
    strength: StrengthSummary


@dataclass(frozen=True, slots=True)
class FullTextHealth:
    """Full-text rows against fact rows. SQLite: rows of the FTS5 index (filed under the
    scope's token, or all of them for the store). PostgreSQL: facts whose generated
    ``words`` hold at least one lexeme (a fact of stopwords only has none, and full
    text cannot find it). ``in_step`` when they agree."""

    rows: int
    facts: int

    @property
    def in_step(self) -> bool:
        return self.rows == self.facts


@dataclass(frozen=True, slots=True)
class VectorIndexHealth:
    """The scopes' own approximate vector indexes (a graph a scope gets once it holds
    more facts than the store's threshold; below it, vector search is exact): how many
    ``scopes`` have one, the ``vectors`` they were built with, the live facts' vectors
    searched exactly ``beside`` them (written since a graph was built, and on SQLite
    reworded since too, until the next build takes them in), and the ``bytes`` the
    graphs take. SQLite keeps each in a file beside the database (not in the storage's
    bytes), and ``to_overwrite`` counts the vectors of facts erased or trashed whose
    bytes a file still holds: each commit overwrites them after it, so a count that
    stays says a process stopped first (the next store to open does it). PostgreSQL
    keeps each as an index of the database (in its bytes); ``to_overwrite`` is None
    there."""

    scopes: int
    vectors: int
    beside: int
    bytes: int
    to_overwrite: int | None


@dataclass(frozen=True, slots=True)
class LedgerHealth:
    """Ledger entries, and how many were scrubbed (a deletion for good erased
    before-states they held)."""

    entries: int
    scrubbed: int


@dataclass(frozen=True, slots=True)
class SessionHealth:
    sessions: int
    entries: int


@dataclass(frozen=True, slots=True)
class EntityCounts:
    """Entities by origin: ``asserted`` by callers, ``extracted`` by the rules or a model
    from the facts' words, ``imported`` from a file; ``total`` counts every row."""

    total: int
    asserted: int
    extracted: int
    imported: int


@dataclass(frozen=True, slots=True)
class RelationCounts:
    """Relations: ``live`` (neither ended in the world nor retired), ``ended`` (an
    ``invalid_at`` set, not retired) and ``expired`` (retired: ``expired_at`` set)."""

    live: int
    ended: int
    expired: int


@dataclass(frozen=True, slots=True)
class Backlog:
    """Live facts each model extractor has not read for their current words."""

    llm: int
    spacy: int


@dataclass(frozen=True, slots=True)
class GraphHealth:
    """The graph: entities by origin, relations, aliases, mentions; ``orphans``,
    extracted entities no live fact grounds (0 while the graph is in step: the database
    drops such an entity; an asserted or imported one is never an orphan); ``queued``,
    facts waiting to be read by the rules (every write reads the queue before it
    commits, so 0 between writes); ``backlog``, the model extractors'; ``drift``, only
    when asked for, per scope."""

    entities: EntityCounts
    relations: RelationCounts
    aliases: int
    mentions: int
    orphans: int
    queued: int
    backlog: Backlog
    drift: GraphDrift | None = None


@dataclass(frozen=True, slots=True)
class DocumentHealth:
    """Documents, their chunks, and the chunks whose fact was deleted for good (their
    ``fact_id`` cleared: the document no longer holds those words)."""

    documents: int
    chunks: int
    chunks_without_fact: int


@dataclass(frozen=True, slots=True)
class FeedbackHealth:
    """Retrieval feedback signals kept, and those consolidation has not applied yet."""

    signals: int
    pending: int


@dataclass(frozen=True, slots=True)
class Retention:
    """How long the trash keeps a softly forgotten fact and the ledger an entry (0: for
    ever), in microseconds: the memory's caps."""

    trash_us: int = 0
    ledger_us: int = 0


@dataclass(frozen=True, slots=True)
class StaleHealth:
    """What is kept past its time: ``working_keys`` expired but still stored (no read
    returns them); ``trash_past_retention``,
    facts in the trash longer than ``trash_retention`` (None: kept for ever), deleted
    for good by the scope's next forget or compaction; ``ledger_past_retention``,
    entries older than ``ledger_retention``, deleted by its next compaction, and
    ``ledger_oldest``, the oldest entry's time (None: no entry); ``session_entries_hidden``,
    entries kept hidden because every fact remembered from them is in the trash."""

    working_keys: int
    trash_past_retention: int
    trash_retention: timedelta | None
    ledger_past_retention: int
    ledger_retention: timedelta | None
    ledger_oldest: datetime | None
    session_entries_hidden: int


@dataclass(frozen=True, slots=True)
class StaleCounts:
    """What the rows say of :class:`StaleHealth` (times in microseconds)."""

    working_keys: int
    trash_past_retention: int
    ledger_past_retention: int
    ledger_oldest_us: int | None
    session_entries_hidden: int


@dataclass(frozen=True, slots=True)
class StorageHealth:
    """What the store takes. SQLite: ``bytes`` of the file (pages times page size),
    ``wal_bytes`` of its write-ahead log, ``free_bytes`` of its free pages. PostgreSQL:
    ``bytes`` of the database (``pg_database_size``), the others None. ``scrub_due``:
    whether a write erased words for good since the store's files were last scrubbed
    (``engram scrub``; on SQLite the erasing write scrubs unless a reader held the log)."""

    backend: str
    bytes: int
    wal_bytes: int | None
    free_bytes: int | None
    scrub_due: bool


@dataclass(frozen=True, slots=True)
class Scrubbed:
    """What a scrub of the store's files did (``engram scrub``): whether one was due (a
    write erased words for good since the last), what it wrote anew (PostgreSQL's
    tables), whether one is still due (a write erased words meanwhile, or a reader held
    SQLite's log), and what outside the store's own files may still hold such words."""

    was_due: bool
    still_due: bool
    rewritten: tuple[str, ...]
    seconds: float
    left: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class HealthCounts:
    """What the rows say (see :class:`engram.core.ports.HealthRows`); ``storage`` only
    for the whole store."""

    facts: FactHealth
    fulltext: FullTextHealth
    vector_index: VectorIndexHealth
    working_keys: int
    ledger: LedgerHealth
    sessions: SessionHealth
    graph: GraphHealth
    documents: DocumentHealth
    feedback: FeedbackHealth
    stale: StaleCounts
    storage: StorageHealth | None


@dataclass(frozen=True, slots=True)
class HealthReport:
    """A scope's health (``scope`` set, ``storage`` None) or the store's (``scope``
    None). ``schema_version`` and ``model`` are the store's either way."""

    scope: Scope | None
    schema_version: int
    model: ModelRecord | None
    facts: FactHealth
    fulltext: FullTextHealth
    vector_index: VectorIndexHealth
    working_keys: int
    ledger: LedgerHealth
    sessions: SessionHealth
    graph: GraphHealth
    documents: DocumentHealth
    feedback: FeedbackHealth
    stale: StaleHealth
    storage: StorageHealth | None
