"""The consolidation cycle: a scope's memory tidied by what it holds and how it was used.

``mem.consolidate(ref, steps=..., dry_run=...)`` runs these steps, in this order (each
one sees what the steps before it left):

1. **reindex**: the store's full-text index checked against its facts (FTS5's
   ``integrity-check``; rebuilt when it fails), facts that have no vector given one, and
   the scope's approximate vector index brought up to date (built, or built again with
   what was written beside it) once the run's other steps are done, waited for: a
   process that answers a question and exits leaves that to a long-lived one, so this is
   how a store used from the command line gets it.
2. **strengthen**: retrieval feedback not yet applied (:mod:`engram.core.usage`) moves
   its facts' strengths. A use adds 0.1, never past 2.0 (a fact already stronger keeps
   its strength); an ignore multiplies by 0.95, never under 0.05, but only from the
   second ignore in a row (one ignored recall says little; uses reset the run). Each
   signal is applied once.
3. **prune**: unverified facts weaker than ``Policy.prune_below`` (0.2) and older than
   ``Policy.prune_after`` (30 days) go to the trash. A fact with a source (a
   conversation's turn) is never pruned.
4. **merge**: near-duplicates fold into the oldest of them, which takes the highest
   strength; the others go to the trash. Two facts are near-duplicates only when they
   have the same type, tags and speaker, their words' Jaccard similarity is at least
   0.6, their vectors' cosine at least 0.95, **and** they state the same figures, dates
   and polarity (:mod:`engram.core.specifics`): "we met on the 3rd" and "we met on the
   4th" never merge. A fact with a source, or one a document's chunk names, is never
   merged away (it may be the one that stays). Pairs are found without comparing every
   two facts: only facts sharing one of their rarest words are compared (prefix
   filtering, which misses no pair at the Jaccard threshold). Where that would compare
   more than 128 pairs a fact (short facts sharing most of their words, whose pairs
   grow with the square of the scope), each fact is compared with its 16 nearest by
   vector instead (:mod:`engram.storage.neighbours`, in work that grows with the
   scope). That search is approximate: a fold it misses may come in a later run
   (``bench/merge.py`` at 100k: none of 2,071 missed).
5. **derive**: the graph's model extractors (``llm``, ``spacy``; those the memory has)
   read their backlog, up to 1000 facts each (:meth:`engram.core.graph.graph.Graph.extract`).
   The rules read every fact as it is written and need no step.
6. **compact**: the memory's caps (``max_facts``, ``max_age``) applied.

Each step that changes something is one ledger entry (``consolidate.<step>``) written
under the scope's lock while it runs; merge compares the facts in a snapshot before it
takes the lock, and merges only the groups still as compared. prune, merge, strengthen
and compact are reverted like any write (a reverted strengthen marks its signals
unapplied again). reindex repairs and derive's extraction follow from the facts and are
not reverted. A run changes nothing when nothing calls for it: run twice, the second
changes nothing. ``dry_run`` plans each step in a snapshot and writes nothing.
"""

from __future__ import annotations

import json
import math
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from engram.core import ledger, limits, recording, rules, specifics, spoken
from engram.core.errors import CapabilityMissing, InvalidInput
from engram.core.graph import backlog
from engram.core.models import Caps, Fact, Writer
from engram.core.ports import ModelRecord
from engram.core.ranking import Traits
from engram.core.records import ConsolidationReport as ConsolidationReport  # re-exported
from engram.core.records import StepReport as StepReport

if TYPE_CHECKING:
    from engram.core.clock import Clock
    from engram.core.graph.graph import Graph
    from engram.core.ports import Embedder, Store, Tx
    from engram.core.records import Feedback
    from engram.core.scopes import Scope

STEPS = limits.STEPS

