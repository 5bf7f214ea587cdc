"""A model extractor's backlog: the facts it has not read for their current words, read
never inline, and what their words hold of its reading written in one ledger entry.

Two extractors work it, each a :class:`Reader`: ``llm``, a chat model asked about each
fact (:class:`engram.core.graph.llm.ChatReader`), and ``spacy``, a name recogniser
reading them in batches (:class:`engram.core.graph.ner.NameReader`). The steps are the
same for both, so no transaction is ever held open across a model call:

1. :func:`unread`, in one read snapshot: the backlog's oldest facts
   (:meth:`engram.core.ports.GraphRows.unread`: the scope's live facts with no mark of
   the extractor for their words);
2. :func:`read`, outside any transaction: the model reads them (:meth:`Reader.read`); a
   failure raises UpstreamFailure and nothing is written;
3. :func:`write`, in one ledger entry: for the facts still live with the words the model
   read (the others are skipped, left to the next extract), what their words hold of the
   reading (:meth:`Reader.keep`), and a mark of each fact read for its words, by this
   extractor, a rejected answer included (the same words would get the same answer).

What it writes keeps the rules' graph as it is (:mod:`engram.core.graph.indexing`). A
name the scope does not know becomes an extracted entity kept alive by a grounding
marked as the extractor's (the rules manage only theirs); a known entity gains such a
grounding, nothing else (:class:`Names`); the names new to the scope queue the facts
holding them for the rules, as a new name always does. When the fact goes, or its words
change, the database drops its groundings whichever extractor made them (an extracted
entity left with none goes), its support of extracted relations and its marks, so it is
in every backlog again. The entry records a ``graph`` item, so, like the rules' extract,
it cannot be reverted (what it wrote follows from the facts and the model).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

from engram.core import ledger, rules
from engram.core.clock import from_us
from engram.core.errors import NotFound
from engram.core.graph import indexing, models
from engram.core.graph.models import Entity, ExtractionReport, Extractor
from engram.core.graph.names import normalise
from engram.core.models import Fact
from engram.core.ports import Store, Tx
from engram.core.scopes import Scope

A = TypeVar("A")


@dataclass(frozen=True, slots=True)
class Named:
    """An entity as a model named it: the name (stripped) and its type, if any."""

    name: str
    type: str | None


@dataclass(frozen=True, slots=True)
class Read(Generic[A]):
    """A fact as the model read it: its words' hash, and the reading (None: rejected)."""

    fact: Fact
    digest: str
    answer: A | None


class Names:
    """The scope's entities among the names one entry's readings give (normal name ->
    id), growing as the entry creates them, and the names it made new to the scope."""

    def __init__(self, rec: ledger.Entry, extractor: Extractor, names: Iterable[str]) -> None:
        self._rec = rec
        self._extractor = extractor
        wanted = sorted({n for n in map(normalise, names) if n})
        self.known: dict[str, str] = {}
        for start in range(0, len(wanted), indexing.LOOKUPS):
            chunk = wanted[start : start + indexing.LOOKUPS]
            self.known.update(rec.store.graph.named(rec.tx, rec.scope, chunk))
        self.new: list[str] = []  # as the model wrote them

    def add(self, norm: str, named: Named) -> bool:
        """Makes the normal name ``norm`` known: a new extracted entity called as
        ``named`` says when the scope does not know it (True), else nothing (False)."""
        if norm in self.known:
            return False
        rec = self._rec
        at = from_us(rec.now)
        entity_id = models.entity_id(rec.scope, norm)
        entity = Entity(entity_id, named.name, norm, named.type, (), None, {}, "extracted", at, at)
        rec.store.graph.put_entity(rec.tx, rec.scope, entity, [])
        self.known[norm] = entity_id
        self.new.append(named.name)
        return True

    def ground(self, fact_id: str, norms: Iterable[str]) -> None:
        """Grounds the known entities ``norms`` in the fact, as this extractor's."""
        rec = self._rec
        pairs = [(fact_id, self.known[n]) for n in norms]
        rec.store.graph.ground(rec.tx, rec.scope, pairs, self._extractor)

    def entities(self, fact_id: str, named: Mapping[str, Named]) -> int:
        """Adds the entities ``named`` (normal name -> as named) that are new, grounds
        them all in the fact; how many were new."""
        added = sum(self.add(norm, one) for norm, one in named.items())
        self.ground(fact_id, named)
        return added


