"""Recall by meaning, what :meth:`engram.core.memory.Memory.recall` runs: a question's
full-text and vector candidates and, in a hybrid recall, the lists of what their rows
know (:mod:`engram.core.signals`), fused (:mod:`engram.core.ranking`), ordered by
strength, read back past expired facts, reranked where a reranker is given, and scored
for relevance (:mod:`engram.core.relevance`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence

from engram.core import (
    limits,
    ops,
    query,
    relevance,
    reranking,
    rules,
    signals,
    spoken,
    wordmatch,
    writing,
)
from engram.core.asked import kind as asked_kind
from engram.core.clock import from_us, to_us
from engram.core.errors import EmbedderMismatch
from engram.core.graph.names import body
from engram.core.models import Fact, Filters, RecallHit
from engram.core.ports import Embedder, Reranker, Store, Tx, Vectors
from engram.core.ranking import Candidate, Fused, Traits, fuse, rank_by_strength
from engram.core.scopes import Scope

CANDIDATE_POOL = 50
SPOKEN_SCOPES = 4096  # scopes a process remembers meeting speakers in (a hint)


class Recaller:
    """One memory's recalls: its store and clock, the scopes where it met a question
    naming their speakers, and its embedder's single words' vectors. Thread-safe."""

    def __init__(self, store: Store, clock: Callable[[], int]) -> None:
        self._store = store
        self._clock = clock
        # Scopes whose speakers a question named (a hint: see recall), the latest last.
        self._spoken: dict[str, None] = {}
        self._spoken_lock = threading.Lock()
        self._words: wordmatch.WordVectors | None = None

    def _word_vectors(self, embedder: Embedder) -> wordmatch.WordVectors:
        """The single words' vectors of ``embedder``, held while it is the one given."""
        held = self._words
        if held is None or held.owner is not embedder:

            def embed(words: list[str]) -> Vectors:
                return embedder.embed(words, "passage")  # unit rows, by the port's terms

            held = self._words = wordmatch.WordVectors(embed, embedder)
        return held

    def recall(
        self,
        ref: Scope,
        op: ops.Recall,
        embedder: Embedder | None,
        reranker: Reranker | None,
    ) -> list[RecallHit]:
        """``op``'s hits in ``ref``: ``embedder`` reads the question (None: full text
        alone), ``reranker`` reorders the best (None: the fused order)."""
        floor, text, mode = op.min_score, op.query, op.mode
        k = op.top_k or limits.DEFAULT_TOP_K
        filters = Filters(
            type=op.type,
            tags=tuple(op.tags),
            created_after=op.created_after,
            created_before=op.created_before,
            verified_only=op.verified_only,
            min_strength=op.min_strength,
        )
        pool = max(CANDIDATE_POOL, 2 * k)
        # The query is embedded first; then both halves and the rows are read from one
        # snapshot, so a concurrent forget cannot leave a candidate without its row. Each
        # backend chooses whether the halves run at once (``candidates.both``).
        words = query.terms(text)
        terms = words if mode != "vector" else []
        store = self._store
        # Where the store's vectors read turns' words, the question's vector leaves out
        # the speakers it names (:mod:`engram.core.spoken`), read from who said its
        # full-text candidates: first (that half not read again) in a scope where this
        # process met speakers before; elsewhere the halves run at once (or the vector
        # half alone, whose candidates' speakers are read instead), read again when the
        # question turns out to name a speaker.
        speaking = (
            embedder is not None
            and spoken.reads_words(embedder)
            and spoken.may_name(text)
            and bool(words)
        )
        told: list[Candidate] | None = None
        named: set[str] = set()

        def tell() -> str:
            nonlocal told, named
            told, named = store.run(
                lambda tx: _told(store, tx, ref, text, words, filters, pool), write=False
            )
            return spoken.question(text, named)

        first = speaking and ref.key in self._spoken
        asked = tell() if first else text
        vector = None if embedder is None else embedder.embed([asked], "query")[0]
        # Rows are read for the hits, for what the reranker reads, or for the whole pool
        # when relevance filters the hits.
        rows = None if floor is not None else k if reranker is None else reranking.depth(k)

        now = self._clock()

        def read(tx: Tx) -> tuple[list[Fused], dict[str, Fact], dict[str, float]] | None:
            """The fused candidates, their rows and cosines; None when the question names
            a speaker its vector did not leave out."""
            # The store may have been re-embedded meanwhile: its model's record is read
            # before any candidate is used, beside the vector half's search where the
            # halves run at once (with the text half's traits), else after the halves;
            # where a half finds the vectors incomparable, the record's error says why.
            checked = embedder is None

            def check(on: Tx = tx) -> None:
                nonlocal checked
                if not checked:
                    assert embedder is not None
                    rules.check_query_model(store, on, writing.model_of(embedder))
                    checked = True

            lexical: list[Candidate] = []
            semantic: list[Candidate] = []
            beyond: list[Candidate] = []  # the vector half's, read deeper for one list
            # The candidates' traits: those a half read with them, and the text half's
            # read beside the vector half's search.
            early: dict[str, Traits] = {}

            def read_early(on: Tx, found: list[Candidate]) -> None:
                check(on)
                early.update(_traits(store, on, ref, found, early))

            try:
                if told is not None and vector is not None:
                    # found in a snapshot before: their traits are read again in this one
                    lexical = [Candidate(c.id, c.score) for c in told] if terms else []
                    hybrid = bool(terms) and signals.reads_nearest(text, named)
                    deep = signals.NEAREST if hybrid else pool
                    semantic = store.candidates.vector(tx, ref, vector, filters, max(pool, deep))
                    semantic, beyond = semantic[:pool], semantic[pool:]
                elif terms and vector is not None:
                    lexical, semantic = store.candidates.both(
                        tx, ref, terms, vector, filters, pool, then=read_early
                    )
                elif terms:
                    lexical = store.candidates.text(tx, ref, terms, filters, pool)
                elif vector is not None:
                    semantic = store.candidates.vector(tx, ref, vector, filters, pool)
                    if speaking and told is None:  # who said them, not a full-text half
                        said = _traits(store, tx, ref, semantic, early)
                        if _names_a_speaker(text, semantic, said):
                            return None
            except EmbedderMismatch:
                check()  # the store's model changed: that error says so
                raise
            check()
            early.update((c.id, c.traits) for c in lexical + semantic + beyond if c.traits)
            more: list[list[Candidate]] = []
            traits: dict[str, Traits] | None = None
            if terms and semantic:  # hybrid: what else the candidates' rows know
                pooled = dict.fromkeys([c.id for c in lexical] + [c.id for c in semantic])
                traits = _traits(store, tx, ref, lexical + semantic, early)
                if speaking and told is None and _names_a_speaker(text, lexical, traits):
                    return None
                kinds = _kinds(store, tx, ref, traits) if asked_kind(text) else None
                wider = _traits(store, tx, ref, [c for c in beyond if c.id not in pooled], early)
                nearest = semantic + beyond
                words = None if embedder is None else self._word_vectors(embedder)
                more = signals.lists(
                    text, terms, lexical, traits, kinds, from_us(now), nearest, wider, words
                )
                traits.update(wider)
            fused = fuse(lexical, semantic, more)
            known = early if traits is None else traits  # any other candidate's read here
            strengths = store.facts.strengths(tx, ref, [f.id for f in fused if f.id not in known])
            strengths.update(
                (f.id, s) for f in fused if f.id in known and (s := known[f.id].strength) != 1.0
            )
            if strengths:  # only facts off the default are read, and re-scored
                fused = rank_by_strength(fused, strengths)
            fused, found = _unexpired(store, tx, ref, fused, rows, now, known)
            cosines = {c.id: c.score for c in semantic + beyond}
            if vector is not None:
                unseen = [f.id for f in fused if f.id not in cosines]
                for fact_id, other in store.facts.vectors(tx, ref, unseen).items():
                    cosines[fact_id] = float(other @ vector)
            return fused, found, cosines

        result = store.run(read, write=False)
        if result is None:  # the question names a speaker: its vector leaves them out
            with self._spoken_lock:
                self._spoken[ref.key] = None
                while len(self._spoken) > SPOKEN_SCOPES:
                    del self._spoken[next(iter(self._spoken))]
            assert embedder is not None
            vector = embedder.embed([tell()], "query")[0]
            result = store.run(read, write=False)
            assert result is not None
        fused, found, cosines = result
        # The reranker is asked once the snapshot has ended: none is held across its call.
        ordered = (
            reranking.unranked(fused)
            if reranker is None
            else reranking.reorder(reranker, text, fused, found, k)
        )
        hits = []
        for f, reranked in ordered:
            fact = found.get(f.id)
            if fact is None:
                continue
            cosine = cosines.get(f.id) if vector is not None else None
            score = relevance.of(text, fact.content, fact.context, cosine)
            if floor is None or score >= floor:
                hits.append(RecallHit(fact, f.score, f.text_rank, f.vector_rank, score, reranked))
        return hits[:k]