USE_STEP, USE_CAP = 0.1, 2.0
IGNORE_FACTOR, IGNORE_FLOOR, IGNORES_BEFORE = 0.95, 0.05, 2
JACCARD, COSINE = 0.6, 0.95
INDEXED = 2 * JACCARD / (1 + JACCARD)
DERIVE_LIMIT = 1000
EMBED_BATCH = 256
_ALL = 1 << 40  # every row a step reads (a step is bounded by the scope's size)
READ_PAGE = 2_000  # facts merge reads at a time
# Merge compares every two facts sharing a rare word while that costs no more than
# finding each fact's nearest by vector (measured: the two cost the same between 70 and
# 200 comparisons a fact); past it, it compares each fact with its NEIGHBOURS nearest.
EXACT_CHECKS, EXACT_FLOOR, NEIGHBOURS = 128, 1_000_000, 16


@dataclass(frozen=True, slots=True)
class Policy:
    """What consolidation prunes: facts weaker than ``prune_below`` (0 to 10) and older
    than ``prune_after``."""

    prune_below: float = 0.2
    prune_after: timedelta = timedelta(days=30)

    def __post_init__(self) -> None:
        limits.check_strength(self.prune_below, "prune_below")
        if not isinstance(self.prune_after, timedelta) or self.prune_after < timedelta(0):
            raise InvalidInput(f"prune_after must be a timedelta >= 0, got {self.prune_after!r}")


def check_steps(steps: object) -> tuple[str, ...]:
    """The steps named, in the cycle's order; InvalidInput for an unknown or none."""
    if isinstance(steps, str) or not isinstance(steps, Sequence | set | frozenset):
        raise InvalidInput("steps must be a list of step names")
    unknown = [s for s in steps if s not in STEPS]
    if unknown:
        raise InvalidInput(f"unknown step {unknown[0]!r}; the steps are {', '.join(STEPS)}")
    if not steps:
        raise InvalidInput(f"steps must name at least one of {', '.join(STEPS)}")
    return tuple(s for s in STEPS if s in steps)


