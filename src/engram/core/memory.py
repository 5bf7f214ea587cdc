"""The memory of engram: working memory and facts over one store and one embedder (and,
optionally, a reranker for hybrid recall, and a chat model and a name recogniser for the
graph's llm and spacy extractors)."""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any, TypeVar

from engram.core import (
    checkup,
    conversations,
    episodes,
    health,
    ledger,
    limits,
    merging,
    ops,
    recording,
    rules,
    sessions,
    spoken,
    tools,
    undo,
    writing,
)
from engram.core import consolidation as consolidating
from engram.core.agents import Agents
from engram.core.clock import Clock, from_us, now_us
from engram.core.conversations import Conversation, Turn
from engram.core.documents import files
from engram.core.documents.documents import Documents
from engram.core.documents.models import (
    DEFAULT_CHUNK_TOKENS,
    Document,
    IngestReport,
    Provenance,
    WalkReport,
)
from engram.core.documents.urls import Fetcher
from engram.core.errors import Conflict, InvalidInput, NotFound
from engram.core.graph import ops as graph_ops
from engram.core.graph.graph import Graph
from engram.core.ledger import Entry
from engram.core.models import (
    LIBRARY,
    VIAS,
    Caps,
    ChangesPage,
    Compaction,
    DeletionReceipt,
    Fact,
    FactPage,
    ForkResult,
    JSONValue,
    LedgerEntry,
    LedgerPage,
    RecallHit,
    RecallMode,
    SourceRef,
    Trashed,
    TrashPage,
    Via,
    Writer,
)
from engram.core.portability.portable import ExportReport, OnError, Portable
from engram.core.portability.transfer import Importer, ImportReport
from engram.core.ports import (
    ChatModel,
    Embedder,
    NameRecogniser,
    Reranker,
    Store,
    Tx,
    Vectors,
)
from engram.core.progress import Progress
from engram.core.recalling import Recaller, expired
from engram.core.records import Entry as SessionEntry
from engram.core.scopes import ResourceRef, Scope, parse_key
from engram.core.sessions import Sessions
from engram.core.sharing import Sharing
from engram.core.text import check_text
from engram.core.usage import Usage
from engram.core.wiki import Wiki
from engram.core.working import WorkingMemory
from engram.core.writing import FactWriter
from engram.core.writing import Note as Note  # the library has always offered it here

DEFAULT_POLICY = consolidating.Policy()
T = TypeVar("T")


