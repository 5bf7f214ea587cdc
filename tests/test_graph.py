"""The knowledge graph's assertions on both backends: entities unique by normalised name
and alias, relations with world and engram times, single-valued types, lifecycle with
the facts that support them, refusals that write nothing, and reverts."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

import engram
import stores
from engram import Conflict, InvalidInput, NotFound, ResourceRef
from stores import Target

REF = ResourceRef("grapher")
OTHER = ResourceRef("someone-else")
T0 = datetime(2023, 1, 1, tzinfo=UTC)


@pytest.fixture
def mem(target: Target) -> Iterator[engram.Memory]:
    with engram.open(target, embedder=engram.HashingEmbedder(32)) as memory:
        yield memory


def test_an_entity_is_one_per_normalised_name_or_alias(mem: engram.Memory) -> None:
    g = mem.graph
    ana = g.upsert_entity(REF, "Ana Lima", type="person", aliases=["Ana", "A. Lima"])
    assert ana.norm == "ana lima" and ana.aliases == ("A. Lima", "Ana") and ana.origin == "asserted"
    again = g.upsert_entity(REF, "  ANA  lima ", summary="a painter")
    assert again.id == ana.id and again.name == "Ana Lima" and again.summary == "a painter"
    by_alias = g.upsert_entity(REF, "ana", aliases=["Lima"])
    assert by_alias.id == ana.id and by_alias.aliases == ("A. Lima", "Ana", "Lima")
    assert g.entity(REF, "a. lima").id == ana.id
    assert g.entity(REF, ana.id).summary == "a painter"
    with pytest.raises(NotFound, match="no entity"):
        g.entity(OTHER, ana.id)  # another scope's entity is not there at all


def test_an_alias_that_names_another_entity_is_refused(mem: engram.Memory) -> None:
    g = mem.graph
    g.upsert_entity(REF, "Bo")
    ledger_before = mem.ledger(REF).entries
    with pytest.raises(Conflict, match="another entity"):
        g.upsert_entity(REF, "Robert", aliases=["bo"])
    with pytest.raises(NotFound):
        g.entity(REF, "Robert")  # nothing written
    assert mem.ledger(REF).entries == ledger_before


def test_a_name_of_another_script_s_punctuation_is_its_own(mem: engram.Memory) -> None:
    """The schema tells ASCII punctuation apart, not every script's: a name of the
    latter alone is kept as itself and found by it; ASCII punctuation alone is refused
    (see test_bad_input_is_refused_and_writes_nothing)."""
    made = mem.graph.upsert_entity(REF, "¶")
    assert mem.graph.entity(REF, "¶").id == made.id


def test_aliases_past_the_limit_with_those_held_are_a_conflict(mem: engram.Memory) -> None:
    """Each call may name up to 64 aliases (the schema says so); more with those the
    entity holds is a state the request could not know: a conflict, nothing written."""
    mem.graph.upsert_entity(REF, "Ana", aliases=[f"ana {n}" for n in range(40)])
    with pytest.raises(Conflict, match="would have 70 aliases"):
        mem.graph.upsert_entity(REF, "Ana", aliases=[f"lima {n}" for n in range(30)])
    assert len(mem.graph.entity(REF, "Ana").aliases) == 40


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda g: g.upsert_entity(REF, "  "), "must not be empty"),
        (lambda g: g.upsert_entity(REF, "x" * 257), "limit is 256"),
        (lambda g: g.upsert_entity(REF, "Ana", type="t" * 129), "limit is 128"),
        (lambda g: g.upsert_entity(REF, "Ana", aliases=[f"a{i}" for i in range(65)]), "64"),
        (lambda g: g.upsert_entity(REF, "?!"), "nothing left"),
        (
            lambda g: g.upsert_relation(
                REF, "Ana", "Bo", "knows", valid_at=T0, invalid_at=T0 - timedelta(days=1)
            ),
            "valid_at",
        ),
    ],
)
def test_bad_input_is_refused_and_writes_nothing(
    mem: engram.Memory, call: object, message: str
) -> None:
    mem.graph.upsert_entity(REF, "Bo")
    before = mem.ledger(REF).entries
    with pytest.raises(InvalidInput, match=message):
        call(mem.graph)  # type: ignore[operator]
    assert mem.ledger(REF).entries == before
    assert mem.graph.relations(REF, include_expired=True) == []


def test_a_single_valued_type_retires_the_old_target(mem: engram.Memory) -> None:
    g = mem.graph
    for name in ("Ana", "Lisbon", "Porto", "Braga"):
        g.upsert_entity(REF, name)
    assert g.declare_relation_type(REF, "lives_in", single_valued=True)
    assert not g.declare_relation_type(REF, "lives_in", single_valued=True)  # no change
    first = g.upsert_relation(REF, "Ana", "Lisbon", "lives_in", valid_at=T0)
    moved = T0 + timedelta(days=200)
    second = g.upsert_relation(REF, "Ana", "Porto", "lives_in", valid_at=moved)
    [live] = g.relations(REF, entity="Ana")
    assert live.id == second.id
    [old] = [r for r in g.relations(REF, include_expired=True) if r.id == first.id]
    assert old.invalid_at == moved and old.expired_at is not None
    # Known then and valid then: as_of reads the world as engram knew it.
    [then] = g.relations(REF, entity="Ana", as_of=T0 + timedelta(days=10))
    assert then.id == first.id
    # A late arrival, older than the live one, is stored already over.
    late = g.upsert_relation(REF, "Ana", "Braga", "lives_in", valid_at=T0 - timedelta(days=50))
    assert late.invalid_at == T0 and late.expired_at is None
    assert [r.id for r in g.relations(REF, entity="Ana")] == [second.id]
    with pytest.raises(InvalidInput, match="its own"):
        g.upsert_relation(REF, "Ana", "Ana", "lives_in")


def test_a_relation_asserted_twice_is_one_relation_with_both_supports(
    mem: engram.Memory,
) -> None:
    g = mem.graph
    g.upsert_entity(REF, "Ana")
    g.upsert_entity(REF, "Bo")
    a = mem.remember(REF, "Ana met Bo at the market")
    b = mem.remember(REF, "Bo and Ana had lunch")
    one = g.upsert_relation(REF, "Ana", "Bo", "knows", facts=[a.id])
    two = g.upsert_relation(REF, "ana", "bo", "knows", facts=[b.id])
    assert one.id == two.id and two.facts == (a.id, b.id)
    with pytest.raises(NotFound, match="no live fact"):
        g.upsert_relation(REF, "Ana", "Bo", "knows", facts=["f_missing"])
    with pytest.raises(InvalidInput, match="NUL"):
        g.upsert_relation(REF, "Ana", "Bo", "knows", facts=["f_\x00"])
    with pytest.raises(InvalidInput, match="NUL"):
        g.expire_relation(REF, "r_\x00")
    with pytest.raises(NotFound, match="no entity"):
        g.upsert_relation(REF, "Ana", "Cy", "knows")


def test_forgetting_a_fact_takes_its_support_and_never_an_asserted_relation(
    mem: engram.Memory,
) -> None:
    g = mem.graph
    g.upsert_entity(REF, "Ana")
    g.upsert_entity(REF, "Bo")
    fact = mem.remember(REF, "Ana met Bo at the market")
    made = g.upsert_relation(REF, "Ana", "Bo", "knows", facts=[fact.id])
    mem.forget(REF, fact.id)
    [kept] = g.relations(REF)
    assert kept.id == made.id and kept.facts == ()
    mem.forget(REF, mem.remember(REF, "another fact").id, hard=True)
    assert g.relations(REF)[0].id == made.id


def test_deleting_an_entity_takes_its_relations_and_a_revert_brings_both_back(
    mem: engram.Memory,
) -> None:
    g = mem.graph
    g.upsert_entity(REF, "Ana", aliases=["Annie"])
    g.upsert_entity(REF, "Bo")
    fact = mem.remember(REF, "Ana met Bo")
    made = g.upsert_relation(REF, "Ana", "Bo", "knows", facts=[fact.id])
    g.delete_entity(REF, "Annie")
    assert g.relations(REF, include_expired=True) == []
    with pytest.raises(NotFound):
        g.entity(REF, "Annie")  # the asserted entity went with its alias
    # the fact's words still name Ana (a given name opening a sentence): the rules' own
    # entity stands, as it would with no assertion at all
    left = g.entity(REF, "Ana")
    assert (left.origin, left.aliases) == ("extracted", ())
    assert mem.fact(REF, fact.id).id == fact.id  # never a fact
    deletion = mem.ledger(REF).entries[0]
    assert deletion.op == "graph.entity.delete"
    mem.revert(REF, deletion.seq)
    assert g.entity(REF, "Annie").name == "Ana"
    [back] = g.relations(REF)
    assert back.id == made.id and back.facts == (fact.id,)


def test_every_graph_write_reverts_to_what_was_before(mem: engram.Memory) -> None:
    g = mem.graph
    g.upsert_entity(REF, "Ana")
    g.upsert_entity(REF, "Lisbon")
    g.upsert_entity(REF, "Porto")
    g.declare_relation_type(REF, "lives_in", single_valued=True)
    first = g.upsert_relation(REF, "Ana", "Lisbon", "lives_in", valid_at=T0)
    g.upsert_relation(REF, "Ana", "Porto", "lives_in", valid_at=T0 + timedelta(days=9))
    g.upsert_entity(REF, "Ana", summary="moved north")
    for entry in mem.ledger(REF).entries:  # newest first
        mem.revert(REF, entry.seq)
    assert g.relations(REF, include_expired=True) == []
    for name in ("Ana", "Lisbon", "Porto"):
        with pytest.raises(NotFound):
            g.entity(REF, name)
    assert g.declare_relation_type(REF, "lives_in", single_valued=True)  # undeclared again
    assert first.id not in {r.id for r in g.relations(REF, include_expired=True)}


def _chain(mem: engram.Memory) -> None:
    """Ana -knows-> Bo -knows-> Cy -works_at-> Acme -knows-> Ana (a cycle), and Dee alone."""
    g = mem.graph
    for name in ("Ana", "Bo", "Cy", "Acme", "Dee"):
        g.upsert_entity(REF, name)
    g.upsert_relation(REF, "Ana", "Bo", "knows")
    g.upsert_relation(REF, "Bo", "Cy", "knows")
    g.upsert_relation(REF, "Cy", "Acme", "works_at")
    g.upsert_relation(REF, "Acme", "Ana", "knows")


def _names(mem: engram.Memory, ids: tuple[str, ...]) -> list[str]:
    return [mem.graph.entity(REF, i).name for i in ids]


def test_a_traversal_follows_direction_and_types_and_never_revisits(
    mem: engram.Memory,
) -> None:
    _chain(mem)
    g = mem.graph
    out = g.traverse(REF, "Ana", depth=3, direction="out")
    assert [_names(mem, p.entities) for p in out] == [
        ["Ana", "Bo"],
        ["Ana", "Bo", "Cy"],
        ["Ana", "Bo", "Cy", "Acme"],
    ]
    both = g.traverse(REF, "Ana", depth=3)
    assert all(len(set(p.entities)) == len(p.entities) for p in both)  # the cycle guard
    assert {tuple(_names(mem, p.entities)) for p in both if len(p.relations) == 1} == {
        ("Ana", "Bo"),
        ("Ana", "Acme"),
    }
    assert len(both) == 6  # two ways round the four-cycle, three lengths each
    typed = g.traverse(REF, "Bo", depth=3, types=["knows"], direction="out")
    assert [_names(mem, p.entities) for p in typed] == [["Bo", "Cy"]]
    assert g.traverse(REF, "Dee", depth=3) == []
    assert len(g.traverse(REF, "Ana", depth=3, limit=2)) == 2


def test_a_neighbourhood_grows_with_depth(mem: engram.Memory) -> None:
    _chain(mem)
    g = mem.graph
    one = g.neighbourhood(REF, "Ana")
    assert [e.name for e in one.entities] == ["Ana", "Acme", "Bo"]
    assert len(one.relations) == 2 and not one.truncated
    two = g.neighbourhood(REF, "Ana", depth=2)
    assert [e.name for e in two.entities] == ["Ana", "Acme", "Bo", "Cy"]
    assert len(two.relations) == 4
    small = g.neighbourhood(REF, "Ana", depth=2, limit=2)
    assert small.truncated and len(small.entities) == 2


def test_a_neighbourhood_holds_the_newest_live_facts_naming_its_entities(
    target: Target,
) -> None:
    """The facts of a neighbourhood are the newest of those that mention its entities,
    made by ``as_of`` where given, live ones only, at most ``limit``; more left says it
    is cut short."""
    clock = stores.ManualClock()
    with engram.open(target, embedder=engram.HashingEmbedder(16), clock=clock) as mem:
        made = []
        for day in range(6):
            clock.advance(timedelta(days=1))
            made.append(mem.remember(REF, f"Ana Lima walked to the harbour on day {day}"))
        times = [f.created_at for f in made]
        mem.forget(REF, made[4].id)  # to the trash: no longer a fact of hers
        ids = [f.id for f in made]

        def facts(**asked: object) -> tuple[list[str], bool]:
            found = mem.graph.neighbourhood(REF, "Ana Lima", **asked)  # type: ignore[arg-type]
            return [f.id for f in found.facts], found.truncated

        assert facts() == ([ids[5], ids[3], ids[2], ids[1], ids[0]], False)
        assert facts(limit=3) == ([ids[5], ids[3], ids[2]], True)
        assert facts(as_of=times[3]) == ([ids[3], ids[2], ids[1], ids[0]], False)
        assert facts(as_of=times[3] - timedelta(microseconds=1), limit=2) == (
            [ids[2], ids[1]],
            True,
        )
        assert facts(as_of=times[0], limit=1) == ([ids[0]], False)


def test_a_retired_relation_leaves_the_walks_but_not_history(mem: engram.Memory) -> None:
    _chain(mem)
    g = mem.graph
    [knows] = [r for r in g.relations(REF, entity="Ana") if r.target != g.entity(REF, "Ana").id]
    g.expire_relation(REF, knows.id, at=T0)
    assert [_names(mem, p.entities) for p in g.traverse(REF, "Ana", depth=1)] == [["Ana", "Acme"]]
    assert [e.name for e in g.neighbourhood(REF, "Ana").entities] == ["Ana", "Acme"]
    before_the_end = g.neighbourhood(REF, "Ana", as_of=T0 - timedelta(days=1))
    assert [e.name for e in before_the_end.entities] == ["Ana", "Acme", "Bo"]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda g: g.traverse(REF, "Ana", depth=0), "depth"),
        (lambda g: g.traverse(REF, "Ana", depth=4), "depth"),
        (lambda g: g.neighbourhood(REF, "Ana", depth=True), "depth"),
        (lambda g: g.traverse(REF, "Ana", direction="up"), "direction"),
        (lambda g: g.traverse(REF, "Ana", limit=1001), "limit"),
        (lambda g: g.traverse(REF, "Ana", types="knows"), "types"),
    ],
)
def test_walks_refuse_bad_bounds(mem: engram.Memory, call: object, message: str) -> None:
    mem.graph.upsert_entity(REF, "Ana")
    with pytest.raises(InvalidInput, match=message):
        call(mem.graph)  # type: ignore[operator]
    with pytest.raises(NotFound):
        mem.graph.neighbourhood(OTHER, "Ana")


def test_entity_search_by_name_alias_and_summary(mem: engram.Memory) -> None:
    g = mem.graph
    g.upsert_entity(REF, "Ana Lima", type="person", aliases=["Annie"], summary="paints birds")
    g.upsert_entity(REF, "Banana Republic", type="shop")
    g.upsert_entity(REF, "Lima", type="place")
    assert [h.entity.name for h in g.search(REF, "annie", mode="text")] == ["Ana Lima"]
    assert [h.entity.name for h in g.search(REF, "who paints?", mode="text")] == ["Ana Lima"]
    names = [h.entity.name for h in g.search(REF, "lima", mode="text")]
    assert set(names) == {"Ana Lima", "Lima"}  # "ana" inside "Banana" is no word match
    assert [h.entity.name for h in g.search(REF, "lima", types=["place"])] == ["Lima"]
    assert g.search(OTHER, "lima") == []
    with pytest.raises(InvalidInput, match="mode"):
        g.search(REF, "lima", mode="vector")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        g.search(REF, "   ")


def test_entity_search_by_meaning_needs_an_embedder(target: Target) -> None:
    with engram.open(target, embedder=None) as bare:
        bare.graph.upsert_entity(REF, "Ana")
        assert [h.entity.name for h in bare.graph.search(REF, "ana", mode="text")] == ["Ana"]
        with pytest.raises(engram.CapabilityMissing):
            bare.graph.search(REF, "ana")


def test_remembering_fills_the_graph_and_forgetting_empties_it(mem: engram.Memory) -> None:
    g = mem.graph
    g.upsert_entity(REF, "Acme", type="org")
    said = mem.remember_conversation(
        REF,
        [
            engram.Turn("Caroline", "I met Mel in New York, she works at Acme."),
            engram.Turn("Mel", "Caroline and I loved @moma, thanks Caroline"),
        ],
        context_turns=0,
    )
    first, second = said.facts
    names = {e.name: e for e in g.neighbourhood(REF, "Mel", depth=1).entities}
    assert {"Mel", "Caroline", "New York", "Acme", "@moma"} <= set(names)
    assert names["New York"].origin == "extracted" and names["Acme"].origin == "asserted"
    assert names["@moma"].type == "handle"
    mel = g.neighbourhood(REF, "Mel")
    assert {f.id for f in mel.facts} == {first.id, second.id}
    # "Caroline" opens the second turn's text: known, it is a mention there too.
    starts = [
        m
        for m in mem._store.run(
            lambda tx: mem._store.graph.mentions(tx, REF, facts=[second.id]), write=False
        )
    ]
    assert [second.content[m.start : m.end] for m in starts] == [
        "Mel",
        "Caroline",
        "@moma",
        "Caroline",
    ]
    mem.forget(REF, first.id)
    with pytest.raises(NotFound):
        g.entity(REF, "New York")  # grounded by the forgotten turn alone
    assert g.entity(REF, "Caroline").origin == "extracted"  # "thanks Caroline" grounds her
    mem.forget(REF, second.id, hard=True)
    for gone in ("Caroline", "Mel", "@moma"):
        with pytest.raises(NotFound):
            g.entity(REF, gone)
    assert g.entity(REF, "Acme").origin == "asserted"  # asserted entities stay
    mem.restore(REF, first.id)
    assert g.entity(REF, "New York").origin == "extracted"  # back, with the same id
    assert g.entity(REF, "New York").id == names["New York"].id


def test_a_deleted_entity_that_a_fact_grounds_without_mentioning_comes_back(
    mem: engram.Memory,
) -> None:
    ana = mem.graph.upsert_entity(REF, "Ana", aliases=["Glad Tidings"])
    fact = mem.remember(REF, "Glad Tidings met Ana in Porto.")  # mentioned as Ana
    lima = mem.graph.entity(REF, "Tidings")  # but the words alone ground Tidings ("Glad"
    assert lima.origin == "extracted"  # opens no name unless known)
    mem.graph.delete_entity(REF, lima.id)
    back = mem.graph.entity(REF, "Tidings")  # the fact grounding it was read again
    assert (back.id, back.origin) == (lima.id, "extracted")
    assert [f.id for f in mem.graph.neighbourhood(REF, ana.id).facts] == [fact.id]


def test_a_name_that_becomes_known_is_found_where_it_opens_a_sentence(
    mem: engram.Memory,
) -> None:
    fact = mem.remember(REF, "Ziggy was at the sea.")  # opens the sentence: no name yet
    with pytest.raises(NotFound):
        mem.graph.entity(REF, "Ziggy")
    ziggy = mem.graph.upsert_entity(REF, "Ziggy", type="pet")
    assert [f.id for f in mem.graph.neighbourhood(REF, "Ziggy").facts] == [fact.id]
    mem.graph.delete_entity(REF, ziggy.id)
    assert mem.graph.neighbourhood(REF, mem.graph.upsert_entity(REF, "Ziggy").id).facts[0].id == (
        fact.id
    )


def test_entity_search_by_meaning_goes_through_the_facts(mem: engram.Memory) -> None:
    mem.remember(REF, "Yesterday Ana Lima painted birds by the river")
    mem.remember(REF, "Then Bo Silva fixed the old car engine")
    hits = mem.graph.search(REF, "painted birds")
    assert hits[0].entity.name == "Ana Lima" and hits[0].vector_rank == 1


def test_a_store_without_extraction_reads_its_facts_when_asked(target: Target) -> None:
    with engram.open(target, embedder=engram.HashingEmbedder(32), extractor="off") as off:
        off.remember(REF, "Yesterday I met Ana Lima in Porto")
        off.remember(REF, "Ana Lima called.")  # opens a sentence: only once known
        with pytest.raises(NotFound):
            off.graph.entity(REF, "Porto")
    with engram.open(target, embedder=engram.HashingEmbedder(32)) as on:
        assert on.graph.extract(REF).facts_read == 2
        ana = on.graph.neighbourhood(REF, "Ana Lima")
        assert len(ana.facts) == 2 and {e.name for e in ana.entities} == {"Ana Lima", "Porto"}
        [entry] = on.ledger(REF, limit=1).entries
        with pytest.raises(Conflict, match="cannot be reverted"):
            on.revert(REF, entry.seq)
    with pytest.raises(InvalidInput, match="extractor must be one of rules, off"):
        engram.open(target, extractor="spacy")


def test_no_extractor_reads_a_wiki_page(target: Target) -> None:
    # A page holds the names of the facts folded into it, and headings ("Index", "Log",
    # "Relations") the rules would take for names: the graph reads the facts only.
    with engram.open(target, embedder=engram.HashingEmbedder(32), extractor="off") as off:
        off.remember(REF, "Yesterday I met Ana Lima in Porto", type="event")
        off.wiki.compile(REF)
    with engram.open(target, embedder=engram.HashingEmbedder(32)) as on:
        wiki = [f for f in on.facts(REF).facts if f.type == "wiki"]
        assert wiki and on.graph.extract(REF).facts_read == 1 + len(wiki)
        report = on.health(REF, graph_drift=True).graph
        assert report.entities.total == 2 and report.drift is not None and report.drift.in_step
        assert {on.graph.entity(REF, n).name for n in ("Ana Lima", "Porto")} == {
            "Ana Lima",
            "Porto",
        }
        assert report.backlog.spacy == 1  # a page is no model's backlog either


def test_an_extracted_entity_takes_the_type_its_live_mentions_were_read_with(
    mem: engram.Memory,
) -> None:
    lives = mem.remember(REF, "I heard Bruno Costa works at Lumen.")
    assert mem.graph.entity(REF, "Lumen").type == "organisation"  # works at
    assert mem.graph.entity(REF, "Bruno Costa").type == "person"
    visited = mem.remember_many(REF, ["We visited Lumen.", "I flew to Lumen."])
    assert mem.graph.entity(REF, "Lumen").type == "place"  # two against one
    mem.forget(REF, visited[0].id)
    assert mem.graph.entity(REF, "Lumen").type == "organisation"  # a tie: a fixed order
    mem.forget(REF, visited[1].id, hard=True)
    mem.forget(REF, lives.id)
    with pytest.raises(NotFound):
        mem.graph.entity(REF, "Lumen")


def test_an_asserted_entitys_type_is_never_the_rules(mem: engram.Memory) -> None:
    mem.graph.upsert_entity(REF, "Lumen", type="band")
    mem.graph.upsert_entity(REF, "Porto")  # asserted without a type: it stays without
    mem.remember(REF, "I heard Ana works at Lumen in Porto.")
    assert mem.graph.entity(REF, "Lumen").type == "band"
    assert mem.graph.entity(REF, "Porto").type is None
    assert mem.graph.entity(REF, "Ana").type == "person"


def test_the_rules_groundings_are_flags_on_their_mentions_and_keep_an_entity(
    mem: engram.Memory, target: Target
) -> None:
    first = mem.remember(REF, "Yesterday Ana Lima flew to Porto.")
    second = mem.remember(REF, "Ana Lima is back.")
    # no row of the rules' own: the mentions that name what the facts ground carry it
    assert stores.rows(target, "SELECT count(*) FROM groundings WHERE extractor = 'rules'") == [
        (0,)
    ]
    ana = mem.graph.entity(REF, "Ana Lima")
    assert stores.groundings(target, "rules") >= {(first.id, ana.id), (second.id, ana.id)}
    mem.forget(REF, first.id, hard=True)
    assert mem.graph.entity(REF, "Ana Lima").id == ana.id  # the second still grounds her
    with pytest.raises(NotFound):
        mem.graph.entity(REF, "Porto")  # no fact grounds it any longer
    mem.correct(REF, second.id, "Someone is back.")  # its words no longer name her
    with pytest.raises(NotFound):
        mem.graph.entity(REF, "Ana Lima")
    assert mem.health(REF, graph_drift=True).graph.drift.in_step


def test_a_store_from_before_indexes_its_mentions_with_their_types(target: Target) -> None:
    """SQLite's migration 31 and PostgreSQL's 23: the mentions' index by entity holds
    their types, so an untyped entity's most frequent type is counted from it alone."""
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as mem:
        mem.remember(REF, "Ana Lima moved to Porto")
    stores.undo(target, stores.BEFORE_TYPED_MENTION_INDEX)
    if stores.is_postgres(target):
        stores.rows(target, "DELETE FROM engram_schema WHERE version >= 23")
        indexed = "SELECT indexdef FROM pg_indexes WHERE indexname = 'mentions_by_entity'"
    else:
        stores.rows(target, "PRAGMA user_version = 30")
        indexed = "SELECT group_concat(name) FROM pragma_index_info('mentions_by_entity')"
    assert "type" not in str(stores.rows(target, indexed))
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as mem:
        assert mem.graph.entity(REF, "Ana Lima").type == "person"
    assert "type" in str(stores.rows(target, indexed))
