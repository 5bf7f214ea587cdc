"""The seams between the core and the outside: a store and an embedder.

Backends implement :class:`Store`; they return candidates and rows, the core ranks.
All times are integer microseconds (see :mod:`engram.core.clock`). Every method takes
the scope and filters by it in the query itself.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol, TypeAlias

from engram.core.agents import AgentStore
from engram.core.models import Caps, Compaction, Fact, Filters, SourceRef, WorkingEntry
from engram.core.ranking import Candidate
from engram.core.scopes import Scope
from engram.core.sharing import ShareStore

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vectors: TypeAlias = npt.NDArray[np.float32]
else:  # only annotations name it: working memory and listing never load numpy
    Vectors = object
EmbedKind = Literal["passage", "query"]


class Embedder(Protocol):
    """Turns texts into unit-length vectors, many texts per call."""

    @property
    def model(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> Vectors:
        """One row per text, L2-normalised. Raises UpstreamFailure when the provider fails."""
        ...


@dataclass(frozen=True, slots=True)
class NewFact:
    """A fact ready to be written: validated, hashed and embedded."""

    content: str
    content_hash: str
    context: str | None
    vector: Vectors
    created_at_us: int
    source_ref: SourceRef | None
    type: str | None
    tags: tuple[str, ...]
    metadata_json: str


@dataclass(frozen=True, slots=True)
class ModelRecord:
    """The embedding model that wrote a store's vectors."""

    model: str
    dimension: int

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


class Store(AgentStore, ShareStore, Protocol):
    """Storage of working memory, facts and agents; memory one scope per call."""

    @property
    def schema_version(self) -> int:
        """The schema version the store is at (migrations are applied on open)."""
        ...

    # -- working memory ----------------------------------------------------------
    def working_get(self, scope: Scope, key: str, now_us: int) -> WorkingEntry | None: ...

    def working_set(
        self,
        scope: Scope,
        key: str,
        value_json: str,
        *,
        expected_version: int | None,
        expires_at_us: int | None,
        now_us: int,
    ) -> WorkingEntry:
        """Raises Conflict when ``expected_version`` is given and differs (0: must be unset)."""
        ...

    def working_delete(self, scope: Scope, key: str) -> bool: ...

    def working_list(
        self, scope: Scope, after: str | None, limit: int, now_us: int
    ) -> list[WorkingEntry]:
        """Up to ``limit`` entries with keys above ``after``, ascending UTF-8 byte order."""
        ...

    # -- facts -------------------------------------------------------------------
    def existing_hashes(self, scope: Scope, hashes: Sequence[str]) -> dict[str, Fact]: ...

    def facts_insert(
        self,
        scope: Scope,
        facts: Sequence[NewFact],
        caps: Caps,
        now_us: int,
        model: ModelRecord,
    ) -> list[tuple[str, Fact]]:
        """Writes new facts in one transaction (a duplicate hash keeps the stored fact),
        then applies the caps to the scope. Returns the scope's facts with the given
        content hashes, each with its hash.
        Raises EmbedderMismatch, writing nothing, when the store's vectors came from
        another model; records ``model`` when the store has none yet."""
        ...

    def fact_get(self, scope: Scope, fact_id: str) -> Fact | None: ...

    def facts_by_ids(self, scope: Scope, ids: Sequence[str]) -> dict[str, Fact]: ...

    def facts_page(
        self, scope: Scope, before: tuple[int, int] | None, limit: int
    ) -> list[tuple[Fact, tuple[int, int]]]:
        """Newest first; each fact with its position, for the next page's ``before``."""
        ...

    def facts_count(self, scope: Scope) -> int: ...

    def fact_correct(
        self,
        scope: Scope,
        fact_id: str,
        content: str,
        content_hash: str,
        vector: Vectors | None,
        by: str | None,
        now_us: int,
        model: ModelRecord | None,
    ) -> Fact:
        """Raises NotFound, or Conflict when the scope already holds the new text.
        Without ``vector`` the fact keeps the vector of its old words."""
        ...

    def fact_scope(self, fact_id: str) -> Scope | None:
        """The scope a fact belongs to, wherever it is."""
        ...

    def fact_delete(self, scope: Scope, fact_id: str) -> bool: ...

    def facts_delete_all(self, scope: Scope, expected_count: int) -> int:
        """Raises Conflict (deleting nothing) when the scope holds more than expected."""
        ...

    def compact(self, scope: Scope, caps: Caps, now_us: int) -> Compaction: ...

    def fork(
        self, parent: Scope, child: Scope, now_us: int, *, into_existing: bool
    ) -> tuple[int, int]:
        """Copies working memory and facts (vectors included) in one transaction and
        returns (working keys, facts) copied. Raises Conflict, copying nothing, when the
        child already holds a live working key or a fact, unless ``into_existing``."""
        ...

    # -- recall candidates -------------------------------------------------------
    def text_candidates(
        self, scope: Scope, terms: Sequence[str], filters: Filters, limit: int
    ) -> list[Candidate]:
        """The best ``limit`` facts matching any of ``terms`` after ``filters``, best
        first, scored by BM25 (higher is better)."""
        ...

    def vector_candidates(
        self, scope: Scope, vector: Vectors, filters: Filters, limit: int
    ) -> list[Candidate]:
        """The ``limit`` facts nearest ``vector`` after ``filters``, best first, scored
        by cosine similarity."""
        ...

    # -- the embedding model -----------------------------------------------------
    def model_record(self) -> ModelRecord | None: ...

    def record_model(self, record: ModelRecord) -> None: ...

    def has_facts(self) -> bool: ...

    def iter_fact_texts(self, batch: int) -> Iterator[list[tuple[int, str]]]: ...

    def replace_vectors(self, rows: Sequence[tuple[int, Vectors]]) -> None: ...

    def close(self) -> None: ...
