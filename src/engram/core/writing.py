"""Writing facts: the one writer that every path adding facts calls downward (remember,
conversations, documents, imports, the wiki's pages, merge).

A write comes in two halves. :meth:`FactWriter.prepare` checks and embeds the notes
outside any transaction (the model may take seconds); :meth:`FactWriter.write` stores
them inside the caller's ledger entry, with the caps. A fact's plain fields that a note
carries (its type, tags, context, strength, …) are copied by name, so a field declared on
both the operation and the fact needs no line here.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engram.core import ledger, limits, rules, spoken
from engram.core.clock import Clock, from_us, to_us
from engram.core.errors import CapabilityMissing
from engram.core.fields import fields_of
from engram.core.models import Caps, Fact, SourceRef, Writer
from engram.core.ops import Remember
from engram.core.ports import Embedder, ModelRecord, NewFact, Store
from engram.core.scopes import Scope

Note = Remember  # one fact to remember in a batch

# The note's fields a fact takes as they are; the others are computed (content, times).
_COMPUTED = {"content", "created_at", "metadata"}
COPIED = tuple(
    f.name
    for f in dataclasses.fields(Remember)
    if f.name in {g.name for g in dataclasses.fields(Fact)} and f.name not in _COMPUTED
)
KEPT = tuple(f for f in fields_of(Remember) if f.name in COPIED and f.base is not SourceRef)
"""The copied fields but the source (its own shape on every surface): a fact's answers
and export files carry each under its own name, so a new one needs no line there."""


@dataclass(slots=True)
class Batch:
    """Notes checked and embedded, ready for one write: each (note, content hash,
    metadata JSON), the facts already stored by hash, the new ones by hash."""

    checked: list[tuple[Note, str, str]]
    existing: dict[str, Fact]
    new: dict[str, NewFact]
    model: ModelRecord
    now: int

    def facts(self, stored: dict[str, Fact]) -> list[Fact]:
        """One fact per note, in order."""
        return [self.existing.get(digest) or stored[digest] for _, digest, _ in self.checked]


def require_embedder(embedder: Embedder | None, what: str) -> Embedder:
    """The embedder, or CapabilityMissing saying that ``what`` needs one."""
    if embedder is None:
        raise CapabilityMissing(
            f"{what} needs an embedder, and this store was opened without one",
            hint="open it with embedder='local' or a remote embeddings endpoint",
        )
    return embedder


def model_of(embedder: Embedder) -> ModelRecord:
    return ModelRecord(embedder.model, embedder.dimension)


class FactWriter:
    """Prepares and writes facts into one store, as one writer, under the store's caps."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder | None,
        *,
        caps: Callable[[], Caps],
        clock: Clock,
        writer: Writer,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._caps = caps
        self._now = clock
        self._writer = writer

    def prepare(self, ref: Scope, notes: Sequence[Note | str]) -> Batch:
        """Checks and embeds the notes, outside any transaction: the facts to write."""
        embedder = require_embedder(self._embedder, "remembering facts")
        checked = [_checked(n if isinstance(n, Note) else Note(n)) for n in notes]
        store, now = self._store, self._now()
        if not checked:
            return Batch(checked, {}, {}, model_of(embedder), now)
        hashes = list(dict.fromkeys(c[1] for c in checked))
        existing = store.run(lambda tx: store.facts.by_hashes(tx, ref, hashes), write=False)
        said: dict[str, Mapping[str, Any] | None] = {}
        for note, digest, _ in checked:
            if digest not in existing:
                said.setdefault(note.content, note.metadata)
        fresh = list(said)
        texts = spoken.passages(embedder, list(said.items()))
        vectors = embedder.embed(texts, "passage") if fresh else None
        by_text = {text: i for i, text in enumerate(fresh)}
        new: dict[str, NewFact] = {}
        ids = iter(rules.new_fact_ids(len(checked)))  # at most one a note
        for note, digest, meta in checked:
            if vectors is None or note.content not in by_text or digest in new:
                continue
            created = to_us(note.created_at) if note.created_at else now
            fact = Fact(
                id=next(ids),
                scope=ref,
                content=note.content,
                created_at=from_us(created),
                updated_at=from_us(now),
                metadata=json.loads(meta),
                turn_user=self._writer.turn_user,
                **{name: getattr(note, name) for name in COPIED},
            )
            new[digest] = NewFact(fact, digest, meta, vectors[by_text[note.content]])
        return Batch(checked, existing, new, model_of(embedder), now)

    def write(self, rec: ledger.Entry, batch: Batch) -> dict[str, Fact]:
        """Writes a prepared batch in the entry's transaction, with the caps; the stored
        fact of each new content hash."""
        store, tx, ref = self._store, rec.tx, rec.scope
        new = batch.new
        rules.check_model(store, tx, batch.model, [n.vector for n in new.values()])
        written = store.facts.insert(tx, ref, list(new.values()))
        for digest in written:
            rec.record("fact", new[digest].fact.id, "add", ledger.ABSENT)
        # A hash skipped was remembered by another writer since the lookup: as stored.
        skipped = [h for h in new if h not in written]
        present = store.facts.by_hashes(tx, ref, skipped) if skipped else {}
        rules.apply_caps(rec, self._caps())
        return {**{h: new[h].fact for h in written}, **present}

    def write_new(
        self, rec: ledger.Entry, new: dict[str, NewFact], model: ModelRecord
    ) -> dict[str, Fact]:
        """Writes facts made elsewhere (an import's, with their vectors) as a batch."""
        return self.write(rec, Batch([], {}, new, model, rec.now))


def _checked(note: Note) -> tuple[Note, str, str]:
    """A note (checked when made), its content hash and its metadata's JSON."""
    return note, rules.content_hash(note.content), limits.encode_value(note.metadata or {})