class Consolidation:
    def __init__(
        self,
        store: Store,
        embedder: Embedder | None,
        graph: Graph,
        *,
        policy: Policy | None,
        caps: Callable[[], Caps],
        clock: Clock,
        writer: Writer,
    ) -> None:
        self._store, self._embedder, self._graph = store, embedder, graph
        self._policy, self._caps, self._now, self._writer = policy, caps, clock, writer

    @property
    def policy(self) -> Policy | None:
        return self._policy

    @property
    def enabled(self) -> bool:
        return self._policy is not None

    def run(
        self, ref: Scope, *, steps: Sequence[str] = STEPS, dry_run: bool = False
    ) -> ConsolidationReport:
        if self._policy is None:
            raise CapabilityMissing(
                "consolidation is off in this memory (self-improvement disabled)",
                hint="set ENGRAM_SELF_IMPROVE=true, or open the store with self_improve=True",
            )
        chosen = check_steps(steps)
        if not isinstance(dry_run, bool):
            raise InvalidInput("dry_run must be true or false")
        runs: dict[str, Callable[[Scope, bool], StepReport]] = {
            "reindex": self._reindex,
            "strengthen": self._strengthen,
            "prune": self._prune,
            "merge": self._merge,
            "derive": self._derive,
            "compact": self._compact,
        }
        reports = [runs[s](ref, dry_run) for s in chosen]
        if chosen[0] == "reindex":  # its index of vectors last, over what the others left
            reports[0] = self._index_vectors(ref, dry_run, reports[0])
        return ConsolidationReport(dry_run, tuple(reports))

    # -- running a step --------------------------------------------------------------
    def _step(
        self,
        ref: Scope,
        name: str,
        dry_run: bool,
        work: Callable[[Tx, ledger.Entry | None], StepReport],
    ) -> StepReport:
        """``work`` planned in a snapshot (a dry run: ``rec`` None), or planned and done
        in one ledger entry under the scope's lock."""
        store = self._store
        if dry_run:
            return store.run(lambda tx: work(tx, None), write=False)
        now = self._now()

        def run(tx: Tx) -> StepReport:
            op = f"consolidate.{name}"
            return recording.write(store, tx, ref, op, self._writer, now, lambda rec: work(tx, rec))

        return store.run(run, lock=[ref])

    # -- reindex -----------------------------------------------------------------------
    def _reindex(self, ref: Scope, dry_run: bool) -> StepReport:
        store, embedder = self._store, self._embedder
        missing = store.run(lambda tx: store.facts.without_vector(tx, ref, _ALL), write=False)
        if dry_run or embedder is None:
            vectors: dict[int, Any] = {}
        else:
            ids = [fact_id for _, fact_id, _ in missing] if spoken.reads_words(embedder) else []
            traits = store.run(lambda tx: store.facts.traits(tx, ref, ids), write=False)
            vectors = _embed(embedder, missing, traits)

        def work(tx: Tx, rec: ledger.Entry | None) -> StepReport:
            sound = store.facts.fulltext_sound(tx)
            if rec is None:
                counts = {"fulltext_rebuilt": int(not sound), "vectors_added": len(missing)}
                ids = tuple(i for _, i, _ in missing)
                return StepReport("reindex", sum(counts.values()), counts, ids)
            if not sound:
                store.facts.rebuild_fulltext(tx)
                rec.record("index", "fulltext", "rebuild")
            still = {(s, c) for s, _, c in store.facts.without_vector(tx, ref, _ALL)}
            added = [(s, i, c) for s, i, c in missing if (s, c) in still and s in vectors]
            if added and embedder is not None:  # the store's model may have changed since
                model = ModelRecord(embedder.model, embedder.dimension)
                rules.check_model(store, tx, model, [vectors[s] for s, _, _ in added])
            store.facts.add_vectors(tx, [(s, vectors[s]) for s, _, _ in added])
            for _, fact_id, _ in added:
                rec.record("index", fact_id, "vector")
            counts = {"fulltext_rebuilt": int(not sound), "vectors_added": len(added)}
            ids = tuple(i for _, i, _ in added)
            return _entered(StepReport("reindex", sum(counts.values()), counts, ids), rec)

        # The integrity check is an INSERT FTS5 answers: it needs a write transaction even
        # when planning, and writes nothing.
        if dry_run:
            report = store.run(lambda tx: work(tx, None))
        else:
            report = self._step(ref, "reindex", False, work)
        return report

    def _index_vectors(self, ref: Scope, dry_run: bool, report: StepReport) -> StepReport:
        """reindex's last part, run after every other step: the scope's index of vectors
        built where it is missing or stale. Built before prune and merge, it would be
        stale again once they had trashed facts, and a second run would build it again.
        Outside any step's transaction and the scope's lock: writes go on meanwhile."""
        built = int(self._store.index_vectors(ref, dry_run=dry_run))
        counts = {**report.counts, "vector_index_built": built}
        return replace(report, changed=report.changed + built, counts=counts)

    # -- strengthen --------------------------------------------------------------------
    def _strengthen(self, ref: Scope, dry_run: bool) -> StepReport:
        store = self._store

        def work(tx: Tx, rec: ledger.Entry | None) -> StepReport:
            pending = store.usage.pending(tx, ref, _ALL)
            by_fact: dict[str, list[Feedback]] = defaultdict(list)
            for row in pending:
                by_fact[row.fact_id].append(row)
            facts = store.facts.by_ids(tx, ref, list(by_fact))
            before: dict[str, list[Feedback]] = defaultdict(list)
            for row in store.usage.applied(tx, ref, list(facts)):
                before[row.fact_id].append(row)
            up: list[str] = []
            down: list[str] = []
            for fact_id, rows in by_fact.items():
                fact = facts.get(fact_id)
                if fact is None:
                    continue
                new = strength_after(fact.strength, before[fact_id], rows)
                if new == fact.strength:
                    continue
                (up if new > fact.strength else down).append(fact_id)
                if rec is not None:
                    store.facts.set_strength(tx, ref, fact_id, new)
                    rec.record("fact", fact_id, "strength", strength_state(fact.strength))
            applied = [r.id for r in pending if r.fact_id in facts]
            if rec is not None:
                store.usage.mark_applied(tx, ref, applied, True)
                for row_id in applied:
                    rec.record("feedback", row_id, "apply", json.dumps({"applied": False}))
            counts = {"signals": len(applied), "strengthened": len(up), "weakened": len(down)}
            changed = len(applied) + len(up) + len(down)
            return _entered(StepReport("strengthen", changed, counts, tuple(up + down)), rec)

        return self._step(ref, "strengthen", dry_run, work)

    # -- prune -------------------------------------------------------------------------
    def _prune(self, ref: Scope, dry_run: bool) -> StepReport:
        assert self._policy is not None
        policy, store = self._policy, self._store
        cutoff = self._now() - int(policy.prune_after / timedelta(microseconds=1))

        def work(tx: Tx, rec: ledger.Entry | None) -> StepReport:
            weak = store.facts.weak(tx, ref, policy.prune_below, cutoff)
            gone = weak if rec is None else rules.trash(rec, weak)
            counts = {"pruned": len(gone)}
            return _entered(StepReport("prune", len(gone), counts, tuple(gone)), rec)

        return self._step(ref, "prune", dry_run, work)

    # -- merge -------------------------------------------------------------------------
    def _merge(self, ref: Scope, dry_run: bool) -> StepReport:
        """Planned in a snapshot of its own, without the scope's lock (comparing a large
        scope's facts takes minutes, which no write should wait for), then done under
        the lock to the groups whose facts are still as planned; a group a write changed
        meanwhile waits for the next run."""
        store = self._store
        planned, seen = store.run(lambda tx: _merges(store, tx, ref), write=False)
        if dry_run:  # planned in a snapshot already: what a run would merge now
            return _merged(planned, None)

        def work(tx: Tx, rec: ledger.Entry | None) -> StepReport:
            assert rec is not None
            ids = [i for keep, others in planned.items() for i in (keep, *others)]
            now = store.facts.by_ids(tx, ref, ids)
            named = store.documents.naming(tx, ref, ids)
            groups = {
                keep: others
                for keep, others in planned.items()
                if all(_unchanged(seen[i], now.get(i)) for i in (keep, *others))
                and named.isdisjoint(others)
            }
            for keep, others in groups.items():
                top = max(now[i].strength for i in (keep, *others))
                if top > now[keep].strength:
                    store.facts.set_strength(tx, ref, keep, top)
                    rec.record("fact", keep, "strength", strength_state(now[keep].strength))
                rules.trash(rec, list(others))
            return _merged(groups, rec)

        return self._step(ref, "merge", False, work)

    # -- derive ------------------------------------------------------------------------
    def _derive(self, ref: Scope, dry_run: bool) -> StepReport:
        counts: dict[str, int] = {}
        for extractor in self._graph.model_extractors():
            if dry_run:
                waiting = backlog.unread(self._store, ref, extractor, None, DERIVE_LIMIT)
                counts[f"{extractor}_facts_read"] = len(waiting)
            else:
                done = self._graph.extract(ref, extractor=extractor, limit=DERIVE_LIMIT)
                counts[f"{extractor}_facts_read"] = done.facts_read
        return StepReport("derive", sum(counts.values()), counts)

    # -- compact -----------------------------------------------------------------------
    def _compact(self, ref: Scope, dry_run: bool) -> StepReport:
        caps, store = self._caps(), self._store
        now = self._now()

        def work(tx: Tx, rec: ledger.Entry | None) -> StepReport:
            if rec is not None:
                done = rules.apply_caps(rec, caps)
                expired, over = done.expired, done.over_cap
            else:
                expired, over = _caps_plan(store, tx, ref, caps, now)
            counts = {"expired": len(expired), "over_capacity": len(over)}
            gone = tuple(expired + over)
            return _entered(StepReport("compact", len(gone), counts, gone), rec)

        return self._step(ref, "compact", dry_run, work)


