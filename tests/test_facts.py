from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

import engram
import stores
from engram import Conflict, InvalidInput, Note, NotFound, ResourceRef, SourceRef
from engram.core.models import Filters
from stores import Target


def test_remember_returns_a_fact(mem: engram.Memory, ref: ResourceRef) -> None:
    before = datetime.now(UTC)
    fact = mem.remember(
        ref,
        "  upgraded to Pro on the 3rd  ",
        type="billing",
        tags=["plan", "billing"],
        metadata={"origin": "chat"},
    )
    assert fact.id.startswith("f_")
    assert fact.content == "upgraded to Pro on the 3rd"
    assert fact.scope == ref
    assert fact.verified is False and fact.source_ref is None
    assert fact.type == "billing" and fact.tags == ("billing", "plan")
    assert fact.metadata == {"origin": "chat"}
    assert before <= fact.created_at == fact.updated_at <= datetime.now(UTC)
    assert fact.corrected_by is None and fact.corrected_at is None
    assert mem.fact(ref, fact.id) == fact


def test_verified_is_computed_from_the_source(mem: engram.Memory, ref: ResourceRef) -> None:
    fact = mem.remember(ref, "refund confirmed", source_ref=SourceRef("sb-1", 42))
    assert fact.verified is True
    assert mem.fact(ref, fact.id).source_ref == SourceRef("sb-1", 42)
    with pytest.raises(TypeError):
        mem.remember(ref, "claims to be verified", verified=True)  # type: ignore[call-arg]


def test_same_text_twice_returns_the_stored_fact(
    mem: engram.Memory, ref: ResourceRef, hashing: engram.HashingEmbedder
) -> None:
    first = mem.remember(ref, "the customer prefers email")
    texts = hashing.texts_embedded
    again = mem.remember(ref, "the  customer prefers email ")
    assert again.id == first.id
    assert hashing.texts_embedded == texts  # a duplicate costs no embedding
    assert mem.count(ref) == 1
    other_scope = mem.remember(ResourceRef("someone-else"), "the customer prefers email")
    assert other_scope.id != first.id


def test_batch_is_one_embedding_call_and_keeps_order(
    mem: engram.Memory, ref: ResourceRef, hashing: engram.HashingEmbedder
) -> None:
    existing = mem.remember(ref, "b")
    calls = hashing.calls
    facts = mem.remember_many(ref, ["a", "b", Note("c", source_ref=SourceRef("s", 1)), "a"])
    assert hashing.calls == calls + 1
    assert [f.content for f in facts] == ["a", "b", "c", "a"]
    assert facts[1].id == existing.id and facts[0].id == facts[3].id
    assert facts[2].verified
    assert mem.count(ref) == 3


def test_an_invalid_note_refuses_the_whole_batch(mem: engram.Memory, ref: ResourceRef) -> None:
    with pytest.raises(InvalidInput, match="empty"):
        mem.remember_many(ref, ["fine", "   "])
    assert mem.count(ref) == 0


@pytest.mark.parametrize(
    ("content", "message"),
    [("", "empty"), ("   ", "empty"), ("x" * 2001, "2001 characters"), (None, "string")],
)
def test_bad_content_is_refused(
    mem: engram.Memory, ref: ResourceRef, content: object, message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        mem.remember(ref, content)  # type: ignore[arg-type]
    assert mem.count(ref) == 0


def test_two_thousand_characters_are_accepted(mem: engram.Memory, ref: ResourceRef) -> None:
    assert len(mem.remember(ref, "y" * 2000).content) == 2000


def test_bad_source_ref_tags_and_metadata(mem: engram.Memory, ref: ResourceRef) -> None:
    with pytest.raises(InvalidInput, match="entry_index"):
        mem.remember(ref, "x", source_ref=SourceRef("sb", -1))
    with pytest.raises(InvalidInput, match="tags"):
        mem.remember(ref, "x", tags="single")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="metadata"):
        mem.remember(ref, "x", metadata={"k": float("inf")})
    with pytest.raises(InvalidInput, match="timezone"):
        mem.remember(ref, "x", created_at=datetime(2024, 1, 1))


