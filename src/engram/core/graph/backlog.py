"""The ``llm`` extractor: a chat model reads the facts it has not read for their current
words (its backlog), never inline, and what their words hold of its answers joins the
graph.

Three steps, so no transaction is ever held open across a model call:

1. :func:`unread`, in one read snapshot: the backlog's oldest facts
   (:meth:`engram.core.ports.GraphRows.unread`: the scope's live facts with no mark of
   the extractor for their words);
2. :func:`ask`, outside any transaction: one model call per fact, each answer parsed
   (:func:`engram.core.graph.llm.parse`); a failing call raises UpstreamFailure and
   nothing is written;
3. :func:`write`, in one ledger entry: for the facts still live with the words the model
   read (the others are skipped, left to the next extract), what their words hold of the
   answers (:func:`engram.core.graph.llm.ground`), and a mark of each fact read for its
   words, a rejected answer included (at temperature 0 the model would answer the same).

What it writes keeps the rules' graph as it is (:mod:`engram.core.graph.indexing`). A
name the scope does not know becomes an extracted entity kept alive by a grounding
marked as the model's (the rules manage only theirs); a known entity gains such a
grounding. When the fact goes, or its words change, the database drops its groundings
(an extracted entity left with none goes), its support of extracted relations and its
mark, so it is in the backlog again. A relation becomes an extracted relation supported
by the fact, or adds the fact to the support of the same live extracted relation; one
the scope holds as asserted is left alone, and so is a single-valued type whose source
holds another target (the relation is dropped: a model's reading never retires what is
held). Relations are recorded as the entry's items; the entry, like the rules' extract,
cannot be reverted (what it wrote follows from the facts and the model).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from engram.core import ledger, rules
from engram.core.clock import from_us
from engram.core.errors import NotFound, UpstreamFailure
from engram.core.graph import assertions, indexing, llm, models
from engram.core.graph.models import Entity, ExtractionReport, Relation
from engram.core.graph.names import normalise
from engram.core.models import Fact
from engram.core.ports import ChatModel, Store, Tx
from engram.core.scopes import Scope

EXTRACTOR = "llm"


@dataclass(frozen=True, slots=True)
class Asked:
    """A fact as the model read it: its words' hash, and its answer (None: rejected)."""

    fact: Fact
    digest: str
    answer: llm.Answer | None


def live_facts(store: Store, tx: Tx, scope: Scope, ids: Sequence[str]) -> list[Fact]:
    """The scope's live facts ``ids``, in that order; NotFound names the first that is
    not one."""
    found = store.facts.by_ids(tx, scope, ids)
    missing = [i for i in ids if i not in found]
    if missing:
        raise NotFound(f"no live fact {missing[0]!r} in this scope")
    return [found[i] for i in ids]


def unread(store: Store, scope: Scope, fact_ids: Sequence[str] | None, limit: int) -> list[Fact]:
    """Up to ``limit`` of the backlog's facts (among ``fact_ids``, each a live fact of the
    scope, when given), oldest first, read in one snapshot."""

    def read(tx: Tx) -> list[Fact]:
        if fact_ids is not None:
            live_facts(store, tx, scope, fact_ids)
        ids = store.graph.unread(tx, scope, EXTRACTOR, limit, fact_ids or ())
        found = store.facts.by_ids(tx, scope, ids)
        return [found[i] for i in ids if i in found]

    return store.run(read, write=False)


def ask(chat: ChatModel, facts: Sequence[Fact]) -> list[Asked]:
    """The model's answer about each fact, one call each, in order. Call it outside any
    transaction. Raises UpstreamFailure when a call fails (the answers so far are lost)."""
    asked = []
    for fact in facts:
        answer = chat.complete(llm.SYSTEM, llm.question(fact.content, fact.created_at))
        if not isinstance(answer, str):
            raise UpstreamFailure(f"the chat model {chat.model!r} answered no text")
        try:
            parsed: llm.Answer | None = llm.parse(answer)
        except llm.Malformed:
            parsed = None
        asked.append(Asked(fact, rules.content_hash(fact.content), parsed))
    return asked