# -- the rules, apart from any store ---------------------------------------------------
def strength_after(
    strength: float, applied: Sequence[Feedback], pending: Sequence[Feedback]
) -> float:
    """A fact's strength once ``pending`` signals are applied, in order, after the
    ``applied`` ones (which count for a run of ignores only)."""
    run = 0
    for row in applied:
        run = 0 if row.signal == "used" else run + 1
    value = strength
    for row in pending:
        if row.signal == "used":
            run = 0
            if value < USE_CAP:
                value = min(value + USE_STEP, USE_CAP)
        else:
            run += 1
            if run >= IGNORES_BEFORE and value > IGNORE_FLOOR:
                value = max(value * IGNORE_FACTOR, IGNORE_FLOOR)
    return value if value == strength else round(value, 6)


def strength_state(strength: float) -> str:
    """A live fact's before-state when only its strength changes."""
    return json.dumps({"state": "live", "strength": strength})


def _words(text: str) -> frozenset[str]:
    return frozenset(sys.intern(t.lower()) for t in specifics.TOKEN.findall(text))


def _kin(fact: Fact) -> tuple[Any, ...]:
    """What two facts must share to be compared at all: type, tags, speaker, and the
    figures, dates and polarity they state."""
    speaker = json.dumps(fact.metadata.get("speaker"))
    return fact.type, tuple(sorted(fact.tags)), speaker, specifics.of(fact.content)


