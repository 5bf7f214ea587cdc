"""The usage detector: each rule, each check, and its score on the labelled fixture."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram.core.usage import Injected, Signal, detect
from engram.embedders.hashing import HashingEmbedder
from engram.embedders.local import LocalEmbedder

FIXTURE = Path(__file__).parent / "fixtures" / "feedback.jsonl"


def one(text: str, response: str, **kwargs: object) -> Signal:
    [signal] = detect([Injected("f_1", text)], response, **kwargs)  # type: ignore[arg-type]
    return signal


def test_an_id_or_a_position_cites_a_fact() -> None:
    facts = [Injected("f_a", "Alice lives in Lisbon."), Injected("f_b", "Bob is a chef.")]
    assert [s.reason for s in detect(facts, "As memory f_b says.")] == ["none", "cited"]
    assert [s.signal for s in detect(facts, "Yes [1, 2].")] == ["used", "used"]
    assert [s.signal for s in detect(facts, "See [3].")] == ["ignored", "ignored"]
    assert [s.signal for s in detect(facts, "Order f_bb shipped.")] == ["ignored", "ignored"]


def test_half_the_salient_weight_in_two_terms_is_use() -> None:
    used = one("Alice lives in Lisbon with two cats.", "Alice has a flat in Lisbon.")
    assert (used.signal, used.reason) == ("used", "terms")
    assert used.score == pytest.approx(4 / 7)
    # one heavy term is half the weight, but one term is not enough
    assert one("Lisbon is sunny.", "Lisbon, then.").signal == "ignored"


def test_numbers_match_whole_and_a_different_figure_is_not_use() -> None:
    assert one("The rent is 1200 euros.", "The rent is 1200 euros.").signal == "used"
    assert one("The rent is 1200 euros.", "The rent is 950 euros.").signal == "ignored"
    assert one("The total was 349.99 dollars.", "The total was 394.99 dollars.").signal == (
        "ignored"
    )
    # a figure the fact does not state, beside none the response states, is no conflict
    assert one("Alice moved to Lisbon in 2019.", "Alice lives in Lisbon.").signal == "used"


def test_a_response_saying_the_opposite_did_not_use_the_fact() -> None:
    assert one("Bob does not eat meat.", "Bob doesn't eat meat, so risotto.").signal == "used"
    assert one("Bob does not eat meat.", "Bob eats meat, so steak.").signal == "ignored"
    assert one("The build caches dependencies.", "The build never caches dependencies.").signal == (
        "ignored"
    )
    # a negation in another clause leaves the fact's clause affirmative
    assert one(
        "Ravi starts work at 8.", "Ravi won't drink coffee, so bring tea at the 8 start."
    ).signal == ("used")


def test_words_the_query_holds_alone_are_no_evidence() -> None:
    fact, response = "Alice lives in Lisbon.", "Alice lives in Lisbon."
    assert one(fact, response, query="Alice lives in Lisbon?").signal == "ignored"
    assert one(fact, response, query="Where does Alice live?").signal == "used"


def test_a_near_sentence_is_use_only_with_an_embedder() -> None:
    fact, response = "Kenji fears airplanes.", "Well. Kenji fears airplanes!"
    embedder = HashingEmbedder()
    assert one(fact, response).signal == "used"  # by terms, no embedder asked
    near = one("Kenji fears airplanes.", "Kenji, fears, airplanes", embedder=embedder)
    assert near.reason == "terms" and embedder.calls == 0
    # a fact of stopwords has no salient terms: only its sentence can show its use
    fact, response = "It is what it was.", "Other words. It is what it was."
    assert (one(fact, response, embedder=embedder).reason, embedder.calls) == ("sentence", 1)
    assert one(fact, response).signal == "ignored"
    assert one("It is not what it was.", response, embedder=embedder).signal == "ignored"


def score(embedder: LocalEmbedder | None) -> tuple[float, float]:
    tp = fp = fn = 0
    for line in FIXTURE.read_text().splitlines():
        case = json.loads(line)
        facts = [Injected(f["id"], f["text"]) for f in case["facts"]]
        for signal in detect(facts, case["response"], embedder=embedder):
            gold, said = signal.fact_id in case["used"], signal.signal == "used"
            tp, fp, fn = tp + (gold and said), fp + (said and not gold), fn + (gold and not said)
    return tp / (tp + fp), tp / (tp + fn)


def test_the_fixture_holds_80_labelled_cases_of_every_kind() -> None:
    cases = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    kinds = {c["category"] for c in cases}
    assert len(cases) >= 80
    assert kinds == {"verbatim", "paraphrase", "numbers", "negation", "unrelated", "citation"}


@pytest.mark.parametrize("with_model", [False, True])
def test_precision_and_recall_of_used_on_the_fixture(
    with_model: bool, local_embedder: LocalEmbedder
) -> None:
    precision, recall = score(local_embedder if with_model else None)
    assert precision >= 0.9
    assert recall >= 0.7