class Reader(Protocol[A]):
    """One model extractor, as the backlog works it."""

    @property
    def extractor(self) -> Extractor: ...

    def read(self, facts: Sequence[Fact]) -> list[A | None]:
        """The model's reading of each fact, in order (None: an answer rejected). Called
        outside any transaction; raises UpstreamFailure when the model fails."""
        ...

    def names(self, answer: A) -> Iterable[str]:
        """Every name the reading gives that the scope may already know."""
        ...

    def keep(self, rec: ledger.Entry, fact: Fact, answer: A, names: Names) -> ExtractionReport:
        """Writes what the fact's words hold of the reading; what it added and dropped."""
        ...


def live_facts(store: Store, tx: Tx, scope: Scope, ids: Sequence[str]) -> list[Fact]:
    """The scope's live facts ``ids``, in that order; NotFound names the first that is
    not one."""
    found = store.facts.by_ids(tx, scope, ids)
    missing = [i for i in ids if i not in found]
    if missing:
        raise NotFound(f"no live fact {missing[0]!r} in this scope")
    return [found[i] for i in ids]


def unread(
    store: Store, scope: Scope, extractor: Extractor, fact_ids: Sequence[str] | None, limit: int
) -> list[Fact]:
    """Up to ``limit`` of the extractor's backlog (among ``fact_ids``, each a live fact
    of the scope, when given), oldest first, read in one snapshot."""

    def snapshot(tx: Tx) -> list[Fact]:
        if fact_ids is not None:
            live_facts(store, tx, scope, fact_ids)
        ids = store.graph.unread(tx, scope, extractor, limit, fact_ids or ())
        found = store.facts.by_ids(tx, scope, ids)
        return [found[i] for i in ids if i in found]

    return store.run(snapshot, write=False)


def read(reader: Reader[A], facts: Sequence[Fact]) -> list[Read[A]]:
    """The model's reading of ``facts``, each with its words' hash. Call it outside any
    transaction. Raises UpstreamFailure when the model fails (nothing is kept)."""
    answers = reader.read(facts)
    return [
        Read(fact, rules.content_hash(fact.content), answer)
        for fact, answer in zip(facts, answers, strict=True)
    ]


def write(rec: ledger.Entry, reader: Reader[A], reads: Sequence[Read[A]]) -> ExtractionReport:
    """Writes what the words of the facts still live as the model read them hold of its
    reading, and marks those facts read by the extractor; the report."""
    store, tx, scope = rec.store, rec.tx, rec.scope
    live = store.facts.by_ids(tx, scope, [r.fact.id for r in reads])
    current = [r for r in reads if r.fact.id in live and live[r.fact.id].content == r.fact.content]
    report = ExtractionReport(
        reader.extractor,
        facts_read=len(current),
        facts_skipped=len(reads) - len(current),
        answers_rejected=sum(r.answer is None for r in current),
    )
    if not current:
        return report
    answers = [(r.fact, r.answer) for r in current if r.answer is not None]
    names = Names(rec, reader.extractor, [n for _, a in answers for n in reader.names(a)])
    for fact, answer in answers:
        report = _add(report, reader.keep(rec, fact, answer, names))
    store.graph.mark_read(tx, scope, reader.extractor, [(r.fact.id, r.digest) for r in current])
    if names.new:  # the rules may now find them in other facts' words
        indexing.queue_holders(store, tx, scope, names.new)
    rec.record("graph", scope.key, "extract")
    return report


def _add(a: ExtractionReport, b: ExtractionReport) -> ExtractionReport:
    return dataclasses.replace(
        a,
        entities_added=a.entities_added + b.entities_added,
        relations_added=a.relations_added + b.relations_added,
        entities_dropped=a.entities_dropped + b.entities_dropped,
        relations_dropped=a.relations_dropped + b.relations_dropped,
        times_dropped=a.times_dropped + b.times_dropped,
    )