def test_correct_rewrites_in_place(
    mem: engram.Memory, ref: ResourceRef, hashing: engram.HashingEmbedder
) -> None:
    fact = mem.remember(ref, "upgraded to Pro on the 3rd", source_ref=SourceRef("sb", 1))
    calls = hashing.calls
    fixed = mem.correct(ref, fact.id, "upgraded to Pro on the 4th", by="user-42")
    assert hashing.calls == calls + 1  # re-embedded
    assert fixed.id == fact.id and fixed.content == "upgraded to Pro on the 4th"
    assert fixed.created_at == fact.created_at
    assert fixed.updated_at > fact.updated_at
    assert fixed.corrected_by == "user-42" and fixed.corrected_at == fixed.updated_at
    assert fixed.verified
    hits = mem.recall(ref, "4th", mode="text")
    assert [h.fact.id for h in hits] == [fact.id]
    assert mem.recall(ref, "3rd", mode="text") == []  # the old words left the index
    top = mem.recall(ref, "upgraded to Pro on the 4th", mode="vector", top_k=1)
    assert top[0].fact.id == fact.id


def test_correct_refusals(mem: engram.Memory, ref: ResourceRef) -> None:
    fact = mem.remember(ref, "a fact")
    other = mem.remember(ref, "another fact")
    with pytest.raises(InvalidInput, match="empty"):
        mem.correct(ref, fact.id, " ")
    with pytest.raises(InvalidInput, match="2001"):
        mem.correct(ref, fact.id, "z" * 2001)
    with pytest.raises(NotFound):
        mem.correct(ref, "f_missing", "words")
    with pytest.raises(NotFound):
        mem.correct(ResourceRef("intruder"), fact.id, "words")
    with pytest.raises(Conflict, match=other.id):
        mem.correct(ref, fact.id, "another fact")
    assert mem.fact(ref, fact.id).content == "a fact"


def test_forget_is_scoped_and_idempotent(mem: engram.Memory, ref: ResourceRef) -> None:
    fact = mem.remember(ref, "secret")
    assert mem.forget(ResourceRef("intruder"), fact.id) is False
    assert mem.fact(ref, fact.id).content == "secret"
    assert mem.forget(ref, fact.id) is True
    assert mem.forget(ref, fact.id) is False
    with pytest.raises(NotFound):
        mem.fact(ref, fact.id)
    assert mem.recall(ref, "secret", mode="hybrid") == []


def test_forget_all_confirms_the_count(mem: engram.Memory, ref: ResourceRef) -> None:
    mem.remember_many(ref, [f"fact number {i}" for i in range(12)])
    keep = mem.remember(ResourceRef("bystander"), "fact number 1")
    with pytest.raises(Conflict, match="holds 12 facts"):
        mem.forget_all(ref, expected_count=11)
    assert mem.count(ref) == 12
    assert mem.forget_all(ref, expected_count=12) == 12
    assert mem.count(ref) == 0
    assert mem.facts(ref).facts == []
    assert mem.recall(ref, "fact number", mode="hybrid") == []
    assert mem.fact(keep.scope, keep.id) == keep
    assert mem.forget_all(ref, expected_count=0) == 0


def test_forget_all_beyond_a_thousand(mem: engram.Memory, ref: ResourceRef) -> None:
    mem.remember_many(ref, [f"item {i}" for i in range(2500)])
    assert mem.forget_all(ref, expected_count=2500) == 2500
    assert mem.count(ref) == 0
    assert mem.recall(ref, "item", top_k=100) == []


def test_facts_page_newest_first(mem: engram.Memory, ref: ResourceRef) -> None:
    base = datetime(2024, 1, 1, tzinfo=UTC)
    notes = [Note(f"event {i}", created_at=base + timedelta(hours=i % 7)) for i in range(23)]
    mem.remember_many(ref, notes)
    seen = []
    cursor = None
    while True:
        page = mem.facts(ref, limit=5, before=cursor)
        seen.extend(page.facts)
        if page.next_before is None:
            break
        cursor = page.next_before
    assert len(seen) == 23 and len({f.id for f in seen}) == 23
    stamps = [f.created_at for f in seen]
    assert stamps == sorted(stamps, reverse=True)
    assert mem.facts(ref).next_before is None
    with pytest.raises(InvalidInput, match="cursor"):
        mem.facts(ref, before="not-a-cursor")
    with pytest.raises(InvalidInput, match="limit"):
        mem.facts(ref, limit=1001)


def test_listing_is_served_by_the_index(
    mem: engram.Memory, ref: ResourceRef, target: Target
) -> None:
    mem.remember(ref, "one")
    shown = stores.plan(
        target,
        "SELECT id FROM facts WHERE scope = ? "
        "AND (created_at, seq) < (?, ?) ORDER BY created_at DESC, seq DESC LIMIT 100",
        ("r:user-42", 1 << 62, 1 << 62),
    )
    assert "facts_by_age" in shown
    assert "TEMP B-TREE" not in shown and "Sort" not in shown  # no sort of the scope


