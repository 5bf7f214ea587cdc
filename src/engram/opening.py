"""``engram.open``: a store, an embedder, a reranker, a chat model and a name recogniser
if any, and the caps, wired into a Memory.

The stores, numpy and the models load when a store is opened, not when this module is
imported: the command line imports it to parse and to answer ``--help``.
"""

from __future__ import annotations

import json
import os
from datetime import timedelta
from functools import partial
from typing import TYPE_CHECKING, Literal, TypeAlias

from engram.backends import backend_for
from engram.core import limits
from engram.core.errors import EmbedderMismatch, InvalidInput
from engram.core.models import Caps

if TYPE_CHECKING:
    from engram.core.clock import Clock
    from engram.core.consolidation import Policy
    from engram.core.documents.urls import Fetcher
    from engram.core.memory import Memory
    from engram.core.ports import (
        ChatModel,
        Embedder,
        ModelRecord,
        NameRecogniser,
        Reranker,
        Store,
        Tx,
        Vectors,
    )
    from engram.core.progress import Progress

EmbedderChoice: TypeAlias = "Embedder | Literal['local', 'e5', 'none'] | None"
REEMBED_BATCH = 256
REEMBEDDING = "re-embedding"  # the phase a re-embedding's progress names


def open(
    path: str | os.PathLike[str],
    *,
    embedder: EmbedderChoice = "local",
    max_facts: int = 0,
    max_age: timedelta | None = None,
    reembed: bool = False,
    progress: Progress | None = None,
    clock: Clock | None = None,
    trash_retention: timedelta | None = timedelta(days=30),
    ledger_retention: timedelta | None = timedelta(days=90),
    reranker: Reranker | None = None,
    extractor: str = "rules",
    chat: ChatModel | None = None,
    recogniser: NameRecogniser | None = None,
    self_improve: bool | Policy = True,
    fetcher: Fetcher | None = None,
    vector_index_above: int | None = None,
    text_base_above: int | None = None,
) -> Memory:
    """Opens (creating if absent) the store at ``path`` with an embedder.

    ``path`` is a SQLite file, or a ``postgresql://`` URL of a database with pgvector
    (its schema is brought up to date on open, as ``engram migrate`` does).

    ``embedder`` is ``"local"`` (the packaged all-MiniLM-L6-v2), ``"e5"``
    (multilingual-e5-small, ``engram-durable[e5]``), an :class:`Embedder` (e.g.
    :class:`engram.RemoteEmbedder`), or ``None``/``"none"`` (working memory and listing
    only; recall raises CapabilityMissing). ``max_facts`` and ``max_age`` cap
    every scope when it next remembers.

    Raises StorageFailure naming the path when it cannot be opened, and
    EmbedderMismatch when the store's vectors came from another model, unless
    ``reembed`` asks to embed every stored fact again with this one; ``progress``, when
    given, is told after each batch how far that has come (``"re-embedding"``, the facts
    done, the facts to do), as an import tells its own.

    ``clock`` (microseconds since the epoch) replaces the system clock for every time
    the memory stamps or compares: expiry, caps, created and updated times.

    ``trash_retention`` (30 days) is how long a softly forgotten fact waits in the trash
    before it is deleted for good; ``ledger_retention`` (90 days) how long the ledger
    keeps an entry, until a compaction. None keeps them.

    ``reranker`` (optional, e.g. :class:`engram.RemoteReranker`) reorders a hybrid
    recall's best candidates by its scores (:mod:`engram.core.reranking`); it stores
    nothing, so any reranker opens any store.

    ``extractor`` is ``"rules"`` (every fact written is read for the names it holds, in
    its write: :mod:`engram.core.graph.indexing`) or ``"off"`` (the graph holds only what
    callers assert; ``mem.graph.extract`` reads a scope's facts later).

    ``chat`` (optional, e.g. :class:`engram.RemoteChat`) is the model that
    ``mem.graph.extract(ref, extractor="llm")`` reads facts with, never inline; without
    one, that raises CapabilityMissing. ``recogniser`` (optional, e.g.
    :class:`engram.SpacyRecogniser`) is, likewise, what ``extractor="spacy"`` reads them
    with.

    ``self_improve`` turns the consolidation cycle on (True: prune facts under strength
    0.2 older than 30 days; a :class:`engram.Policy` for other bounds) or off (False:
    ``mem.consolidate`` raises CapabilityMissing and there is no ``memory_reflect``
    tool).

    ``vector_index_above``: scopes of at least this many facts search their vectors
    through an approximate index (SQLite: a graph in a file beside the database, built
    in the background; PostgreSQL: an HNSW index of the scope); exact search below. None
    keeps the backend's default (SQLite 50,000, PostgreSQL 10,000).

    ``text_base_above`` (SQLite): scopes of at least this many facts save their common
    words' postings in the file, built in the background, so a process that starts reads
    such a word as one row. None keeps the default (100,000); PostgreSQL keeps none.

    ``fetcher`` fetches the URLs ``mem.ingest`` is given; by default
    :class:`engram.fetching.HttpFetcher` (httpx, private addresses refused unless the
    call allows them).
    """
    if not isinstance(path, str | os.PathLike) or not str(path):
        raise InvalidInput(f"path must be a file path, got {path!r}")
    caps = Caps(
        limits.check_max_facts(max_facts),
        limits.check_max_age(max_age),
        limits.check_max_age(trash_retention, "trash_retention"),
        limits.check_max_age(ledger_retention, "ledger_retention"),
    )
    from engram.core.clock import now_us
    from engram.core.memory import Memory
    from engram.fetching import HttpFetcher

    chosen = _embedder(embedder)
    _check_reranker(reranker)
    _check_chat(chat)
    _check_recogniser(recogniser)
    policy = _policy(self_improve)
    reads = check_extractor(extractor)
    vector_index_above = _threshold(vector_index_above, "vector_index_above")
    text_base_above = _threshold(text_base_above, "text_base_above")
    store = open_store(path)
    try:
        if chosen is not None:
            from engram.core import spoken

            chosen = spoken.reading(store, chosen, reembed=reembed)
        if chosen is not None and reembed and _stale(store, chosen) is not None:
            # Every vector and the model record change: no other process may use the
            # store meanwhile (its queries would meet vectors of another model).
            store.close()
            backend_for(path).check_sole(path, done="re-embedded", then="re-embed")
            store = open_store(path)
        store.graph.reads_facts = reads
        if vector_index_above is not None:
            store.search_approximately_from(vector_index_above)
        if text_base_above is not None:
            store.keep_text_bases_from(text_base_above)
        if chosen is not None:
            reconcile_model(store, chosen, reembed=reembed, progress=progress)
    except BaseException:
        store.close()
        raise
    return Memory(
        store,
        chosen,
        caps=caps,
        clock=clock or now_us,
        reranker=reranker,
        chat=chat,
        recogniser=recogniser,
        consolidation=policy,
        fetcher=fetcher or HttpFetcher(),
        stores=open_store,
    )


