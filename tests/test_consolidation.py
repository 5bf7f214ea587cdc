"""The consolidation cycle (``mem.consolidate``) on both backends: what each step changes
and what it must never change, dry runs that write nothing, a second run that changes
nothing, and each step's entry reverted like any write."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engram
from engram import CapabilityMissing, Conflict, InvalidInput, Note, ResourceRef
from engram.core import consolidation, specifics
from engram.storage.sql.tx import sql
from stores import ManualClock, Target, rows_through

REF = ResourceRef("consolidated")


@pytest.fixture
def timed(target: Target, clock: ManualClock, hashing: engram.HashingEmbedder) -> Iterator[Any]:
    with engram.open(target, embedder=hashing, clock=clock) as memory:
        yield memory


def _live(mem: engram.Memory) -> dict[str, tuple[str, float]]:
    return {f.id: (f.content, f.strength) for f in mem.facts(REF, limit=1000).facts}


def _entries(mem: engram.Memory) -> int:
    return len(mem.ledger(REF, limit=1000).entries)


def _execute(mem: engram.Memory, text: str, params: tuple[Any, ...] = ()) -> None:
    mem._store.run(lambda tx: sql(tx).execute(text, params))


# -- merge ------------------------------------------------------------------------------
def test_merge_folds_near_duplicates_into_the_oldest_and_never_across_specifics(
    local_mem: engram.Memory,
) -> None:
    mem = local_mem
    kept = mem.remember(REF, "We met Caroline at the park on the 3rd of May.")
    twin = mem.remember(REF, "we met Caroline at the park on the 3rd of May!", strength=1.5)
    other_day = mem.remember(REF, "We met Caroline at the park on the 4th of May.")
    liked = mem.remember(REF, "Melanie likes painting sunsets with her kids")
    unliked = mem.remember(REF, "Melanie doesn't like painting sunsets with her kids")
    tagged = mem.remember(REF, "We met Caroline at the park on the 3rd of May", tags=["trip"])
    typed = mem.remember(REF, "We met Caroline at the park on the 3rd of May :)", type="event")
    friday = mem.remember(REF, "The band plays at the pub on Friday night")
    saturday = mem.remember(REF, "The band plays at the pub on Saturday night")

    planned = mem.consolidate(REF, steps=["merge"], dry_run=True)
    assert planned.step("merge").merged == {kept.id: (twin.id,)}  # type: ignore[union-attr]
    assert mem.count(REF) == 9 and planned.steps[0].entry is None

    done = mem.consolidate(REF, steps=["merge"])
    merge = done.step("merge")
    assert merge is not None and merge.merged == {kept.id: (twin.id,)} and merge.entry
    live = _live(mem)
    assert twin.id not in live and live[kept.id] == (kept.content, 1.5)  # the higher strength
    for stays in (other_day, liked, unliked, tagged, typed, friday, saturday):
        assert stays.id in live
    assert [t.fact.id for t in mem.trash(REF).facts] == [twin.id]
    assert mem.consolidate(REF, steps=["merge"]).changed == 0

    mem.revert(REF, merge.entry)
    assert twin.id in _live(mem) and _live(mem)[kept.id] == (kept.content, 1.0)


def test_merge_compares_without_the_scopes_lock_and_merges_the_groups_still_as_compared(
    target: Target, hashing: engram.HashingEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Comparing a large scope's facts takes minutes: writes to the scope go on meanwhile
    (here another store's, made while the facts are compared), and a group whose fact one
    of them changed is left for the next run."""
    with (
        engram.open(target, embedder=hashing) as mem,
        engram.open(target, embedder=hashing) as other,
    ):
        kept = mem.remember(REF, "We met Caroline at the park on the 3rd of May.")
        twin = mem.remember(REF, "we met Caroline at the park on the 3rd of May!")
        band = mem.remember(REF, "The band plays at the pub on Friday night")
        band_twin = mem.remember(REF, "the band plays at the pub on Friday night!")
        compare = consolidation._pairs

        def comparing(facts: Any, *rest: Any) -> Any:
            other.forget(REF, band_twin.id)
            other.remember(REF, "Written while the facts were compared")
            return compare(facts, *rest)

        monkeypatch.setattr(consolidation, "_pairs", comparing)
        done = mem.consolidate(REF, steps=["merge"]).step("merge")
        assert done is not None and done.merged == {kept.id: (twin.id,)}
        live = _live(mem)
        assert band.id in live and band_twin.id not in live and twin.id not in live
        assert "Written while the facts were compared" in {c for c, _ in live.values()}


