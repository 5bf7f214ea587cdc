from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engram.core.ranking import Candidate, fuse, normalise


def test_normalise_places_scores_between_three_deviations() -> None:
    # mean 2, population sd 1: -1 maps to 0 and 5 to 1
    assert normalise([1.0, 3.0]) == pytest.approx([2 / 6, 4 / 6])
    # an outlier is clipped at 1
    assert normalise([0.0] * 20 + [100.0])[-1] == 1.0
    assert normalise([]) == []
    assert normalise([4.0, 4.0]) == [0.5, 0.5]  # equal scores say nothing
    assert normalise([7.0]) == [0.5]


@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=30))
def test_normalise_keeps_order_and_range(scores: list[float]) -> None:
    placed = normalise(scores)
    assert all(0.0 <= p <= 1.0 for p in placed)
    for a, b in zip(scores, placed, strict=True):
        for c, d in zip(scores, placed, strict=True):
            if a < c:
                assert b <= d


def test_a_fact_in_both_lists_rises() -> None:
    text = [Candidate("a", 9.0), Candidate("b", 5.0), Candidate("c", 4.0)]
    vector = [Candidate("d", 0.9), Candidate("b", 0.8), Candidate("e", 0.1)]
    fused = fuse(text, vector)
    assert fused[0].id == "b"
    assert (fused[0].text_rank, fused[0].vector_rank) == (2, 2)
    assert {f.id for f in fused} == {"a", "b", "c", "d", "e"}


def test_confidence_counts_not_just_rank() -> None:
    # One full-text hit far above the rest; vector neighbours all alike. Rank fusion would
    # put the vector's first neighbour level with the text hit; score fusion does not.
    text = [Candidate("sure", 30.0)] + [Candidate(f"t{i}", 1.0 + i / 100) for i in range(9)]
    vector = [Candidate(f"v{i}", 0.50 - i / 1000) for i in range(10)]
    fused = fuse(text, vector)
    assert fused[0].id == "sure"
    assert fused[0].score > fused[1].score + 0.2


def test_one_list_alone_keeps_its_order() -> None:
    vector = [Candidate(f"v{i}", 1.0 - i / 10) for i in range(8)]
    assert [f.id for f in fuse([], vector)] == [c.id for c in vector]
    assert [f.id for f in fuse(vector, [])] == [c.id for c in vector]


def test_ties_break_deterministically() -> None:
    flat = [Candidate("x", 1.0), Candidate("y", 1.0)]
    assert [f.id for f in fuse(flat, [])] == ["x", "y"]
    assert [f.id for f in fuse([], list(reversed(flat)))] == ["y", "x"]


def test_feedback_words_come_from_a_majority_of_the_best_hits() -> None:
    from engram.core import feedback

    top = [
        "Ana: the trams of Lisbon are yellow",
        "Bo: yellow trams, old and slow",
        "Bo: I took the ferry",
    ]
    assert feedback.words(["trams"], top) == ["yellow"]  # in two of three; trams is asked, bo short
    assert feedback.words(["trams"], top[:1]) == []  # one hit agrees with nothing
    assert feedback.words([], []) == []


def test_feedback_scores_only_the_candidates_and_only_those_holding_a_word() -> None:
    from engram.core import feedback

    texts = {"a": "yellow trams in Lisbon", "b": "a yellow door", "c": "the ferry"}
    ranked = feedback.scores(["trams", "yellow"], texts)
    assert [c.id for c in ranked] == ["a", "b"]  # c holds neither word
    assert ranked[0].score > ranked[1].score > 0
    assert feedback.scores(["x"], {}) == [] and feedback.scores([], texts) == []


_WORDS = ["party", "parties", "partied", "art", "start", "trams", "tram", "yellow", "Party's"]


@given(
    st.lists(st.lists(st.sampled_from(_WORDS), max_size=8).map(" ".join), max_size=6),
    st.lists(st.sampled_from(_WORDS), min_size=1, max_size=3),
)
def test_a_text_that_holds_no_word_s_start_is_counted_as_one_stemmed_word_by_word(
    texts: list[str], terms: list[str]
) -> None:
    """A text is stemmed word by word only where it holds what a word stemming to a
    wanted stem begins with: counted either way, it counts the same ("parties" is
    "party"'s, "start" holds "art" but is not its)."""
    from engram.core import feedback
    from engram.core.relevance import stem

    wanted = {stem(t) for t in terms}
    starts = tuple(feedback._start(w) for w in wanted)
    for text in texts:
        assert feedback._counts(text, wanted, starts) == feedback._counts(text, wanted, ("",))
    assert feedback._counts("the parties", {"party"}, (feedback._start("party"),)) == (
        2,
        {"party": 1},
    )


def test_a_feedback_list_reorders_the_candidates_and_never_adds_one() -> None:
    text = [Candidate("a", 3.0), Candidate("b", 2.0)]
    vector = [Candidate("c", 0.9), Candidate("b", 0.5)]
    plain = fuse(text, vector)
    assert fuse(text, vector, ()) == plain  # no feedback, the fusion as it was
    with_feedback = fuse(text, vector, [[Candidate("b", 5.0), Candidate("a", 1.0)]])
    assert {f.id for f in with_feedback} == {f.id for f in plain}
    assert with_feedback[0].id == "b"