def _policy(self_improve: object) -> Policy | None:
    from engram.core.consolidation import Policy

    if isinstance(self_improve, Policy):
        return self_improve
    if not isinstance(self_improve, bool):
        raise InvalidInput(f"self_improve must be true, false or a Policy, got {self_improve!r}")
    return Policy() if self_improve else None


EXTRACTORS = ("rules", "off")


def check_extractor(extractor: object) -> bool:
    """Whether ``extractor`` reads facts for names; InvalidInput for an unknown one."""
    if extractor not in EXTRACTORS:
        raise InvalidInput(f"extractor must be one of {', '.join(EXTRACTORS)}, got {extractor!r}")
    return extractor == "rules"


def open_store(target: str | os.PathLike[str], *, apply_migrations: bool = True) -> Store:
    """The store at ``target``: a PostgreSQL URL, or else a SQLite file path."""
    return backend_for(target).open(target, apply_migrations=apply_migrations)


def describe(target: str | os.PathLike[str]) -> str:
    """Where the store is, as it may be shown: an absolute path, or a URL without its
    password."""
    return backend_for(target).describe(target)


def _threshold(facts: int | None, name: str) -> int | None:
    """A scope size from which a store keeps an index, checked; None: its default."""
    if facts is None:
        return None
    facts = limits.check_count(facts, name)
    if facts < 1:
        raise InvalidInput(f"{name} must be at least 1, got {facts}")
    return facts


