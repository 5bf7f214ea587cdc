"""``mem.graph``: a scope's knowledge graph through the library. Every write is one
ledger entry (revertable); every read sees one snapshot. An ``entity`` argument is an
entity's id, name or alias."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Literal, TypeVar

from engram.core import installing, ledger, limits, recording, rules
from engram.core.clock import Clock, now_us
from engram.core.errors import CapabilityMissing, InvalidInput
from engram.core.graph import assertions, backlog, indexing, llm, models, ner, search, walks
from engram.core.graph.models import Entity, Relation
from engram.core.models import JSONValue, Writer
from engram.core.ports import ChatModel, Embedder, ModelRecord, NameRecogniser, Store, Tx
from engram.core.scopes import Scope

T = TypeVar("T")
A = TypeVar("A")
# Facts a model extractor reads per call unless told: a chat model answers one fact in
# seconds; a spaCy pipeline reads hundreds a second (BENCHMARKS.md).
BATCH = {"llm": 50, "spacy": 500}


class Graph:
    def __init__(
        self,
        store: Store,
        embedder: Embedder | None,
        *,
        clock: Clock = now_us,
        writer: Writer,
        chat: ChatModel | None = None,
        recogniser: NameRecogniser | None = None,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._chat = chat
        self._recogniser = recogniser
        self._now = clock
        self._writer = writer

    # -- writes ----------------------------------------------------------------------
    def upsert_entity(
        self,
        ref: Scope,
        name: str,
        *,
        type: str | None = None,
        aliases: Sequence[str] = (),
        summary: str | None = None,
        attributes: dict[str, JSONValue] | None = None,
    ) -> Entity:
        """The entity called ``name`` (or holding it as an alias), created or given
        these values (a value left None stays as it is; aliases join its own). Raises
        InvalidInput (an empty or over-long name or type, over 64 aliases) and Conflict
        (an alias that is another entity's name or alias)."""
        return self._write(
            ref,
            "graph.entity",
            lambda rec: assertions.upsert_entity(
                rec,
                name,
                type=type,
                aliases=aliases,
                summary=summary,
                attributes=attributes,
            ),
        )

    def delete_entity(self, ref: Scope, entity: str) -> Entity:
        """Deletes the entity, its aliases, mentions and relations; never a fact."""
        return self._write(
            ref, "graph.entity.delete", lambda rec: assertions.delete_entity(rec, entity)
        )

    def declare_relation_type(self, ref: Scope, type: str, *, single_valued: bool) -> bool:
        """Declares whether ``type`` holds one target per source at a time (``lives_in``:
        a new target retires the old relation); whether that changed anything."""
        return self._write(
            ref,
            "graph.relation_type",
            lambda rec: assertions.declare_relation_type(rec, type, single_valued),
        )

    def upsert_relation(
        self,
        ref: Scope,
        source: str,
        target: str,
        type: str,
        *,
        facts: Sequence[str] = (),
        valid_at: datetime | None = None,
        invalid_at: datetime | None = None,
        attributes: dict[str, JSONValue] | None = None,
    ) -> Relation:
        """``source`` -[type]-> ``target``, supported by ``facts`` (the scope's live
        facts), holding in the world from ``valid_at`` to ``invalid_at`` (either
        unknown). Raises NotFound (an entity or fact not in the scope) and InvalidInput
        (``valid_at`` later than ``invalid_at``, a single-valued self-loop)."""
        return self._write(
            ref,
            "graph.relation",
            lambda rec: assertions.upsert_relation(
                rec,
                source,
                target,
                type,
                facts=facts,
                valid_at=valid_at,
                invalid_at=invalid_at,
                attributes=attributes,
            ),
        )

    def expire_relation(
        self, ref: Scope, relation_id: str, *, at: datetime | None = None
    ) -> Relation:
        """Retires the relation (engram no longer holds it from now; ``at``: when it
        stopped holding in the world). It stays readable with ``as_of``."""
        return self._write(
            ref,
            "graph.relation.expire",
            lambda rec: assertions.expire_relation(rec, relation_id, at),
        )

    def delete_relation(self, ref: Scope, relation_id: str) -> Relation:
        """Deletes the relation and its support, as if it had never been."""
        return self._write(
            ref,
            "graph.relation.delete",
            lambda rec: assertions.delete_relation(rec, relation_id),
        )

    def model_extractors(self) -> tuple[models.Extractor, ...]:
        """The model extractors this memory has: ``llm`` with a chat model, ``spacy``
        with a name recogniser."""
        found: list[models.Extractor] = []
        if self._chat is not None:
            found.append("llm")
        if self._recogniser is not None:
            found.append("spacy")
        return tuple(found)

    def extract(
        self,
        ref: Scope,
        *,
        extractor: str = "rules",
        fact_ids: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> models.ExtractionReport:
        """Reads the scope's facts (``fact_ids`` only, when given: each a live fact of the
        scope, else NotFound) with ``extractor``, in one ledger entry that cannot be
        reverted (what it writes follows from the facts).

        ``rules`` reads every fact again (after the store ran with ``extractor="off"``,
        say). The model extractors read up to ``limit`` (at most 1000) of the facts they
        have not read for their current words, oldest first, none inside a transaction
        (:mod:`engram.core.graph.backlog`); a second call reads the next ones: ``llm``
        with the chat model the store was opened with, one call a fact (default 50),
        ``spacy`` with its name recogniser, entities only (default 500,
        :mod:`engram.core.graph.ner`). A failing model raises UpstreamFailure and writes
        nothing. Raises InvalidInput (an unknown extractor, a bad limit, or a limit for
        ``rules``) and CapabilityMissing (``llm`` with no chat model, ``spacy`` with no
        recogniser)."""
        if extractor not in models.EXTRACTORS:
            raise InvalidInput(
                f"extractor must be one of {', '.join(models.EXTRACTORS)}, got {extractor!r}"
            )
        ids = None if fact_ids is None else limits.check_ids(fact_ids, "fact_ids")
        if extractor == "rules":
            if limit is not None:
                raise InvalidInput("limit bounds a model extractor's backlog; rules read all")
            return self._extract_rules(ref, ids)
        size = limits.check_limit(limit, default=BATCH[extractor])
        if extractor == "llm":
            if self._chat is None:
                raise CapabilityMissing(
                    "the llm extractor needs ENGRAM_LLM_URL and ENGRAM_LLM_MODEL",
                    hint="set them, or open the store with chat=engram.RemoteChat(url, model)",
                )
            return self._extract_backlog(ref, llm.ChatReader(self._chat), ids, size)
        if self._recogniser is None:
            raise CapabilityMissing(
                "the spacy extractor needs a spaCy pipeline: ENGRAM_SPACY_MODEL",
                hint=f"{installing.extra('nlp')} and a pipeline, then set ENGRAM_SPACY_MODEL, "
                "or open the store with recogniser=engram.SpacyRecogniser(nlp)",
            )
        return self._extract_backlog(ref, ner.NameReader(self._recogniser), ids, size)

    def _extract_backlog(
        self, ref: Scope, reader: backlog.Reader[A], fact_ids: Sequence[str] | None, limit: int
    ) -> models.ExtractionReport:
        facts = backlog.unread(self._store, ref, reader.extractor, fact_ids, limit)
        if not facts:
            return models.ExtractionReport(reader.extractor)
        reads = backlog.read(reader, facts)  # no transaction is open
        return self._write(ref, "graph.extract", lambda rec: backlog.write(rec, reader, reads))

    def _extract_rules(self, ref: Scope, fact_ids: Sequence[str] | None) -> models.ExtractionReport:
        store = self._store

        def work(rec: ledger.Entry) -> models.ExtractionReport:
            if fact_ids is None:
                ids = store.facts.ids(rec.tx, ref)
            else:
                ids = [f.id for f in backlog.live_facts(store, rec.tx, ref, fact_ids)]
            added = 0
            for _ in range(2):  # the second pass finds the names the first made known
                for start in range(0, len(ids), indexing.BATCH):
                    found = store.facts.by_ids(rec.tx, ref, ids[start : start + indexing.BATCH])
                    read = [
                        indexing.readable(f.id, f.content, f.metadata, f.type, f.created_at)
                        for f in found.values()
                    ]
                    added += indexing.read_facts(store, rec.tx, ref, read, rec.now)
            rec.record("graph", ref.key, "extract")
            return models.ExtractionReport("rules", facts_read=len(ids), entities_added=added)

        return self._write(ref, "graph.extract", work)

    # -- reads -------------------------------------------------------------------------
    def entity(self, ref: Scope, entity: str) -> Entity:
        """The scope's entity with this id, name or alias; NotFound otherwise."""
        return self._read(lambda tx: assertions.resolve(self._store, tx, ref, entity))

    def relations(
        self,
        ref: Scope,
        *,
        entity: str | None = None,
        type: str | None = None,
        as_of: datetime | None = None,
        include_expired: bool = False,
        limit: int | None = None,
    ) -> list[Relation]:
        """The scope's relations (touching ``entity``, of ``type``), oldest first: those
        that hold now; with ``as_of``, those that held in the world then, as engram knows
        it now (a retired relation with an end still held before it; one retired with no
        end was withdrawn); with ``include_expired``, every one."""
        size = limits.check_limit(limit)
        rtype = None if type is None else models.check_type(type)
        when = limits.check_time(as_of, "as_of")

        store = self._store

        def read(tx: Tx) -> list[Relation]:
            found = None if entity is None else assertions.resolve(store, tx, ref, entity).id
            rows = store.graph.relations(
                tx,
                ref,
                entities=() if found is None else [found],
                types=() if rtype is None else [rtype],
                limit=1 << 30,
            )
            kept = [r for r in rows if include_expired or r.live(when)]
            return kept[:size]

        return self._read(read)

    def neighbourhood(
        self,
        ref: Scope,
        entity: str,
        *,
        depth: int = 1,
        limit: int | None = None,
        as_of: datetime | None = None,
    ) -> walks.Subgraph:
        """The entities, relations and mentioning facts within ``depth`` (1 to 3) of the
        entity: relations lead to their other ends, and facts to the entities they
        mention. At most ``limit`` (default 50, max 1000) of each; with ``as_of``, the
        relations that held then and the facts remembered by then."""
        steps = walks.check_depth(depth)
        size = walks.check_limit(limit, 50)
        when = limits.check_time(as_of, "as_of")
        store = self._store

        def read(tx: Tx) -> walks.Subgraph:
            center = assertions.resolve(store, tx, ref, entity)
            return walks.neighbourhood(store, tx, ref, center, depth=steps, limit=size, as_of=when)

        return self._read(read)

    def traverse(
        self,
        ref: Scope,
        start: str,
        *,
        depth: int = 2,
        types: Sequence[str] = (),
        direction: walks.Direction = "both",
        limit: int | None = None,
    ) -> list[walks.Path]:
        """The paths from ``start`` along relations that hold now, 1 to ``depth`` (at
        most 3) relations long, of ``types`` when given, following ``direction``
        (``out``, ``in`` or ``both``), no entity twice on a path; shortest first, at
        most ``limit`` (default 100, max 1000)."""
        steps = walks.check_depth(depth)
        size = walks.check_limit(limit, 100)
        kinds = walks.check_types(types)
        way = walks.check_direction(direction)
        store = self._store

        def read(tx: Tx) -> list[walks.Path]:
            first = assertions.resolve(store, tx, ref, start)
            return walks.traverse(
                store, tx, ref, first, depth=steps, types=kinds, direction=way, limit=size
            )

        return self._read(read)

    def search(
        self,
        ref: Scope,
        query: str,
        *,
        top_k: int = 10,
        types: Sequence[str] = (),
        mode: Literal["hybrid", "text"] = "hybrid",
    ) -> list[search.EntityHit]:
        """The scope's entities for ``query``, best first: by their names, aliases and
        summaries (full text) and, in ``hybrid`` mode, by the facts that mention them
        (meaning), fused as recall fuses facts; only of ``types`` when given. Raises
        CapabilityMissing in ``hybrid`` mode without an embedder."""
        text = limits.check_query(query)
        k = limits.check_top_k(top_k)
        kinds = walks.check_types(types)
        if mode not in ("hybrid", "text"):
            raise InvalidInput(f"mode must be hybrid or text, got {mode!r}")
        vector = None
        if mode == "hybrid":
            if self._embedder is None:
                raise CapabilityMissing(
                    "searching entities by meaning needs an embedder, and this store was "
                    "opened without one",
                    hint="use mode='text', or open the store with an embedder",
                )
            vector = self._embedder.embed([text], "query")[0]
        store, embedder = self._store, self._embedder

        def read(tx: Tx) -> list[search.EntityHit]:
            if vector is not None and embedder is not None:  # re-embedded meanwhile?
                rules.check_query_model(store, tx, ModelRecord(embedder.model, embedder.dimension))
            return search.search(store, tx, ref, text, vector, top_k=k, types=kinds)

        return self._read(read)

    # -- plumbing ----------------------------------------------------------------------
    def _write(self, ref: Scope, op: str, work: Callable[[ledger.Entry], T]) -> T:
        now, store = self._now(), self._store

        def run(tx: Tx) -> T:
            return recording.write(store, tx, ref, op, self._writer, now, work)

        return store.run(run, lock=[ref])

    def _read(self, work: Callable[[Tx], T]) -> T:
        return self._store.run(work, write=False)
