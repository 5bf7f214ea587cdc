"""The memory of engram: working memory and facts over one store and one embedder."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from engram.core import episodes, limits, query, rules
from engram.core.agents import Agents
from engram.core.clock import Clock, from_us, now_us, to_us
from engram.core.errors import CapabilityMissing, Conflict, InvalidInput, NotFound
from engram.core.models import (
    Caps,
    Compaction,
    Fact,
    FactPage,
    Filters,
    ForkResult,
    JSONValue,
    RecallHit,
    RecallMode,
    SourceRef,
)
from engram.core.ports import Embedder, ModelRecord, NewFact, Store, Tx
from engram.core.ranking import Candidate, fuse, rank_by_strength
from engram.core.scopes import ResourceRef, Scope
from engram.core.sessions import Entry, Sessions
from engram.core.sharing import Sharing
from engram.core.text import check_text
from engram.core.working import WorkingMemory

CANDIDATE_POOL = 50


@dataclass(frozen=True, slots=True)
class Note:
    """One fact to remember in a batch (see :meth:`Memory.remember_many`)."""

    content: str
    source_ref: SourceRef | None = None
    type: str | None = None
    tags: Sequence[str] = ()
    metadata: dict[str, JSONValue] | None = None
    created_at: datetime | None = None
    context: str | None = None
    strength: float = 1.0


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
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._caps = caps or Caps()
        self._now = clock
        self.working = WorkingMemory(store, clock=clock)
        self.agents = Agents(store, clock=clock)
        self.sharing = Sharing(store, clock=clock)
        self.sessions = Sessions(store, clock=clock)

    @property
    def embedder(self) -> Embedder | None:
        return self._embedder

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
    ) -> Fact:
        """Remembers ``content`` in the scope; the same text twice returns the stored fact.

        ``context`` (up to 8000 characters) is text that helps find the fact without
        being part of it, such as the conversation around a remembered turn: full-text
        recall matches it; the vector is the content's alone. ``strength`` (0 to 10,
        default 1.0) multiplies the fact's score in recall.

        Raises InvalidInput (empty, over 2000 characters), CapabilityMissing (no
        embedder), UpstreamFailure (the embedder failed: nothing was stored).
        """
        note = Note(content, source_ref, type, tags, metadata, created_at, context, strength)
        return self.remember_many(ref, [note])[0]

    def remember_many(self, ref: Scope, notes: Sequence[Note | str]) -> list[Fact]:
        """Remembers many facts with one embedding request and one transaction.

        All or nothing: one invalid note refuses the whole batch before anything is
        embedded. Returns one fact per note, in order (duplicates return the stored one).
        """
        embedder = self._require_embedder("remembering facts")
        if not isinstance(notes, Sequence) or isinstance(notes, str):
            raise InvalidInput("notes must be a list")
        checked = [_check_note(n if isinstance(n, Note) else Note(n)) for n in notes]
        if not checked:
            return []
        store = self._store
        hashes = list(dict.fromkeys(c[1] for c in checked))
        existing = store.run(lambda tx: store.facts.by_hashes(tx, ref, hashes), write=False)
        fresh = list(dict.fromkeys(c[0].content for c in checked if c[1] not in existing))
        vectors = embedder.embed(fresh, "passage") if fresh else None
        by_text = {text: i for i, text in enumerate(fresh)}
        now = self._now()
        new: dict[str, NewFact] = {}
        for note, digest, meta in checked:
            if vectors is None or note.content not in by_text or digest in new:
                continue
            created = to_us(note.created_at) if note.created_at else now
            fact = Fact(
                id=rules.new_fact_id(),
                scope=ref,
                content=note.content,
                created_at=from_us(created),
                updated_at=from_us(now),
                source_ref=note.source_ref,
                type=note.type,
                tags=tuple(note.tags),
                metadata=json.loads(meta),
                context=note.context,
                strength=note.strength,
            )
            new[digest] = NewFact(fact, digest, meta, vectors[by_text[note.content]])
        model = _model_of(embedder)

        def write(tx: Tx) -> dict[str, Fact]:
            rules.check_model(store, tx, model, [n.vector for n in new.values()])
            written = store.facts.insert(tx, ref, list(new.values()))
            # A hash skipped was remembered by another writer since the lookup: as stored.
            skipped = [h for h in new if h not in written]
            present = store.facts.by_hashes(tx, ref, skipped) if skipped else {}
            rules.apply_caps(store, tx, ref, self._caps, now)
            return {**{h: new[h].fact for h in written}, **present}

        stored = store.run(write, lock=[ref])
        return [existing.get(digest) or stored[digest] for _, digest, _ in checked]

    def correct(self, ref: Scope, fact_id: str, content: str, *, by: str | None = None) -> Fact:
        """Changes a fact's words in place and embeds them again; ``created_at`` stays.

        Without an embedder the fact keeps the vector of its old words (found by meaning
        as it was until it is learned again); its words and full-text entry are new.
        Raises InvalidInput (empty, over 2000 characters), NotFound, Conflict (the
        scope already holds these words as another fact), UpstreamFailure.
        """
        text = limits.check_content(content)
        if by is not None:
            limits.check_label(by, "by")
        self.fact(ref, fact_id)  # NotFound before anything is embedded
        embedder = self._embedder
        vector = None if embedder is None else embedder.embed([text], "passage")[0]
        digest, now, store = content_hash(text), self._now(), self._store

        def write(tx: Tx) -> Fact:
            if embedder is not None:
                rules.check_model(store, tx, _model_of(embedder), [vector])
            other = store.facts.by_hashes(tx, ref, [digest]).get(digest)
            if other is not None and other.id != fact_id:
                raise Conflict(f"this scope already holds that text as fact {other.id}")
            fact = store.facts.rewrite(tx, ref, fact_id, text, digest, vector, by, now)
            if fact is None:
                raise NotFound(f"no fact {fact_id!r} in this scope")
            return fact

        return store.run(write, lock=[ref])

    def scope_of(self, fact_id: str) -> Scope | None:
        """The scope a fact belongs to (for callers that check it is theirs)."""
        checked = _check_id(fact_id)
        return self._store.run(lambda tx: self._store.facts.scope_of(tx, checked), write=False)

    def forget(self, ref: Scope, fact_id: str) -> bool:
        """Forgets one fact; idempotent. Returns whether it existed."""
        checked, store = _check_id(fact_id), self._store
        return store.run(lambda tx: store.facts.delete(tx, ref, checked), lock=[ref])

    def forget_all(self, ref: Scope, *, expected_count: int) -> int:
        """Forgets every fact of the scope, confirming how many the caller saw.

        If the scope now holds more than ``expected_count``, nothing is forgotten and
        Conflict is raised. Returns how many were forgotten.
        """
        limits.check_count(expected_count, "expected_count")
        store = self._store

        def write(tx: Tx) -> int:
            rules.confirm_count(store.facts.count(tx, ref), expected_count)
            return store.facts.delete_scope(tx, ref)

        return store.run(write, lock=[ref])

    def compact(
        self, ref: Scope, *, max_facts: int | None = None, max_age: timedelta | None = None
    ) -> Compaction:
        """Applies the caps now: facts older than ``max_age`` go first, then the oldest
        beyond ``max_facts``. Unset arguments fall back to the store-wide caps."""
        caps = Caps(
            max_facts=limits.check_max_facts(max_facts)
            if max_facts is not None
            else self._caps.max_facts,
            max_age_us=limits.check_max_age(max_age)
            if max_age is not None
            else self._caps.max_age_us,
        )
        now, store = self._now(), self._store
        return store.run(lambda tx: rules.apply_caps(store, tx, ref, caps, now), lock=[ref])

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
        keys, facts = store.run(
            lambda tx: rules.fork(store, tx, ref, child, now, into_existing=into_existing),
            lock=[ref, child],
        )
        return ForkResult(child, keys, facts)

    # -- reading facts -----------------------------------------------------------
    def fact(self, ref: Scope, fact_id: str) -> Fact:
        checked, store = _check_id(fact_id), self._store
        found = store.run(lambda tx: store.facts.get(tx, ref, checked), write=False)
        if found is None:
            raise NotFound(f"no fact {fact_id!r} in this scope")
        return found

    def facts(self, ref: Scope, *, limit: int | None = None, before: str | None = None) -> FactPage:
        """One page of facts, newest first (default 100, max 1000), from an index: the
        cost follows the page size. Pass ``next_before`` back as ``before``."""
        size = limits.check_limit(limit)
        position, store = _decode_cursor(before), self._store
        rows = store.run(lambda tx: store.facts.page(tx, ref, position, size + 1), write=False)
        more = len(rows) > size
        rows = rows[:size]
        cursor = _encode_cursor(rows[-1][1]) if more else None
        return FactPage([fact for fact, _ in rows], cursor)

    def count(self, ref: Scope) -> int:
        return self._store.run(lambda tx: self._store.facts.count(tx, ref), write=False)

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
    ) -> list[RecallHit]:
        """Facts by meaning: full-text and vector candidates, fused by score (see
        :mod:`engram.core.ranking`).

        Filters bind both halves before fusion; ``min_strength`` keeps facts at least
        that strong. A fact's strength multiplies its fused score (all at the default
        1.0, the ranking is the fusion's alone). Raises CapabilityMissing without an
        embedder (never an empty list that would look like "nothing matched"), except
        in ``mode="text"``, which needs none.
        """
        text = limits.check_query(query_text)
        k = limits.check_top_k(top_k)
        filters = Filters(
            type=limits.check_label(type, "type") if type is not None else None,
            tags=limits.check_tags(tags),
            created_after=limits.check_time(created_after, "created_after"),
            created_before=limits.check_time(created_before, "created_before"),
            verified_only=bool(verified_only),
            min_strength=None
            if min_strength is None
            else limits.check_strength(min_strength, "min_strength"),
        )
        after, before = filters.created_after, filters.created_before
        if after is not None and before is not None and after >= before:
            raise InvalidInput(
                f"created_after ({after.isoformat()}) must be earlier than created_before "
                f"({before.isoformat()}): no fact could match"
            )
        if mode not in ("hybrid", "text", "vector"):
            raise InvalidInput(f"mode must be hybrid, text or vector, got {mode!r}")
        pool = max(CANDIDATE_POOL, 2 * k)
        embedder = self._require_embedder("recall by meaning") if mode != "text" else None
        # The query is embedded first; then both halves and the rows are read from one
        # snapshot, so a concurrent forget cannot leave a candidate without its row. The
        # halves run one after the other: the model and the matrix product each use every
        # core already, and running the full-text half beside them measured slower.
        vector = None if embedder is None else embedder.embed([text], "query")[0]
        terms = query.terms(text) if mode != "vector" else []
        store = self._store

        def read(tx: Tx) -> list[RecallHit]:
            lexical = store.candidates.text(tx, ref, terms, filters, pool) if terms else []
            semantic: list[Candidate] = []
            if vector is not None:
                semantic = store.candidates.vector(tx, ref, vector, filters, pool)
            fused = fuse(lexical, semantic)
            strengths = store.facts.strengths(tx, ref, [f.id for f in fused])
            if strengths:  # only facts off the default are read, and re-scored
                fused = rank_by_strength(fused, strengths)
            fused = fused[:k]
            found = store.facts.by_ids(tx, ref, [f.id for f in fused])
            return [
                RecallHit(found[f.id], f.score, f.text_rank, f.vector_rank)
                for f in fused
                if f.id in found
            ]

        return store.run(read, write=False)

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

    def source(self, fact: Fact) -> Entry | None:
        """The session entry a verified fact came from, or None."""
        return episodes.source(self._store, fact)

    def _require_embedder(self, what: str) -> Embedder:
        if self._embedder is None:
            raise CapabilityMissing(
                f"{what} needs an embedder, and this store was opened without one",
                hint="open it with embedder='local' or a remote embeddings endpoint",
            )
        return self._embedder


def _model_of(embedder: Embedder) -> ModelRecord:
    return ModelRecord(embedder.model, embedder.dimension)


def content_hash(text: str) -> str:
    return hashlib.sha256(limits.normalize_for_hash(text).encode("utf-8")).hexdigest()


def _check_note(note: Note) -> tuple[Note, str, str]:
    text = limits.check_content(note.content)
    checked = Note(
        content=text,
        source_ref=limits.check_source_ref(note.source_ref),
        type=limits.check_label(note.type, "type") if note.type is not None else None,
        tags=limits.check_tags(note.tags),
        metadata=limits.check_metadata(note.metadata),
        created_at=limits.check_time(note.created_at, "created_at"),
        context=limits.check_context(note.context),
        strength=limits.check_strength(note.strength),
    )
    return checked, content_hash(text), limits.encode_value(checked.metadata)


def _check_id(fact_id: object) -> str:
    return check_text(fact_id, "fact id", max_chars=64)


def _encode_cursor(position: tuple[int, int]) -> str:
    raw = f"{position[0]}.{position[1]}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(cursor: str | None) -> tuple[int, int] | None:
    if cursor is None:
        return None
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        created, rowid = (int(part) for part in raw.split("."))
        if not (0 <= created < 1 << 62 and 0 <= rowid < 1 << 62):
            raise ValueError("out of range")
        return created, rowid
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"not a cursor from a previous page: {cursor!r}") from exc