def write(rec: ledger.Entry, asked: Sequence[Asked]) -> ExtractionReport:
    """Writes what the words of the facts still live as the model read them hold of its
    answers, and marks those facts read; the report."""
    store, tx, scope = rec.store, rec.tx, rec.scope
    live = store.facts.by_ids(tx, scope, [a.fact.id for a in asked])
    current = [a for a in asked if a.fact.id in live and live[a.fact.id].content == a.fact.content]
    report = ExtractionReport(
        "llm",
        facts_read=len(current),
        facts_skipped=len(asked) - len(current),
        answers_rejected=sum(a.answer is None for a in current),
    )
    if not current:
        return report
    known = _known(store, tx, scope, [a.answer for a in current if a.answer is not None])
    new: list[str] = []  # names new to the scope, as the model wrote them
    for item in current:
        if item.answer is not None:
            report = _add(report, _write_one(rec, item.fact, item.answer, known, new))
    store.graph.mark_read(tx, scope, EXTRACTOR, [(a.fact.id, a.digest) for a in current])
    if new:  # the rules may now find them in other facts' words
        indexing.queue_holders(store, tx, scope, new)
    rec.record("graph", scope.key, "extract")
    return report


def _write_one(
    rec: ledger.Entry, fact: Fact, answer: llm.Answer, known: dict[str, str], new: list[str]
) -> ExtractionReport:
    """One fact's kept entities (created when new), groundings and relations; what it
    added and dropped. ``known`` (normal name -> entity id) and ``new`` grow."""
    store, tx, scope = rec.store, rec.tx, rec.scope
    kept = llm.ground(answer, fact.content, known)
    at = from_us(rec.now)
    added = 0
    for norm, named in kept.entities.items():
        if norm in known:
            continue
        entity_id = models.entity_id(scope, norm)
        entity = Entity(entity_id, named.name, norm, named.type, (), None, {}, "extracted", at, at)
        store.graph.put_entity(tx, scope, entity, [])
        known[norm] = entity_id
        new.append(named.name)
        added += 1
    store.graph.ground(tx, scope, [(fact.id, known[n]) for n in kept.entities], EXTRACTOR)
    outcomes = [_relate(rec, fact.id, link, known) for link in kept.relations]
    return ExtractionReport(
        "llm",
        entities_added=added,
        relations_added=outcomes.count("added"),
        entities_dropped=kept.entities_dropped,
        relations_dropped=kept.relations_dropped + outcomes.count("dropped"),
        times_dropped=kept.times_dropped,
    )


def _relate(rec: ledger.Entry, fact_id: str, link: llm.Link, known: dict[str, str]) -> str:
    """Writes one kept relation: ``added`` (a new extracted relation), ``held`` (the same
    relation lives already; an extracted one gains the fact's support) or ``dropped``."""
    store, tx, scope = rec.store, rec.tx, rec.scope
    head, tail = known[link.source], known[link.target]
    if head == tail:  # two names of one entity
        return "dropped"
    holding = [
        r
        for r in store.graph.relations(tx, scope, source=head, types=[link.type], limit=1 << 30)
        if r.expired_at is None and r.invalid_at is None
    ]
    same = next((r for r in holding if r.target == tail), None)
    if same is not None:
        if same.origin == "extracted" and fact_id not in same.facts:
            store.graph.put_relation(
                tx, scope, dataclasses.replace(same, facts=(*same.facts, fact_id))
            )
            rec.record("relation", same.id, "upsert", assertions.relation_state(same))
        return "held"
    if holding and store.graph.relation_type(tx, scope, link.type):
        return "dropped"  # single-valued, and the source holds another target
    relation = Relation(
        models.new_relation_id(),
        head,
        tail,
        link.type,
        "extracted",
        link.valid_at,
        None,
        from_us(rec.now),
        None,
        (fact_id,),
    )
    store.graph.put_relation(tx, scope, relation)
    rec.record("relation", relation.id, "upsert", assertions.ABSENT)
    return "added"


def _known(store: Store, tx: Tx, scope: Scope, answers: Sequence[llm.Answer]) -> dict[str, str]:
    """The scope's entities among the names the answers give: normal name -> id."""
    names = {n for a in answers for e in a.entities for n in [normalise(e.name)] if n}
    for answer in answers:
        for r in answer.relations:
            names |= {n for n in (normalise(r.source), normalise(r.target)) if n}
    wanted = sorted(names)
    known: dict[str, str] = {}
    for start in range(0, len(wanted), indexing.LOOKUPS):
        known.update(store.graph.named(tx, scope, wanted[start : start + indexing.LOOKUPS]))
    return known


def _add(a: ExtractionReport, b: ExtractionReport) -> ExtractionReport:
    return dataclasses.replace(
        a,
        entities_added=a.entities_added + b.entities_added,
        relations_added=a.relations_added + b.relations_added,
        entities_dropped=a.entities_dropped + b.entities_dropped,
        relations_dropped=a.relations_dropped + b.relations_dropped,
        times_dropped=a.times_dropped + b.times_dropped,
    )
