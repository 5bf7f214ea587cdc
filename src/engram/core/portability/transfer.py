"""Exporting a scope's memory as records, and importing records all or nothing.

**Export** reads the scope's live facts (with their vectors) and working keys in one
snapshot, oldest first. The ledger, the trash, feedback, sessions and the graph stay
behind: the graph is rebuilt from the facts by the importing store's extractor.

**Import** runs in three phases:

1. *parse*: every record is read and checked; a bad one anywhere refuses the whole
   import with each bad record's line and field (BadRecords, 422);
2. *embed*: vectors are reused when the file's model is the store's (same name and
   dimension) and a fact carries one; the others are embedded, in batches, outside any
   transaction (CapabilityMissing before anything else when some are needed and the
   store has no embedder);
3. *write*: one ledger entry (``import``) in one transaction under the scope's lock
   writes every fact through the memory's one write seam (caps, graph and all) and
   sets every working key. A process killed in any phase leaves the store as it was.

A JSONL export file of the store's own model, every fact with its vector, skips the
phases (:meth:`Importer.stream`): it is read in batches inside the transaction that
writes them (:mod:`.streaming`), so the import holds a batch instead of the file, and a
bad record anywhere rolls the whole transaction back with every bad record listed.

A fact whose words the scope already holds is linked to the existing fact, not
written twice. Ids are kept when no fact of the store has them, and new otherwise; the
report lists each id that changed (``id_mappings``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from engram.core import ledger, limits, recording, rules, spoken
from engram.core.clock import Clock, from_us, to_us
from engram.core.errors import CapabilityMissing, InvalidInput
from engram.core.graph import assertions
from engram.core.models import Fact, Writer
from engram.core.portability import records, streaming
from engram.core.portability.mcp_memory import McpGraph
from engram.core.portability.records import FactRecord, Parsed, Skipped, WorkingRecord
from engram.core.ports import ModelRecord, NewFact
from engram.core.progress import Progress, untold
from engram.core.writing import FactWriter

if TYPE_CHECKING:
    from engram.core.ports import Embedder, Store, Tx
    from engram.core.scopes import Scope

T = TypeVar("T")
EMBED_BATCH = 256
WRITE_BATCH = 2000  # facts built and written at a time, inside the one transaction
PAGE = 1000


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What an import did (or, with ``dry_run``, would do): facts written, facts whose
    words the scope already held (linked, not written), working keys set, vectors taken
    from the file and vectors embedded, and each kept fact's new id where its own was
    taken (``id_mappings``: old → new), and the ledger entry that holds it (None for a dry
    run, or when the import changed nothing: such an entry is dropped). ``skipped``: the
    records left out (a blank one always; a bad one when skipping), each with its line,
    field and reason; ``changed``: the records taken with a change, and what changed."""

    facts_added: int = 0
    facts_existing: int = 0
    working_set: int = 0
    vectors_reused: int = 0
    vectors_embedded: int = 0
    id_mappings: dict[str, str] = field(default_factory=dict)
    dry_run: bool = False
    entry: int | None = None
    entities: int = 0
    relations: int = 0
    skipped: tuple[Skipped, ...] = ()
    changed: tuple[tuple[int, str, str], ...] = ()


def exporting(
    store: Store,
    ref: Scope,
    use: Callable[[ModelRecord | None, Iterator[dict[str, Any]]], T],
) -> T:
    """``use`` of the scope's model and records (facts oldest first, then working keys),
    read in one snapshot as ``use`` takes them, a page at a time: an export writes a
    page, not the scope, at once. A store whose re-embedding is unfinished gives neither
    model nor vectors: its vectors are of two models, and an import embeds the facts."""

    def read(tx: Tx) -> T:
        model = store.models.get(tx)
        if model is not None and model.unfinished:
            return use(None, _records(store, tx, ref, vectors=False))
        return use(model, _records(store, tx, ref, vectors=True))

    return store.run(read, write=False)


