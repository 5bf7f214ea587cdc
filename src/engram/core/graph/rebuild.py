"""A scope's graph rebuilt by the rules in memory, against the stored one: its drift.

The rules' graph is a function of the scope's live facts and what callers asserted
(:mod:`engram.core.graph.indexing`), so it can be rebuilt from them and compared, as the
health report does when asked (``mem.health(ref, graph_drift=True)``). The rebuild
starts from the entities the rules do not manage, kept as stored: the asserted and
imported ones, and the extracted ones a model's groundings keep alive (a model's reading
cannot be rebuilt), with their aliases. It reads every live fact twice, the words as
:func:`engram.core.graph.indexing.read_facts` reads them: first for the names its words
give alone, which become the extracted entities the scope does not know, then, knowing
every name, for its mentions, the entities its words ground and the relations it
states. It compares entities (id, normal name, origin), mentions (fact, span, entity,
type), the rules' groundings (fact, entity) and the rules' relations (a row per
supporting fact: fact, relation id, source, type, target, ``valid_at``): what the rebuild
has and the store lacks is missing, the reverse extra. The llm extractor's relations and
callers' are not the rules' to rebuild.

It reads, writes nothing, and holds in memory the scope's stored graph, the ids of its
live facts and one batch of their words at a time: a rebuild is per scope, never of the
whole store. A store opened with ``extractor="off"`` reads no
facts, so its drift counts what an extract by the rules would add.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING

from engram.core.clock import from_us, to_us
from engram.core.graph import indexing
from engram.core.graph.models import Difference as Difference  # re-exported
from engram.core.graph.models import GraphDrift as GraphDrift
from engram.core.graph.models import Relation, entity_id
from engram.core.graph.models import StoredGraph as StoredGraph
from engram.core.ports import Store, Tx
from engram.core.scopes import Scope

if TYPE_CHECKING:
    from engram.core.graph.extraction import Reading

BATCH = indexing.BATCH  # facts' words read at a time


def drift(store: Store, tx: Tx, scope: Scope) -> GraphDrift:
    """The scope's graph as stored against the rules' rebuild, read in ``tx``."""
    stored = store.health.graph_rows(tx, scope)
    given = {(i, n, o) for i, n, o, kept in stored.entities if o != "extracted" or kept}
    known = {norm: eid for eid, norm, _ in given}
    ids = {eid for eid, _, _ in given}
    known.update((norm, eid) for norm, eid in stored.aliases if eid in ids)
    fact_ids = store.facts.ids(tx, scope)
    extracted: set[tuple[str, str, str]] = set()
    for _, reading in _readings(store, tx, scope, fact_ids):
        for m in reading.mentions({}):
            if m.name not in known:
                extracted.add((entity_id(scope, m.name), m.name, "extracted"))
    known.update((norm, eid) for eid, norm, _ in extracted)
    mentions, groundings = _Tally(stored.mentions), _Tally(stored.groundings)
    relations = _Tally(stored.relations)
    unused = from_us(0)  # the relations' creation time, which nothing compares
    for fact, reading in _readings(store, tx, scope, fact_ids):
        alone = reading.mentions({})
        found, grounds, said = indexing.stated(scope, fact, reading, alone, known, unused)
        mentions.add({(m.fact_id, m.start, m.end, m.entity, m.type) for m in found})
        groundings.add({(fact.id, entity) for entity in grounds})
        relations.add({_row(fact.id, r) for r in said})
    entities = _Tally(frozenset((i, n, o) for i, n, o, _ in stored.entities))
    entities.add(given | extracted)
    return GraphDrift(
        len(fact_ids),
        entities.result(),
        mentions.result(),
        groundings.result(),
        relations.result(),
    )


def _row(fact_id: str, r: Relation) -> tuple[str, str, str, str, str, int | None]:
    start = None if r.valid_at is None else to_us(r.valid_at)
    return (fact_id, r.id, r.source, r.type, r.target, start)


def _readings(
    store: Store, tx: Tx, scope: Scope, fact_ids: list[str]
) -> Iterator[tuple[indexing.Words, Reading]]:
    """Each live fact's words as the rules read them, a batch read at a time."""
    for start in range(0, len(fact_ids), BATCH):
        chunk = fact_ids[start : start + BATCH]
        words = store.facts.words(tx, scope, chunk)
        for fact_id in chunk:
            if fact_id in words:
                content, metadata, kind, created = words[fact_id]
                fact = indexing.readable(fact_id, content, json.loads(metadata), kind, created)
                yield fact, indexing.reading_of(fact)


class _Tally:
    """Rebuilt rows against stored ones, counted as they come."""

    def __init__(self, stored: AbstractSet[tuple[object, ...]]) -> None:
        self._stored = stored
        self._missing = 0
        self._matched = 0

    def add(self, rebuilt: AbstractSet[tuple[object, ...]]) -> None:
        found = len(rebuilt & self._stored)
        self._matched += found
        self._missing += len(rebuilt) - found

    def result(self) -> Difference:
        return Difference(missing=self._missing, extra=len(self._stored) - self._matched)
