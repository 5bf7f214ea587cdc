"""The seams between the core and the outside: a store, an embedder, a reranker, a chat
model and a name recogniser.

A :class:`Store` is a unit of work and a handful of row interfaces. The core opens a
transaction (``with store.transaction() as tx``, or ``store.run(work)``, which retries
the whole of ``work`` when the database asks for it) and passes ``tx`` to every row
method, so any number of reads and writes commit or fail together. The rules (caps,
confirmed counts, compare-and-set, the model check, ids) live in the core
(:mod:`engram.core.rules`); the rows only store and read, each filtering by the scope it
is given in the query itself. All times are integer microseconds
(:mod:`engram.core.clock`).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Collection, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Literal, Protocol, TypeAlias, TypeVar, runtime_checkable

from engram.core.models import (
    Change,
    Fact,
    Filters,
    LedgerEntry,
    SourceRef,
    WorkingEntry,
    Writer,
)
from engram.core.models import ModelRecord as ModelRecord  # re-exported
from engram.core.ranking import Candidate, Traits
from engram.core.scopes import Scope

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from engram.core.documents.models import Document, Provenance
    from engram.core.graph.models import Entity, FactReading, Mention, Relation, StoredGraph
    from engram.core.health import HealthCounts
    from engram.core.records import Agent, Entry, Feedback, Session, Share

    Vectors: TypeAlias = npt.NDArray[np.float32]
else:  # only annotations name it: working memory and listing never load numpy
    Vectors = object
EmbedKind = Literal["passage", "query"]
T = TypeVar("T")


class Embedder(Protocol):
    """Turns texts into unit-length vectors, many texts per call."""

    @property
    def model(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> Vectors:
        """One row per text, L2-normalised. Raises UpstreamFailure when the provider fails."""
        ...


@runtime_checkable
class TokenCounter(Protocol):
    """An embedder that counts its own tokens (the local model): documents are cut into
    chunks that fit its window. One that does not is counted by an estimate."""

    @property
    def max_tokens(self) -> int:
        """The tokens it reads of one text, special tokens included; more are cut off."""
        ...

    def count_tokens(self, text: str) -> int:
        """The tokens ``text`` takes, special tokens excluded; never truncated."""
        ...


class Reranker(Protocol):
    """Scores texts by how relevant each is to a query, reading the two together (a
    cross-encoder, or a remote rerank endpoint). Optional: hybrid recall reorders its
    best candidates by it (:mod:`engram.core.reranking`). It stores nothing, so no store
    records which reranker read it."""

    @property
    def model(self) -> str: ...

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        """One finite score per text, in the texts' order; higher is more relevant. Scores
        compare within one call only. Raises UpstreamFailure when the provider fails or
        answers malformed."""
        ...


class ChatModel(Protocol):
    """Answers a message under instructions (an OpenAI-compatible chat endpoint). Optional:
    the graph's ``llm`` extractor reads facts with it (:mod:`engram.core.graph.llm`),
    never inside a transaction."""

    @property
    def model(self) -> str: ...

    def complete(self, system: str, user: str) -> str:
        """The model's answer to ``user`` under the ``system`` instructions, as text (the
        caller checks what it means). Raises UpstreamFailure when the provider fails, times
        out or answers malformed."""
        ...


Span: TypeAlias = tuple[int, int, str]
"""A name a recogniser found: ``(start, end, label)``, ``text[start:end]`` its words."""


class NameRecogniser(Protocol):
    """Finds named entities in texts (a spaCy pipeline: :class:`engram.SpacyRecogniser`).
    Optional: the graph's ``spacy`` extractor reads facts with it
    (:mod:`engram.core.graph.ner`), never inside a transaction."""

    @property
    def model(self) -> str: ...

    def recognise(self, texts: Sequence[str]) -> list[list[Span]]:
        """For each text, in order, the entities it names: character offsets into that
        text and the model's label for each (spaCy's: ``PERSON``, ``GPE``, ``DATE``...).
        The caller decides which labels are entities. Raises UpstreamFailure when the
        model fails."""
        ...


@dataclass(frozen=True, slots=True)
class Departure:
    """A fact that left, came back from the trash or was reworded, queued because
    something is derived from it: the session entry it points at (``source``), or its
    scope's wiki (:mod:`engram.core.derived`)."""

    scope: str
    fact_id: str
    source: SourceRef | None


@dataclass(frozen=True, slots=True)
class NewFact:
    """A fact ready to be written: the record as it will read back (id, times and all),
    its content hash (``rules.content_hash``: 64 hex digits, which a store may keep
    shortened), its metadata as stored JSON, and its vector."""

    fact: Fact
    content_hash: str
    metadata_json: str
    vector: Vectors


@dataclass(frozen=True, slots=True)
class NewEntry:
    """A session entry ready to be written: the entry as it will read back (session,
    index and time set) and its data as stored JSON (None without data)."""

    entry: Entry
    data_json: str | None


class Tx(Protocol):
    """An open transaction. Reads through it see one snapshot (a write transaction's
    reads also see its own writes); its writes commit together or not at all."""

    def before_commit(self, action: Callable[[], None]) -> None:
        """Runs ``action`` in the transaction just before the outermost one commits
        (never when it rolls back): work that settles what the writes left, such as
        the graph reading the facts they queued. Actions run in order, those they add
        too; one that raises rolls the transaction back."""
        ...

    def after_commit(self, action: Callable[[], None]) -> None:
        """Runs ``action`` once the outermost transaction has committed (never after a
        rollback): work that must not hold the transaction open."""
        ...


