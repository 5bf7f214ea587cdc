"""With a model reading facts between any interleaving of remember, correct, forget (soft
and for good), restore, revert, asserting an entity and deleting one, on both backends:

- the rules' part of the graph is what the rules give the live facts, knowing the
  asserted names and the names the model's groundings keep (as
  ``tests/test_graph_rebuild.py`` has it without a model);
- an extracted entity lives exactly while the rules or the model ground it;
- every model grounding, read mark and support names a live fact, every mark the words
  the fact has now, and every extracted relation has support.

The model is in-process and deterministic: it names the scope's names found in a text
whatever their case (lowercase ones the rules never find), one name found nowhere, and
relations between the names it found. Each example works in a scope of its own; the
number of examples is ``ENGRAM_GRAPH_EXAMPLES`` (30 by default), halved.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import re
import uuid
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    invariant,
    rule,
    run_state_machine_as_test,
)

import engram
from engram import Conflict, NotFound, ResourceRef
from engram.core.graph.extraction import read
from graph_state import FactMachine, rows, rules_graph, stored
from stores import Target

EXAMPLES = max(1, int(os.environ.get("ENGRAM_GRAPH_EXAMPLES", "30")) // 2)
# ENGRAM_GRAPH_RANDOM=1 draws new examples (the acceptance run); unset, the suite runs
# the same ones every time and cannot pass or fail by chance.
RANDOM = os.environ.get("ENGRAM_GRAPH_RANDOM") == "1"
NAMES = ["Ana", "Bo Lima", "New York", "York", "Lima", "ana", "bo lima", "new york"]
TEMPLATES = [
    "{0} met {1} in {2}.",
    "{0} went home. Then {1} called.",
    "yesterday we saw {0} and {1}",
    "I told {0} about {2}!",
    "{0}",
]


class Reader:
    """A chat model that names what the text holds of NAMES, in any case."""

    model = "names-in-any-case"

    def complete(self, system: str, user: str) -> str:
        text = user.rsplit("\n", 1)[-1].lower()  # the fact's text comes last
        found = sorted(
            {n.lower() for n in NAMES if re.search(rf"(?<!\w){re.escape(n.lower())}(?!\w)", text)}
        )
        return json.dumps(
            {
                "entities": [{"name": n} for n in found] + [{"name": "Zed"}],
                "relations": [
                    {"source": a, "target": b, "type": "near"} for a, b in itertools.pairwise(found)
                ],
            }
        )


class ReadingMachine(FactMachine):
    extractor = "llm"  # test_spacy_extraction.py runs it with "spacy"

    facts = FactMachine.facts

    def __init__(self) -> None:
        super().__init__()
        self.ref = ResourceRef(f"reading-{uuid.uuid4().hex[:10]}")

    @rule(
        target=facts,
        template=st.sampled_from(TEMPLATES),
        names=st.lists(st.sampled_from(NAMES), min_size=3, max_size=3),
    )
    def remember(self, template: str, names: list[str]) -> str:
        return self.memory.remember(self.ref, template.format(*names)).id

    @rule(
        fact=facts,
        template=st.sampled_from(TEMPLATES),
        names=st.lists(st.sampled_from(NAMES), min_size=3, max_size=3),
    )
    def correct(self, fact: str, template: str, names: list[str]) -> None:
        with contextlib.suppress(NotFound, Conflict):
            self.memory.correct(self.ref, fact, template.format(*names))

    @rule(limit=st.integers(1, 4))
    def extract(self, limit: int) -> None:
        self.memory.graph.extract(self.ref, extractor=self.extractor, limit=limit)

    @rule(name=st.sampled_from(NAMES))
    def assert_entity(self, name: str) -> None:
        self.memory.graph.upsert_entity(self.ref, name)

    @rule(name=st.sampled_from(NAMES))
    def delete_entity(self, name: str) -> None:  # extracted ones too
        with contextlib.suppress(NotFound):
            self.memory.graph.delete_entity(self.ref, name)

    @invariant()
    def the_rules_part_is_the_rebuilt_one(self) -> None:
        assert stored(self.memory, self.ref) == rebuilt(self.memory, self.ref)

    @invariant()
    def what_the_model_left_belongs_to_live_facts_as_worded_now(self) -> None:
        assert strays(self.memory, self.ref) == {}


def rebuilt(memory: engram.Memory, ref: ResourceRef) -> dict[str, Any]:
    """The rules' graph from scratch, knowing the asserted names and the names the model's
    groundings keep (taken as stored: a model's reading cannot be rebuilt)."""
    given = rows(
        memory,
        "SELECT id, norm, origin FROM entities e WHERE scope = ? AND (origin <> 'extracted' "
        "OR EXISTS (SELECT 1 FROM groundings g WHERE g.entity = e.id AND g.extractor <> 'rules'))",
        (ref.key,),
    )
    facts = memory.facts(ref, limit=1000).facts
    readings = {f.id: read(f.content) for f in facts}
    return rules_graph(
        memory, ref, given, readings, {f.id: (f.content, f.created_at) for f in facts}
    )


def strays(memory: engram.Memory, ref: ResourceRef) -> dict[str, list[Any]]:
    """What the model left that no live fact, as worded now, holds up."""
    key = ref.key
    checks = {
        "groundings of no live fact": "SELECT g.fact_id FROM groundings g JOIN entities e "
        "ON e.id = g.entity WHERE e.scope = ? AND NOT EXISTS "
        "(SELECT 1 FROM facts f WHERE f.id = g.fact_id)",
        "model groundings of facts not read as worded": "SELECT g.fact_id FROM groundings g "
        "JOIN entities e ON e.id = g.entity JOIN facts f ON f.id = g.fact_id "
        "WHERE e.scope = ? AND g.extractor <> 'rules' AND NOT EXISTS (SELECT 1 FROM graph_reads r "
        "WHERE r.fact_id = f.id AND r.extractor = g.extractor AND r.content_hash = f.content_hash)",
        "marks of other words": "SELECT r.fact_id FROM graph_reads r JOIN facts f "
        "ON f.id = r.fact_id WHERE f.scope = ? AND r.content_hash <> f.content_hash",
        "support of no live fact": "SELECT s.fact_id FROM relation_support s JOIN relations r "
        "ON r.id = s.relation WHERE r.scope = ? AND NOT EXISTS "
        "(SELECT 1 FROM facts f WHERE f.id = s.fact_id)",
        "extracted relations unsupported": "SELECT r.id FROM relations r WHERE r.scope = ? "
        "AND r.origin = 'extracted' AND NOT EXISTS "
        "(SELECT 1 FROM relation_support s WHERE s.relation = r.id)",
        "relations without an end": "SELECT r.id FROM relations r WHERE r.scope = ? AND "
        "(NOT EXISTS (SELECT 1 FROM entities e WHERE e.id = r.source) "
        "OR NOT EXISTS (SELECT 1 FROM entities e WHERE e.id = r.target))",
    }
    found = {what: rows(memory, sql, (key,)) for what, sql in checks.items()}
    orphans = rows(
        memory,
        "SELECT r.fact_id FROM graph_reads r WHERE NOT EXISTS "
        "(SELECT 1 FROM facts f WHERE f.id = r.fact_id)",
    )
    found["marks of no live fact"] = orphans
    return {what: hits for what, hits in found.items() if hits}


def test_a_models_reading_leaves_the_rules_graph_as_the_rebuilt_one(target: Target) -> None:
    with engram.open(target, embedder=engram.HashingEmbedder(16), chat=Reader()) as memory:
        ReadingMachine.memory = memory
        run_state_machine_as_test(
            ReadingMachine,
            settings=settings(
                max_examples=EXAMPLES,
                derandomize=not RANDOM,  # the suite runs the same examples every time
                stateful_step_count=20,
                deadline=None,
                suppress_health_check=[HealthCheck.too_slow],
            ),
        )