@dataclass(frozen=True, slots=True)
class Compared:
    """What merge compares of a fact, and no more (a large scope's facts are all held at
    once): its id, age, whether it has a source, its words and its kin (numbered)."""

    id: str
    age: tuple[Any, str]
    sourced: bool
    words: tuple[str, ...]  # distinct; a tuple holds them in a sixth of a set's bytes
    kin: int


class _Reading:
    """Facts read as :class:`Compared`, their kins numbered as they come."""

    def __init__(self) -> None:
        self._kins: dict[tuple[Any, ...], int] = {}

    def __call__(self, fact: Fact) -> Compared:
        kin = self._kins.setdefault(_kin(fact), len(self._kins))
        words = tuple(_words(fact.content))
        return Compared(fact.id, _age(fact), fact.source_ref is not None, words, kin)


def candidate_pairs(facts: Sequence[Fact]) -> list[tuple[str, str]]:
    """The pairs of kindred facts (same type, tags, speaker) whose words' Jaccard
    similarity is at least 0.6 and that state the same specifics, as (older, newer)
    ids."""
    read = _Reading()
    return _pairs([read(f) for f in facts]) or []


def _pairs(facts: Sequence[Compared], budget: int | None = None) -> list[tuple[str, str]] | None:
    """:func:`candidate_pairs` over facts as compared; None, before any is compared,
    when that would compare more than ``budget`` pairs. Prefix filtering: with each
    fact's words ordered rarest first, two sets at Jaccard >= t share one of the first
    ``n - ceil(t n) + 1`` words of each."""
    # Rarity is counted among kindred facts, the only ones ever compared: a word every
    # one of them holds (their shared figure, say) never picks candidates.
    seen: Counter[tuple[int, str]] = Counter((f.kin, w) for f in facts for w in f.words)
    order = sorted((i for i, f in enumerate(facts) if f.words), key=lambda i: len(facts[i].words))
    if budget is not None and _comparisons(facts, order, seen, budget) > budget:
        return None
    index: dict[tuple[int, str], list[int]] = defaultdict(list)
    found: set[tuple[int, int]] = set()
    for i in order:
        kin, a = facts[i].kin, frozenset(facts[i].words)
        probed, indexed = _prefixes(facts[i], seen)
        near: set[int] = set()
        for word in probed:
            near.update(index[(kin, word)])
        shortest = JACCARD * len(a)  # facts come shortest first: j is no longer than i
        for j in near:
            b = facts[j].words
            if len(b) >= shortest and _alike(a, b):
                found.add((min(i, j), max(i, j)))
        for word in indexed:
            index[(kin, word)].append(i)
    return [_ordered(facts[i], facts[j]) for i, j in sorted(found)]


