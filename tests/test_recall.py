from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

import engram
from engram import CapabilityMissing, InvalidInput, Note, ResourceRef, SourceRef
from stores import Target


def test_hybrid_fuses_both_halves(mem: engram.Memory, ref: ResourceRef) -> None:
    mem.remember_many(ref, ["the deploy runs nightly", "lunch is at noon", "deploys need review"])
    hits = mem.recall(ref, "deploy", top_k=3)
    assert {h.fact.content for h in hits[:2]} == {"the deploy runs nightly", "deploys need review"}
    assert all(h.text_rank is not None and h.vector_rank is not None for h in hits[:2])
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)


def test_full_text_stems_words(mem: engram.Memory, ref: ResourceRef) -> None:
    fact = mem.remember(ref, "she was running marathons")
    assert [h.fact.id for h in mem.recall(ref, "runs a marathon", mode="text")] == [fact.id]


@pytest.mark.parametrize(
    "query",
    ['"unbalanced', "a AND OR NOT b", "NEAR(x y)", "col:term", "x*", "(((", "-", "🙂", "'; --"],
)
def test_queries_are_never_syntax(mem: engram.Memory, ref: ResourceRef, query: str) -> None:
    mem.remember(ref, "a b x y term")
    mem.recall(ref, query)  # no error, whatever the characters


def test_filters_bind_both_halves_before_fusion(mem: engram.Memory, ref: ResourceRef) -> None:
    # Sixty decoys match the query better than the one fact of the wanted type; a filter
    # applied after cutting the candidate lists would lose it.
    decoys = [Note(f"invoice invoice invoice {i}", type="decoy") for i in range(60)]
    target = Note(
        "the invoice was paid", type="billing", tags=("paid",), source_ref=SourceRef("sb", 3)
    )
    mem.remember_many(ref, [*decoys, target])
    hits = mem.recall(ref, "invoice invoice invoice", type="billing")
    assert [h.fact.content for h in hits] == ["the invoice was paid"]
    assert hits[0].text_rank == 1 and hits[0].vector_rank == 1
    assert [h.fact.content for h in mem.recall(ref, "invoice", tags=["paid"])] == [
        "the invoice was paid"
    ]
    assert [h.fact.content for h in mem.recall(ref, "invoice", verified_only=True)] == [
        "the invoice was paid"
    ]
    assert mem.recall(ref, "invoice", tags=["paid", "missing"]) == []