def test_facts_survive_reopening(target: Target, ref: ResourceRef) -> None:
    embedder = engram.HashingEmbedder(64)
    with engram.open(target, embedder=embedder) as memory:
        fact = memory.remember(ref, "durable words", tags=["t"])
    with engram.open(target, embedder=embedder) as memory:
        assert memory.fact(ref, fact.id) == fact
        assert memory.recall(ref, "durable", top_k=1)[0].fact.id == fact.id


def test_facts_vectors_are_read_by_id_and_a_fact_without_one_is_left_out(
    mem: engram.Memory, ref: ResourceRef, target: Target
) -> None:
    # A recall reads its text-only hits' vectors by their ids, each fact's vector by its
    # key; a fact with no vector row (none is written without an embedder) gives none.
    facts = mem.remember_many(ref, ["one fact", "another fact", "a third fact"])
    store = mem._store
    ids = [f.id for f in facts]
    read = store.run(lambda tx: store.facts.vectors(tx, ref, ids), write=False)
    assert set(read) == set(ids)
    for fact_id in ids:
        one = store.run(lambda tx, i=fact_id: store.facts.vector_of(tx, ref, i), write=False)
        assert one is not None and np.allclose(read[fact_id], one)
    stores.rows(
        target,
        "DELETE FROM fact_vectors WHERE fact = (SELECT seq FROM facts WHERE id = ?)",
        (ids[1],),
    )
    left = store.run(lambda tx: store.facts.vectors(tx, ref, ids), write=False)
    assert set(left) == {ids[0], ids[2]}
    assert np.allclose(left[ids[0]], read[ids[0]]) and np.allclose(left[ids[2]], read[ids[2]])


def test_lookups_by_id_use_the_id_index(
    mem: engram.Memory, ref: ResourceRef, target: Target
) -> None:
    from engram.storage.sql import queries
    from engram.storage.sql.dialect import SQLITE, postgres_dialect

    mem.remember_many(ref, [f"fact number {i}" for i in range(50)])
    postgres = stores.is_postgres(target)
    dialect = postgres_dialect(lambda v: v) if postgres else SQLITE
    # Every lookup of a scope's facts by their ids (vectors_of once walked the whole
    # scope on SQLite: 25 ms a hybrid recall at 100k facts), and the others by id.
    by_ids = [
        made(dialect, ref.key, ["a", "b"])
        for name, made in vars(queries).items()
        if callable(made)
        and getattr(made, "__code__", None) is not None
        and made.__code__.co_varnames[: made.__code__.co_argcount] == ("d", "scope", "ids")
        and not name.startswith("trash_")
    ]
    assert len(by_ids) >= 5
    statements = [  # as the fact rows build them
        *by_ids,
        queries.fact_by_id(dialect, ref.key, "a"),
        queries.trash_move(dialect, ref.key, ["a"], 0),
    ]
    expected = "facts_id_key" if postgres else "(id=?)"
    for sql, params in statements:
        shown = stores.plan(target, sql, params)
        assert expected in shown, shown  # not a walk of the whole scope
    # The trash's, likewise, on SQLite (PostgreSQL's plan for an empty trash follows its
    # statistics): a restore looked its fact up through the scope's whole trash, 1.15M
    # index entries a fact in the revert of a 1.15M-fact soft forget.
    if not postgres:
        for sql, params in [
            queries.trash_get(dialect, ref.key, ["a", "b"]),
            queries.trash_erase(dialect, ref.key, ["a"]),
        ]:
            shown = stores.plan(target, sql, params)
            assert "(id=?)" in shown, shown