def expired(fact: Fact, at: int) -> bool:
    """Whether the fact's time has run out at ``at`` (then it is neither recalled nor
    listed)."""
    return fact.expires_at is not None and to_us(fact.expires_at) <= at


def _traits(
    store: Store, tx: Tx, ref: Scope, found: Sequence[Candidate], held: dict[str, Traits]
) -> dict[str, Traits]:
    """The traits of ``found``: those it or ``held`` carries, the rest read."""
    carried = {c.id: t for c in found if (t := c.traits or held.get(c.id)) is not None}
    missing = [c.id for c in found if c.id not in carried]
    return carried | store.facts.traits(tx, ref, list(dict.fromkeys(missing)))


def _names_a_speaker(text: str, half: Sequence[Candidate], traits: dict[str, Traits]) -> bool:
    """Whether ``text`` names someone who said one of ``half``'s candidates."""
    said = {c.id: traits[c.id] for c in half if c.id in traits}
    return bool(signals.named_speakers(text, said))


def _kinds(store: Store, tx: Tx, ref: Scope, traits: dict[str, Traits]) -> dict[str, set[str]]:
    """The types of the names each candidate's own words hold, as the graph's rules typed
    its mentions when they read it, its speaker's label left out."""
    starts = {fid: body(t.content, t.speaker) for fid, t in traits.items()}
    kinds: dict[str, set[str]] = {}
    for m in store.graph.mentions(tx, ref, facts=list(traits)):
        if m.type is not None and m.start >= starts[m.fact_id]:
            kinds.setdefault(m.fact_id, set()).add(m.type)
    return kinds