class WorkingRows(Protocol):
    """Working-memory rows: one JSON text per (scope, key), with a version and an expiry."""

    def get(self, tx: Tx, scope: Scope, key: str, now_us: int) -> WorkingEntry | None:
        """The live entry (unexpired at ``now_us``), or None."""
        ...

    def claim(self, tx: Tx, scope: Scope, key: str) -> tuple[int, int | None] | None:
        """Holds the key against every other writer until ``tx`` ends (a row lock cannot
        guard a key not yet there) and returns its stored (version, expires_at), expired
        or not; None when it was never set or was deleted. Write transactions only."""
        ...

    def put(
        self,
        tx: Tx,
        scope: Scope,
        key: str,
        value_json: str,
        version: int,
        now_us: int,
        expires_at_us: int | None,
    ) -> None:
        """Writes the key (inserted or replaced whole); idempotent."""
        ...

    def delete(self, tx: Tx, scope: Scope, key: str) -> bool:
        """Removes the key, expired or not; whether a row was there. Idempotent."""
        ...

    def page(
        self, tx: Tx, scope: Scope, after: str | None, limit: int, now_us: int
    ) -> list[WorkingEntry]:
        """Up to ``limit`` live entries with keys above ``after``, ascending UTF-8 byte
        order of the key."""
        ...

    def live_count(self, tx: Tx, scope: Scope, now_us: int) -> int:
        """How many keys of the scope are live at ``now_us``."""
        ...

    def scopes(self, tx: Tx, starting: str, now_us: int) -> list[Scope]:
        """The distinct scopes holding a key live at ``now_us`` whose storage key
        (:attr:`Scope.key`) starts with ``starting``, in no particular order. Read-only."""
        ...

    def expired(self, tx: Tx, under: Scope | str, now_us: int) -> list[tuple[Scope, str]]:
        """Every (scope, key) expired at ``now_us`` and still stored: of the scope
        ``under``, or (a string) of every scope whose storage key starts with it; in no
        particular order. Read-only."""
        ...

    def copy_scope(self, tx: Tx, parent: Scope, child: Scope, now_us: int) -> int:
        """Copies the parent's live keys into the child at version 1 (a key the child
        already has takes the parent's value at its version + 1). Returns how many."""
        ...

    def raw(
        self, tx: Tx, scope: Scope, keys: Sequence[str] | None = None
    ) -> dict[str, tuple[str, int, int | None]]:
        """(value JSON, version, expires_at) of the scope's rows (or those of ``keys``),
        expired ones too, by key."""
        ...