def _prefixes(fact: Compared, seen: Counter[tuple[int, str]]) -> tuple[list[str], list[str]]:
    """The words a fact's pairs are looked up by, and those it is filed under: its first
    ``n - ceil(t n) + 1`` rarest, and a shorter prefix for filing, so that a longer fact
    looking later still meets it (``n - ceil(2t/(1+t) n) + 1`` words, as PPJoin proves)."""
    mine = sorted(fact.words, key=lambda w: (seen[(fact.kin, w)], w))
    n = len(mine)
    return mine[: n - math.ceil(JACCARD * n) + 1], mine[: n - math.ceil(INDEXED * n) + 1]


def _comparisons(
    facts: Sequence[Compared], order: Sequence[int], seen: Counter[tuple[int, str]], budget: int
) -> int:
    """How many pairs :func:`_pairs` would compare, at most (a pair met by two of its
    words counted twice), counted from how many facts each word files, and no further
    once past ``budget``: the cost of comparing, known before any comparison."""
    filed: Counter[tuple[int, str]] = Counter()
    count = 0
    for i in order:
        kin = facts[i].kin
        probed, indexed = _prefixes(facts[i], seen)
        count += sum(filed[(kin, w)] for w in probed)
        if count > budget:
            break
        filed.update((kin, w) for w in indexed)
    return count


def _alike(a: frozenset[str], b: tuple[str, ...]) -> bool:
    """Whether two facts' words (``b`` distinct) are at Jaccard 0.6 or more."""
    shared = len(a.intersection(b))
    return shared >= JACCARD * (len(a) + len(b) - shared)


def _ordered(a: Compared, b: Compared) -> tuple[str, str]:
    """The pair as (older, newer) ids."""
    older, newer = sorted((a, b), key=lambda f: f.age)
    return older.id, newer.id


def _near_pairs(
    store: Store, tx: Tx, ref: Scope, facts: Sequence[Compared]
) -> list[tuple[str, str]]:
    """The pairs of kindred facts at Jaccard >= 0.6 among each fact's NEIGHBOURS nearest
    by vector, found approximately, in work that grows with the scope, not its square.
    Every two facts are compared where the store cannot search so."""
    compared = {f.id: f for f in facts if f.words}
    near = store.facts.near_pairs(tx, ref, list(compared), NEIGHBOURS, COSINE)
    if near is None:
        return _pairs(facts) or []
    pairs = []
    for x, y in near:
        a, b = compared[x], compared[y]
        if a.kin == b.kin and _alike(frozenset(a.words), b.words):
            pairs.append(_ordered(a, b))
    return sorted(pairs)


def _merged(groups: dict[str, tuple[str, ...]], rec: ledger.Entry | None) -> StepReport:
    gone = tuple(i for others in groups.values() for i in others)
    counts = {"merged": len(gone), "kept": len(groups)}
    return _entered(StepReport("merge", len(gone), counts, gone, merged=groups), rec)


def _merges(store: Store, tx: Tx, ref: Scope) -> tuple[dict[str, tuple[str, ...]], dict[str, Fact]]:
    """The scope's groups to merge as its facts stand in ``tx``, and their facts as read.
    The scope's facts are read a page at a time and held only as compared."""
    read, facts = _Reading(), list[Compared]()
    before: tuple[int, int] | None = None
    while True:
        page = store.facts.page(tx, ref, before, READ_PAGE)
        facts.extend(read(fact) for fact, _ in page)
        if len(page) < READ_PAGE:
            break
        before = page[-1][1]
    pairs = _pairs(facts, max(EXACT_FLOOR, EXACT_CHECKS * len(facts)))
    if pairs is None:  # a scope whose facts share most of their words
        pairs = _near_pairs(store, tx, ref, facts)
    ids = sorted({i for pair in pairs for i in pair})
    vectors = store.facts.vectors(tx, ref, ids) if ids else {}
    near = [p for p in pairs if _cosine(vectors.get(p[0]), vectors.get(p[1])) >= COSINE]
    named = store.documents.naming(tx, ref, ids) if ids else set()
    groups = fold(facts, near, named)
    members = sorted({i for keep, others in groups.items() for i in (keep, *others)})
    return groups, store.facts.by_ids(tx, ref, members)


