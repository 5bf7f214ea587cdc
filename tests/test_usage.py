"""The usage detector: each rule, each check, and its score on the labelled fixture."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import engram
from engram import Conflict, InvalidInput, NotFound, ResourceRef
from engram.core.usage import Injected, Signal, detect
from engram.embedders.hashing import HashingEmbedder
from engram.embedders.local import LocalEmbedder
from stores import Target

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


@pytest.mark.parametrize(
    "response",
    [
        " ".join(f"word{i} [1,2,3]" for i in range(9000)),  # one sentence, many clauses
        " ".join(f"tok{i} {i}" for i in range(12000)),  # one sentence of numbers
    ],
)
def test_a_long_response_is_read_once_not_once_a_fact(
    response: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """100 facts against a response of 100,000 characters: the response's words are read
    a bounded number of times (its whole, its clauses, its nearest sentence), not once a
    fact, which cost a request 5 to 14 s."""
    from engram.core import usage

    response = response[: usage.MAX_RESPONSE_CHARS]
    read: list[int] = []
    counted = usage._words

    def words(text: str) -> set[str]:
        read.append(len(text))
        return counted(text)

    monkeypatch.setattr(usage, "_words", words)
    facts = [Injected(f"f_{n}", "plums and pears grow in the garden") for n in range(100)]
    signals = detect(facts, response, embedder=HashingEmbedder(16))
    assert len(signals) == 100 and [s.fact_id for s in signals] == [f.id for f in facts]
    assert sum(read) <= 4 * len(response) + 100 * 64, sum(read)


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


# -- the library, on both backends ---------------------------------------------------------

REF = ResourceRef("reader")
OTHER = ResourceRef("someone-else")


@pytest.fixture
def mem(target: Target) -> Iterator[engram.Memory]:
    with engram.open(target, embedder=engram.HashingEmbedder(32)) as memory:
        yield memory


def entries(mem: engram.Memory, ref: ResourceRef = REF) -> int:
    return len(mem.ledger(ref).entries)


def test_detect_records_one_row_per_fact_in_one_entry(mem: engram.Memory) -> None:
    lisbon = mem.remember(REF, "Alice lives in Lisbon with two cats.").id
    nurse = mem.remember(REF, "Alice works as a nurse.").id
    before = entries(mem)
    signals = mem.usage.detect(REF, [lisbon, nurse], "Alice lives in Lisbon.", query="Where?")
    assert [(s.fact_id, s.signal, s.reason) for s in signals] == [
        (lisbon, "used", "terms"),
        (nurse, "ignored", "none"),
    ]
    assert entries(mem) == before + 1
    [row] = mem.usage.signals(REF, lisbon)
    assert (row.signal, row.reason, row.query) == ("used", "terms", "Where?")
    assert row.score == signals[0].score
    assert [r.signal for r in mem.usage.signals(REF, nurse)] == ["ignored"]
    with pytest.raises(NotFound):  # another scope's fact is no fact of that scope
        mem.usage.signals(OTHER, lisbon)
    assert mem.usage.detect(REF, [nurse], "See [1].", record=False)[0].reason == "cited"
    assert entries(mem) == before + 1 and len(mem.usage.signals(REF, nurse)) == 1


def test_a_recorded_signal_is_read_back_oldest_first(mem: engram.Memory) -> None:
    fact = mem.remember(REF, "Bob is a chef.").id
    first = mem.usage.record(REF, fact, "used", reason="thumbs up")
    second = mem.usage.record(REF, fact, "ignored")
    got = mem.usage.signals(REF, fact)
    assert [r.id for r in got] == [first.id, second.id]
    assert (got[0].reason, got[0].score, got[1].reason) == ("thumbs up", None, None)


def test_refusals_write_nothing(mem: engram.Memory) -> None:
    fact = mem.remember(REF, "Bob is a chef.").id
    theirs = mem.remember(OTHER, "Carol is a pilot.").id
    before = entries(mem)
    with pytest.raises(InvalidInput, match="signal"):
        mem.usage.record(REF, fact, "liked")
    with pytest.raises(NotFound):
        mem.usage.record(REF, theirs, "used")
    with pytest.raises(NotFound):
        mem.usage.detect(REF, [fact, theirs], "Bob is a chef.")
    with pytest.raises(InvalidInput, match="response"):
        mem.usage.detect(REF, [fact], "x" * 100_001)
    with pytest.raises(InvalidInput, match="twice"):
        mem.usage.detect(REF, [fact, fact], "Bob is a chef.")
    with pytest.raises(InvalidInput):
        mem.usage.detect(REF, [], "Bob is a chef.")
    assert entries(mem) == before and mem.usage.signals(REF, fact) == []
    for unknown in (theirs, "f_nope"):  # another scope's fact is no fact of this one
        with pytest.raises(NotFound, match="no fact"):
            mem.usage.signals(REF, unknown)


def test_signals_outlive_a_soft_forget_and_go_with_a_deletion_for_good(
    mem: engram.Memory,
) -> None:
    kept = mem.remember(REF, "Bob is a chef.").id
    erased = mem.remember(REF, "Bob lives in Porto.").id
    trashed = mem.remember(REF, "Bob has a dog.").id
    for fact in (kept, erased, trashed):
        mem.usage.record(REF, fact, "used")
    mem.forget(REF, trashed)
    assert len(mem.usage.signals(REF, trashed)) == 1
    mem.restore(REF, trashed)
    assert len(mem.usage.signals(REF, trashed)) == 1
    mem.forget(REF, erased, hard=True)
    mem.forget(REF, trashed)
    mem.forget(REF, trashed, hard=True)  # from the trash, for good
    for gone in (erased, trashed):  # no fact, no signals: unknown, as the fact itself
        with pytest.raises(NotFound, match=gone):
            mem.usage.signals(REF, gone)
    assert len(mem.usage.signals(REF, kept)) == 1
    mem.delete_scope(REF)  # every fact for good, and with them their signals
    with pytest.raises(NotFound):
        mem.usage.signals(REF, kept)


def test_a_feedback_entry_cannot_be_reverted(mem: engram.Memory) -> None:
    fact = mem.remember(REF, "Bob is a chef.").id
    mem.usage.record(REF, fact, "used")
    newest = mem.ledger(REF).entries[0]
    assert newest.op == "usage.record"
    with pytest.raises(Conflict, match="feedback"):
        mem.revert(REF, newest.seq)


def test_the_command_line_detects_records_and_shows(
    target: Target, capsys: pytest.CaptureFixture[str]
) -> None:
    from engram.cli.main import main

    embeds = ["--db", str(target), "--resource", "cli"]
    scoped = [*embeds, "--embedder", "none"]

    def run(*argv: str, options: list[str] = scoped) -> Any:
        code = main(["--json", *argv, *options])
        out, err = capsys.readouterr()
        assert code == 0, err
        return json.loads(out)

    fact = run("remember", "Alice lives in Lisbon", options=embeds)["id"]
    said = "Alice lives in Lisbon."
    dry = run("feedback", "detect", fact, "--response", said, "--dry-run")["signals"]
    assert [(s["fact_id"], s["signal"], s["reason"]) for s in dry] == [(fact, "used", "terms")]
    assert run("feedback", "show", fact) == {"feedback": []}
    run("feedback", "detect", fact, "--response", said, "--query", "where?")
    run("feedback", "record", fact, "ignored", "--reason", "wrong")
    shown = run("feedback", "show", fact)["feedback"]
    assert [(r["signal"], r["reason"], r["query"]) for r in shown] == [
        ("used", "terms", "where?"),
        ("ignored", "wrong", None),
    ]
    assert main(["feedback", "record", fact, "liked", *scoped]) == 2
    assert main(["feedback", "show", "f_nope", *scoped]) == 3
    assert "error[not_found]: no fact 'f_nope'" in capsys.readouterr().err
