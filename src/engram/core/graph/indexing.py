"""What facts' words give the graph, kept in step with the facts inside every write.

The graph a scope's facts give is a function of its live facts and its assertions, so it
can always be rebuilt and the incremental one must equal the rebuilt one:

- a fact **grounds** the names its words give alone (:mod:`engram.core.graph.extraction`
  with nothing known: capitalised runs not opening a sentence, quoted titles, handles,
  tags, emails, URLs, its speaker); the scope's extracted entities are exactly the names
  its live facts ground that no asserted entity holds (and those the llm extractor's
  groundings keep, :mod:`engram.core.graph.backlog`: the rules manage only their own);
- a fact's **mentions** are what the rules find in its words given every name the scope
  knows (its asserted and extracted entities and their aliases): a known name also
  matches where it opens a sentence. Each carries the type the rules read it with
  (:mod:`engram.core.graph.entity_types`, from its words and the relations its sentence
  states, :mod:`engram.core.graph.relations`); an extracted entity with no type of its
  own is read with its mentions' most frequent type, ties broken by
  :data:`engram.core.graph.models.ORDER` (the store computes it as it reads the
  entity, so it follows the facts that come and go). An asserted entity's type is the
  caller's, None included;
- a fact's **relations** are those its sentences state between its mentions
  (:func:`engram.core.graph.relations.relations`): extracted relations marked as the
  rules' (``extractor="rules"``), supported by the fact, their id fixed by scope, ends,
  type and ``valid_at`` (:func:`engram.core.graph.models.rule_relation_id`), so facts
  stating the same relation share it, and ``valid_at`` the start of the time the
  sentence states, resolved against the fact's own time (its ``created_at``). Each
  reading of a fact sets exactly its rule relations: a relation goes with the last fact
  stating it (forgotten or reworded; the database drops a reworded fact's support). The
  rules never retire one relation for another, single-valued types included: two facts
  saying where Ana lives give two relations, each with the time its fact states (the
  temporal rule of :mod:`engram.core.graph.assertions` needs an order of arrival, and
  what the rules read must not depend on it). Callers' and the llm extractor's relations
  are left as they are, even with the same ends and type.

The database queues every fact written or given new words, and every fact that named an
entity that went (:class:`engram.core.ports.GraphRows`); :func:`settle` reads the queue
before each write commits (:meth:`engram.core.ledger.Entry.close`), so no write path can
leave the graph behind. A name new to the scope queues the scope's other facts that hold
its words, whose mentions it may change.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from itertools import groupby
from typing import TYPE_CHECKING, NamedTuple, Protocol

from engram.core import query
from engram.core.clock import from_us
from engram.core.graph import models
from engram.core.graph.models import Entity, FactReading, Mention, Relation
from engram.core.models import JSONValue
from engram.core.ports import Store, Tx
from engram.core.scopes import Scope, parse_key
from engram.core.wiki import WIKI_TYPE

# The rules (extraction, entity_types, relations) are imported where a fact is first read:
# their lists and patterns take 0.15 to 0.3 s to load, which a process that only reads
# (the command line's `facts`, `health`, an export, a service's start) never needs.
if TYPE_CHECKING:
    from engram.core.graph.extraction import Kind, Reading
    from engram.core.graph.extraction import Mention as Said

BATCH = 500  # queued facts read at a time
LOOKUPS = 5000  # names asked of the store at a time
_TYPES: dict[Kind, str | None] = {
    "name": None,
    "speaker": None,
    "handle": "handle",
    "hashtag": "hashtag",
    "email": "email",
    "url": "url",
}


def settle(store: Store, tx: Tx, now_us: int) -> None:
    """Reads every queued fact (and the facts the names new to their scopes, or gone
    from them, queue in turn) until the queue is empty."""
    while True:
        _queue_gone(store, tx)
        queued = store.graph.queued(tx, BATCH)
        if not queued:
            return
        if not store.graph.reads_facts:
            store.graph.dequeue(tx, queued)
            continue
        for key, items in groupby(queued, key=lambda item: item[0]):
            scope = parse_key(key)
            ids = [fact_id for _, fact_id in items]
            words = store.facts.words(tx, scope, ids)
            read = [
                readable(i, words[i][0], _metadata(words[i][1]), words[i][2], words[i][3])
                for i in ids
                if i in words
            ]
            read_facts(store, tx, scope, read, now_us)
        store.graph.dequeue(tx, queued)


def _queue_gone(store: Store, tx: Tx) -> None:
    """Queues the live facts holding the words of names that left their scopes: a fact
    read while such a name was known may read otherwise now."""
    while gone := store.graph.gone(tx, LOOKUPS):
        if store.graph.reads_facts:
            for key, items in groupby(gone, key=lambda item: item[0]):
                queue_holders(store, tx, parse_key(key), [norm for _, norm in items])
        store.graph.forget_gone(tx, gone)


class Readable(Protocol):
    """What the rules read of a fact."""

    @property
    def id(self) -> str: ...
    @property
    def content(self) -> str: ...
    @property
    def metadata(self) -> Mapping[str, JSONValue]: ...
    @property
    def created_at(self) -> datetime: ...


class Words(NamedTuple):
    """A queued fact's words, metadata and time, as the store holds them."""

    id: str
    content: str
    metadata: Mapping[str, JSONValue]
    created_at: datetime


