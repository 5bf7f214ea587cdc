"""A scope's graph rebuilt by the rules in memory, against the stored one: its drift.

The rules' graph is a function of the scope's live facts and what callers asserted
(:mod:`engram.core.graph.indexing`), so it can be rebuilt from them and compared, as the
health report does when asked (``mem.health(ref, graph_drift=True)``). The rebuild
starts from the entities the rules do not manage, kept as stored: the asserted and
imported ones, and the extracted ones a model's groundings keep alive (a model's reading
cannot be rebuilt), with their aliases. It reads every live fact twice, the words as
:func:`engram.core.graph.indexing.read_facts` reads them: first for the names its words
give alone, which become the extracted entities the scope does not know, then, knowing
every name, for its mentions and the entities its words ground. It compares entities
(id, normal name, origin), mentions (fact, span, entity, type) and the rules' groundings
(fact, entity): what the rebuild has and the store lacks is missing, the reverse extra.

It reads, writes nothing, and holds in memory the scope's stored graph, the ids of its
live facts and one batch of their words at a time: a rebuild is per scope, never of the
whole store. A store opened with ``extractor="off"`` reads no
facts, so its drift counts what an extract by the rules would add.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from collections.abc import Set as AbstractSet

from engram.core.graph import indexing
from engram.core.graph.extraction import Reading
from engram.core.graph.models import Difference as Difference  # re-exported
from engram.core.graph.models import GraphDrift as GraphDrift
from engram.core.graph.models import StoredGraph as StoredGraph
from engram.core.graph.models import entity_id
from engram.core.ports import Store, Tx
from engram.core.scopes import Scope

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
    for fact, reading in _readings(store, tx, scope, fact_ids):
        fact_id = fact.id
        mentions.add(
            {
                (m.fact_id, m.start, m.end, m.entity, m.type)
                for m in indexing.typed_mentions(fact, reading, known)
            }
        )
        groundings.add({(fact_id, known[m.name]) for m in reading.mentions({})})
    entities = _Tally(frozenset((i, n, o) for i, n, o, _ in stored.entities))
    entities.add(given | extracted)
    return GraphDrift(len(fact_ids), entities.result(), mentions.result(), groundings.result())


def _readings(
    store: Store, tx: Tx, scope: Scope, fact_ids: list[str]
) -> Iterator[tuple[indexing.Words, Reading]]:
    """Each live fact's words as the rules read them, a batch read at a time."""
    for start in range(0, len(fact_ids), BATCH):
        chunk = fact_ids[start : start + BATCH]
        words = store.facts.words(tx, scope, chunk)
        for fact_id in chunk:
            if fact_id in words:
                content, metadata, kind = words[fact_id]
                fact = indexing.readable(fact_id, content, json.loads(metadata), kind)
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
