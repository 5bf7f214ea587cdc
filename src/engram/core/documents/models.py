"""A document's records: the document, its chunks as stored, what an ingest did."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

Status = Literal["created", "unchanged", "replaced", "skipped"]
STRATEGIES = ("auto", "markdown", "paragraph")
MEDIA_TYPES = ("text/markdown", "text/plain", "text/html", "application/pdf")
MIN_CHUNK_TOKENS = 16
DEFAULT_CHUNK_TOKENS = 200
DEFAULT_MAX_TOKENS = 256  # an embedder that does not say counts as the local model


@dataclass(frozen=True, slots=True)
class StoredChunk:
    """One chunk as stored: its span of the document's text, its heading trail, the
    fact holding its words (None once that fact was deleted for good) and, for a PDF,
    the page it was cut from (from 1)."""

    idx: int
    start: int
    end: int
    heading: str
    fact_id: str | None
    page: int | None = None


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a fact's words came from: a chunk of one of the scope's documents."""

    document_id: str
    source: str
    media_type: str
    idx: int
    start: int
    end: int
    heading: str
    page: int | None


@dataclass(frozen=True, slots=True)
class Document:
    """A document of a scope, unique by ``source`` (its name); ``sha256`` of its bytes."""

    id: str
    source: str
    media_type: str
    title: str
    sha256: str
    bytes: int
    chunker: str
    metadata: dict[str, str]
    created_at: datetime
    updated_at: datetime
    chunks: tuple[StoredChunk, ...] = ()


@dataclass(frozen=True, slots=True)
class IngestReport:
    """What one ingest did: ``created``, ``unchanged`` (the same bytes: nothing written),
    ``replaced`` or ``skipped`` (``reason`` says why; a walk's unsupported files)."""

    status: Status
    source: str
    document_id: str | None = None
    chunks: int = 0
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class WalkReport:
    """What ingesting a file or directory did, one report per file met, in path order."""

    reports: tuple[IngestReport, ...] = field(default_factory=tuple)
    dry_run: bool = False  # what would be done: nothing was written

    def count(self, status: Status) -> int:
        return sum(1 for r in self.reports if r.status == status)
