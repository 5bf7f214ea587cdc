"""What the rebuild properties (``test_graph_rebuild.py``, ``test_llm_graph_rebuild.py``)
share: the rules both state machines take on facts, and a scope's graph as stored and as
the rules rebuild it: its entities, mentions, the groundings the rules made and the
relations they read, by supporting fact (a model's are the llm property's to check on
their own)."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, rule

import engram
from engram import Conflict, NotFound, ResourceRef
from engram.core.clock import to_us
from engram.core.graph import relations
from engram.core.graph.extraction import Reading
from engram.core.graph.models import entity_id
from stores import rows_through as rows


class FactMachine(RuleBasedStateMachine):
    """Forgetting (softly or for good), restoring and reverting the latest entry, on the
    facts of ``self.ref`` a subclass's rules remember into the ``facts`` bundle."""

    memory: engram.Memory
    ref: ResourceRef

    facts = Bundle("facts")

    @rule(fact=facts, hard=st.booleans())
    def forget(self, fact: str, hard: bool) -> None:
        self.memory.forget(self.ref, fact, hard=hard)

    @rule(fact=facts)
    def restore(self, fact: str) -> None:
        with contextlib.suppress(NotFound, Conflict):
            self.memory.restore(self.ref, fact)

    @rule()
    def revert_latest(self) -> None:
        page = self.memory.ledger(self.ref, limit=1).entries
        if page:
            with contextlib.suppress(Conflict):
                self.memory.revert(self.ref, page[0].seq)


def stored(memory: engram.Memory, ref: ResourceRef) -> dict[str, Any]:
    key = ref.key
    entities = rows(memory, "SELECT id, norm, origin FROM entities WHERE scope = ?", (key,))
    mentions = rows(
        memory, 'SELECT fact_id, start, "end", entity FROM mentions WHERE scope = ?', (key,)
    )
    groundings = rows(  # the rules': rows, and flags on the mentions that carry them
        memory,
        "SELECT g.fact_id, g.entity FROM groundings g JOIN entities e ON e.id = g.entity "
        "WHERE e.scope = ? AND g.extractor = 'rules' "
        "UNION SELECT fact_id, entity FROM mentions WHERE scope = ? AND grounds = 1",
        (key, key),
    )
    said = rows(
        memory,
        "SELECT s.fact_id, r.source, r.type, r.target, r.valid_at FROM relations r "
        "JOIN relation_support s ON s.relation = r.id WHERE r.scope = ? AND r.extractor = 'rules'",
        (key,),
    )
    return {
        "entities": sorted((str(i), str(n), str(o)) for i, n, o in entities),
        "mentions": sorted((str(f), int(s), int(e), str(n)) for f, s, e, n in mentions),
        "groundings": sorted((str(f), str(e)) for f, e in groundings),
        "relations": sorted(
            (str(f), str(a), str(k), str(b), None if v is None else int(v))
            for f, a, k, b, v in said
        ),
    }


def rules_graph(
    memory: engram.Memory,
    ref: ResourceRef,
    given: list[Any],
    readings: dict[str, Reading],
    facts: Mapping[str, tuple[str, datetime]],
) -> dict[str, Any]:
    """The graph the rules make from scratch, as :func:`stored` reads it: the ``given``
    entities (id, normal name, origin rows, kept as they are) with their aliases known,
    and what the rules find in each fact's ``readings``: names new to the scope become
    extracted entities, then every known name is mentioned, what the words alone give
    is grounded, and the relations the words (``facts``: the text and time of each)
    state between the mentions are supported by the fact."""
    ids = {str(i) for i, _, _ in given}
    known: dict[str, str] = {str(n): str(i) for i, n, _ in given}
    for alias, entity in rows(
        memory, "SELECT norm, entity FROM entity_aliases WHERE scope = ?", (ref.key,)
    ):
        if str(entity) in ids:
            known[str(alias)] = str(entity)
    extracted: set[tuple[str, str, str]] = set()
    for reading in readings.values():
        for m in reading.mentions({}):
            if m.name not in known:
                extracted.add((entity_id(ref, m.name), m.name, "extracted"))
    known.update({norm: eid for eid, norm, _ in extracted})
    mentions, groundings, said = [], set(), set()
    for fact_id, reading in readings.items():
        found = [m for m in reading.mentions(known) if m.name in known]
        mentions += [(fact_id, m.start, m.end, known[m.name]) for m in found]
        groundings |= {(fact_id, known[m.name]) for m in reading.mentions({})}
        text, written = facts[fact_id]
        for r in relations.relations(text, found):
            start = relations.valid_at(r.time, written)
            head, tail = known[found[r.source].name], known[found[r.target].name]
            if head != tail:
                said.add((fact_id, head, r.type, tail, None if start is None else to_us(start)))
    entities = sorted({(str(i), str(n), str(o)) for i, n, o in given} | extracted)
    return {
        "entities": entities,
        "mentions": sorted(mentions),
        "groundings": sorted(groundings),
        "relations": sorted(said),
    }
