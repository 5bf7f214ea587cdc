"""The relations the rules read in facts' sentences, in the graph on both backends: each
supported by the facts that state it, with the time they state, following them as they
are forgotten, restored and reworded, and kept apart from callers' relations."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

import engram
from engram import Conflict, ResourceRef
from engram.core.graph.models import Relation
from stores import Target

REF = ResourceRef("relations")
SAID = "Ana's brother Luis works for Orbit Labs."


@pytest.fixture
def mem(target: Target) -> Iterator[engram.Memory]:
    with engram.open(target, embedder=engram.HashingEmbedder(32)) as memory:
        yield memory


def named(mem: engram.Memory, relations: list[Relation]) -> set[tuple[str, str, str]]:
    """Each relation as (source name, type, target name)."""

    def name(entity: str) -> str:
        return mem.graph.entity(REF, entity).name

    return {(name(r.source), r.type, name(r.target)) for r in relations}


def test_a_fact_gives_the_relations_its_sentence_states(mem: engram.Memory) -> None:
    fact = mem.remember(REF, SAID)
    found = mem.graph.relations(REF)
    assert named(mem, found) == {
        ("Luis", "brother_of", "Ana"),
        ("Luis", "works_for", "Orbit Labs"),
    }
    assert all(
        (r.origin, r.extractor, r.facts, r.valid_at, r.invalid_at)
        == ("extracted", "rules", (fact.id,), None, None)
        for r in found
    )
    # Who Ana's brother works for: two facts joined by Luis, in two steps from Ana.
    paths = mem.graph.traverse(REF, "Ana", depth=2)
    assert [mem.graph.entity(REF, e).name for e in paths[-1].entities] == [
        "Ana",
        "Luis",
        "Orbit Labs",
    ]
    sub = mem.graph.neighbourhood(REF, "Ana", depth=2)
    assert {r.id for r in sub.relations} == {r.id for r in found}


def test_a_relation_only_a_person_holds_needs_a_subject_that_can_be_one(
    mem: engram.Memory,
) -> None:
    """ "Hired" makes the one hired an employee; a company's own name says it is none."""
    mem.remember(REF, "Callow Textiles hired Brisk Couriers.")
    mem.remember(REF, "Callow Textiles hired Ana Lopes last spring.")
    assert named(mem, mem.graph.relations(REF)) == {("Ana Lopes", "works_for", "Callow Textiles")}


def test_a_relation_goes_with_its_fact_and_comes_back_with_it(mem: engram.Memory) -> None:
    fact = mem.remember(REF, SAID)
    before = mem.graph.relations(REF)
    mem.forget(REF, fact.id)
    assert mem.graph.relations(REF, include_expired=True) == []
    mem.restore(REF, fact.id)
    again = mem.graph.relations(REF)
    assert [(r.id, r.facts) for r in again] == [(r.id, r.facts) for r in before]
    mem.forget(REF, fact.id, hard=True)
    assert mem.graph.relations(REF, include_expired=True) == []


def test_a_relation_follows_its_fact_s_new_words(mem: engram.Memory) -> None:
    fact = mem.remember(REF, SAID)
    mem.correct(REF, fact.id, "Ana's brother Luis works for Nimbus.")
    assert named(mem, mem.graph.relations(REF, include_expired=True)) == {
        ("Luis", "brother_of", "Ana"),
        ("Luis", "works_for", "Nimbus"),
    }


def test_facts_stating_one_relation_share_it_until_the_last_goes(mem: engram.Memory) -> None:
    one = mem.remember(REF, "Ana works at Orbit Labs.")
    two = mem.remember(REF, "Since then Ana has worked at Orbit Labs, she said.")
    assert mem.remember(REF, "Ana works for Orbit Labs.").id not in (one.id, two.id)
    [held] = mem.graph.relations(REF)
    assert held.type == "works_for" and len(held.facts) == 3
    mem.forget(REF, one.id)
    [still] = mem.graph.relations(REF)
    assert still.id == held.id and one.id not in still.facts


def test_the_time_a_sentence_states_is_when_the_relation_began(mem: engram.Memory) -> None:
    mem.remember(REF, "Ana moved to Lisbon in March 2021.")
    mem.remember(REF, "Ana moved to Porto in 2023.")
    found = {mem.graph.entity(REF, r.target).name: r for r in mem.graph.relations(REF)}
    assert found["Lisbon"].valid_at == datetime(2021, 3, 1, tzinfo=UTC)
    assert found["Porto"].valid_at == datetime(2023, 1, 1, tzinfo=UTC)