def test_merge_reads_the_scope_a_page_at_a_time_and_misses_no_pair(
    mem: engram.Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(consolidation, "READ_PAGE", 2)
    kept = mem.remember(REF, "Ann moved to Lisbon in 2021.")
    mem.remember_many(REF, [f"Filler number {i} about nothing alike" for i in range(5)])
    twin = mem.remember(REF, "ann moved to Lisbon in 2021!")
    done = mem.consolidate(REF, steps=["merge"], dry_run=True).step("merge")
    assert done is not None and done.merged == {kept.id: (twin.id,)}


def _templated(count: int) -> list[str]:
    """Short facts of one template: most share most of their words with many others
    (so comparing words costs the square of their number), few are near in meaning."""
    names, things = ("Ann", "Bo", "Cy", "Di", "Ed"), ("budget", "invoice", "laptop", "lease")
    states = ("too expensive", "finally done", "delayed again", "worth it", "over budget")
    found = [
        f"{n} said the {c} {t} was {s}."
        for n in names
        for c in ("blue", "old", "new")
        for t in things
        for s in states
    ]
    return found[:count]


def test_merge_past_its_budget_compares_each_fact_with_its_nearest_and_merges_the_same(
    mem: engram.Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past what comparing words may cost, merge compares each fact with its nearest by
    vector, which the store finds (a graph built for the asking); its groups are those
    of the comparison of every two."""
    texts = _templated(300)
    mem.remember_many(REF, texts)
    twins = [t.lower().rstrip(".") + "!" for t in texts[::40]]  # the same words, so near
    written = mem.remember_many(REF, twins)
    asked: list[int] = []
    search = mem._store.facts.near_pairs

    def near_pairs(tx: Any, scope: Any, ids: Any, count: int, at_least: float) -> Any:
        asked.append(len(ids))
        return search(tx, scope, ids, count, at_least)

    monkeypatch.setattr(mem._store.facts, "near_pairs", near_pairs)
    monkeypatch.setattr(consolidation, "EXACT_CHECKS", 1)
    exact = mem.consolidate(REF, steps=["merge"], dry_run=True).step("merge")
    assert asked == []  # past its comparisons a fact, but under the floor: compared exactly
    assert exact is not None and exact.merged is not None
    assert sorted(i for others in exact.merged.values() for i in others) == sorted(
        f.id for f in written
    )

    monkeypatch.setattr(consolidation, "EXACT_FLOOR", 1000)
    near = mem.consolidate(REF, steps=["merge"], dry_run=True).step("merge")
    assert asked == [len(texts) + len(twins)]
    assert near is not None and near.merged == exact.merged
    done = mem.consolidate(REF, steps=["merge"]).step("merge")
    assert done is not None and done.merged == exact.merged and done.entry is not None
    assert mem.count(REF) == len(texts)  # the twins folded away


def test_merge_compares_no_pair_when_that_would_compare_more_than_its_budget() -> None:
    read, clock = consolidation._Reading(), ManualClock()
    facts = [
        read(engram.Fact(f"f{i}", REF, t, engram_time(clock), engram_time(clock)))
        for i, t in enumerate(_templated(60))
    ]
    every_two = len(facts) * (len(facts) - 1) // 2
    found = consolidation._pairs(facts, every_two * 3)  # a pair met by up to 3 of its words
    assert found and found == consolidation._pairs(facts)
    assert consolidation._pairs(facts, 100) is None


def test_merge_never_folds_away_a_fact_with_a_source_or_a_document_chunk(
    local_mem: engram.Memory,
) -> None:
    mem = local_mem
    ann = {"speaker": "Ann"}
    mem.remember(REF, "Ann: I adopted a puppy named Rex last week!", metadata=ann)
    mem.remember_conversation(REF, [engram.Turn("Ann", "I adopted a puppy named Rex last week.")])
    doc = "document"
    mem.remember(REF, "# Pets\n\nThe shelter gave us the dog in June!", type=doc)  # older
    mem.ingest_text(REF, "# Pets\n\nThe shelter gave us the dog in June.", name="pets.md")
    newer = mem.remember(REF, "# Pets\n\nthe shelter gave us the dog in June.", type=doc)
    done = mem.consolidate(REF, steps=["merge"]).step("merge")
    assert done is not None and done.fact_ids == (newer.id,)  # only the newest folds
    kept = {f.content for f in mem.facts(REF).facts}
    assert "Ann: I adopted a puppy named Rex last week." in kept  # newer, but said
    assert "# Pets\n\nThe shelter gave us the dog in June." in kept  # newer, but a chunk


def test_specifics_tell_figures_dates_and_polarity_apart() -> None:
    assert specifics.agree("rent is 1,200 a month", "rent is 1200 a month")
    assert specifics.agree("on the 3rd", "on the third")
    assert not specifics.agree("on the 3rd", "on the 4th")
    assert not specifics.agree("see you Monday", "see you Tuesday")
    assert not specifics.agree("I like it", "I don't like it")
    assert specifics.agree("I never didn't like it", "I like it")  # two negations affirm
    assert not specifics.agree("we met last week", "we met next week")


def test_candidate_pairs_miss_no_pair_prefix_filtering_allows() -> None:
    texts = [f"alpha beta gamma delta {w}" for w in ("one", "two", "epsilon", "zeta", "eta")]
    texts += ["alpha beta gamma", "completely different words here", "alpha"]
    clock = ManualClock()
    facts = [
        engram.Fact(f"f{i}", REF, t, engram_time(clock), engram_time(clock))
        for i, t in enumerate(texts)
    ]
    words = [consolidation._words(t) for t in texts]
    expected = set()
    for i in range(len(texts)):
        for j in range(i + 1, len(texts)):
            a, b = words[i], words[j]
            if len(a & b) >= 0.6 * len(a | b) and specifics.agree(texts[i], texts[j]):
                expected.add((f"f{i}", f"f{j}"))
    assert set(consolidation.candidate_pairs(facts)) == expected
    assert ("f2", "f3") in expected and ("f0", "f1") not in expected  # one vs two differ


@settings(max_examples=150, derandomize=True, deadline=None)
@given(st.lists(st.lists(st.sampled_from("a b c d e f g h 1 2 not".split()), max_size=9)))
def test_candidate_pairs_are_exactly_the_pairs_over_the_threshold(texts: list[list[str]]) -> None:
    clock = ManualClock()
    facts = [
        engram.Fact(f"f{i}", REF, " ".join(t), engram_time(clock), engram_time(clock))
        for i, t in enumerate(texts)
    ]
    words = [consolidation._words(f.content) for f in facts]
    expected = {
        (f"f{i}", f"f{j}")
        for i in range(len(facts))
        for j in range(i + 1, len(facts))
        if words[i]
        and words[j]
        and len(words[i] & words[j]) >= 0.6 * len(words[i] | words[j])
        and specifics.agree(facts[i].content, facts[j].content)
    }
    assert set(consolidation.candidate_pairs(facts)) == expected


def engram_time(clock: ManualClock) -> Any:
    from engram.core.clock import from_us

    return from_us(clock())


# -- strengthen -------------------------------------------------------------------------
def test_strengthen_applies_each_signal_once_and_reverts(mem: engram.Memory) -> None:
    used = mem.remember(REF, "the rent is 950 a month")
    ignored = mem.remember(REF, "the cat is called Miso")
    capped = mem.remember(REF, "the car is blue", strength=1.95)
    strong = mem.remember(REF, "the office is in Lyon", strength=3.0)
    for _ in range(2):
        mem.usage.record(REF, used.id, "used")
    mem.usage.record(REF, ignored.id, "ignored")
    mem.usage.record(REF, capped.id, "used")
    mem.usage.record(REF, capped.id, "used")
    mem.usage.record(REF, strong.id, "used")

    first = mem.consolidate(REF, steps=["strengthen"]).step("strengthen")
    assert first is not None and first.counts == {"signals": 6, "strengthened": 2, "weakened": 0}
    live = _live(mem)
    assert live[used.id][1] == pytest.approx(1.2)
    assert live[ignored.id][1] == 1.0  # one ignore alone says little
    assert live[capped.id][1] == 2.0 and live[strong.id][1] == 3.0  # never past 2.0
    assert mem.consolidate(REF).changed == 0  # applied once

    mem.usage.record(REF, ignored.id, "ignored")  # the second in a row weakens
    mem.usage.record(REF, ignored.id, "ignored")
    second = mem.consolidate(REF, steps=["strengthen"]).step("strengthen")
    assert second is not None and second.counts["weakened"] == 1
    assert _live(mem)[ignored.id][1] == pytest.approx(0.95 * 0.95)

    assert second.entry is not None
    mem.revert(REF, second.entry)  # strengths back, the signals pending again
    assert _live(mem)[ignored.id][1] == 1.0
    again = mem.consolidate(REF, steps=["strengthen"]).step("strengthen")
    assert again is not None and again.counts["signals"] == 2
    assert _live(mem)[ignored.id][1] == pytest.approx(0.95 * 0.95)


def test_strength_rules_floor_and_runs() -> None:
    from engram.core.clock import from_us
    from engram.core.usage import Feedback

    def rows(*signals: str) -> list[Feedback]:
        return [
            Feedback(f"u{i}", "f", s, None, None, None, from_us(i))  # type: ignore[arg-type]
            for i, s in enumerate(signals)
        ]

    after = consolidation.strength_after
    assert after(0.051, [], rows("ignored", "ignored", "ignored")) == 0.05
    assert after(0.0, [], rows("ignored", "ignored")) == 0.0  # never raised by an ignore
    assert after(1.0, rows("ignored"), rows("ignored")) == 0.95  # the run spans two runs
    assert after(1.0, rows("ignored", "used"), rows("ignored")) == 1.0  # a use resets it
    assert after(0.0, [], rows("used")) == pytest.approx(0.1)


# -- prune, compact, reindex ------------------------------------------------------------
def test_prune_takes_weak_old_unverified_facts_only(
    timed: engram.Memory, clock: ManualClock
) -> None:
    mem = timed
    weak = mem.remember(REF, "an old weak guess", strength=0.1)
    solid = mem.remember(REF, "an old solid fact", strength=0.5)
    mem.remember_conversation(REF, [engram.Turn("Bo", "an old weak thing I said")])
    said = next(f for f in mem.facts(REF).facts if f.verified)
    _execute(mem, "UPDATE facts SET strength = 0.05 WHERE id = ?", (said.id,))
    clock.advance(timedelta(days=31))
    young = mem.remember(REF, "a young weak guess", strength=0.1)

    done = mem.consolidate(REF, steps=["prune"]).step("prune")
    assert done is not None and done.fact_ids == (weak.id,)
    assert set(_live(mem)) == {solid.id, said.id, young.id}
    assert mem.consolidate(REF, steps=["prune"]).changed == 0
    assert done.entry is not None
    mem.revert(REF, done.entry)
    assert weak.id in _live(mem)


def test_compact_applies_the_caps(target: Target, hashing: engram.HashingEmbedder) -> None:
    with engram.open(target, embedder=hashing, max_facts=2) as mem:
        mem.remember_many(REF, ["first", "second"])
        assert mem.consolidate(REF, steps=["compact"]).changed == 0
    with engram.open(target, embedder=hashing, max_facts=1) as mem:
        planned = mem.consolidate(REF, steps=["compact"], dry_run=True).step("compact")
        assert planned is not None and planned.counts == {"expired": 0, "over_capacity": 1}
        assert mem.count(REF) == 2
        done = mem.consolidate(REF, steps=["compact"]).step("compact")
        assert done is not None and done.fact_ids == planned.fact_ids
        assert [f.content for f in mem.facts(REF).facts] == ["second"]


def test_reindex_gives_a_fact_without_a_vector_its_vector(mem: engram.Memory) -> None:
    kept = mem.remember(REF, "pelicans migrate in winter")
    seq = "(SELECT seq FROM facts WHERE id = ?)"
    _execute(mem, f"DELETE FROM fact_vectors WHERE fact = {seq}", (kept.id,))
    assert [h.fact.id for h in mem.recall(REF, "pelicans", mode="vector")] == []
    planned = mem.consolidate(REF, steps=["reindex"], dry_run=True).step("reindex")
    assert planned is not None and planned.fact_ids == (kept.id,)
    done = mem.consolidate(REF, steps=["reindex"]).step("reindex")
    assert done is not None and done.counts["vectors_added"] == 1
    assert [h.fact.id for h in mem.recall(REF, "pelicans", mode="vector")] == [kept.id]
    assert mem.consolidate(REF, steps=["reindex"]).changed == 0
    assert done.entry is not None
    with pytest.raises(Conflict, match="index"):
        mem.revert(REF, done.entry)  # a repair follows from the facts


def test_reindex_rebuilds_a_damaged_full_text_index(tmp_path: Any, hashing: Any) -> None:
    with engram.open(tmp_path / "e.db", embedder=hashing) as mem:
        kept = mem.remember(REF, "otters hold hands while sleeping")
        seq = rows_through(mem, "SELECT seq FROM facts WHERE id = ?", (kept.id,))[0][0]
        _execute(  # the index loses the fact's row; the fact stays
            mem,
            "INSERT INTO facts_fts (facts_fts, rowid, content, scope_token, context) "
            "SELECT 'delete', seq, content, scope_token, context FROM facts WHERE seq = ?",
            (seq,),
        )
        done = mem.consolidate(REF, steps=["reindex"]).step("reindex")
        assert done is not None and done.counts["fulltext_rebuilt"] == 1
        assert mem.consolidate(REF, steps=["reindex"]).changed == 0
        hits = rows_through(mem, "SELECT rowid FROM facts_fts WHERE facts_fts MATCH 'otters'")
        assert hits == [(seq,)]


# -- the whole cycle --------------------------------------------------------------------
def test_a_dry_run_writes_nothing_and_a_second_run_changes_nothing(
    timed: engram.Memory, clock: ManualClock
) -> None:
    mem = timed
    mem.remember_many(
        REF,
        [
            Note("a weak guess", strength=0.1),
            "Ann moved to Lisbon in 2021.",
            "ann moved to Lisbon in 2021!",
        ],
    )
    tea = mem.remember(REF, "Bo likes green tea")
    mem.usage.record(REF, tea.id, "used")
    clock.advance(timedelta(days=40))
    before, entries = _live(mem), _entries(mem)
    planned = mem.consolidate(REF, dry_run=True)
    assert planned.dry_run and planned.changed == 4  # a signal and its use, a prune, a merge
    assert _live(mem) == before and _entries(mem) == entries
    done = mem.consolidate(REF)
    assert [s.changed for s in done.steps] == [s.changed for s in planned.steps]
    after = _entries(mem)
    assert after == entries + 3
    assert mem.consolidate(REF).changed == 0 and _entries(mem) == after
    for step in reversed(done.steps):
        if step.entry is not None:
            mem.revert(REF, step.entry)
    assert _live(mem) == before


def test_a_second_run_over_a_scope_with_its_index_of_vectors_changes_nothing(
    target: Target, hashing: engram.HashingEmbedder, clock: ManualClock
) -> None:
    """reindex brings the scope's index of vectors up to date after the run's other
    steps: built before prune and merge had trashed facts, it was stale again at once,
    and every second run built it again."""
    with engram.open(target, embedder=hashing, clock=clock, vector_index_above=20) as mem:
        builder = getattr(mem._store, "builder", None)
        if builder is not None:  # PostgreSQL's writes ask for builds on a thread of their
            builder.want = lambda scope: None  # own, which raced reindex on a busy machine
        mem.remember_many(REF, [f"fact {i} about the garden's {i} roses" for i in range(30)])
        mem.remember_many(
            REF,
            [
                Note("a weak guess", strength=0.1),
                "Ann moved to Lisbon in 2021.",
                "ann moved to Lisbon in 2021!",
            ],
        )
        clock.advance(timedelta(days=40))
        done = mem.consolidate(REF)
        reindex, prune, merge = (done.step(s) for s in ("reindex", "prune", "merge"))
        assert reindex is not None and reindex.counts["vector_index_built"] == 1
        assert prune is not None and prune.changed == 1 and merge is not None and merge.changed
        again = mem.consolidate(REF)
        assert again.changed == 0, [(s.step, s.counts) for s in again.steps if s.changed]


def test_bad_steps_and_a_memory_that_does_not_self_improve(
    target: Target, hashing: engram.HashingEmbedder
) -> None:
    with engram.open(target, embedder=hashing) as mem:
        for bad in (["shrink"], [], "merge", None):
            with pytest.raises(InvalidInput, match="step"):
                mem.consolidate(REF, steps=bad)  # type: ignore[arg-type]
        with pytest.raises(InvalidInput, match="dry_run"):
            mem.consolidate(REF, dry_run="yes")  # type: ignore[arg-type]
        assert mem.self_improving
    with engram.open(target, embedder=hashing, self_improve=False) as mem:
        assert not mem.self_improving
        with pytest.raises(CapabilityMissing, match="consolidation is off"):
            mem.consolidate(REF)
    with pytest.raises(InvalidInput, match="self_improve"):
        engram.open(target, embedder=hashing, self_improve="yes")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="prune_below"):
        engram.Policy(prune_below=11)
