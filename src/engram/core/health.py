"""The health report: what a scope, or the whole store, holds, counted in one snapshot.

Facts live and in the trash by type, the verified ones, those without a vector, their
strengths; full-text rows against fact rows; live working keys; ledger entries and how
many were scrubbed; sessions and their entries; for the whole store, the bytes it takes,
its schema version and the embedding model that wrote its vectors.

A report only reads: one read transaction, no statement that could write (no FTS5
``integrity-check``, which is an INSERT), so it works on an ended agent's read-only
memory and leaves the file, its log and the ledger as they were. Each count is exact;
the cost follows what the scope holds (the strength median sorts its facts' strengths).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from engram.core.scopes import Scope

if TYPE_CHECKING:
    from engram.core.ports import ModelRecord, Store, Tx


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
class StorageHealth:
    """What the store takes. SQLite: ``bytes`` of the file (pages times page size),
    ``wal_bytes`` of its write-ahead log, ``free_bytes`` of its free pages. PostgreSQL:
    ``bytes`` of the database (``pg_database_size``), the others None."""

    backend: str
    bytes: int
    wal_bytes: int | None
    free_bytes: int | None


@dataclass(frozen=True, slots=True)
class HealthCounts:
    """What the rows say (see :class:`engram.core.ports.HealthRows`); ``storage`` only
    for the whole store."""

    facts: FactHealth
    fulltext: FullTextHealth
    working_keys: int
    ledger: LedgerHealth
    sessions: SessionHealth
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
    working_keys: int
    ledger: LedgerHealth
    sessions: SessionHealth
    storage: StorageHealth | None


def report(store: Store, scope: Scope | None, now_us: int) -> HealthReport:
    """The report of ``scope`` (None: the whole store) in one read transaction; working
    keys count as live when unexpired at ``now_us``. Never writes."""

    def read(tx: Tx) -> HealthReport:
        counts = store.health.report(tx, scope, now_us)
        return HealthReport(
            scope=scope,
            schema_version=store.schema_version,
            model=store.models.get(tx),
            facts=counts.facts,
            fulltext=counts.fulltext,
            working_keys=counts.working_keys,
            ledger=counts.ledger,
            sessions=counts.sessions,
            storage=counts.storage,
        )

    return store.run(read, write=False)