def test_a_filter_s_facts_are_read_through_its_own_index(ref: ResourceRef, target: Target) -> None:
    """A recall under a filter reads the row numbers of the facts that pass through the
    filter's index, not by walking the scope: a type or verified facts no fact has
    read every row of a 1.15M-fact scope (130 ms), a strength floor above the default
    every row of a 100k-fact scope (28 to 46 ms a recall)."""
    from engram.storage.sql.passing import selected

    with engram.open(target, embedder=engram.HashingEmbedder(16)) as mem:
        typed = [Note(f"fact number {i}", type="plan" if i % 9 else None) for i in range(50)]
        mem.remember_many(ref, typed)
        # tags in another scope: with no tag stored at all, PostgreSQL's planner found the
        # tag's facts as cheap to seek through every tag of the store (the tags' primary
        # key, led by the fact) as through the scope's tags, and took either
        tagged = [Note(f"tagged elsewhere {i}", tags=("x", "y")) for i in range(300)]
        mem.remember_many(ResourceRef("tags-elsewhere"), tagged)
    when = datetime.now(UTC) + timedelta(days=1)  # no fact passes: each filter is narrow

    def read_through_indexes() -> None:
        for filters, index in (
            (Filters(type="none such"), "facts_by_type"),
            (Filters(verified_only=True), "facts_verified"),
            (Filters(created_after=when), "facts_by_age"),
            (Filters(created_before=when, tags=("x",)), "fact_tags_by_scope"),
            (Filters(min_strength=2.0), "facts_by_strength"),
        ):
            sql, params = selected(filters, ref.key)
            shown = stores.plan(target, f"{sql} LIMIT ?", (*params, 20_001))
            assert index in shown, (filters, shown)
            assert "facts_by_seq" not in shown and "SCAN f" not in shown, (filters, shown)

    read_through_indexes()
    # a store from before these indexes (SQLite's migration 32, PostgreSQL's 24) gets them
    stores.undo(target, stores.BEFORE_FILTER_INDEXES)
    if stores.is_postgres(target):
        stores.rows(target, "DELETE FROM engram_schema WHERE version >= 24")
    else:
        stores.rows(target, "PRAGMA user_version = 31")
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as again:
        assert again.count(ref) == 50
    read_through_indexes()


def test_a_filter_s_tags_are_read_from_the_tags_index_and_given_rows_by_their_own_key(
    ref: ResourceRef, target: Target
) -> None:
    """The scope's facts of the tags are read from the tags' index (no fact row read
    where tags are the only filter; several tags grouped there), and a half's best are
    each tested through the tags' key: gathered for the whole scope, a tag a fifth of a
    1M scope has cost 74 to 102 ms to count and 113 ms to test 200 candidates. Every form
    keeps exactly the facts that have every tag and pass the rest."""
    from engram.storage.filters import filter_sql
    from engram.storage.sql.passing import FEW, counted, selected

    sets = [("a",), ("a", "b"), ("b",), ("a", "b", "c"), (), ("c",)]
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as mem:
        notes = [
            Note(f"fact number {i}", tags=sets[i % 6], type="plan" if i % 4 else None)
            for i in range(60)
        ]
        mem.remember_many(ref, notes)
        mem.remember_many(ResourceRef("tags elsewhere"), [Note("x", tags=("a", "b"))])
    held = stores.rows(target, "SELECT seq, type FROM facts WHERE scope = ?", (ref.key,))
    facts: dict[int, tuple[str | None, set[str]]] = {int(seq): (k, set()) for seq, k in held}
    tagged = stores.rows(target, "SELECT fact, tag FROM fact_tags WHERE scope = ?", (ref.key,))
    for fact, tag in tagged:
        facts[int(fact)][1].add(tag)
    given = json.dumps(sorted(facts))
    for tags in (("a",), ("b",), ("a", "b"), ("b", "a"), ("a", "b", "c"), ("d",), ("a", "d")):
        for kind in (None, "plan"):
            filters = Filters(tags=tags, type=kind)
            expected = {
                seq for seq, (k, has) in facts.items() if set(tags) <= has and kind in (None, k)
            }
            sql, params = selected(filters, ref.key)
            assert {int(r[0]) for r in stores.rows(target, sql, tuple(params))} == expected
            sql, params = counted(filters, ref.key, FEW)
            assert stores.rows(target, sql, tuple(params)) == [(len(expected),)], filters
            where, params = filter_sql(filters, ref.key, per_row=True)
            probe = (
                "SELECT f.seq FROM facts f WHERE f.seq IN (SELECT value FROM json_each(?)) "
                f"AND f.scope = ?{where}"
            )
            if stores.is_postgres(target):
                probe = probe.replace("IN (SELECT value FROM json_each(?))", "= ANY(?::bigint[])")
                seqs: object = sorted(facts)
            else:
                seqs = given
            kept = stores.rows(target, probe, (seqs, ref.key, *params))
            assert {int(r[0]) for r in kept} == expected, filters
            if not kind and len(tags) == 1:  # the tags' index alone, no fact read
                read, reading = selected(filters, ref.key)
                shown = stores.plan(target, read, tuple(reading))
                assert "fact_tags_by_scope" in shown and " f " not in f"{shown} ", shown
            shown = stores.plan(target, probe, (seqs, ref.key, *params))
            assert "fact_tags_by_scope" not in shown, shown  # each row's own tags