def test_the_rules_never_retire_one_relation_for_another(mem: engram.Memory) -> None:
    # lives_in declared single-valued retires what callers assert; the rules' relations
    # are what the facts say, each with its own time, whatever order they came in.
    mem.graph.declare_relation_type(REF, "lives_in", single_valued=True)
    mem.remember(REF, "Ana lives in Porto since 2023.")
    mem.remember(REF, "Ana lived in Lisbon in 2019.")
    assert named(mem, mem.graph.relations(REF)) == {
        ("Ana", "lives_in", "Porto"),
        ("Ana", "lives_in", "Lisbon"),
    }
    mem.graph.upsert_entity(REF, "Braga")
    asserted = mem.graph.upsert_relation(REF, "Ana", "Braga", "lives_in")
    assert len(mem.graph.relations(REF)) == 3  # nor does an assertion retire them
    assert asserted.extractor is None


def test_a_callers_relation_stands_beside_the_rules_and_theirs_is_not_to_touch(
    mem: engram.Memory,
) -> None:
    fact = mem.remember(REF, "Ana works at Orbit Labs.")
    [read] = mem.graph.relations(REF)
    mine = mem.graph.upsert_relation(REF, "Ana", "Orbit Labs", "works_for", facts=[fact.id])
    assert mine.id != read.id and mine.origin == "asserted"
    entries = mem.ledger(REF).entries
    with pytest.raises(Conflict, match="read by the rules"):
        mem.graph.expire_relation(REF, read.id)
    with pytest.raises(Conflict, match="read by the rules"):
        mem.graph.delete_relation(REF, read.id)
    assert mem.ledger(REF).entries == entries
    assert mem.graph.relations(REF) == [read, mine]


def test_an_entity_deleted_and_reverted_leaves_the_rules_relations_as_the_facts_say(
    mem: engram.Memory,
) -> None:
    mem.remember(REF, SAID)
    before = [(r.id, r.facts) for r in mem.graph.relations(REF)]
    orbit = mem.graph.entity(REF, "Orbit Labs")
    mem.graph.delete_entity(REF, orbit.id)  # its fact grounds it: read again, it is back
    assert [(r.id, r.facts) for r in mem.graph.relations(REF)] == before
    [entry] = mem.ledger(REF, limit=1).entries
    mem.revert(REF, entry.seq)
    assert [(r.id, r.facts) for r in mem.graph.relations(REF)] == before
    assert mem.health(REF, graph_drift=True).graph.drift.in_step  # type: ignore[union-attr]


def test_reverting_an_entity_s_deletion_brings_back_no_relation_of_the_rules(
    mem: engram.Memory,
) -> None:
    mem.graph.upsert_entity(REF, "Orbit Labs", type="organisation")
    fact = mem.remember(REF, SAID)
    mem.graph.delete_entity(REF, "Orbit Labs")  # read again: extracted now
    [deleted] = mem.ledger(REF, limit=1).entries
    mem.forget(REF, fact.id)  # the relations the fact stated go with it
    mem.revert(REF, deleted.seq)  # the asserted entity comes back, and nothing the fact said
    assert mem.graph.entity(REF, "Orbit Labs").origin == "asserted"
    assert mem.graph.relations(REF, include_expired=True) == []


def test_a_fact_read_again_for_a_new_name_keeps_only_what_it_states_now(
    mem: engram.Memory,
) -> None:
    # "Sterling" opens no name alone (a gerund's shape): Lima lives in Lisbon. Known, it
    # opens "Sterling Lima", a name of no entity: the fact names no one who lives there.
    mem.remember(REF, "Sterling Lima lives in Lisbon.")
    assert named(mem, mem.graph.relations(REF)) == {("Lima", "lives_in", "Lisbon")}
    mem.graph.upsert_entity(REF, "Sterling")
    assert mem.graph.relations(REF, include_expired=True) == []


def test_a_turn_s_speaker_is_who_i_and_my_name(mem: engram.Memory) -> None:
    """A conversation's turn is "speaker: text": what its speaker says of themselves is
    stored as the speaker's relation, with the time its clause states."""
    mem.remember_conversation(
        REF,
        [
            engram.Turn("Caroline", "I moved to Oslo in 2019 and I work at Orbit Labs."),
            engram.Turn("Melanie", "My sister Ana lives in Bergen."),
        ],
    )
    found = mem.graph.relations(REF)
    assert named(mem, found) == {
        ("Caroline", "moved_to", "Oslo"),
        ("Caroline", "works_for", "Orbit Labs"),
        ("Ana", "sister_of", "Melanie"),
        ("Ana", "lives_in", "Bergen"),
    }
    moved = next(r for r in found if r.type == "moved_to")
    assert moved.valid_at == datetime(2019, 1, 1, tzinfo=UTC)
    assert next(r for r in found if r.type == "works_for").valid_at is None
