"""Documents on the wire (the agent routes, camelCase): text, a URL or an upload's fields
to ingest, what an ingest did, a document and its chunks. The HTTP route never takes a
path on the server."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field

from engram.core import limits
from engram.core.documents import reading, urls
from engram.core.documents.models import (
    DEFAULT_CHUNK_TOKENS,
    MIN_CHUNK_TOKENS,
    Document,
    IngestReport,
    Provenance,
)
from engram.wire import Answer, Body, Label, _unset_when_none, shown


class Cutting(Body):
    """How a document is cut into chunks, and what its facts carry."""

    strategy: Literal["auto", "markdown", "paragraph"] = "auto"
    chunk_tokens: int = Field(
        default=DEFAULT_CHUNK_TOKENS, alias="chunkTokens", ge=MIN_CHUNK_TOKENS, le=254
    )
    tags: list[Label] | None = Field(default=None, max_length=limits.MAX_TAGS)
    type: Label = "document"


class DocumentText(Cutting):
    """``text`` ingested as the agent's document ``name``: the same text again writes
    nothing; changed, it replaces the document's chunks whole. HTML is read as the
    Markdown trafilatura writes (a PDF is uploaded as a file)."""

    text: str = Field(min_length=1)
    name: Annotated[str, shown(reading.MAX_SOURCE_CHARS, blank=False)] = Field(
        min_length=1, max_length=reading.MAX_SOURCE_CHARS
    )
    media_type: Literal["text/markdown", "text/plain", "text/html"] = Field(
        default="text/markdown", alias="mediaType"
    )


class DocumentUrl(Cutting):
    """``url`` (http or https) fetched and ingested as the agent's document named by the
    URL: public addresses only, unless the service allows private ones."""

    url: str = Field(
        min_length=1, max_length=urls.MAX_URL_CHARS, pattern=r"^[Hh][Tt][Tt][Pp][Ss]?://[^\x00]*$"
    )


class DocumentUpload(Cutting):
    """The fields beside an uploaded ``file``: its name (default: the file's name) and
    media type (default: the upload's Content-Type, else its first bytes, else the
    name's suffix)."""

    name: str | None = Field(default=None, min_length=1, max_length=reading.MAX_SOURCE_CHARS)
    media_type: Literal["text/markdown", "text/plain", "text/html", "application/pdf"] | None = (
        Field(default=None, alias="mediaType")
    )


class IngestOut(Answer):
    status: Literal["created", "unchanged", "replaced", "skipped"]
    source: str
    document_id: str | None
    chunks: int

    @classmethod
    def of(cls, report: IngestReport) -> IngestOut:
        return cls(
            status=report.status,
            source=report.source,
            document_id=report.document_id,
            chunks=report.chunks,
        )


class ChunkOut(Answer):
    """A chunk: its span of the document's text, its heading trail, its fact (null once
    that fact was deleted for good)."""

    idx: int
    start: int
    end: int
    heading: str
    fact_id: str | None
    page: int | None


class ProvenanceOut(Answer):
    """A chunk holding the fact's words: its document, its span of the document's text
    (``text[start:end]``), its heading trail and, for a PDF, its page."""

    document_id: str
    source: str
    media_type: str
    idx: int
    start: int
    end: int
    heading: str
    page: int | None

    @classmethod
    def of(cls, found: Provenance) -> ProvenanceOut:
        return cls(
            document_id=found.document_id,
            source=found.source,
            media_type=found.media_type,
            idx=found.idx,
            start=found.start,
            end=found.end,
            heading=found.heading,
            page=found.page,
        )


class ProvenancesOut(Answer):
    provenance: list[ProvenanceOut]


class DocumentOut(Answer):
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
    chunks: list[ChunkOut] | None = _unset_when_none()

    @classmethod
    def of(cls, doc: Document, *, chunks: bool = False) -> DocumentOut:
        return cls(
            id=doc.id,
            source=doc.source,
            media_type=doc.media_type,
            title=doc.title,
            sha256=doc.sha256,
            bytes=doc.bytes,
            chunker=doc.chunker,
            metadata=doc.metadata,
            created_at=doc.created_at,
            updated_at=doc.updated_at,
            chunks=[
                ChunkOut(
                    idx=c.idx,
                    start=c.start,
                    end=c.end,
                    heading=c.heading,
                    fact_id=c.fact_id,
                    page=c.page,
                )
                for c in doc.chunks
            ]
            if chunks
            else None,
        )


class DocumentsOut(Answer):
    documents: list[DocumentOut]