class Memory:
    """Working memory and facts of every scope in one store.

    Thread-safe: one instance may be shared by many threads. Every method takes the
    scope explicitly; nothing is read or written outside it.
    """

    def __init__(
        self,
        store: Store,
        embedder: Embedder | None,
        *,
        caps: Caps | None = None,
        clock: Clock = now_us,
        writer: Writer = LIBRARY,
        reranker: Reranker | None = None,
        chat: ChatModel | None = None,
        recogniser: NameRecogniser | None = None,
        consolidation: consolidating.Policy | None = DEFAULT_POLICY,
        fetcher: Fetcher | None = None,
        stores: Callable[[str], Store] | None = None,
    ) -> None:
        if embedder is not None:  # what the store's vectors read decides how it embeds
            embedder = spoken.reading(store, embedder)
        self._store = store
        self._recaller = Recaller(store, clock)
        self._stores = stores
        self._fetcher = fetcher
        self._embedder = embedder
        self._reranker = reranker
        self._chat = chat
        self._recogniser = recogniser
        self._caps = caps or Caps()
        self._now = clock
        self._writer = writer
        self.working = WorkingMemory(store, clock=clock, writer=writer)
        self.agents = Agents(store, clock=clock, writer=writer)
        self.sharing = Sharing(store, clock=clock, writer=writer)
        self.sessions = Sessions(store, clock=clock)
        self.graph = Graph(
            store, embedder, clock=clock, writer=writer, chat=chat, recogniser=recogniser
        )
        self.usage = Usage(store, embedder, clock=clock, writer=writer)
        self._facts_writer = FactWriter(
            store, embedder, caps=lambda: self._caps, clock=clock, writer=writer
        )
        self._documents = Documents(
            store, embedder, self._facts_writer, clock=clock, writer=writer, fetcher=fetcher
        )
        self.wiki = Wiki(store, self._documents)
        self._portable = Portable(
            store,
            Importer(store, embedder, self._facts_writer, clock=clock, writer=writer),
            stores,
            lambda other, embeds: Memory(
                other, embedder if embeds else None, writer=writer, stores=stores
            ),
        )
        self._consolidation = consolidating.Consolidation(
            store,
            embedder,
            self.graph,
            policy=consolidation,
            caps=lambda: self._caps,
            clock=clock,
            writer=writer,
        )

    def acting(
        self,
        *,
        actor: str | None = None,
        via: Via | None = None,
        turn_user: str | None = None,
        request_id: str | None = None,
    ) -> Memory:
        """The same memory, writing as ``actor`` through ``via`` (library, cli, http, mcp,
        tool, import, ingest, consolidation, wiki): the ledger records both on every
        entry. ``turn_user`` names the second user whose turn a write is for (facts keep
        it; ``delete_scope(turn_user_id=)`` deletes only theirs)."""
        now = self._writer
        if via is not None and via not in VIAS:
            raise InvalidInput(f"via must be one of {', '.join(VIAS)}, got {via!r}")
        writer = Writer(
            actor=now.actor
            if actor is None
            else check_text(actor, "actor", max_chars=limits.MAX_USER_CHARS),
            via=now.via if via is None else via,
            turn_user=now.turn_user
            if turn_user is None
            else check_text(turn_user, "turn_user", max_chars=limits.MAX_USER_CHARS),
            request_id=now.request_id
            if request_id is None
            else check_text(request_id, "request_id", max_chars=128),
        )
        return Memory(
            self._store,
            self._embedder,
            caps=self._caps,
            clock=self._now,
            writer=writer,
            reranker=self._reranker,
            chat=self._chat,
            recogniser=self._recogniser,
            consolidation=self._consolidation.policy,
            fetcher=self._fetcher,
            stores=self._stores,
        )

    @property
    def writer(self) -> Writer:
        return self._writer

    @property
    def embedder(self) -> Embedder | None:
        """The embedder given (the store's record also says what its vectors read:
        :mod:`engram.core.spoken`)."""
        return spoken.given(self._embedder)

    @property
    def reranker(self) -> Reranker | None:
        return self._reranker

    @property
    def chat(self) -> ChatModel | None:
        return self._chat

    @property
    def recogniser(self) -> NameRecogniser | None:
        return self._recogniser

    def close(self) -> None:
        self._store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing facts -----------------------------------------------------------
    def remember(
        self,
        ref: Scope,
        content: str,
        *,
        source_ref: SourceRef | None = None,
        type: str | None = None,
        tags: Sequence[str] = (),
        metadata: dict[str, JSONValue] | None = None,
        created_at: datetime | None = None,
        context: str | None = None,
        strength: float = 1.0,
        expires_at: datetime | None = None,
    ) -> Fact:
        """Remembers ``content`` in the scope; the same text twice returns the stored fact.

        ``context`` (up to 8000 characters) is text that helps find the fact without
        being part of it, such as the conversation around a remembered turn: full-text
        recall matches it; the vector is the content's alone. ``strength`` (0 to 10,
        default 1.0) multiplies the fact's score in recall. From ``expires_at`` on, the
        fact is no longer recalled or listed, and consolidation moves it to the trash.

        Raises InvalidInput (empty, over 2000 characters), CapabilityMissing (no
        embedder), UpstreamFailure (the embedder failed: nothing was stored).
        """
        note = Note(
            content, source_ref, type, tags, metadata, created_at, context, strength, expires_at
        )
        return self.run(ref, note)

    def run(self, ref: Scope, op: ops.Op[T]) -> T:
        """Carries out one operation (:mod:`engram.core.ops`) in the scope: the one
        entry every surface's call goes through."""
        runner = _RUNS.get(type(op))
        if runner is None:
            raise InvalidInput(f"{type(op).__name__} is not an operation of engram")
        result: T = runner(self, ref, op)
        return result

    def remember_many(self, ref: Scope, notes: Sequence[Note | str]) -> list[Fact]:
        """Remembers many facts with one embedding request and one transaction.

        All or nothing: one invalid note refuses the whole batch before anything is
        embedded. Returns one fact per note, in order (duplicates return the stored one).
        """
        if not isinstance(notes, Sequence) or isinstance(notes, str):
            raise InvalidInput("notes must be a list")
        batch = self._facts_writer.prepare(ref, notes)
        if not batch.checked:
            return []
        stored = self._store.run(
            lambda tx: self._entry(
                tx, ref, "remember", batch.now, lambda rec: self._facts_writer.write(rec, batch)
            ),
            lock=[ref],
        )
        return batch.facts(stored)

    def remember_conversation(
        self,
        ref: Scope,
        turns: Sequence[Turn],
        *,
        session_id: str | None = None,
        expected_next: int | None = None,
        context_turns: int = 1,
    ) -> Conversation:
        """Remembers a conversation's turns, each as a fact (``"speaker: text"``, at its
        time) whose context is its ``context_turns`` neighbouring turns (0 to 5, default
        1), and each as an entry of the session ``session_id`` (started when new; a new
        one without it), which the fact points at (``source_ref``: verified).

        Appending later turns to the session updates the context of the turns before
        them. ``expected_next`` makes a retry idempotent, as for a session's append.
        One embedding request and one transaction; all or nothing.
        """
        checked = conversations.check_turns(turns)
        width = conversations.check_width(context_turns)
        sid = sessions.check_session_id(session_id) if session_id is not None else None
        if expected_next is not None:
            limits.check_count(expected_next, "expected_next")
        notes = [
            Note(conversations.content(t), created_at=t.at, metadata=conversations.metadata(t))
            for t in checked
        ]
        batch = self._facts_writer.prepare(ref, notes)
        store = self._store

        def write(rec: Entry) -> Conversation:
            return conversations.write(
                rec, checked, sid, expected_next, width, batch, self._facts_writer.write
            )

        return store.run(
            lambda tx: self._entry(tx, ref, "remember_conversation", batch.now, write),
            lock=[ref],
        )

    def correct(self, ref: Scope, fact_id: str, content: str, *, by: str | None = None) -> Fact:
        """Changes a fact's words in place and embeds them again; ``created_at`` stays.

        Without an embedder the fact keeps the vector of its old words (found by meaning
        as it was until it is learned again); its words and full-text entry are new.
        Raises InvalidInput (empty, over 2000 characters), NotFound, Conflict (the
        scope already holds these words as another fact), UpstreamFailure.
        """
        return self.run(ref, ops.Correct(fact_id, content, by))

    def _correct(self, ref: Scope, op: ops.Correct) -> Fact:
        fact_id, text, by = op.fact_id, op.content, op.by
        known = self._fact(ref, ops.GetFact(fact_id))  # NotFound before anything is embedded
        embedder = self._embedder
        vector = (
            None
            if embedder is None
            else embedder.embed(spoken.passages(embedder, [(text, known.metadata)]), "passage")[0]
        )
        digest, now, store = rules.content_hash(text), self._now(), self._store

        def write(rec: Entry) -> Fact:
            tx = rec.tx
            if embedder is not None:
                rules.check_model(store, tx, writing.model_of(embedder), [vector])
            other = store.facts.by_hashes(tx, ref, [digest]).get(digest)
            if other is not None and other.id != fact_id:
                raise Conflict(f"this scope already holds that text as fact {other.id}")
            old = store.facts.get(tx, ref, fact_id)
            if old is None:
                raise NotFound(f"no fact {fact_id!r} in this scope")
            before = ledger.words(
                old, rules.content_hash(old.content), store.facts.vector_of(tx, ref, fact_id)
            )
            fact = store.facts.rewrite(tx, ref, fact_id, text, digest, vector, by, now, now)
            assert fact is not None
            rec.record("fact", fact_id, "correct", before)
            return fact

        return store.run(lambda tx: self._entry(tx, ref, "correct", now, write), lock=[ref])

    def merge(
        self,
        ref: Scope,
        fact_ids: Sequence[str],
        content: str | None = None,
        *,
        hard: bool = False,
    ) -> Fact:
        """Folds 2 to 10 of the scope's live facts into one fact of ``content``, in one
        ledger entry: the merged fact carries the union of their tags, their type when
        they share one, and the highest strength; the others go to the trash (``hard``:
        for good, as :meth:`delete_traces` deletes). When ``content`` is one of theirs
        (or another live fact's) words, that fact stays and takes the others' place.

        Without ``content``, the memory's chat model writes the merged words
        (:mod:`engram.core.merging`), outside any transaction, and they must cite every
        figure and name the facts hold. Raises InvalidInput (fewer than 2 or more than 10
        ids, bad content, no content and no chat model), NotFound (an id that is not a
        live fact of the scope), UpstreamFailure (the model failed or left something
        out; nothing written)."""
        return self.run(ref, ops.Merge(fact_ids, content, hard))

    def _merge(self, ref: Scope, op: ops.Merge) -> Fact:
        ids, content, hard = list(op.fact_ids), op.content, op.hard
        if content is None and self._chat is None:
            raise InvalidInput(
                "content is required: this memory has no chat model to write merged words",
                hint="pass the merged words, or open the store with chat=engram.RemoteChat(...)",
            )
        store = self._store
        sources = self._live(ref, ids)
        if content is None:
            assert self._chat is not None
            content = merging.write(self._chat, [f.content for f in sources])
        text = limits.check_content(content)  # the model's words too
        types = {f.type for f in sources}
        note = Note(
            text,
            type=types.pop() if len(types) == 1 else None,
            tags=tuple(dict.fromkeys(t for f in sources for t in f.tags)),
            strength=max(f.strength for f in sources),
        )
        batch = self._facts_writer.prepare(ref, [note])

        def write(rec: Entry) -> Fact:
            self._live(ref, ids, rec.tx)  # none forgotten since they were read
            merged = batch.facts(self._facts_writer.write(rec, batch))[0]
            others = [i for i in ids if i != merged.id]
            if hard:
                rules.erase(rec, others)
            else:
                rules.trash(rec, others)
            return merged

        return store.run(lambda tx: self._entry(tx, ref, "merge", batch.now, write), lock=[ref])

    def _live(self, ref: Scope, ids: Sequence[str], tx: Tx | None = None) -> list[Fact]:
        """The scope's live facts ``ids``, in order; NotFound names the first missing."""

        def read(tx: Tx) -> list[Fact]:
            found = self._store.facts.by_ids(tx, ref, ids)
            missing = [i for i in ids if i not in found]
            if missing:
                raise NotFound(f"no fact {missing[0]!r} in this scope")
            return [found[i] for i in ids]

        return read(tx) if tx is not None else self._store.run(read, write=False)

    def consolidate(
        self,
        ref: Scope,
        *,
        steps: Sequence[str] = consolidating.STEPS,
        dry_run: bool = False,
    ) -> consolidating.ConsolidationReport:
        """Runs the consolidation cycle's ``steps`` over the scope (reindex, strengthen,
        prune, merge, derive, compact: :mod:`engram.core.consolidation`), each that
        changes something one ledger entry; ``dry_run`` says what each would change and
        writes nothing. A second run changes nothing. Raises InvalidInput (an unknown
        step, none) and CapabilityMissing (self-improvement is off in this memory)."""
        return self._consolidation.run(ref, steps=steps, dry_run=dry_run)

    @property
    def self_improving(self) -> bool:
        """Whether this memory consolidates (``consolidate``, the ``memory_reflect`` tool)."""
        return self._consolidation.enabled

    def create_tools(self, ref: Scope, *, include_reflect: bool = True) -> list[tools.Tool]:
        """The memory tools bound to ``ref`` (:mod:`engram.core.tools`): add, search,
        update, delete and merge, each a name, a description, a JSON Schema and a call
        answering text; and ``memory_reflect`` (a consolidation run) when this memory
        self-improves and ``include_reflect`` is true."""
        if not isinstance(include_reflect, bool):
            raise InvalidInput("include_reflect must be true or false")
        reflect = include_reflect and self.self_improving
        return tools.create(tools.AgentBacking(self, ref), reflect=reflect)

    # -- documents ---------------------------------------------------------------
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
        """Ingests text or bytes in hand as the document ``name``; see
        :meth:`engram.core.documents.documents.Documents.ingest_text`."""
        return self._documents.ingest_text(
            ref,
            data,
            name=name,
            media_type=media_type,
            strategy=strategy,
            chunk_tokens=chunk_tokens,
            tags=tags,
            type=type,
        )

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
        """Ingests a URL, a file or a directory's files; see
        :meth:`engram.core.documents.documents.Documents.ingest`."""
        return self._documents.ingest(
            ref,
            source,
            include=include,
            exclude=exclude,
            max_files=max_files,
            max_bytes=max_bytes,
            strategy=strategy,
            chunk_tokens=chunk_tokens,
            tags=tags,
            type=type,
            progress=progress,
            allow_private=allow_private,
            dry_run=dry_run,
        )

    def documents(
        self, ref: Scope, *, limit: int | None = None, after: str | None = None
    ) -> list[Document]:
        """The scope's documents by source, without their chunks."""
        return self.run(ref, ops.Documents(limit, after))

    def document(self, ref: Scope, document_id: str) -> Document:
        """The scope's document with its chunks; NotFound otherwise."""
        return self.run(ref, ops.GetDocument(document_id))

    def provenance(self, ref: Scope, fact_id: str) -> list[Provenance]:
        """Each chunk of the scope's documents holding the fact's words: document,
        source, index, ``start``/``end`` in the document's text, heading trail, page."""
        return self.run(ref, ops.FactProvenance(fact_id))

    def forget_document(self, ref: Scope, document_id: str, *, hard: bool = False) -> bool:
        """Forgets the document and the facts only it names; whether it existed."""
        return self.run(ref, ops.ForgetDocument(document_id, hard))

    # -- export and import -------------------------------------------------------
    def export(
        self,
        ref: Scope,
        path: str | os.PathLike[str],
        *,
        format: str | None = None,
        update: bool = False,
    ) -> ExportReport:
        """Writes the scope's facts (with their vectors) and working keys to a new file:
        ``.json``, ``.jsonl``, or ``.sqlite``/``.db`` (a new engram store that
        ``engram.open`` can recall from directly), by ``format`` or the name's suffix;
        or to a new folder of pages (``markdown``, ``obsidian``), which ``update=True``
        brings up to date in place instead: its pages replaced whole, anything else in
        their way (links, directories, hard-linked files) left and listed in
        ``left_out`` (:mod:`engram.core.portability.portable`). Raises Conflict (the
        path exists: nothing is overwritten), InvalidInput (an unknown format, update of
        a file)."""
        return self._portable.export(ref, path, format=format, update=update)

    def export_string(self, ref: Scope, *, format: str = "jsonl") -> str:
        """The scope's export as text (``json`` or ``jsonl``), as :meth:`export` writes it."""
        return self._portable.export_string(ref, format=format)

    def import_string(
        self,
        ref: Scope,
        text: str,
        *,
        format: str | None = None,
        source: str = "engram",
        dry_run: bool = False,
        progress: Progress | None = None,
        on_error: OnError = "refuse",
    ) -> ImportReport:
        """Imports records into the scope, all or nothing: engram's ``json``/``jsonl``
        export or ``csv`` (``format``, else sniffed), mem0's memories
        (``source="mem0"``) or the MCP memory server's graph (``"mcp-memory"``). Raises
        BadRecords (422: every bad record by line and field), CapabilityMissing (vectors
        needed and no embedder), InvalidInput; nothing is written on any of them
        (:mod:`engram.core.portability.transfer`). ``on_error="skip"`` imports the good
        records and lists the bad ones in the report's ``skipped`` instead (a file wrong
        as a whole is still refused); a blank mem0 memory is always skipped and listed."""
        return self._portable.import_string(
            ref,
            text,
            format=format,
            source=source,
            dry_run=dry_run,
            progress=progress,
            on_error=on_error,
        )

    def import_file(
        self,
        ref: Scope,
        path: str | os.PathLike[str],
        *,
        format: str | None = None,
        source: str = "engram",
        dry_run: bool = False,
        progress: Progress | None = None,
        on_error: OnError = "refuse",
    ) -> ImportReport:
        """Imports a file as :meth:`import_string` does; a ``.sqlite``/``.db`` export is
        read through its own store. Raises NotFound (no such file) and what
        :meth:`import_string` raises."""
        return self._portable.import_file(
            ref,
            path,
            format=format,
            source=source,
            dry_run=dry_run,
            progress=progress,
            on_error=on_error,
        )

    def scope_of(self, fact_id: str) -> Scope | None:
        """The scope a fact belongs to (for callers that check it is theirs)."""
        checked = _check_id(fact_id)
        return self._store.run(lambda tx: self._store.facts.scope_of(tx, checked), write=False)

    def forget(self, ref: Scope, fact_id: str, *, hard: bool = False) -> bool:
        """Forgets one fact; idempotent. Returns whether it existed.

        Softly by default: the fact goes to the trash, out of recall, listing and fetch
        at once, and :meth:`restore` or a revert brings it back until the trash's
        retention deletes it for good. ``hard=True`` deletes it for good now (live or
        in the trash): its words are then nowhere in the store, the ledger's
        before-states of it included."""
        return self.run(ref, ops.Forget(fact_id, hard))

    def _forget(self, ref: Scope, op: ops.Forget) -> bool:
        checked, now, store = op.fact_id, self._now(), self._store
        if op.hard:
            receipt = self.delete_traces(ref, [checked])
            return receipt.facts + receipt.trashed > 0

        def write(rec: Entry) -> bool:
            moved = rules.trash(rec, [checked])
            rules.purge_trash(rec, self._caps.trash_retention_us)
            return bool(moved)

        return store.run(lambda tx: self._entry(tx, ref, "forget", now, write), lock=[ref])

    def forget_all(self, ref: Scope, *, expected_count: int, hard: bool = False) -> int:
        """Forgets every fact of the scope, confirming how many the caller saw.

        If the scope now holds more than ``expected_count``, nothing is forgotten and
        Conflict is raised. Returns how many were forgotten. Softly by default (to the
        trash); ``hard=True`` deletes every fact of the scope for good, the trash's too.
        """
        return self.run(ref, ops.ForgetAll(expected_count, hard))

    def _forget_all(self, ref: Scope, op: ops.ForgetAll) -> int:
        expected_count, hard, now, store = op.expected_count, op.hard, self._now(), self._store

        def write(rec: Entry) -> int:
            rules.confirm_count(store.facts.count(rec.tx, ref), expected_count)
            if hard:
                return rules.erase_scope(rec, None).facts
            moved = rules.trash(rec, None)
            rules.purge_trash(rec, self._caps.trash_retention_us)
            return len(moved)

        name = "delete_scope" if hard else "forget_all"
        return store.run(lambda tx: self._entry(tx, ref, name, now, write), lock=[ref])

    def restore(self, ref: Scope, fact_id: str) -> Fact:
        """Brings a softly forgotten fact back from the trash (same id and times).
        Raises NotFound (not in this scope's trash) and Conflict (the scope holds its
        words again, as another fact)."""
        return self.run(ref, ops.Restore(fact_id))

    def _restore(self, ref: Scope, op: ops.Restore) -> Fact:
        checked, now, store = op.fact_id, self._now(), self._store

        def write(rec: Entry) -> Fact:
            fact = rules.restore(store, rec.tx, ref, checked)
            rec.record("fact", checked, "restore", ledger.TRASHED)
            return fact

        return store.run(lambda tx: self._entry(tx, ref, "restore", now, write), lock=[ref])

    def trash(
        self, ref: Scope, *, limit: int | None = None, before: str | None = None
    ) -> TrashPage:
        """One page of the scope's trash, most recently forgotten first (default 100,
        max 1000); pass ``next_before`` back as ``before``."""
        return self.run(ref, ops.Trash(limit, before))

    def _trash(self, ref: Scope, op: ops.Trash) -> TrashPage:
        size = op.limit or limits.DEFAULT_PAGE
        position, store = _decode_trash_cursor(op.before), self._store
        rows = store.run(
            lambda tx: store.facts.trash_page(tx, ref, position, size + 1), write=False
        )
        more = len(rows) > size
        rows = rows[:size]
        keep = self._caps.trash_retention_us
        page = [
            Trashed(fact, from_us(at), from_us(at + keep) if keep else None) for fact, at in rows
        ]
        cursor = _encode_trash_cursor(rows[-1][1], rows[-1][0].id) if more else None
        return TrashPage(page, cursor)

    def delete_traces(self, ref: Scope, ids: Sequence[str]) -> DeletionReceipt:
        """Deletes these facts of the scope for good, live or in the trash (unknown ids
        are skipped), and erases every before-state the ledger holds of them: their
        words are then nowhere in the store. At most 1,000 ids."""
        checked = limits.check_ids(ids)
        now, store = self._now(), self._store

        def write(rec: Entry) -> DeletionReceipt:
            return rules.erase(rec, checked)

        return store.run(lambda tx: self._entry(tx, ref, "delete", now, write), lock=[ref])

    def delete_scope(
        self,
        ref: Scope,
        *,
        turn_user_id: str | None = None,
        expected_count: int | None = None,
    ) -> DeletionReceipt:
        """Deletes every fact of the scope for good (live and trashed), with the
        ledger's before-states of them; with ``turn_user_id``, only the facts written
        for that second user (see :meth:`acting`). An account's deletion calls it.
        Working memory stays (``working.delete`` removes keys).

        ``expected_count`` confirms how many facts (live and trashed) the caller saw:
        when more would go, nothing is deleted and Conflict is raised."""
        if not ref.key or any(not part.strip() for part in _scope_ids(ref)):
            raise InvalidInput("a scope to delete needs a non-empty id")
        user = None
        if turn_user_id is not None:
            user = check_text(turn_user_id, "turn_user_id", max_chars=limits.MAX_USER_CHARS)
        if expected_count is not None:
            limits.check_count(expected_count, "expected_count")
        now, store = self._now(), self._store

        def write(rec: Entry) -> DeletionReceipt:
            if expected_count is not None:
                tx = rec.tx
                held = len(store.facts.ids(tx, ref, turn_user=user)) + len(
                    store.facts.trash_ids(tx, ref, turn_user=user)
                )
                rules.confirm_count(held, expected_count)
            return rules.erase_scope(rec, user)

        return store.run(lambda tx: self._entry(tx, ref, "delete_scope", now, write), lock=[ref])

    def compact(
        self, ref: Scope, *, max_facts: int | None = None, max_age: timedelta | None = None
    ) -> Compaction:
        """Applies the caps now: facts older than ``max_age`` go to the trash first, then
        the oldest beyond ``max_facts``. Unset arguments fall back to the store-wide caps.
        The trash's and the ledger's retention are applied too."""
        age = None if max_age is None else limits.check_max_age(max_age) // 1000
        return self.run(ref, ops.Compact(max_facts, age))

    def _compact(self, ref: Scope, op: ops.Compact) -> Compaction:
        caps = Caps(
            max_facts=op.max_facts if op.max_facts is not None else self._caps.max_facts,
            max_age_us=op.max_age_ms * 1000 if op.max_age_ms is not None else self._caps.max_age_us,
        )
        now, store, retention = self._now(), self._store, self._caps

        def write(rec: Entry) -> Compaction:
            done = rules.apply_caps(rec, caps)
            rules.purge_trash(rec, retention.trash_retention_us)
            if retention.ledger_retention_us:
                store.ledger.delete_before(rec.tx, ref, now - retention.ledger_retention_us)
            return done

        return store.run(lambda tx: self._entry(tx, ref, "compact", now, write), lock=[ref])

    def fork(
        self, ref: ResourceRef, child_resource_id: str, *, into_existing: bool = False
    ) -> ForkResult:
        """Copies the scope's working memory and facts (vectors too: no embedding calls)
        into ``ref.child(child_resource_id)`` in one transaction. The team carries over;
        afterwards the two scopes are independent.

        A child that already holds memory (a live working key or a fact) is refused with
        Conflict, copying nothing, unless ``into_existing``: then the parent's working
        keys overwrite the child's of the same name, and its facts join the child's
        (a fact the child already holds, word for word, is not copied twice)."""
        child = ref.child(child_resource_id)
        if child == ref:
            raise InvalidInput("a fork's child must have another resource_id than its parent")
        now, store = self._now(), self._store

        def write(rec: Entry) -> tuple[int, int]:
            return rules.fork(rec, ref, into_existing=into_existing)

        keys, facts = store.run(
            lambda tx: self._entry(tx, child, "fork", now, write), lock=[ref, child]
        )
        return ForkResult(child, keys, facts)

    # -- history -------------------------------------------------------------------
    def ledger(
        self,
        ref: Scope,
        *,
        limit: int | None = None,
        before: int | None = None,
        object_id: str | None = None,
    ) -> LedgerPage:
        """The scope's write ledger, newest first (default 100, max 1000), each entry with
        what it changed (not the before-states); ``object_id`` keeps the entries that
        changed that fact or key. Pass ``next_before`` back as ``before``."""
        return self.run(ref, ops.Ledger(limit, before, object_id))

    def _ledger(self, ref: Scope, op: ops.Ledger) -> LedgerPage:
        size, before, object_id = op.limit or limits.DEFAULT_PAGE, op.before, op.object_id
        store = self._store
        rows = store.run(
            lambda tx: store.ledger.page(tx, ref, before, size + 1, object_id), write=False
        )
        more = len(rows) > size
        rows = rows[:size]
        return LedgerPage(rows, rows[-1].seq if more else None)

    def ledger_changes(
        self, ref: Scope, entry_id: int, *, limit: int | None = None, after: int | None = None
    ) -> ChangesPage:
        """What one entry of the scope's ledger changed, in (kind, object) order, a page at
        a time (default 100, max 1000): all of them, where a listing shows an entry's
        first 100 (``change_count`` says how many). Pass ``next_after`` back as
        ``after``. Raises NotFound for an entry the scope does not have."""
        return self.run(ref, ops.LedgerChanges(entry_id, limit, after))

    def _ledger_changes(self, ref: Scope, op: ops.LedgerChanges) -> ChangesPage:
        size, offset, store = op.limit or limits.DEFAULT_PAGE, op.after or 0, self._store
        found = store.run(
            lambda tx: store.ledger.changes(tx, ref, op.entry_id, offset, size + 1), write=False
        )
        if found is None:
            raise NotFound(f"no ledger entry {op.entry_id} in this scope")
        more = len(found) > size
        return ChangesPage(found[:size], offset + size if more else None)

    def history(self, ref: Scope, fact_id: str) -> list[LedgerEntry]:
        """Every entry of the scope's ledger that changed the fact, newest first (up to
        1,000): a fact deleted for good keeps its entries, one whose entries the ledger's
        retention dropped has none. Raises NotFound for a fact the scope never held, as
        every read of one fact does."""
        return self.run(ref, ops.History(fact_id))

    def _history(self, ref: Scope, op: ops.History) -> list[LedgerEntry]:
        checked, store = op.fact_id, self._store

        def read(tx: Tx) -> list[LedgerEntry]:
            entries = store.ledger.page(tx, ref, None, limits.MAX_PAGE, checked)
            if not entries:
                rules.require_fact(store, tx, ref, checked)
            return entries

        return store.run(read, write=False)

    def revert(self, ref: Scope, entry_id: int) -> LedgerEntry:
        """Undoes one entry of the scope's ledger as a new entry, which it returns:
        an add is forgotten (to the trash), a correct gets back its old words and
        vector, a soft forget comes back from the trash, a working key gets back its
        old value; reverting a revert redoes it. Raises NotFound, and Conflict,
        changing nothing, when later entries changed the same objects (RevertBlocked
        names them), when a deletion for good erased its before-states, or for an entry
        that cannot be undone (an agent's registration, a deletion for good)."""
        return self.run(ref, ops.Revert(entry_id))

    def _revert(self, ref: Scope, op: ops.Revert) -> LedgerEntry:
        seq, now, store = op.entry_id, self._now(), self._store
        return store.run(lambda tx: undo.revert(store, tx, ref, seq, self._writer, now), lock=[ref])

    def _require(self, what: str) -> Embedder:
        return writing.require_embedder(self._embedder, what)

    def _entry(self, tx: Tx, ref: Scope, op: str, now: int, work: Callable[[Entry], T]) -> T:
        return recording.write(self._store, tx, ref, op, self._writer, now, work)

    # -- reading facts -----------------------------------------------------------
    def fact(self, ref: Scope, fact_id: str) -> Fact:
        return self.run(ref, ops.GetFact(fact_id))

    def _fact(self, ref: Scope, op: ops.GetFact) -> Fact:
        fact_id, store = op.fact_id, self._store
        checked = fact_id
        found = store.run(lambda tx: store.facts.get(tx, ref, checked), write=False)
        if found is None:
            raise NotFound(f"no fact {fact_id!r} in this scope")
        return found

    def facts(self, ref: Scope, *, limit: int | None = None, before: str | None = None) -> FactPage:
        """One page of facts, newest first (default 100, max 1000), from an index: the
        cost follows the page size. Pass ``next_before`` back as ``before``."""
        return self.run(ref, ops.Facts(limit, before))

    def _facts(self, ref: Scope, op: ops.Facts) -> FactPage:
        size = op.limit or limits.DEFAULT_PAGE
        position, store = _decode_cursor(op.before), self._store
        rows = store.run(lambda tx: store.facts.page(tx, ref, position, size + 1), write=False)
        more = len(rows) > size
        rows = rows[:size]
        cursor = _encode_cursor(rows[-1][1]) if more else None
        now = self._now()  # an expired fact is not listed (the page may come up short)
        return FactPage([fact for fact, _ in rows if not expired(fact, now)], cursor)

    def count(self, ref: Scope) -> int:
        return self._store.run(lambda tx: self._store.facts.count(tx, ref), write=False)

    def vectors(self, ref: Scope, fact_ids: Sequence[str]) -> dict[str, Vectors]:
        """The stored vectors of the scope's facts among ``fact_ids``, by id (those with
        none, or not the scope's, left out)."""
        ids = [_check_id(i) for i in fact_ids]
        store = self._store
        return store.run(lambda tx: store.facts.vectors(tx, ref, ids), write=False)

    def scopes(self, *, under: str = "", limit: int = 1000) -> list[Scope]:
        """Up to ``limit`` scopes that hold facts, those whose keys start with ``under``
        (:func:`engram.core.scopes.person_prefix`: every application's memory of one
        person), in key order."""
        store = self._store
        keys = store.run(lambda tx: store.facts.scope_keys(tx, limit, under), write=False)
        return [parse_key(k) for k in keys]

    def health(self, ref: Scope | None = None, *, graph_drift: bool = False) -> health.HealthReport:
        """What the scope holds (without ``ref``, the whole store, with the bytes it
        takes), counted in one snapshot; see :mod:`engram.core.health`. ``graph_drift``
        also rebuilds the scope's graph by the rules and compares it with the stored one
        (per scope only: InvalidInput without ``ref``). Never writes."""
        caps = self._caps
        retention = health.Retention(caps.trash_retention_us, caps.ledger_retention_us)
        return checkup.report(self._store, ref, self._now(), retention, graph_drift=graph_drift)

    def recall(
        self,
        ref: Scope,
        query_text: str,
        *,
        top_k: int | None = None,
        type: str | None = None,
        tags: Sequence[str] = (),
        created_after: datetime | None = None,
        created_before: datetime | None = None,
        verified_only: bool = False,
        mode: RecallMode = "hybrid",
        min_strength: float | None = None,
        min_score: float | None = None,
    ) -> list[RecallHit]:
        """Facts by meaning: full-text and vector candidates, fused by score (see
        :mod:`engram.core.ranking`).

        Filters bind both halves before fusion; ``min_strength`` keeps facts at least
        that strong. A fact's strength multiplies its fused score (all at the default
        1.0, the ranking is the fusion's alone). Each hit carries its ``relevance`` to
        the query in [0, 1], one scale for every query (:mod:`engram.core.relevance`);
        ``min_score`` keeps the hits at least that relevant (perhaps none: "nothing
        relevant" is an answer). Raises CapabilityMissing without an embedder (never an
        empty list that would look like "nothing matched"), except in ``mode="text"``,
        which needs none.

        With a reranker, hybrid recall orders its best ``max(top_k, 30)`` candidates by
        the reranker's scores (``RecallHit.rerank_score``), ahead of the rest in their
        fused order (:mod:`engram.core.reranking`); a failing reranker raises
        UpstreamFailure, never a silent fallback to the fused order.
        """
        asked = ops.Recall(
            query_text,
            top_k,
            type,
            tags,
            verified_only,
            mode,
            created_after,
            created_before,
            min_strength,
            min_score,
        )
        return self.run(ref, asked)

    def _recall(self, ref: Scope, op: ops.Recall) -> list[RecallHit]:
        embedder = self._require("recall by meaning") if op.mode != "text" else None
        reranker = self._reranker if op.mode == "hybrid" else None
        return self._recaller.recall(ref, op, embedder, reranker)

    # -- episodes ------------------------------------------------------------------
    def episodic_recall(
        self,
        ref: Scope,
        *,
        branch: episodes.Branch = "own",
        limit: int | None = None,
        after: datetime | None = None,
        query: str | None = None,
    ) -> episodes.EntryPage:
        """The scope's session entries in time order (default 100, max 1000): its own,
        or with ``branch="lineage"`` each ancestor's up to its fork point too. See
        :func:`engram.core.episodes.recall`."""
        return episodes.recall(
            self._store, ref, branch=branch, limit=limit, after=after, query=query
        )

    def episodic_tree(self, ref: Scope) -> list[episodes.SessionNode]:
        """The fork trees holding the scope's sessions, siblings kept apart."""
        return episodes.tree(self._store, ref)

    def source(self, fact: Fact) -> SessionEntry | None:
        """The session entry a verified fact came from, or None."""
        return episodes.source(self._store, fact)