class FactRows(Protocol):
    """Fact rows with their vectors and tags. Positions are (created_at, seq): ``seq`` is
    the row number, unique in the store."""

    def get(self, tx: Tx, scope: Scope, fact_id: str) -> Fact | None:
        """The fact, or None when the scope holds no fact of that id (another scope's
        fact is None too)."""
        ...

    def by_ids(self, tx: Tx, scope: Scope, ids: Sequence[str]) -> dict[str, Fact]:
        """The scope's facts among ``ids``, by id; ids of other scopes are left out."""
        ...

    def words(
        self, tx: Tx, scope: Scope, ids: Sequence[str]
    ) -> dict[str, tuple[str, str, str | None, datetime]]:
        """The words, metadata (JSON text), type and creation time of the scope's facts
        among ``ids``, by id: what the graph's rules read, without the rest of each
        fact."""
        ...

    def by_hashes(self, tx: Tx, scope: Scope, hashes: Sequence[str]) -> dict[str, Fact]:
        """The scope's facts with these content hashes, by hash."""
        ...

    def strengths(self, tx: Tx, scope: Scope, ids: Sequence[str]) -> dict[str, float]:
        """The strengths of the scope's facts among ``ids`` that are not the default 1.0,
        by id (a fact at 1.0 is left out)."""
        ...

    def page(
        self, tx: Tx, scope: Scope, before: tuple[int, int] | None, limit: int
    ) -> list[tuple[Fact, tuple[int, int]]]:
        """Up to ``limit`` facts before the position ``before``, newest first, each with
        its position."""
        ...

    def count(self, tx: Tx, scope: Scope) -> int:
        """How many facts the scope holds, counted in the transaction's snapshot."""
        ...

    def any(self, tx: Tx, scope: Scope | None = None) -> bool:
        """Whether the scope (or, without one, the store) holds a fact."""
        ...

    def scope_of(self, tx: Tx, fact_id: str) -> Scope | None:
        """The scope a fact belongs to, wherever it is."""
        ...

    def taken(self, tx: Tx, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` a fact of the store has, live or in the trash."""
        ...

    def insert(self, tx: Tx, scope: Scope, facts: Sequence[NewFact]) -> set[str]:
        """Writes the facts, vectors and tags, in order; a fact whose content hash the
        scope already holds is skipped. Returns the content hashes written."""
        ...

    def rewrite(
        self,
        tx: Tx,
        scope: Scope,
        fact_id: str,
        content: str,
        content_hash: str,
        vector: Vectors | bytes | None,
        by: str | None,
        by_at_us: int | None,
        now_us: int,
    ) -> Fact | None:
        """Gives a fact new words (and, with ``vector``, a new vector: an array, or
        little-endian float32 bytes as the ledger keeps one), corrected by
        ``by`` at ``by_at_us``, and returns it as stored; None when the scope has no such
        fact. The caller checks that no other fact of the scope holds ``content_hash``."""
        ...

    def by_source(
        self, tx: Tx, scope: Scope, sandbox_id: str, entries: Sequence[int]
    ) -> dict[int, Fact]:
        """The scope's facts pointing at these entries of the session ``sandbox_id``, by
        entry index."""
        ...

    def set_context(
        self, tx: Tx, scope: Scope, fact_id: str, context: str | None, now_us: int
    ) -> bool:
        """Gives a fact another context (what full text matches beside its words);
        whether the scope has the fact."""
        ...

    def trashed_by_source(
        self, tx: Tx, scope: Scope, sandbox_id: str, entries: Sequence[int]
    ) -> dict[int, Fact]:
        """The scope's facts in the trash pointing at these entries of the session
        ``sandbox_id``, by entry index."""
        ...

    def set_trashed_context(self, tx: Tx, scope: Scope, fact_id: str, context: str | None) -> bool:
        """Gives a fact in the trash another context; whether the scope's trash holds it."""
        ...

    def departed(self, tx: Tx, limit: int) -> list[Departure]:
        """Up to ``limit`` queued facts: each left, came back from the trash or was
        reworded since it was last settled, and something is derived from it."""
        ...

    def settled(self, tx: Tx, departures: Sequence[Departure]) -> None:
        """Takes these off the queue."""
        ...

    def wiki_trash(self, tx: Tx, scope: Scope) -> dict[str, str]:
        """The scope's wiki facts in the trash, with the page each is a chunk of."""
        ...

    def wiki_listing(self, tx: Tx, scope: Scope, fact_ids: Sequence[str]) -> dict[str, str]:
        """The scope's wiki facts, live or in the trash, whose words or context list any
        of these facts, with the id of the page (document) each is a chunk of."""
        ...

    def wiki_texts(self, tx: Tx, scope: Scope) -> list[tuple[str, str, str]]:
        """Every wiki fact of the scope, live or in the trash: its id, the id of the page
        (document) it is a chunk of, and its words with its context (where a page lists
        a fact, as ``[<id>]``)."""
        ...

    def set_strength(self, tx: Tx, scope: Scope, fact_id: str, strength: float) -> bool:
        """Gives a live fact another strength; whether the scope has the fact."""
        ...

    def weak(self, tx: Tx, scope: Scope, below: float, cutoff_us: int) -> list[str]:
        """The ids of the scope's unverified facts weaker than ``below`` created before
        ``cutoff_us``, oldest first."""
        ...

    def without_vector(self, tx: Tx, scope: Scope, limit: int) -> list[tuple[int, str, str]]:
        """Up to ``limit`` (seq, id, content) of the scope's facts that have no vector."""
        ...

    def scope_keys(self, tx: Tx, limit: int, under: str = "") -> list[str]:
        """Up to ``limit`` keys of the scopes that hold facts, in order; with ``under``,
        only the keys that start with it."""
        ...

    def vector_from_bytes(self, raw: bytes) -> Vectors:
        """A vector from little-endian float32 bytes (as exports and the ledger keep one)."""
        ...

    def add_vectors(self, tx: Tx, rows: Sequence[tuple[int, Vectors]]) -> None:
        """Gives the facts at these seqs, which have none, their vectors."""
        ...

    def fulltext_sound(self, tx: Tx) -> bool:
        """Whether the store's full-text index agrees with the facts it indexes."""
        ...

    def rebuild_fulltext(self, tx: Tx) -> None:
        """Builds the store's full-text index again from the facts."""
        ...

    def traits(self, tx: Tx, scope: Scope, ids: Sequence[str]) -> dict[str, Traits]:
        """The words, time, speaker and strength of the scope's facts among ``ids``, by id."""
        ...

    def vectors(self, tx: Tx, scope: Scope, ids: Sequence[str]) -> dict[str, Vectors]:
        """The vectors of the scope's facts among ``ids``, by id."""
        ...

    def vector_of(self, tx: Tx, scope: Scope, fact_id: str) -> Vectors | None:
        """The fact's vector, or None."""
        ...

    def near_pairs(
        self, tx: Tx, scope: Scope, ids: Sequence[str], count: int, at_least: float
    ) -> list[tuple[str, str]] | None:
        """Pairs of the scope's facts among ``ids``, each once, where one is among the
        other's ``count`` nearest by vector with a cosine of about ``at_least`` or more.
        Found approximately: a pair may be missed and one a little under may come (the
        caller checks). None where the store cannot search so."""
        ...

    def ids(self, tx: Tx, scope: Scope, *, turn_user: str | None = None) -> list[str]:
        """The ids of the scope's facts (only those written for ``turn_user``, if
        given), oldest row first."""
        ...

    def created_before(self, tx: Tx, scope: Scope, cutoff_us: int) -> list[str]:
        """The ids of the scope's facts created before ``cutoff_us``, oldest first."""
        ...

    def oldest(self, tx: Tx, scope: Scope, count: int) -> list[str]:
        """The ids of the scope's ``count`` oldest facts (by position)."""
        ...

    def expired(self, tx: Tx, scope: Scope, at_us: int) -> list[str]:
        """The ids of the scope's facts whose ``expires_at`` is at or before ``at_us``,
        soonest first (from an index of the facts that expire)."""
        ...

    def trash(self, tx: Tx, scope: Scope, ids: Sequence[str] | None, now_us: int) -> list[str]:
        """Moves the scope's facts among ``ids`` (every one, for None) to the trash, row
        and vector as they are (out of full text, vectors, listing and fetch at once);
        the ids moved, in the order given. Ids not live in the scope are skipped."""
        ...

    def trashed(self, tx: Tx, scope: Scope, ids: Sequence[str]) -> dict[str, tuple[Fact, int]]:
        """The scope's trashed facts among ``ids``, with when they were trashed, by id."""
        ...

    def trash_page(
        self, tx: Tx, scope: Scope, before: tuple[int, str] | None, limit: int
    ) -> list[tuple[Fact, int]]:
        """Up to ``limit`` trashed facts before the position (deleted_at, id), most
        recently trashed first, each with when it was trashed."""
        ...

    def trash_ids(self, tx: Tx, scope: Scope, *, turn_user: str | None = None) -> list[str]:
        """The ids of the scope's trashed facts (only ``turn_user``'s, if given)."""
        ...

    def trash_expired(self, tx: Tx, scope: Scope, cutoff_us: int) -> list[str]:
        """The ids of the scope's facts trashed before ``cutoff_us``."""
        ...

    def trash_count(self, tx: Tx, scope: Scope) -> int:
        """How many facts the scope's trash holds."""
        ...

    def restore(self, tx: Tx, scope: Scope, ids: Sequence[str]) -> list[Fact]:
        """Moves trashed facts back (same ids and times, new positions in the order of
        ``ids``) with their vectors and tags; the facts moved, in that order (an id the
        scope's trash does not hold is skipped). The caller checks that no live fact of
        the scope holds their words, nor two of them the same."""
        ...

    def erase(self, tx: Tx, scope: Scope, ids: Sequence[str]) -> tuple[list[str], list[str]]:
        """Deletes for good the scope's facts among ``ids``, live and trashed: (live ids,
        trashed ids) deleted. Unknown ids are skipped."""
        ...

    def erase_scope(self, tx: Tx, scope: Scope, *, turn_user: str | None = None) -> tuple[int, int]:
        """Deletes for good every fact of the scope (only ``turn_user``'s, if given),
        live and trashed: (live, trashed) counts."""
        ...

    def copy_scope(self, tx: Tx, parent: Scope, child: Scope, ids: Sequence[str]) -> list[str]:
        """Copies the parent's facts with their vectors and tags into the child, in the
        parent's order, the n-th under ``ids[n]`` (as many ids as the parent has facts); a
        fact whose words the child holds is skipped. Returns the ids copied."""
        ...

    def texts_after(self, tx: Tx, after_seq: int, limit: int) -> list[tuple[int, str, str]]:
        """Up to ``limit`` (seq, content, metadata as stored JSON) of the whole store above
        ``after_seq``, by seq."""
        ...

    def count_after(self, tx: Tx, after_seq: int) -> int:
        """How many facts of the whole store are above ``after_seq``."""
        ...

    def replace_vectors(self, tx: Tx, rows: Sequence[tuple[int, Vectors]]) -> None:
        """Replaces the vectors of the facts at these seqs (re-embedding)."""
        ...


class CandidateRows(Protocol):
    """Recall's candidates: ids with a score, best first, after the filters."""

    def text(
        self, tx: Tx, scope: Scope, terms: Sequence[str], filters: Filters, limit: int
    ) -> list[Candidate]:
        """The best ``limit`` facts matching any of ``terms``, scored by BM25 (higher is
        better); none without terms."""
        ...

    def queue_holding(
        self, tx: Tx, scope: Scope, terms: Sequence[str], exclude: Collection[str] = ()
    ) -> None:
        """Queues for the graph's reading (as :meth:`GraphRows.queue` does) every fact of
        the scope whose words (or context) hold any of ``terms``, as the full-text match
        finds them, but those in ``exclude``; in the store, so a name held by a million
        facts puts none of them in the process. None without terms."""
        ...

    def vector(
        self, tx: Tx, scope: Scope, vector: Vectors, filters: Filters, limit: int
    ) -> list[Candidate]:
        """The ``limit`` facts nearest ``vector``, scored by cosine similarity. Raises
        EmbedderMismatch when the scope's vectors have another width."""
        ...

    def both(
        self,
        tx: Tx,
        scope: Scope,
        terms: Sequence[str],
        vector: Vectors,
        filters: Filters,
        limit: int,
        then: Callable[[Tx, list[Candidate]], object] | None = None,
    ) -> tuple[list[Candidate], list[Candidate]]:
        """``text`` and ``vector``'s lists for one hybrid recall, from ``tx``'s snapshot
        (a backend may find the two at once). ``then`` is called with the text half's
        list once it is found, and the transaction it was read in (``tx``, or another
        reading the same snapshot), possibly while the vector half is still searched:
        work on that list the caller would do next runs beside the search."""
        ...


class LedgerRows(Protocol):
    """The write ledger: entries (one per logical write, per scope, numbered in the order
    they were written) and their items (one per object changed)."""

    def begin(
        self,
        tx: Tx,
        scope: Scope,
        op: str,
        writer: Writer,
        now_us: int,
        reverts: int | None = None,
    ) -> int:
        """Opens an entry; its number (greater than every earlier entry's)."""
        ...

    def add(self, tx: Tx, entry: int, changes: Sequence[Change]) -> None:
        """Records the entry's items (one per kind and object); an object the entry
        holds already keeps its first before-state and takes the new action and token."""
        ...

    def holds(self, tx: Tx, entry: int, kind: str, object_id: str) -> bool:
        """Whether the entry holds an item of the object."""
        ...

    def drop(self, tx: Tx, entry: int) -> None:
        """Removes an entry that changed nothing."""
        ...

    def entry(self, tx: Tx, scope: Scope, seq: int) -> LedgerEntry | None:
        """The scope's entry with how many items it has and the first CHANGES_SHOWN of
        them in (kind, object) order, without their before-states; None when the scope
        has no such entry."""
        ...

    def items(self, tx: Tx, seq: int, after: tuple[str, str] | None, limit: int) -> list[Change]:
        """Up to ``limit`` of entry ``seq``'s items after the (kind, object) ``after``
        (None: from the first), in (kind, object) order, with their before-states."""
        ...

    def changes(
        self, tx: Tx, scope: Scope, seq: int, offset: int, limit: int
    ) -> list[Change] | None:
        """Up to ``limit`` of the entry's items past the first ``offset``, in (kind,
        object) order, without their before-states; None when the scope has no such
        entry."""
        ...

    def tokens(
        self,
        tx: Tx,
        scope: Scope,
        kind: str,
        ids: Sequence[str],
        before_entry: int | None = None,
    ) -> dict[str, tuple[int, int | None]]:
        """For each object (of ``kind``, among ``ids``) the ledger names, the newest item
        (before ``before_entry`` if given): (its entry, the token it left), by id."""
        ...

    def later(
        self, tx: Tx, scope: Scope, objects: Sequence[tuple[str, str]], after_entry: int
    ) -> list[int]:
        """The entries after ``after_entry`` that changed any of the (kind, id) objects,
        ascending."""
        ...

    def mark_reverted(self, tx: Tx, seq: int, by: int | None) -> None:
        """Records which entry reverted ``seq`` (None: its revert was reverted)."""
        ...

    def page(
        self,
        tx: Tx,
        scope: Scope,
        before: int | None,
        limit: int,
        object_id: str | None = None,
    ) -> list[LedgerEntry]:
        """Up to ``limit`` of the scope's entries numbered below ``before``, newest first
        (only those that changed ``object_id``, if given), each with how many items it
        has and the first CHANGES_SHOWN of them in (kind, object) order (those of
        ``object_id``, if given), without their before-states."""
        ...

    def scrub(
        self,
        tx: Tx,
        scope: Scope,
        fact_ids: Sequence[str] | None,
        *,
        kind: str = "fact",
        action: str | None = None,
        sparing: int | None = None,
    ) -> int:
        """Erases the before-states of every item naming these objects of ``kind`` in the
        scope (for None, every item of the scope's ledger, whatever it names), only those
        of ``action`` if given, and marks their entries scrubbed; how many were erased.
        ``sparing``: the entry being written, whose items (some written already, past
        what it holds) its own scrubs leave, as they leave those it holds."""
        ...

    def delete_before(self, tx: Tx, scope: Scope, cutoff_us: int) -> int:
        """Deletes the scope's entries written before ``cutoff_us``; how many."""
        ...

    def count(self, tx: Tx, scope: Scope) -> int:
        """How many entries the scope's ledger holds."""
        ...


class ModelRows(Protocol):
    """The record of the embedding model that wrote the store's vectors."""

    def get(self, tx: Tx, *, hold: bool = False) -> ModelRecord | None:
        """The record, or None before the first vectors. ``hold`` first makes every other
        writer that asks for it wait until ``tx`` ends (write transactions only)."""
        ...

    def put(self, tx: Tx, record: ModelRecord) -> None:
        """Records the model (replacing any record); idempotent."""
        ...

    def reembedded(self, tx: Tx) -> int:
        """The seq of the last fact a re-embedding under way has given its new vector (the
        facts are taken in seq order); 0 when it has given none, or none is under way."""
        ...

    def put_reembedded(self, tx: Tx, seq: int) -> None:
        """Records how far a re-embedding has come, in the transaction of its batch."""
        ...


class AgentRows(Protocol):
    """Agents' persisted specs."""

    def insert(self, tx: Tx, agent: Agent) -> None:
        """Raises StorageFailure when the id is taken (ids are random; it never is)."""
        ...

    def get(self, tx: Tx, agent_id: str) -> Agent | None:
        """The agent, ended or not; None for an unknown id."""
        ...

    def end(self, tx: Tx, agent_id: str, now_us: int) -> None:
        """Sets the end time unless one is set already; nothing for an unknown id."""
        ...

    def page(self, tx: Tx, after: str | None, limit: int, name: str | None) -> list[Agent]:
        """Up to ``limit`` agents with ids above ``after``, ascending id order; only those
        named ``name`` when it is given."""
        ...


class ShareRows(Protocol):
    """A person's allowances, one per (source, reader)."""

    def put(self, tx: Tx, share: Share) -> None:
        """Inserts the allowance; an existing one is kept as it is (idempotent)."""
        ...

    def get(self, tx: Tx, person: str, source: str, reader: str) -> Share | None:
        """The allowance with the time it was first given; None when there is none."""
        ...

    def delete(self, tx: Tx, person: str, source: str, reader: str) -> bool:
        """Whether it was there. Idempotent."""
        ...

    def listed(self, tx: Tx, person: str, source: str | None, reader: str | None) -> list[Share]:
        """The person's allowances from ``source`` or to ``reader`` (or all), in order of
        allowance time, then source, then reader."""
        ...


class GraphRows(Protocol):
    """The knowledge graph's rows: entities with their aliases, mentions and groundings,
    relations with their support, relation types, and which facts a model extractor has
    read. The database itself queues a fact written or given new words for reading, drops
    a fact's groundings, extracted relations' support and reads when its words change,
    its mentions, groundings, support and reads when it goes, an extracted entity left
    with no grounding, and an extracted relation left with no support; an entity that
    goes queues the facts that mentioned or grounded it.

    ``reads_facts`` says whether queued facts are read for names (``extractor="off"``
    leaves the graph to what callers assert)."""

    reads_facts: bool

    def entities(self, tx: Tx, scope: Scope, ids: Sequence[str]) -> dict[str, Entity]:
        """The scope's entities among ``ids`` (with their aliases), by id."""
        ...

    def entity_ids(self, tx: Tx, scope: Scope, limit: int) -> list[str]:
        """Up to ``limit`` ids of the scope's entities, by normal name."""
        ...

    def named(self, tx: Tx, scope: Scope, norms: Sequence[str]) -> dict[str, str]:
        """Which of ``norms`` the scope knows, as an entity's normalised name or alias:
        norm -> entity id."""
        ...

    def put_entity(self, tx: Tx, scope: Scope, entity: Entity, alias_norms: Sequence[str]) -> None:
        """Writes the entity (a new one, or new values for its id) and makes its aliases
        exactly ``entity.aliases`` (normalised as ``alias_norms``). The core checks that
        no name or alias is another entity's."""
        ...

    def delete_entity(self, tx: Tx, scope: Scope, entity_id: str) -> bool:
        """Deletes the entity with its aliases, mentions and relations; whether it was
        there."""
        ...

    def named_like(self, tx: Tx, scope: Scope, words: Sequence[str], limit: int) -> dict[str, str]:
        """Up to ``limit`` of the scope's entities whose name, an alias or the summary
        holds any of ``words`` (case-insensitively), each as one text: its name, its
        aliases and its summary on lines of their own; by id."""
        ...

    def set_mentions(self, tx: Tx, scope: Scope, readings: Sequence[FactReading]) -> None:
        """Makes each read fact's mentions exactly its ``mentions`` and the entities the
        rules find its words ground exactly its ``grounds`` (an extracted entity left
        with no grounding goes); groundings by another extractor stay as they are."""
        ...

    def ground(
        self, tx: Tx, scope: Scope, groundings: Sequence[tuple[str, str]], extractor: str
    ) -> None:
        """Adds ``(fact id, entity id)`` groundings by ``extractor`` (``"llm"``,
        ``"spacy"``), each of an entity of the scope; one already there is kept. They go
        with the fact's words."""
        ...

    def unread(
        self, tx: Tx, scope: Scope, extractor: str, limit: int, fact_ids: Sequence[str] = ()
    ) -> list[str]:
        """Up to ``limit`` of the scope's live facts (among ``fact_ids``, when given) that
        ``extractor`` has not read for their current words: the extractor's backlog,
        oldest row first. A wiki page is never in it (the graph reads the facts folded
        into it, not the page)."""
        ...

    def mark_read(
        self, tx: Tx, scope: Scope, extractor: str, reads: Sequence[tuple[str, str]]
    ) -> None:
        """Marks ``(fact id, content hash)`` read by ``extractor``: the scope's live facts
        among them leave its backlog while their words hash so. The mark goes when the
        fact's words change or the fact leaves."""
        ...

    def mentions(
        self, tx: Tx, scope: Scope, *, facts: Sequence[str] = (), entities: Sequence[str] = ()
    ) -> list[Mention]:
        """The scope's mentions in ``facts`` or of ``entities``, by fact then start."""
        ...

    def mentioning(
        self, tx: Tx, scope: Scope, entities: Sequence[str], *, until_us: int | None, limit: int
    ) -> list[str]:
        """The ids of the newest ``limit`` live facts of the scope that mention
        ``entities`` (made at or before ``until_us``, where given): newest first, ties by
        id, highest first. The store orders them; no fact row is read for it."""
        ...

    def groundings(
        self, tx: Tx, scope: Scope, entities: Sequence[str] = ()
    ) -> dict[str, list[str]]:
        """The entities (among ``entities``, when given) each of the scope's facts
        grounds, by the rules or a model (by fact, ids sorted, each once)."""
        ...

    def queued(self, tx: Tx, limit: int) -> list[tuple[str, str]]:
        """Up to ``limit`` facts queued for reading (written, given new words, or naming
        an entity that went), as (scope key, fact id)."""
        ...

    def queue(self, tx: Tx, scope: Scope, fact_ids: Sequence[str]) -> None:
        """Queues facts for reading again (a name they hold became known)."""
        ...

    def gone(self, tx: Tx, limit: int) -> list[tuple[str, str]]:
        """Up to ``limit`` names (normal forms) that left their scopes with an entity or
        an alias: (scope key, name)."""
        ...

    def forget_gone(self, tx: Tx, items: Sequence[tuple[str, str]]) -> None:
        """Takes these names off the list."""
        ...

    def dequeue(self, tx: Tx, items: Sequence[tuple[str, str]]) -> None: ...

    def relation_type(self, tx: Tx, scope: Scope, type: str) -> bool | None:
        """Whether the scope declared ``type`` single-valued; None when never declared."""
        ...

    def put_relation_type(
        self, tx: Tx, scope: Scope, type: str, single_valued: bool | None
    ) -> None:
        """Declares ``type`` single-valued or not; None forgets the declaration."""
        ...

    def put_relation(self, tx: Tx, scope: Scope, relation: Relation) -> None:
        """Writes the relation (new, or new values for its id) and makes its support
        exactly ``relation.facts``."""
        ...

    def relations(
        self,
        tx: Tx,
        scope: Scope,
        *,
        ids: Sequence[str] = (),
        entities: Sequence[str] = (),
        types: Sequence[str] = (),
        source: str | None = None,
        limit: int = 1000,
    ) -> list[Relation]:
        """The scope's relations with their support, oldest first: among ``ids`` (when
        given), touching any of ``entities`` (when given), leaving ``source``, of one of
        ``types``."""
        ...

    def erase_scope(self, tx: Tx, scope: Scope) -> int:
        """Deletes the scope's whole graph for good: entities (asserted ones too) with
        their aliases, relations, relation types; how many entities went."""
        ...

    def delete_relation(self, tx: Tx, scope: Scope, relation_id: str) -> bool:
        """Deletes the relation and its support; whether it was there."""
        ...


class SessionRows(Protocol):
    """Episodic sessions and their append-only entries. The core checks scopes and fork
    points; ``get`` finds a session whatever its scope. Every read but ``window`` leaves
    out the entries hidden because each fact remembered from them is in the trash
    (:mod:`engram.core.derived`)."""

    def get(self, tx: Tx, session_id: str, *, hold: bool = False) -> Session | None:
        """The session, or None. ``hold`` first makes every other writer that holds it
        wait until ``tx`` ends (write transactions only): appends take turns."""
        ...

    def latest(self, tx: Tx, scope: Scope) -> Session | None:
        """The scope's newest session (by start time, then id), or None."""
        ...

    def insert(self, tx: Tx, session: Session) -> None:
        """Writes a new session. Raises StorageFailure when the id is taken (the core
        looks first)."""
        ...

    def append(self, tx: Tx, session_id: str, start: int, entries: Sequence[NewEntry]) -> None:
        """Writes the entries at ``start``, ``start + 1``, ... and moves the session's
        next index past them. The caller holds the session and checked ``start``."""
        ...

    def entries(self, tx: Tx, session_id: str, start: int, stop: int) -> list[Entry]:
        """The session's entries with indexes in [start, stop), in index order."""
        ...

    def episodes(
        self,
        tx: Tx,
        scope: Scope,
        *,
        depth: int,
        after_us: int | None,
        words: Sequence[str],
        limit: int,
    ) -> list[Entry]:
        """Up to ``limit`` entries of the scope's sessions and of their ancestors up to
        ``depth`` forks back (0: the scope's own), each ancestor's up to its fork point,
        ordered by (at, depth, session id, index); only those after ``after_us`` and
        containing every one of ``words`` (ASCII letters compared case-insensitively)."""
        ...

    def forest(self, tx: Tx, scope: Scope) -> list[Session]:
        """Every session of the trees holding the scope's sessions: their roots and all
        that descends from them, in order of start time, then id."""
        ...

    def entries_of(self, tx: Tx, session_ids: Sequence[str]) -> list[Entry]:
        """Every entry of these sessions, by session, then index."""
        ...

    def window(
        self, tx: Tx, session_id: str, start: int, stop: int
    ) -> list[tuple[Entry, bool, int | None, str | None]]:
        """The session's entries with indexes in [start, stop), the hidden ones too, each
        with whether it is hidden, the width its turn's context was built with (None:
        not a turn, or written before widths were kept) and the fact it repeats (a turn
        whose words were stored already; None otherwise)."""
        ...

    def set_width(self, tx: Tx, session_id: str, start: int, stop: int, width: int) -> None:
        """Records the width the contexts of the turns at [start, stop) were built with."""
        ...

    def set_repeats(self, tx: Tx, session_id: str, repeats: Sequence[tuple[int, str]]) -> None:
        """Records, for each (index, fact id), that the turn at the index repeats the fact
        (its words were stored already)."""
        ...

    def repeating(self, tx: Tx, fact_ids: Sequence[str]) -> list[tuple[str, int, str]]:
        """The entries repeating any of these facts: (session id, index, fact id)."""
        ...

    def hide(self, tx: Tx, session_id: str, index: int, hidden: bool) -> None:
        """Hides an entry from every read, or shows it again."""
        ...

    def reword(self, tx: Tx, session_id: str, index: int, content: str) -> None:
        """Gives an entry other words (those of the fact remembered from it, corrected)."""
        ...

    def erase_entry(self, tx: Tx, session_id: str, index: int) -> None:
        """Deletes an entry for good (its index stays taken)."""
        ...

    def erase_scope(self, tx: Tx, scope: Scope) -> int:
        """Deletes the scope's sessions and their entries for good; a session forked
        from one of them becomes a root. How many sessions went."""
        ...


class UsageRows(Protocol):
    """Retrieval feedback: whether a response used or ignored an injected fact. Rows are
    only added; a fact's go with its deletion for good (the database's triggers), not
    with a soft forget."""

    def add(self, tx: Tx, scope: Scope, rows: Sequence[Feedback]) -> None:
        """Inserts the rows (their ids new). A write to memory: refused outside a ledger
        entry."""
        ...

    def of_fact(self, tx: Tx, scope: Scope, fact_id: str) -> list[Feedback]:
        """The scope's rows about ``fact_id``, oldest first (then in order of writing)."""
        ...

    def pending(self, tx: Tx, scope: Scope, limit: int) -> list[Feedback]:
        """Up to ``limit`` of the scope's rows not yet applied to a live fact's strength,
        in order of writing."""
        ...

    def applied(self, tx: Tx, scope: Scope, fact_ids: Sequence[str]) -> list[Feedback]:
        """The scope's applied rows about ``fact_ids``, oldest first."""
        ...

    def mark_applied(self, tx: Tx, scope: Scope, ids: Sequence[str], applied: bool) -> None:
        """Marks the scope's rows ``ids`` applied (or not). A write to memory."""
        ...


class HealthRows(Protocol):
    """What a scope, or the whole store, holds: counts and bytes, read, never written."""

    def report(
        self,
        tx: Tx,
        scope: Scope | None,
        now_us: int,
        trash_cutoff_us: int | None,
        ledger_cutoff_us: int | None,
    ) -> HealthCounts:
        """The scope's counts (None: the whole store's, with the bytes it takes), all
        read in ``tx``; working keys count as live when unexpired at ``now_us`` (else as
        stale), trashed facts and ledger entries as past their retention when older than
        their cutoff (None: none is). Runs in a read transaction: it writes nothing, not
        even a check that would."""
        ...

    def graph_rows(self, tx: Tx, scope: Scope) -> StoredGraph:
        """The scope's graph as a rebuild compares it: its entities, aliases, mentions
        and the rules' groundings of its entities."""
        ...


class DocumentRows(Protocol):
    """Documents and their chunks. A document is unique per (scope, source); its chunks
    are written whole with it. The database clears a chunk's ``fact_id`` when that fact
    is deleted for good."""

    def get(self, tx: Tx, scope: Scope, document_id: str) -> Document | None:
        """The scope's document with this id, its chunks in order."""
        ...

    def by_source(self, tx: Tx, scope: Scope, source: str) -> Document | None:
        """The scope's document named ``source``, its chunks in order."""
        ...

    def list(self, tx: Tx, scope: Scope, *, after: str | None, limit: int) -> list[Document]:
        """Up to ``limit`` of the scope's documents by source, those after ``after``,
        without their chunks."""
        ...

    def put(self, tx: Tx, scope: Scope, document: Document) -> None:
        """Writes the document and exactly its chunks, replacing any stored under its id
        (a write to memory: inside a ledger entry)."""
        ...

    def delete(self, tx: Tx, scope: Scope, document_id: str) -> None:
        """Deletes the document and its chunks (inside a ledger entry)."""
        ...

    def naming(self, tx: Tx, scope: Scope, fact_ids: Sequence[str]) -> set[str]:
        """Those of ``fact_ids`` that a chunk of one of the scope's documents names."""
        ...

    def holding(self, tx: Tx, scope: Scope, fact_ids: Sequence[str]) -> builtins.list[str]:
        """The ids of the scope's documents with a chunk naming any of these facts."""
        ...

    def unname(self, tx: Tx, fact_ids: Sequence[str]) -> None:
        """Chunks naming these facts (deleted for good) name none from now on."""
        ...

    def provenance(self, tx: Tx, scope: Scope, fact_id: str) -> builtins.list[Provenance]:
        """The chunks of the scope's documents that name the fact, by source and index."""
        ...


class Store(Protocol):
    """A unit of work over working memory, facts, agents, allowances and sessions."""

    @property
    def working(self) -> WorkingRows: ...

    @property
    def facts(self) -> FactRows: ...

    @property
    def candidates(self) -> CandidateRows: ...

    @property
    def models(self) -> ModelRows: ...

    @property
    def agents(self) -> AgentRows: ...

    @property
    def shares(self) -> ShareRows: ...

    @property
    def ledger(self) -> LedgerRows: ...

    @property
    def sessions(self) -> SessionRows: ...

    @property
    def graph(self) -> GraphRows: ...

    @property
    def usage(self) -> UsageRows: ...

    @property
    def documents(self) -> DocumentRows: ...

    @property
    def health(self) -> HealthRows: ...

    @property
    def schema_version(self) -> int:
        """The schema version the store is at (migrations are applied on open)."""
        ...

    def transaction(
        self, *, write: bool = True, lock: Sequence[Scope] = ()
    ) -> AbstractContextManager[Tx]:
        """One transaction: a read one sees one snapshot throughout; a write one commits
        all of its work or none. Inside another transaction of the same thread it is a
        savepoint of it: its work is undone alone if it raises. ``lock`` takes the scopes'
        locks first, in one order, so the checks and writes of a scope never interleave
        with another writer's. Driver errors come out as StorageFailure or Unavailable."""
        ...

    def run(self, work: Callable[[Tx], T], *, write: bool = True, lock: Sequence[Scope] = ()) -> T:
        """``work`` in :meth:`transaction`, run again whole when the database asks for it
        (a lock still busy, a serialization failure, a deadlock). Inside a transaction it
        runs once, as a savepoint."""
        ...

    def search_approximately_from(self, facts: int) -> None:
        """Scopes of at least ``facts`` facts search their vectors through an approximate
        index from now on (the backend's own default until this is called)."""
        ...

    def keep_text_bases_from(self, facts: int) -> None:
        """Scopes of at least ``facts`` facts save their common words' postings beside
        the full-text index from now on, where the backend keeps such a copy (SQLite);
        elsewhere nothing changes."""
        ...

    def index_vectors(self, scope: Scope, *, dry_run: bool = False) -> bool:
        """Brings the scope's approximate vector index up to date now, returning once it
        is: built where the scope has reached the threshold and has none, or built again
        where facts were written or changed beside it (outside any transaction; at a
        million facts, minutes). Whether it built one (``dry_run``: whether it would);
        False below the threshold, when the index is current, or while another process
        builds it."""
        ...

    def close(self) -> None:
        """Releases the connections; a transaction still open in another thread fails."""
        ...