def _records(store: Store, tx: Tx, ref: Scope, *, vectors: bool) -> Iterator[dict[str, Any]]:
    ids = store.facts.oldest(tx, ref, 1 << 62)
    for start in range(0, len(ids), PAGE):
        part = ids[start : start + PAGE]
        facts = store.facts.by_ids(tx, ref, part)
        held = store.facts.vectors(tx, ref, part) if vectors else {}
        for fact_id in part:
            yield records.fact_record(facts[fact_id], held.get(fact_id))
    for key, (value, _, expires) in sorted(store.working.raw(tx, ref).items()):
        yield records.working_record(key, value, expires)


def json_document(head: dict[str, Any], found: list[dict[str, Any]]) -> str:
    return json.dumps(
        {
            **head,
            "facts": [_bare(r) for r in found if r["kind"] == "fact"],
            "working": [_bare(r) for r in found if r["kind"] == "working"],
        },
        ensure_ascii=False,
    )


def _bare(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != "kind"}


class Importer:
    def __init__(
        self,
        store: Store,
        embedder: Embedder | None,
        facts: FactWriter,
        *,
        clock: Clock,
        writer: Writer,
    ) -> None:
        self._store, self._embedder, self._facts = store, embedder, facts
        self._now, self._writer = clock, writer

    def run(
        self,
        ref: Scope,
        parsed: Parsed,
        *,
        dry_run: bool = False,
        progress: Progress | None = None,
        graph: McpGraph | None = None,
        skip: bool = False,
    ) -> ImportReport:
        """Imports the parsed records in one ledger entry, all or nothing (``skip``: the
        bad records left out and listed instead)."""
        tell = progress or untold
        read = len(parsed.facts) + len(parsed.working)
        tell("parse", read, read)
        parsed.check(skip=skip)
        vectors, reused, embedded = self._vectors(parsed, tell)
        skipped, changed = tuple(parsed.skipped), tuple(parsed.changed)
        if dry_run:
            return ImportReport(
                facts_added=len(parsed.facts),
                working_set=len(parsed.working),
                vectors_reused=reused,
                vectors_embedded=embedded,
                dry_run=True,
                entities=0 if graph is None else len(graph.entities),
                relations=0 if graph is None else len(graph.relations),
                skipped=skipped,
                changed=changed,
            )
        model = self._model(parsed)
        now, store = self._now(), self._store

        def work(rec: ledger.Entry) -> ImportReport:
            written = _Written()
            for start in range(0, len(parsed.facts), WRITE_BATCH):  # facts made as written
                part = slice(start, start + WRITE_BATCH)
                self._write_batch(rec, parsed.facts[part], vectors[part], model, written)
            if graph is not None:
                _graph(rec, graph)
            _set_working(rec, parsed.working)
            tell("write", len(parsed.facts), len(parsed.facts))
            return written.report(
                rec,
                working=len(parsed.working),
                reused=reused,
                embedded=embedded,
                entities=0 if graph is None else len(graph.entities),
                relations=0 if graph is None else len(graph.relations),
                skipped=skipped,
                changed=changed,
            )

        def run(tx: Tx) -> ImportReport:
            return recording.write(store, tx, ref, "import", self._writer, now, work)

        return store.run(run, lock=[ref])

    def stream(
        self, ref: Scope, path: Path, progress: Progress | None = None, skip: bool = False
    ) -> ImportReport | None:
        """Imports a JSONL export whose model is the store's, reading it in batches
        inside the one transaction that writes them: the import holds a batch, not the
        file. A bad record anywhere still refuses the whole import (the transaction rolls
        back, every bad record listed). None, with nothing written, when the file is not
        such an export or a fact in it carries no vector of the store's model: then the
        three phases of :meth:`run` import it."""
        head = streaming.header(path)
        if head is None or not self._reusable(head):
            return None
        model, store = self._model(Parsed(model=head)), self._store
        total = 0 if progress is None else streaming.count_lines(path) - 1  # the bar's
        tell = progress or untold
        tell("parse", 0, total)

        def work(rec: ledger.Entry) -> ImportReport:
            reader = streaming.Reader(path, head, WRITE_BATCH, skip=skip)
            written, done = _Written(), 0
            for part in reader.batches():
                vectors = [store.facts.vector_from_bytes(f.vector) for f in part]  # type: ignore[arg-type]
                self._write_batch(rec, part, vectors, model, written)
                done += len(part)
                tell("write", done, total)
            if reader.unembedded:
                raise _Unembedded
            reader.parsed.check(skip=skip)
            _set_working(rec, reader.parsed.working)
            tell("write", total, total)
            return written.report(
                rec,
                working=len(reader.parsed.working),
                reused=done,
                skipped=tuple(reader.parsed.skipped),
            )

        def run(tx: Tx) -> ImportReport:
            return recording.write(store, tx, ref, "import", self._writer, self._now(), work)

        try:
            return store.run(run, lock=[ref])
        except _Unembedded:
            return None

    def _reusable(self, model: ModelRecord | None) -> bool:
        """Whether the vectors of a file of ``model`` are written as they are: those of
        this store's model, and not of a re-embedding cut short (of two models)."""
        return model is not None and not model.unfinished and model == self._ours(model)

    def _ours(self, model: ModelRecord | None) -> ModelRecord | None:
        """The model this store's vectors are of: the one it records, else its
        embedder's, else (neither) the file's ``model``."""
        store, embedder = self._store, self._embedder
        stored = store.run(lambda tx: store.models.get(tx), write=False)
        return stored or (
            model if embedder is None else ModelRecord(embedder.model, embedder.dimension)
        )

    def _model(self, parsed: Parsed) -> ModelRecord | None:
        """The model the facts are written with: the embedder's, else the file's (whose
        vectors are then the store's: :meth:`_vectors` refused the import otherwise).
        None only with neither, when there are no facts to write (working keys alone, or
        nothing at all)."""
        if self._embedder is not None:
            return ModelRecord(self._embedder.model, self._embedder.dimension)
        return parsed.model

    def _vectors(self, parsed: Parsed, tell: Progress) -> tuple[list[Any], int, int]:
        """One vector per fact: the file's where its model is the store's, else embedded."""
        store, embedder = self._store, self._embedder
        same = self._reusable(parsed.model)
        out: list[Any] = [None] * len(parsed.facts)
        missing: list[int] = []
        for i, fact in enumerate(parsed.facts):
            if same and fact.vector is not None:  # its width was checked against the model
                out[i] = store.facts.vector_from_bytes(fact.vector)
            else:
                missing.append(i)
        if missing and embedder is None:
            raise CapabilityMissing(
                f"{len(missing)} fact(s) need vectors (the file's model is not this store's, "
                "its vectors are of a re-embedding cut short, or they carry none) and this "
                "memory has no embedder; nothing was imported",
                hint="open the store with an embedder",
            )
        for start in range(0, len(missing), EMBED_BATCH):
            part = missing[start : start + EMBED_BATCH]
            assert embedder is not None
            said = [(parsed.facts[i].content, parsed.facts[i].metadata) for i in part]
            done = embedder.embed(spoken.passages(embedder, said), "passage")
            for i, vector in zip(part, done, strict=True):
                out[i] = vector
            tell("embed", start + len(part), len(missing))
        return out, len(parsed.facts) - len(missing), len(missing)

    def _write_batch(
        self,
        rec: ledger.Entry,
        found: list[FactRecord],
        vectors: list[Any],
        model: ModelRecord | None,
        written: _Written,
    ) -> None:
        new, held, moved = self._new_facts(rec, found, vectors)
        if new:
            if model is None:  # _vectors refuses facts with neither an embedder nor a model
                raise CapabilityMissing("this memory has no embedder; nothing was imported")
            written.added += len(self._facts.write_new(rec, new, model))
        written.existing += held
        written.mappings.update(moved)

    def _new_facts(
        self, rec: ledger.Entry, found: list[FactRecord], vectors: list[Any]
    ) -> tuple[dict[str, NewFact], int, dict[str, str]]:
        store, tx, ref = rec.store, rec.tx, rec.scope
        digests = [rules.content_hash(f.content) for f in found]
        held = store.facts.by_hashes(tx, ref, list(dict.fromkeys(digests)))
        asked = [f.id for f in found if f.id is not None]
        taken = store.facts.taken(tx, asked)
        new: dict[str, NewFact] = {}
        mappings: dict[str, str] = {}
        existing = 0
        for fact, digest, vector in zip(found, digests, vectors, strict=True):
            if digest in held or digest in new:
                existing += 1
                continue
            fact_id = fact.id if fact.id is not None and fact.id not in taken else None
            if fact_id is None:
                fact_id = rules.new_fact_id()
                if fact.id is not None:
                    mappings[fact.id] = fact_id
            taken.add(fact_id)
            created = fact.created_at or from_us(rec.now)
            record = Fact(
                id=fact_id,
                scope=ref,
                content=fact.content,
                created_at=created,
                updated_at=fact.updated_at or created,
                source_ref=fact.source_ref,
                metadata=fact.metadata,
                turn_user=rec.writer.turn_user,
                **fact.kept,
            )
            meta = fact.metadata_json or limits.encode_value(fact.metadata)
            new[digest] = NewFact(record, digest, meta, vector)
        return new, existing, mappings