content_hash = rules.content_hash


def _scope_ids(ref: Scope) -> tuple[str, ...]:
    if isinstance(ref, ResourceRef):
        return (ref.resource_id,) if ref.team_id is None else (ref.resource_id, ref.team_id)
    return (ref.person, ref.app)


_RUNS: dict[type, Callable[[Memory, Scope, Any], Any]] = {
    ops.Remember: lambda m, ref, op: m.remember_many(ref, [op])[0],
    ops.Recall: Memory._recall,
    ops.Facts: Memory._facts,
    ops.GetFact: Memory._fact,
    ops.FactProvenance: lambda m, ref, op: m._documents.provenance(ref, op.fact_id),
    ops.Correct: Memory._correct,
    ops.Merge: Memory._merge,
    ops.Forget: Memory._forget,
    ops.ForgetAll: Memory._forget_all,
    ops.Restore: Memory._restore,
    ops.DeleteTraces: lambda m, ref, op: m.delete_traces(ref, op.fact_ids),
    ops.DeleteScope: lambda m, ref, op: m.delete_scope(
        ref, turn_user_id=op.turn_user_id, expected_count=op.expected_count
    ),
    ops.Compact: Memory._compact,
    ops.Trash: Memory._trash,
    ops.Ledger: Memory._ledger,
    ops.History: Memory._history,
    ops.LedgerChanges: Memory._ledger_changes,
    ops.Revert: Memory._revert,
    ops.Documents: lambda m, ref, op: m._documents.documents(ref, limit=op.limit, after=op.after),
    ops.GetDocument: lambda m, ref, op: m._documents.document(ref, op.document_id),
    ops.ForgetDocument: lambda m, ref, op: m._documents.forget_document(
        ref, op.document_id, hard=op.hard
    ),
    ops.DetectFeedback: lambda m, ref, op: m.usage.detect(
        ref, op.fact_ids, op.response, query=op.query, record=not op.dry_run
    ),
    ops.RecordFeedback: lambda m, ref, op: m.usage.record(
        ref, op.fact_id, op.signal, reason=op.reason, query=op.query
    ),
    ops.FactFeedback: lambda m, ref, op: m.usage.signals(ref, op.fact_id),
    ops.Consolidate: lambda m, ref, op: m.consolidate(
        ref, steps=op.steps or consolidating.STEPS, dry_run=op.dry_run
    ),
    ops.CompileWiki: lambda m, ref, op: m.wiki.compile(ref, batch=op.batch),
    ops.EpisodicRecall: lambda m, ref, op: m.episodic_recall(
        ref, branch=op.branch, limit=op.limit, after=op.after, query=op.query
    ),
    ops.EpisodicTree: lambda m, ref, op: m.episodic_tree(ref),
    ops.Health: lambda m, ref, op: m.health(ref, graph_drift=op.graph_drift),
    ops.WorkingList: lambda m, ref, op: m.working.list(ref, after=op.after, limit=op.limit),
    ops.WorkingGet: lambda m, ref, op: m.working.entry(ref, op.key),
    ops.WorkingSet: lambda m, ref, op: m.working.set(
        ref,
        op.key,
        op.value,
        expected_version=op.expected_version,
        ttl=None if op.ttl_seconds is None else timedelta(seconds=op.ttl_seconds),
    ),
    ops.WorkingDelete: lambda m, ref, op: m.working.delete(ref, op.key),
    ops.StartSession: lambda m, ref, op: m.sessions.start(
        ref, session_id=op.session_id, name=op.name, fork_of=op.fork_of
    ),
}