@pytest.mark.parametrize("mode", ["hybrid", "vector", "text"])
def test_a_hit_is_its_fact_as_stored_and_a_hybrid_reads_no_row_again(
    mem: engram.Memory, ref: ResourceRef, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The halves read their candidates' whole rows (their traits for the lists beside
    # them, and a hit's fact): a hybrid recall, which reads every candidate's, reads no
    # hit's row again, and every field of a hit is as stored, whichever read gave it.
    later = datetime.now(UTC) + timedelta(days=3)
    paid = Note(
        "the invoice was paid by card",
        type="billing",
        tags=("paid", "q3"),
        source_ref=SourceRef("sb", 3),
        metadata={"speaker": "Ana Reis", "turn": 2},
        context="said after the call about the invoice",
        strength=2.5,
        expires_at=later,
    )
    written = mem.remember_many(ref, [paid, Note("the invoice is overdue"), Note("lunch")])
    mem.correct(ref, written[1].id, "the invoice is overdue again")
    store = mem._store  # a test of the store's reads reaches inside on purpose
    read, rows = store.facts.by_ids, []

    def by_ids(tx: Any, scope: Any, ids: Any) -> Any:
        rows.extend(ids)
        return read(tx, scope, ids)

    monkeypatch.setattr(store.facts, "by_ids", by_ids)
    hits = mem.recall(ref, "invoice paid", mode=mode, top_k=5)  # type: ignore[arg-type]
    if mode == "hybrid":
        assert rows == []
    monkeypatch.undo()
    assert {h.fact.content for h in hits} >= {paid.content, "the invoice is overdue again"}
    assert [h.fact for h in hits] == [mem.fact(ref, h.fact.id) for h in hits]
    assert hits[0].fact.tags == ("paid", "q3") and hits[0].fact.expires_at == later


@pytest.mark.parametrize("share", [1 << 30, 1], ids=["every vector", "the filter's"])
def test_a_filter_s_vectors_are_ranked_exactly_read_whole_or_by_the_filter_s_rows(
    mem: engram.Memory, ref: ResourceRef, share: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL reads a narrow filter's vectors by key and a wide one's with the whole
    scope's: the same exact ranking either way, with a tag (given the scope as a value,
    another scope's tagged facts never pass) and a time window."""
    from engram.storage.postgres import vectors

    monkeypatch.setattr(vectors, "FILTER_BY_KEY_SHARE", share)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    words = "apple pear plum fig lime kiwi".split()
    notes = [
        Note(
            f"{words[i % 6]} {words[i * 7 % 6]} note {i}",
            tags=("even",) if i % 2 == 0 else (),
            created_at=start + timedelta(hours=i),
        )
        for i in range(120)
    ]
    mem.remember_many(ref, notes)
    mem.remember_many(ResourceRef("elsewhere"), [Note("apple pear", tags=("even",))])
    assert mem.embedder is not None
    question = mem.embedder.embed(["apple pear"], "query")[0]
    kept = [n for n in notes if "even" in n.tags and n.created_at and n.created_at > start]
    vectors_of = mem.embedder.embed([n.content for n in kept], "passage")
    scores = vectors_of @ question
    want = [kept[i].content for i in sorted(range(len(kept)), key=lambda i: (-scores[i], i))]
    hits = mem.recall(
        ref, "apple pear", top_k=20, mode="vector", tags=["even"], created_after=start
    )
    assert [h.fact.content for h in hits] == want[:20]
    assert mem.recall(ref, "apple pear", mode="vector", tags=["missing"]) == []


def test_time_window_filters(mem: engram.Memory, ref: ResourceRef) -> None:
    start = datetime(2023, 5, 1, tzinfo=UTC)
    mem.remember_many(
        ref, [Note(f"trip day {d}", created_at=start + timedelta(days=d)) for d in range(10)]
    )
    hits = mem.recall(
        ref,
        "trip",
        top_k=100,
        created_after=start + timedelta(days=2),
        created_before=start + timedelta(days=5),
    )
    assert sorted(h.fact.content for h in hits) == ["trip day 3", "trip day 4"]
    vector_only = mem.recall(
        ref, "trip", top_k=100, mode="vector", created_after=start + timedelta(days=7)
    )
    assert sorted(h.fact.content for h in vector_only) == ["trip day 8", "trip day 9"]
    for days in (3, 2):  # an empty window is a mistake, not "nothing matched"
        with pytest.raises(InvalidInput, match="earlier than created_before"):
            mem.recall(
                ref,
                "trip",
                created_after=start + timedelta(days=3),
                created_before=start + timedelta(days=days),
            )


def test_top_k_default_and_limits(mem: engram.Memory, ref: ResourceRef) -> None:
    mem.remember_many(ref, [f"note {i}" for i in range(120)])
    assert len(mem.recall(ref, "note")) == 5
    assert len(mem.recall(ref, "note", top_k=100)) == 100
    for bad in (0, 101, -3, 2.5, "5"):
        with pytest.raises(InvalidInput, match="top_k"):
            mem.recall(ref, "note", top_k=bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="query"):
        mem.recall(ref, "   ")
    with pytest.raises(InvalidInput, match="mode"):
        mem.recall(ref, "note", mode="magic")  # type: ignore[arg-type]


def test_recall_stays_in_its_scope(mem: engram.Memory) -> None:
    a, b = ResourceRef("corp", team_id="acme"), ResourceRef("acme:corp")
    mem.remember(a, "alpha secret plan")
    mem.remember(b, "beta secret plan")
    for mode in ("hybrid", "text", "vector"):
        assert [h.fact.content for h in mem.recall(a, "secret plan", mode=mode)] == [
            "alpha secret plan"
        ]
    assert mem.recall(ResourceRef("nobody"), "secret plan") == []


def test_recall_without_an_embedder_refuses(target: Target, ref: ResourceRef) -> None:
    with engram.open(target, embedder=engram.HashingEmbedder(64)) as memory:
        memory.remember(ref, "stored with vectors")
    with engram.open(target, embedder=None) as memory:
        with pytest.raises(CapabilityMissing, match="recall by meaning needs an embedder"):
            memory.recall(ref, "stored")
        with pytest.raises(CapabilityMissing):
            memory.remember(ref, "more")
        assert [h.fact.content for h in memory.recall(ref, "stored", mode="text")] == [
            "stored with vectors"
        ]
        assert memory.count(ref) == 1
        assert len(memory.facts(ref).facts) == 1


def test_recall_after_changes_sees_them(mem: engram.Memory, ref: ResourceRef) -> None:
    first = mem.remember(ref, "apples are red")
    assert mem.recall(ref, "apples", mode="vector", top_k=1)[0].fact.id == first.id
    second = mem.remember(ref, "pears are green")
    assert mem.recall(ref, "pears green", mode="vector", top_k=1)[0].fact.id == second.id
    mem.forget(ref, second.id)
    assert [h.fact.id for h in mem.recall(ref, "pears green", mode="vector")] == [first.id]
    mem.correct(ref, first.id, "bananas are yellow")
    assert mem.recall(ref, "bananas yellow", mode="vector", top_k=1)[0].fact.id == first.id


def test_another_process_writes_are_seen(target: Target, ref: ResourceRef) -> None:
    embedder = engram.HashingEmbedder(64)
    reader = engram.open(target, embedder=embedder)
    writer = engram.open(target, embedder=embedder)  # its own connections and index
    try:
        reader.remember(ref, "first words")
        assert len(reader.recall(ref, "words", mode="vector")) == 1
        gone = writer.remember(ref, "second words")
        assert len(reader.recall(ref, "words", mode="vector")) == 2
        writer.forget(ref, gone.id)
        assert [h.fact.content for h in reader.recall(ref, "words", mode="vector")] == [
            "first words"
        ]
    finally:
        reader.close()
        writer.close()


MEANING = [
    ("what pet does the user have?", "I adopted a golden retriever puppy last week"),
    ("how should we contact the customer?", "the customer prefers to be reached by email"),
    ("which city does she live in?", "she moved to Lisbon in March"),
    ("what does he do for a living?", "he works as a nurse at the county hospital"),
]


def test_recall_by_meaning_with_the_local_model(local_mem: engram.Memory, ref: ResourceRef) -> None:
    local_mem.remember_many(
        ref,
        [fact for _, fact in MEANING]
        + [
            "the meeting was moved to Thursday",
            "we ordered pizza for the team",
            "the build failed on the integration tests",
            "the invoice is due next month",
        ],
    )
    for question, answer in MEANING:
        vector = local_mem.recall(ref, question, top_k=1, mode="vector")
        assert vector[0].fact.content == answer, question
        hybrid = local_mem.recall(ref, question, top_k=2)
        assert answer in [h.fact.content for h in hybrid], question


def test_a_question_sharing_no_word_with_its_answer_ranks_it_first(
    local_mem: engram.Memory, ref: ResourceRef
) -> None:
    """Reference document 000's example: no word of "how to contact them" is in any fact,
    so full text finds nothing, and the two facts' whole vectors are a hair apart (the
    refund's 0.700 against 0.697). Word by word, "contact" lies near "email"."""
    local_mem.remember(ref, "the customer prefers email")
    local_mem.remember(ref, "user confirmed the refund", source_ref=engram.SourceRef("s1", 3))
    for text in [
        "the deploy runs on Fridays",
        "the staging database is Postgres 16",
        "ship v2 before the conference",
    ]:
        local_mem.remember(ref, text)
    assert local_mem.recall(ref, "how to contact them", mode="text") == []
    hits = local_mem.recall(ref, "how to contact them", top_k=3)
    assert hits[0].fact.content == "the customer prefers email"


def test_context_helps_find_a_fact_without_being_part_of_it(
    mem: engram.Memory, ref: ResourceRef
) -> None:
    turn = mem.remember(ref, "Yes, twice last year!", context="Ana: Have you ever been to Lisbon?")
    mem.remember(ref, "the weather was fine")
    assert turn.content == "Yes, twice last year!"
    assert turn.context == "Ana: Have you ever been to Lisbon?"
    assert [h.fact.id for h in mem.recall(ref, "Lisbon trips", mode="text")] == [turn.id]
    vector = mem.recall(ref, "Lisbon", mode="vector", top_k=2)
    assert {h.fact.content for h in vector} == {"Yes, twice last year!", "the weather was fine"}
    fixed = mem.correct(ref, turn.id, "Yes, three times last year!")
    assert fixed.context == turn.context
    assert [h.fact.id for h in mem.recall(ref, "Lisbon", mode="text")] == [turn.id]
    child = mem.fork(ref, "copy").ref
    copies = mem.recall(child, "Lisbon", mode="text")
    assert [h.fact.context for h in copies] == [turn.context]
    with pytest.raises(InvalidInput, match="8001 characters"):
        mem.remember(ref, "x", context="c" * 8001)


@pytest.mark.parametrize("query", ["bad\ud800query", "nul\x00query", "q" * 8001])
def test_unstorable_queries_and_ids_are_invalid_input(
    mem: engram.Memory, ref: ResourceRef, query: str
) -> None:
    with pytest.raises(InvalidInput, match="query"):
        mem.recall(ref, query, mode="text")
    if len(query) < 100:  # the same characters make a bad fact id
        with pytest.raises(InvalidInput, match="fact id"):
            mem.forget(ref, query)