class _Unembedded(Exception):
    """A fact of a streamed import carries no vector of the store's model."""


@dataclass(slots=True)
class _Written:
    added: int = 0
    existing: int = 0
    mappings: dict[str, str] = field(default_factory=dict)

    def report(
        self,
        rec: ledger.Entry,
        *,
        working: int,
        reused: int,
        embedded: int = 0,
        entities: int = 0,
        relations: int = 0,
        skipped: tuple[Skipped, ...] = (),
        changed: tuple[tuple[int, str, str], ...] = (),
    ) -> ImportReport:
        return ImportReport(
            facts_added=self.added,
            facts_existing=self.existing,
            working_set=working,
            vectors_reused=reused,
            vectors_embedded=embedded,
            id_mappings=self.mappings,
            entry=rec.seq if rec.changed else None,  # an entry that changed nothing is dropped
            entities=entities,
            relations=relations,
            skipped=skipped,
            changed=changed,
        )


def _set_working(rec: ledger.Entry, working: list[WorkingRecord]) -> None:
    store, tx, ref = rec.store, rec.tx, rec.scope
    for entry in working:
        stored_key = store.working.claim(tx, ref, entry.key)
        before = store.working.raw(tx, ref, [entry.key]).get(entry.key)
        version = (stored_key[0] if stored_key is not None else 0) + 1
        expires = None if entry.expires_at is None else to_us(entry.expires_at)
        store.working.put(tx, ref, entry.key, entry.value_json, version, rec.now, expires)
        rec.record("working", entry.key, "set", ledger.working_value(before))


def _graph(rec: ledger.Entry, graph: McpGraph) -> None:
    """The file's entities and relations as the graph reads them: each entity whose name
    and type the graph holds, each relation between two entities the file or the scope
    holds. The rest stays in the facts, exactly, as the file said it."""
    from engram.core.graph.names import normalise

    store, tx, ref = rec.store, rec.tx, rec.scope
    known: set[str] = set()
    for entity in graph.entities:
        try:
            made = assertions.upsert_entity(rec, entity.name, type=entity.type, origin="imported")
        except InvalidInput:
            continue  # a name or type the graph cannot hold (checked before any write)
        known.add(made.norm)
    ends = {normalise(n) for r in graph.relations for n in (r.source, r.target)} - known
    known |= set(store.graph.named(tx, ref, sorted(ends))) if ends else set()
    for r in graph.relations:
        if normalise(r.source) in known and normalise(r.target) in known:
            try:
                assertions.upsert_relation(rec, r.source, r.target, r.type, origin="imported")
            except InvalidInput:
                continue  # a relation type the graph cannot hold