def _told(
    store: Store,
    tx: Tx,
    ref: Scope,
    text: str,
    terms: Sequence[str],
    filters: Filters,
    pool: int,
) -> tuple[list[Candidate], set[str]]:
    """The full-text half of ``text`` (its ``terms``), and the speakers (first names) it
    names among those who said its candidates."""
    lexical = store.candidates.text(tx, ref, terms, filters, pool)
    traits = store.facts.traits(tx, ref, [c.id for c in lexical])
    return lexical, signals.named_speakers(text, traits)


def _unexpired(
    store: Store,
    tx: Tx,
    ref: Scope,
    fused: list[Fused],
    rows: int | None,
    at: int,
    held: Mapping[str, Traits],
) -> tuple[list[Fused], dict[str, Fact]]:
    """The fused candidates whose rows are read (the first ``rows``, or all), with their
    facts, passing over expired ones: the rows after them are read in their place. A
    fact whose traits ``held`` carry its whole row is built from it, not read again."""
    found: dict[str, Fact] = {}
    while True:
        window = fused if rows is None else fused[:rows]
        unread = [f.id for f in window if f.id not in found]
        for fact_id in unread:
            if (traits := held.get(fact_id)) is not None and traits.fact is not None:
                fact = traits.fact()
                assert isinstance(fact, Fact)  # the store's rows are facts
                found[fact_id] = fact
        found.update(store.facts.by_ids(tx, ref, [i for i in unread if i not in found]))
        gone = {i for i in unread if i in found and expired(found[i], at)}
        if not gone:
            return window, found
        fused = [f for f in fused if f.id not in gone]
        for fact_id in gone:
            del found[fact_id]