def _on_graph(run: Callable[[Graph, Scope, Any], Any]) -> Callable[[Memory, Scope, Any], Any]:
    return lambda m, ref, op: run(m.graph, ref, op)


_RUNS.update({kind: _on_graph(run) for kind, run in graph_ops.RUNS.items()})


def _check_id(fact_id: object) -> str:
    return limits.check_id(fact_id)


def _encode_cursor(position: tuple[int, int]) -> str:
    """A page's cursor: the last fact's creation time and row, ``created.seq``."""
    return f"{position[0]}.{position[1]}"


def _encode_trash_cursor(deleted_us: int, fact_id: str) -> str:
    return f"{deleted_us}.{fact_id}"


def _decode_trash_cursor(cursor: str | None) -> tuple[int, str] | None:
    """The position a trash cursor names: ``deleted_us.fact_id`` (every text of
    ops.TRASH_CURSOR_PATTERN is one), or the base64 of it that cursors were before."""
    if cursor is None:
        return None
    if re.fullmatch(ops.TRASH_CURSOR_PATTERN, cursor):
        at, fact_id = cursor.split(".", 1)
        return int(at), fact_id
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        at, fact_id = raw.split(".", 1)
        if not (0 <= int(at) < 1 << 62) or not fact_id:
            raise ValueError("out of range")
        return int(at), fact_id
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"not a cursor from a previous page: {cursor!r}") from exc


def _decode_cursor(cursor: str | None) -> tuple[int, int] | None:
    """The position a cursor names: ``created.seq`` (every text of ops.CURSOR's pattern
    is one), or the base64 of it that cursors were before."""
    if cursor is None:
        return None
    if re.fullmatch(ops.CURSOR_PATTERN, cursor):
        at, seq = cursor.split(".")
        return int(at), int(seq)
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        created, rowid = (int(part) for part in raw.split("."))
        if not (0 <= created < 1 << 62 and 0 <= rowid < 1 << 62):
            raise ValueError("out of range")
        return created, rowid
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"not a cursor from a previous page: {cursor!r}") from exc