def _unchanged(planned: Fact, now: Fact | None) -> bool:
    """Whether a fact is still what a merge was planned from: live, with the words,
    kind, tags, speaker and source it was compared by."""
    return now is not None and _compared(now) == _compared(planned)


def _compared(fact: Fact) -> tuple[Any, ...]:
    return fact.content, fact.type, fact.tags, fact.metadata, fact.source_ref


def _age(fact: Fact) -> tuple[Any, str]:
    return fact.created_at, fact.id


def fold(
    facts: Sequence[Compared], pairs: Sequence[tuple[str, str]], protected: set[str]
) -> dict[str, tuple[str, ...]]:
    """The groups to merge: each kept fact with the newer facts folding into it. A fact
    folds into the oldest fact it pairs with that stays; a fact with a source, or one in
    ``protected``, never folds."""
    partners: dict[str, list[str]] = defaultdict(list)
    for older, newer in pairs:
        partners[newer].append(older)
    paired = {i for pair in pairs for i in pair}
    ages = {f.id: f.age for f in facts if f.id in paired}
    fixed = protected | {f.id for f in facts if f.sourced and f.id in paired}
    into: dict[str, str] = {}
    groups: dict[str, list[str]] = defaultdict(list)
    for fact_id in sorted(ages, key=ages.__getitem__):
        if fact_id in fixed or fact_id not in partners:
            continue
        staying = [o for o in partners[fact_id] if o not in into]
        if staying:
            keep = min(staying, key=ages.__getitem__)
            into[fact_id] = keep
            groups[keep].append(fact_id)
    return {keep: tuple(others) for keep, others in groups.items()}


def _cosine(a: Any, b: Any) -> float:
    if a is None or b is None:
        return -1.0
    norms = float(a @ a) ** 0.5 * float(b @ b) ** 0.5
    return float(a @ b) / norms if norms else -1.0


def _embed(
    embedder: Embedder, missing: Sequence[tuple[int, str, str]], traits: Mapping[str, Traits]
) -> dict[int, Any]:
    """The vectors of the facts ``missing`` lists, by seq; ``traits`` tells who said them."""
    vectors: dict[int, Any] = {}
    for start in range(0, len(missing), EMBED_BATCH):
        part = missing[start : start + EMBED_BATCH]
        said = [(c, {"speaker": _speaker(traits, i)}) for _, i, c in part]
        for (seq, _, _), vector in zip(
            part, embedder.embed(spoken.passages(embedder, said), "passage"), strict=True
        ):
            vectors[seq] = vector
    return vectors


def _speaker(traits: Mapping[str, Traits], fact_id: str) -> str | None:
    found = traits.get(fact_id)
    return None if found is None else found.speaker


def _caps_plan(
    store: Store, tx: Tx, ref: Scope, caps: Caps, now: int
) -> tuple[list[str], list[str]]:
    aged = store.facts.created_before(tx, ref, now - caps.max_age_us) if caps.max_age_us else []
    expired = list(dict.fromkeys([*store.facts.expired(tx, ref, now), *aged]))
    over: list[str] = []
    if caps.max_facts:
        left = store.facts.count(tx, ref) - len(expired)
        if left > caps.max_facts:
            gone = set(expired)
            oldest = store.facts.oldest(tx, ref, left - caps.max_facts + len(expired))
            over = [i for i in oldest if i not in gone][: left - caps.max_facts]
    return expired, over


def _entered(report: StepReport, rec: ledger.Entry | None) -> StepReport:
    if rec is None or not report.changed:
        return report
    return replace(report, entry=rec.seq)
