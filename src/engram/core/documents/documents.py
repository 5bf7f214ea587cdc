"""Ingesting documents: each chunk a fact, a document replaced whole or not at all.

An ingest reads and cuts the text, then embeds the chunks that are new words, outside any
transaction; then one ledger entry (``ingest``), under the scope's lock, writes the new
facts, the document with exactly its new chunks, and trashes the old chunks' facts that
no chunk of the scope names any more. Two writers ingesting the same source one after the
other under that lock: the last one wins whole. The same bytes cut the same way again
write nothing. Reverting the entry brings the old version back: its chunks, and its facts
out of the trash (:mod:`engram.core.undo`).
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from engram.core import ledger, limits, recording, rules
from engram.core.clock import Clock, from_us
from engram.core.documents import chunking, files, history, loading, reading, urls
from engram.core.documents.history import state
from engram.core.documents.models import (
    DEFAULT_CHUNK_TOKENS,
    Document,
    IngestReport,
    Provenance,
    Status,
    StoredChunk,
    WalkReport,
)
from engram.core.errors import CapabilityMissing, InvalidInput, NotFound, Unprocessable
from engram.core.models import Writer
from engram.core.ports import Embedder, Store, TokenCounter, Tx
from engram.core.scopes import Scope
from engram.core.writing import Batch, FactWriter, Note, require_embedder

ATTEMPTS = 3  # an ingest whose reused facts left meanwhile is prepared again


def new_document_id() -> str:
    return "d_" + secrets.token_hex(12)


@dataclass(frozen=True, slots=True)
class _How:
    """How each document of one ingest is cut and written."""

    strategy: str
    chunk_tokens: int
    tags: Sequence[str]
    kind: str
    dry_run: bool = False


class Stale(Exception):
    """A fact the prepared batch reuses was deleted for good meanwhile: prepare again."""


class Documents:
    def __init__(
        self,
        store: Store,
        embedder: Embedder | None,
        facts: FactWriter,
        *,
        clock: Clock,
        writer: Writer,
        fetcher: urls.Fetcher | None = None,
    ) -> None:
        self._store, self._embedder, self._fetching = store, embedder, fetcher
        self._facts = facts
        self._now, self._writer = clock, writer

    def _require(self) -> Embedder:
        return require_embedder(self._embedder, "ingesting documents")

    def ingest_text(
        self,
        ref: Scope,
        data: str | bytes,
        *,
        name: str,
        media_type: str = "text/markdown",
        strategy: str = "auto",
        chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
        tags: Sequence[str] = (),
        type: str = "document",
    ) -> IngestReport:
        """Ingests ``data`` (text, or bytes in any common encoding; a PDF as bytes) as
        the scope's document ``name``, read as ``media_type`` (see
        :mod:`engram.core.documents.loading`): ``created``, ``unchanged`` (same bytes,
        same cut: nothing written) or ``replaced``. Raises InvalidInput (an unknown
        strategy or media type, chunk_tokens outside 16 to the embedder's window less 2),
        Unprocessable (not text, an encrypted or broken PDF), CapabilityMissing (no
        embedder, or the ``ingest`` extra missing), UpstreamFailure (the embedder
        failed); nothing is written on any of them."""
        return self._one(ref, data, name, media_type, _How(strategy, chunk_tokens, tags, type))

    def _plan(
        self,
        ref: Scope,
        data: str | bytes,
        name: str,
        media_type: str,
        how: _How,
    ) -> IngestReport | tuple[Document, list[Note], Document | None]:
        """The document and the notes of its chunks, and the stored one it replaces; or
        the ``unchanged`` report. Reads and cuts, writes nothing."""
        source = reading.check_source(name)
        media = reading.check_media_type(media_type)
        embedder = self._require()
        size = reading.check_chunk_tokens(how.chunk_tokens, embedder)
        strategy = reading.check_strategy(how.strategy, media)
        kept_tags, kind = limits.check_tags(how.tags), limits.check_label(how.kind, "type")
        raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        chunker = f"{strategy}:{size}"
        sha = reading.digest(raw)
        store = self._store
        now = store.run(lambda tx: store.documents.by_source(tx, ref, source), write=False)
        if now is not None and now.sha256 == sha and now.chunker == chunker:
            return IngestReport("unchanged", source, now.id, len(now.chunks))
        loaded = loading.load(data if media == loading.PDF else raw, media)
        cut = loading.cut(loaded, strategy, size, _counter(embedder))
        doc = Document(
            id=now.id if now is not None else new_document_id(),
            source=source,
            media_type=media,
            title=(cut.title or source)[:1024],
            sha256=sha,
            bytes=len(raw),
            chunker=chunker,
            metadata=cut.front_matter,
            created_at=from_us(0),
            updated_at=from_us(0),
        )
        return doc, _notes(doc, cut, kept_tags, kind), now

    def _fetcher(self) -> urls.Fetcher:
        if self._fetching is None:
            raise CapabilityMissing("this memory was opened without a fetcher for URLs")
        return self._fetching

    def _commit(self, ref: Scope, doc: Document, notes: list[Note]) -> IngestReport:
        for attempt in range(ATTEMPTS):
            try:
                return self._write(ref, doc, self._facts.prepare(ref, notes))
            except Stale:
                if attempt == ATTEMPTS - 1:
                    raise
        raise AssertionError("unreachable")

    def _write(self, ref: Scope, doc: Document, batch: Batch) -> IngestReport:
        store = self._store

        def run(tx: Tx) -> IngestReport:
            return recording.write(
                store,
                tx,
                ref,
                "ingest",
                self._writer,
                batch.now,
                lambda rec: self._replace(rec, doc, batch),
            )

        return store.run(run, lock=[ref])

    def _replace(self, rec: ledger.Entry, doc: Document, batch: Batch) -> IngestReport:
        store, tx, ref = rec.store, rec.tx, rec.scope
        current = store.documents.by_source(tx, ref, doc.source)
        if current is not None and current.sha256 == doc.sha256 and current.chunker == doc.chunker:
            return IngestReport("unchanged", doc.source, current.id, len(current.chunks))
        _revive(rec, batch)
        facts = batch.facts(self._facts.write(rec, batch))
        spans = [(json.loads(meta), note) for note, _, meta in batch.checked]
        chunks = tuple(
            StoredChunk(i, int(m["start"]), int(m["end"]), str(m["heading"]), f.id, m.get("page"))
            for i, ((m, _), f) in enumerate(zip(spans, facts, strict=True))
        )
        at = from_us(rec.now)
        new = replace(
            doc,
            id=current.id if current is not None else doc.id,
            created_at=current.created_at if current is not None else at,
            updated_at=at,
            chunks=chunks,
        )
        store.documents.put(tx, ref, new)
        rec.record("document", new.id, "ingest", state(current))
        _trash_unnamed(rec, current, {c.fact_id for c in chunks})
        if current is None:
            return IngestReport("created", doc.source, new.id, len(chunks))
        return IngestReport("replaced", doc.source, new.id, len(chunks))

    def ingest(
        self,
        ref: Scope,
        source: str | os.PathLike[str],
        *,
        include: Sequence[str] = files.DEFAULT_INCLUDE,
        exclude: Sequence[str] = (),
        max_files: int = 10_000,
        max_bytes: int = 50_000_000,
        strategy: str = "auto",
        chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
        tags: Sequence[str] = (),
        type: str = "document",
        progress: Callable[[IngestReport], None] | None = None,
        allow_private: bool = False,
        dry_run: bool = False,
    ) -> WalkReport:
        """Ingests a URL (``http://`` or ``https://``, fetched as
        :mod:`engram.core.documents.urls` says, named by the URL), a file, or every file
        of a directory that ``include`` matches and ``exclude`` does not (see
        :mod:`engram.core.documents.files`), each file named by its absolute path, in
        path order, one ledger entry each (``progress`` hears each report). In a
        directory, a file of a type engram does not read, or one it cannot read, is
        ``skipped`` with its reason. ``dry_run`` reads and cuts but writes nothing: the
        reports say what would be done. Raises NotFound, InvalidInput (bad arguments,
        another scheme than http(s), a private address unless ``allow_private``, a
        single file of another type), TooLarge (over ``max_files`` files or
        ``max_bytes`` bytes) before anything is written, UpstreamFailure (the fetch
        failed), Unprocessable (a URL or single file engram cannot read) and what
        :meth:`ingest_text` raises."""
        limit_files, limit_bytes = files.check_limits(max_files, max_bytes)
        globs = files.check_globs(include, "include"), files.check_globs(exclude, "exclude")
        reading.check_strategy(strategy, "text/plain")
        how = _How(strategy, chunk_tokens, tags, type, dry_run)
        named = os.fspath(source)
        # The source is checked before the embedder: a bad path or URL is named as such,
        # whatever else is missing; nothing is fetched or ingested before both pass.
        if isinstance(named, str) and urls.is_url(named):
            urls.check_url(named)
            reading.check_chunk_tokens(chunk_tokens, self._require())
            report = self._ingest_url(ref, named, limit_bytes, allow_private, how)
            if progress is not None:
                progress(report)
            return WalkReport((report,), dry_run)
        if isinstance(named, str) and urls.has_scheme(named) and not Path(named).exists():
            raise InvalidInput(f"only http and https URLs are fetched, got {named.split(':')[0]}:")
        found = files.find(source, *globs, limit_files, limit_bytes)
        reading.check_chunk_tokens(chunk_tokens, self._require())
        single, reports = len(found) == 1 and Path(source).is_file(), []
        for item in found:
            report = self._ingest_file(item, single, ref, how, limit_bytes)
            reports.append(report)
            if progress is not None:
                progress(report)
        return WalkReport(tuple(reports), dry_run)

    def _ingest_url(
        self, ref: Scope, url: str, max_bytes: int, allow_private: bool, how: _How
    ) -> IngestReport:
        source = urls.check_url(url)
        fetched = self._fetcher().fetch(source, max_bytes=max_bytes, allow_private=allow_private)
        media = loading.media_type(fetched.data, urlsplit(fetched.url).path, fetched.media_type)
        if media is None:
            raise Unprocessable(
                f"{fetched.url} answered {fetched.media_type or 'an unnamed type'}, "
                "not a type engram reads"
            )
        return self._one(ref, fetched.data, source, media, how)

    def _ingest_file(
        self, item: files.Found, single: bool, ref: Scope, how: _How, max_bytes: int
    ) -> IngestReport:
        if item.media_type is None:
            return IngestReport("skipped", item.source, reason="unsupported")
        try:  # a regular file still, read no further than the limit (files.read)
            data = files.read(item.path, max_bytes)
        except (Unprocessable, InvalidInput) as exc:
            if single:
                raise
            return IngestReport("skipped", item.source, reason=exc.message)
        try:
            return self._one(ref, data, item.source, item.media_type, how)
        except Unprocessable as exc:
            if single:
                raise
            return IngestReport("skipped", item.source, reason=exc.message)

    def _one(self, ref: Scope, data: str | bytes, name: str, media: str, how: _How) -> IngestReport:
        plan = self._plan(ref, data, name, media, how)
        if isinstance(plan, IngestReport):
            return plan
        doc, notes, now = plan
        if how.dry_run:
            status: Status = "created" if now is None else "replaced"
            return IngestReport(status, doc.source, now.id if now else None, len(notes))
        return self._commit(ref, doc, notes)

    def ingest_pages(
        self,
        ref: Scope,
        pages: Sequence[tuple[str, str]],
        *,
        op: str,
        tags: Sequence[str] = (),
        type: str = "document",
    ) -> list[IngestReport]:
        """Ingests Markdown ``pages`` (name, text) together: each changed page replaced as
        :meth:`ingest_text` replaces one, all in ONE ledger entry (``op``) and one
        transaction, so the pages change together or not at all; an unchanged page
        writes nothing. The reports, in the pages' order."""
        how = _How("auto", DEFAULT_CHUNK_TOKENS, tags, type)
        for attempt in range(ATTEMPTS):
            reports: dict[str, IngestReport] = {}
            planned: list[tuple[Document, Batch]] = []
            for name, text in pages:
                plan = self._plan(ref, text, name, "text/markdown", how)
                if isinstance(plan, IngestReport):
                    reports[plan.source] = plan
                else:
                    planned.append((plan[0], self._facts.prepare(ref, plan[1])))
            if not planned:
                return [reports[reading.check_source(name)] for name, _ in pages]
            try:
                done = self._write_all(ref, op, planned)
            except Stale:
                if attempt == ATTEMPTS - 1:
                    raise
                continue
            for report, (doc, _) in zip(done, planned, strict=True):
                reports[doc.source] = report
            return [reports[reading.check_source(name)] for name, _ in pages]
        raise AssertionError("unreachable")

    def _write_all(
        self, ref: Scope, op: str, planned: Sequence[tuple[Document, Batch]]
    ) -> list[IngestReport]:
        store, now = self._store, max(batch.now for _, batch in planned)

        def work(rec: ledger.Entry) -> list[IngestReport]:
            return [self._replace(rec, doc, batch) for doc, batch in planned]

        def run(tx: Tx) -> list[IngestReport]:
            return recording.write(store, tx, ref, op, self._writer, now, work)

        return store.run(run, lock=[ref])

    # -- reading and forgetting ---------------------------------------------------
    def documents(
        self, ref: Scope, *, limit: int | None = None, after: str | None = None
    ) -> list[Document]:
        """Up to ``limit`` (default 100, max 1000) of the scope's documents by source,
        those after the source ``after``; without their chunks."""
        size = limits.check_limit(limit)
        start = None if after is None else reading.check_source(after)
        store = self._store
        return store.run(
            lambda tx: store.documents.list(tx, ref, after=start, limit=size), write=False
        )

    def document(self, ref: Scope, document_id: str) -> Document:
        """The scope's document with its chunks in order; NotFound otherwise."""
        checked, store = limits.check_id(document_id), self._store
        found = store.run(lambda tx: store.documents.get(tx, ref, checked), write=False)
        if found is None:
            raise NotFound(f"no document {checked!r} in this scope")
        return found

    def provenance(self, ref: Scope, fact_id: str) -> list[Provenance]:
        """Where the scope's fact came from: each chunk of the scope's documents that
        names it (identical chunks share one fact), by source and index; empty for a fact
        no document holds. NotFound when the scope has no such fact, live or trashed."""
        checked, store = limits.check_id(fact_id), self._store

        def read(tx: Tx) -> list[Provenance]:
            live = store.facts.by_ids(tx, ref, [checked])
            if checked not in live and not store.facts.trashed(tx, ref, [checked]):
                raise NotFound(f"no fact {checked!r} in this scope")
            return store.documents.provenance(tx, ref, checked)

        return store.run(read, write=False)

    def forget_document(self, ref: Scope, document_id: str, *, hard: bool = False) -> bool:
        """Forgets the document and the facts only its chunks name, in one ledger entry;
        whether it existed. Softly by default (the facts go to the trash; a revert brings
        all back); ``hard=True`` deletes those facts for good."""
        checked, store, now = limits.check_id(document_id), self._store, self._now()

        def work(rec: ledger.Entry) -> bool:
            current = store.documents.get(rec.tx, rec.scope, checked)
            if current is None:
                return False
            history.forget(rec, current, hard=hard)
            return True

        def run(tx: Tx) -> bool:
            return recording.write(store, tx, ref, "forget_document", self._writer, now, work)

        return store.run(run, lock=[ref])


def _counter(embedder: Embedder) -> chunking.Counter:
    if isinstance(embedder, TokenCounter):
        return embedder.count_tokens
    return chunking.estimate_tokens


def _notes(doc: Document, cut: chunking.Cut, tags: tuple[str, ...], kind: str) -> list[Note]:
    chunks = cut.chunks
    notes = []
    for i, chunk in enumerate(chunks):
        around = [c.words for c in chunks[max(0, i - 1) : i + 2] if c is not chunk]
        meta: dict[str, Any] = {
            "document": doc.id,
            "idx": i,
            "start": chunk.start,
            "end": chunk.end,
            "heading": chunk.heading,
        }
        if chunk.page is not None:
            meta["page"] = chunk.page
        notes.append(
            Note(
                chunk.words,
                type=kind,
                tags=tags,
                metadata=meta,
                context=chunking.context(chunk.heading or doc.title, around),
            )
        )
    return notes


def _revive(rec: ledger.Entry, batch: Batch) -> None:
    """Facts the batch reuses that another writer trashed since: back from the trash (a
    chunk never names a trashed fact); one deleted for good meanwhile raises Stale."""
    if not batch.existing:
        return
    store, tx, ref = rec.store, rec.tx, rec.scope
    live = store.facts.by_hashes(tx, ref, list(batch.existing))
    gone = [f.id for h, f in batch.existing.items() if h not in live]
    trashed = store.facts.trashed(tx, ref, gone) if gone else {}
    if len(trashed) < len(gone):
        raise Stale()
    rules.restore_many(store, tx, ref, gone)
    for fact_id in gone:
        rec.record("fact", fact_id, "restore", ledger.TRASHED)


def _unnamed(rec: ledger.Entry, old: Document, keep: set[str | None]) -> list[str]:
    ids = sorted({c.fact_id for c in old.chunks if c.fact_id is not None} - keep)
    named = rec.store.documents.naming(rec.tx, rec.scope, ids)
    return [i for i in ids if i not in named]


def _trash_unnamed(rec: ledger.Entry, old: Document | None, keep: set[str | None]) -> None:
    if old is not None:
        rules.trash(rec, _unnamed(rec, old, keep))