def test_a_strength_floor_is_counted_through_the_facts_of_other_strengths(
    ref: ResourceRef, target: Target
) -> None:
    """Recall counts a filter's facts before it reads them; a floor at or under the
    default strength, which most facts pass, is counted as the scope's facts less those
    of other strengths under it: read row by row, it cost 4 ms of each recall at 100k
    facts. The count is right on both sides of the default and at it."""
    from engram.storage.sql.passing import FEW, counted, selected

    strengths = (0.2, 0.5, 0.8, 1.0, 1.0, 1.0, 1.2, 1.5, 2.0)
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as mem:
        notes = [Note(f"fact number {i}", strength=s) for i, s in enumerate(strengths * 7)]
        mem.remember_many(ref, notes)
        mem.remember_many(ResourceRef("weaker elsewhere"), [Note("other", strength=0.1)])
    for floor in (0.0, 0.2, 0.5, 0.9, 1.0, 1.1, 1.5, 2.0, 3.0):
        filters = Filters(min_strength=floor)
        statement, params = selected(filters, ref.key)
        passing = len(stores.rows(target, statement, tuple(params)))
        assert passing == 7 * sum(s >= floor for s in strengths), floor
        statement, params = counted(filters, ref.key, FEW)
        assert stores.rows(target, statement, tuple(params)) == [(passing,)], floor
    statement, params = counted(Filters(min_strength=0.5), ref.key, FEW)
    shown = stores.plan(target, statement, tuple(params))
    assert "facts_by_strength" in shown, shown
    assert "facts_by_seq" not in shown and "SCAN f" not in shown, shown


def test_a_time_or_strength_filter_on_a_candidate_s_traits_keeps_what_its_sql_keeps(
    ref: ResourceRef, target: Target
) -> None:
    """Where a half's best are asked first, a time or a strength floor is tested on the
    traits each candidate carries (no statement): it keeps exactly the facts the filter's
    SQL keeps, a fact at a time bound or at the floor included; a filter the traits do
    not carry (a type, tags, verified facts) is left to the SQL."""
    from engram.storage.filters import filter_sql, on_traits

    with engram.open(target, embedder=engram.HashingEmbedder(16)) as mem:
        notes = stores.filtered_notes([f"fact number {i}" for i in range(120)])
        facts = mem.remember_many(ref, notes)
        store = mem._store
        ids = [f.id for f in facts]
        traits = store.run(lambda tx: store.facts.traits(tx, ref, ids), write=False)
    hour = timedelta(hours=1)
    kinds = [
        *stores.six_filters(),
        Filters(min_strength=0.5),  # the floor itself: those at 0.5 pass
        Filters(created_after=stores.FILTERED_FROM + 30 * hour, min_strength=1.0),
        Filters(created_after=stores.FILTERED_FROM, created_before=stores.FILTERED_FROM + 9 * hour),
        Filters(verified_only=True),
    ]
    tested = 0
    for filters in kinds:
        test = on_traits(filters)
        if filters.type is not None or filters.tags or filters.verified_only:
            assert test is None, filters
            continue
        assert test is not None, filters
        where, params = filter_sql(filters, ref.key)
        kept = stores.rows(
            target, f"SELECT f.id FROM facts f WHERE f.scope = ?{where}", (ref.key, *params)
        )
        assert {i for i, t in traits.items() if test(t)} == {r[0] for r in kept}, filters
        tested += 1
    assert tested == 5


@pytest.mark.parametrize(
    "kwargs",
    [
        {"tags": ["ok", "bad\udc80"]},
        {"type": "a\x00b"},
        {"source_ref": SourceRef("\ud800", 1)},
        {"context": "\udfff"},
    ],
)
def test_text_no_store_can_hold_is_invalid_input_not_a_storage_failure(
    mem: engram.Memory, ref: ResourceRef, kwargs: dict[str, object]
) -> None:
    with pytest.raises(InvalidInput):
        mem.remember(ref, "fine words", **kwargs)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput):
        mem.remember(ref, "bad\ud800words")
    assert mem.count(ref) == 0