def read_facts(store: Store, tx: Tx, scope: Scope, facts: Sequence[Readable], now_us: int) -> int:
    """Gives ``facts`` their groundings and mentions, creating the entities they ground
    that the scope does not know, and queues the scope's other facts that hold a name
    new to it; the number of entities created."""
    if not facts:
        return 0
    readings = [(fact, reading_of(fact)) for fact in facts]
    alone = {fact.id: reading.mentions({}) for fact, reading in readings}
    wanted = sorted(
        {key for _, reading in readings for key in reading.lookups}
        | {m.name for found in alone.values() for m in found}
    )
    known: dict[str, str] = {}
    for start in range(0, len(wanted), LOOKUPS):
        known.update(store.graph.named(tx, scope, wanted[start : start + LOOKUPS]))
    at = from_us(now_us)
    new: dict[str, str] = {}  # norm -> the surface that first gave it
    for fact, _ in readings:
        for m in alone[fact.id]:
            if m.name in known or m.name in new:
                continue
            new[m.name] = m.surface
            entity = Entity(
                models.entity_id(scope, m.name),
                m.surface,
                m.name,
                _TYPES[m.kind],
                (),
                None,
                {},
                "extracted",
                at,
                at,
            )
            store.graph.put_entity(tx, scope, entity, [])
            known[m.name] = entity.id
    store.graph.set_mentions(
        tx,
        scope,
        [
            FactReading(
                fact.id,
                *stated(scope, fact, reading, alone[fact.id], known, at),
            )
            for fact, reading in readings
        ],
    )
    if new:
        queue_holders(store, tx, scope, list(new.values()), exclude={f.id for f in facts})
    return len(new)


def stated(
    scope: Scope,
    fact: Readable,
    reading: Reading,
    alone: Sequence[Said],
    known: Mapping[str, str],
    now: datetime,
) -> tuple[tuple[Mention, ...], tuple[str, ...], tuple[Relation, ...]]:
    """What the rules read in the fact given the scope's ``known`` names: its mentions
    of them, each with the type the rules read it with
    (:func:`engram.core.graph.entity_types.types`, the sentence's relations counted), the
    entities its words ground alone (``alone``: ``reading.mentions({})``, which the
    caller has read already), and the relations it states (created ``now``)."""
    from engram.core.graph import entity_types, relations

    found = [m for m in reading.mentions(known) if m.name in known]
    said = relations.relations(fact.content, found)
    kinds = entity_types.types(fact.content, found, said)
    said = entity_types.agreeing(said, kinds)
    mentions = tuple(
        Mention(fact.id, m.start, m.end, known[m.name], kind)
        for m, kind in zip(found, kinds, strict=True)
    )
    grounds = tuple(sorted({known[m.name] for m in alone}))
    held: dict[str, Relation] = {}
    for s in said:
        head, tail = known[found[s.source].name], known[found[s.target].name]
        if head == tail:  # two names of one entity
            continue
        start = relations.valid_at(s.time, fact.created_at)
        rid = models.rule_relation_id(scope, head, s.type, tail, start)
        held[rid] = Relation(
            rid,
            head,
            tail,
            s.type,
            "extracted",
            valid_at=start,
            invalid_at=None,
            created_at=now,
            expired_at=None,
            facts=(fact.id,),
            extractor="rules",
        )
    return mentions, grounds, tuple(held.values())


def queue_holders(
    store: Store, tx: Tx, scope: Scope, names: Sequence[str], exclude: Collection[str] = ()
) -> None:
    """Queues the scope's live facts whose words hold any of ``names`` (found by full
    text: every fact holding one of a name's words, read again by the rules)."""
    terms = sorted({t for name in names for t in query.terms(name)})
    if terms:
        store.candidates.queue_holding(tx, scope, terms, exclude)


def readable(
    fact_id: str,
    content: str,
    metadata: Mapping[str, JSONValue],
    kind: str | None,
    created_at: datetime,
) -> Words:
    """A fact as the rules read it. A wiki page's words are none: its names are those of
    the facts folded into it, and the graph is read from the memories, not from a view
    of them (a page that goes would otherwise take names the facts still hold)."""
    if kind == WIKI_TYPE:
        return Words(fact_id, "", {}, created_at)
    return Words(fact_id, content, metadata, created_at)


def _metadata(text: str) -> Mapping[str, JSONValue]:
    return {} if text == "{}" else json.loads(text)


def _speaker(fact: Readable) -> str | None:
    speaker = fact.metadata.get("speaker")
    return speaker if isinstance(speaker, str) else None


def load_rules() -> None:
    """Loads the rules that read names now (their lists and patterns), which the first
    fact read loads otherwise: a service's first write took 169.1 ms with them to load and
    16.5 without (BENCHMARKS.md)."""
    from engram.core.graph import entity_types, extraction, relations  # noqa: F401


def reading_of(fact: Readable) -> Reading:
    """The rules' reading of a fact, as :func:`read_facts` reads it."""
    from engram.core.graph.extraction import read

    return read(fact.content, speaker=_speaker(fact))