def _embedder(choice: EmbedderChoice) -> Embedder | None:
    if choice is None or choice == "none":
        return None
    if choice == "local" or choice == "e5":
        from engram.embedders import packaged

        return packaged.load(choice)
    if isinstance(choice, str):
        raise InvalidInput(f"embedder must be 'local', 'e5', 'none' or an Embedder, got {choice!r}")
    return choice


def _check_reranker(reranker: object) -> None:
    if reranker is not None and not callable(getattr(reranker, "rerank", None)):
        raise InvalidInput(
            f"reranker must be None or a Reranker (e.g. engram.RemoteReranker), got {reranker!r}"
        )


def _check_chat(chat: object) -> None:
    if chat is not None and not callable(getattr(chat, "complete", None)):
        raise InvalidInput(
            f"chat must be None or a ChatModel (e.g. engram.RemoteChat), got {chat!r}"
        )


def _check_recogniser(recogniser: object) -> None:
    if recogniser is not None and not callable(getattr(recogniser, "recognise", None)):
        raise InvalidInput(
            "recogniser must be None or a NameRecogniser (e.g. engram.SpacyRecogniser), "
            f"got {recogniser!r}"
        )


def _stale(store: Store, embedder: Embedder) -> tuple[ModelRecord, ModelRecord] | None:
    """The store's model record and ``embedder``'s when the store holds vectors of
    another model than ``embedder``'s; else None."""
    from engram.core.ports import ModelRecord

    stored = store.run(lambda tx: store.models.get(tx), write=False)
    if stored is None or not store.run(lambda tx: store.facts.any(tx), write=False):
        return None  # the first write records its model, in its own transaction
    wanted = ModelRecord(embedder.model, embedder.dimension)  # may ask a remote model once
    return None if stored == wanted else (stored, wanted)


def reconcile_model(
    store: Store, embedder: Embedder, *, reembed: bool, progress: Progress | None = None
) -> None:
    """Refuses an embedder whose vectors would not be comparable with the stored ones,
    or, with ``reembed``, replaces every stored vector with this embedder's.

    A re-embedding first records that it is under way (``ModelRecord.under_way``: a
    model record no embedder has), so until its last batch has committed, every process
    (this one, and any that opens the store meanwhile) finds the store's model not its
    own and refuses to write or to compare vectors; one cut short leaves the store
    refusing both models until a re-embedding finishes. Each batch records how far it
    has come with its vectors, so a re-embedding to the same model goes on after the last
    batch that committed (a million facts take hours on a CPU); one to another model
    starts over."""
    if (stale := _stale(store, embedder)) is None:
        return
    stored, wanted = stale
    if not reembed:
        raise EmbedderMismatch(
            stored.mismatch(wanted),
            hint="open with the same model, point at a fresh file, or pass reembed=True",
        )
    from engram.core import spoken
    from engram.core.progress import untold

    unfinished = wanted.under_way()
    if stored == unfinished:  # this model's re-embedding, cut short
        last = store.run(store.models.reembedded, write=False)
    else:
        last = 0
        store.run(partial(_record_model, store, unfinished, reembedded=0))
    tell = progress or untold
    done, total = 0, store.run(partial(store.facts.count_after, after_seq=last), write=False)
    tell(REEMBEDDING, done, total)
    while batch := store.run(
        partial(store.facts.texts_after, after_seq=last, limit=REEMBED_BATCH), write=False
    ):
        said = [(text, json.loads(metadata)) for _, text, metadata in batch]
        vectors = embedder.embed(spoken.passages(embedder, said), "passage")
        rows = [(seq, vectors[i]) for i, (seq, _, _) in enumerate(batch)]
        last = batch[-1][0]
        store.run(partial(_replace_vectors, store, rows, reembedded=last))
        done += len(batch)
        tell(REEMBEDDING, done, total)
    store.run(partial(_record_model, store, wanted, reembedded=0))


def _record_model(store: Store, record: ModelRecord, tx: Tx, *, reembedded: int) -> None:
    store.models.put(tx, record)
    store.models.put_reembedded(tx, reembedded)


def _replace_vectors(
    store: Store, rows: list[tuple[int, Vectors]], tx: Tx, *, reembedded: int
) -> None:
    store.facts.replace_vectors(tx, rows)
    store.models.put_reembedded(tx, reembedded)
