"""The spacy extractor on both backends, with real spaCy pipelines built by the test
(``spacy.blank("en")`` and an ``entity_ruler`` with patterns: deterministic, nothing
downloaded): the names found are grounded as spacy's in one ledger entry, typed by their
labels, the labels of times and amounts never become entities, the rules' hygiene drops
what names nothing, the backlog is worked as the llm's is (the next facts, a reworded
fact read again, a forgotten one's entity gone), a failing pipeline writes nothing, and
the rules' graph stays what the rules give (the llm's rebuild property, run with spaCy).
``SpacyRecogniser`` loads by name or directory, never downloads, and says what is
missing; the setting builds it for the service and the command line.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import spacy
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test
from spacy.language import Language
from spacy.tokens import Doc

import engram
import stores
from engram import (
    CapabilityMissing,
    Conflict,
    InvalidInput,
    NotFound,
    ResourceRef,
    SpacyRecogniser,
    UpstreamFailure,
)
from engram.api import create_app
from engram.cli.main import main
from engram.core.graph import names, ner
from engram.core.graph.models import ExtractionReport
from engram.core.memory import Memory
from engram.core.ports import Span
from engram.settings import Settings
from stores import Target, rows
from test_llm_graph_rebuild import EXAMPLES, NAMES, RANDOM, ReadingMachine

REF = ResourceRef("reader")
OTHER = ResourceRef("another")
PATTERNS: list[dict[str, Any]] = [
    {"label": "PERSON", "pattern": [{"LOWER": "ziggy"}]},
    {"label": "PERSON", "pattern": "Ana Lima"},
    {"label": "PERSON", "pattern": "Mom"},
    {"label": "GPE", "pattern": "Porto"},
    {"label": "DATE", "pattern": "last Friday"},
    {"label": "TIME", "pattern": "noon"},
]
ZIGGY = "ziggy ran to Porto with Ana Lima last Friday at noon."


def pipeline(patterns: Sequence[dict[str, Any]] = PATTERNS) -> Language:
    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("entity_ruler")
    ruler.add_patterns(list(patterns))  # type: ignore[attr-defined]
    return nlp


@pytest.fixture
def mem(target: Target) -> Iterator[Memory]:
    recogniser = SpacyRecogniser(pipeline())
    with engram.open(target, embedder=engram.HashingEmbedder(16), recogniser=recogniser) as m:
        yield m


def _groundings(target: Target, extractor: str = "spacy") -> set[tuple[str, str]]:
    return stores.groundings(target, extractor)


def _entities(target: Target) -> dict[str, tuple[str | None, str]]:
    found = rows(target, "SELECT norm, type, origin FROM entities WHERE scope = ?", (REF.key,))
    return {str(n): (t, str(o)) for n, t, o in found}


def _reads(target: Target) -> set[tuple[str, str]]:
    return {(str(f), str(e)) for f, e in rows(target, "SELECT fact_id, extractor FROM graph_reads")}


# -- what is written ----------------------------------------------------------------
def test_the_names_found_are_grounded_in_one_entry(mem: Memory, target: Target) -> None:
    fact = mem.remember(REF, ZIGGY)
    porto = mem.graph.entity(REF, "Porto")  # the rules ground Porto and Ana Lima
    lima = mem.graph.entity(REF, "Ana Lima")
    rules_before = _groundings(target, "rules")
    with pytest.raises(NotFound):
        mem.graph.entity(REF, "ziggy")  # lowercase: no rule finds it
    before = len(mem.ledger(REF).entries)

    report = mem.graph.extract(REF, extractor="spacy")

    assert report == ExtractionReport("spacy", facts_read=1, entities_added=1)
    ziggy = mem.graph.entity(REF, "Ziggy")
    assert (ziggy.name, ziggy.type, ziggy.origin) == ("ziggy", "person", "extracted")
    assert mem.graph.entity(REF, "Porto") == porto  # known: gains a grounding, nothing else
    assert mem.graph.entity(REF, "Ana Lima") == lima
    assert _groundings(target) == {(fact.id, e.id) for e in (ziggy, porto, lima)}
    assert _groundings(target, "rules") == rules_before  # the rules' part as it was
    assert mem.graph.relations(REF) == []  # entities only
    assert _reads(target) == {(fact.id, "spacy")}
    entries = mem.ledger(REF).entries
    assert len(entries) == before + 1
    assert entries[0].op == "graph.extract"
    assert [(c.kind, c.action) for c in entries[0].changes] == [("graph", "extract")]
    with pytest.raises(Conflict, match="cannot be reverted"):
        mem.revert(REF, entries[0].seq)


def test_a_name_new_to_the_scope_is_found_by_the_rules_in_other_facts(mem: Memory) -> None:
    first, second = mem.remember_many(REF, ["we walked ziggy.", "Ziggy slept."])
    mem.graph.extract(REF, extractor="spacy", fact_ids=[first.id])
    # the second fact opens a sentence with it: the rules find it once it is known
    hood = mem.graph.neighbourhood(REF, "Ziggy")
    assert {f.id for f in hood.facts} == {second.id}


LOWERCASE = {
    "EVENT": ["christmas eve"],
    "PERSON": ["mom", "hey mel"],
    "ORG": ["the lisbon rowing club"],
    "CARDINAL": ["three"],
    "NORP": ["portuguese"],
    "WORK_OF_ART": ["the name of the wind"],
    "DATE": ["last friday"],
    "TIME": ["noon"],
    "MONEY": ["ten euros"],
    "PERCENT": ["five percent"],
    "LAW": ["gdpr"],
}


def test_labels_give_types_and_times_and_amounts_are_never_entities(target: Target) -> None:
    text = (
        "on christmas eve mom said: hey mel, the lisbon rowing club and three portuguese "
        "friends read the name of the wind last friday at noon, paid ten euros, five "
        "percent more, under gdpr."
    )
    patterns = [
        {"label": label, "pattern": [{"LOWER": w} for w in phrase.split()]}
        for label, phrases in LOWERCASE.items()
        for phrase in phrases
    ]
    recogniser = SpacyRecogniser(pipeline(patterns))
    with engram.open(target, embedder=engram.HashingEmbedder(16), recogniser=recogniser) as mem:
        mem.remember(REF, text)
        assert _entities(target) == {}  # no capital: the rules find nothing

        report = mem.graph.extract(REF, extractor="spacy")

        assert report == ExtractionReport(
            "spacy",
            facts_read=1,
            entities_added=5,
            entities_dropped=2,  # christmas eve, mom
        )
        assert _entities(target) == {
            "mel": ("person", "extracted"),
            "lisbon rowing club": ("organisation", "extracted"),
            "portuguese": ("group", "extracted"),
            "name of the wind": ("work", "extracted"),
            "gdpr": (None, "extracted"),
        }
        assert mem.graph.entity(REF, "Lisbon Rowing Club").name == "lisbon rowing club"
        assert mem.graph.entity(REF, "mel").name == "mel"  # "hey" trimmed


def test_a_known_entity_keeps_its_name_and_type(mem: Memory, target: Target) -> None:
    mem.remember(REF, "we met Ana Lima in Porto.")  # the rules: two names, no type
    before = _entities(target)
    assert mem.graph.extract(REF, extractor="spacy").entities_added == 0
    assert _entities(target) == before
    assert len(_groundings(target)) == 2


@pytest.mark.parametrize(
    ("label", "kind"),
    [
        ("PERSON", "person"),
        ("PER", "person"),
        ("person", "person"),  # compared in upper case
        ("GPE", "place"),
        ("LOC", "place"),
        ("FAC", "place"),
        ("ORG", "organisation"),
        ("NORP", "group"),
        ("PRODUCT", "product"),
        ("WORK_OF_ART", "work"),
        ("EVENT", "event"),
        ("LANGUAGE", "language"),
        ("LAW", None),
        ("MISC", None),
        ("ANIMAL", None),  # a custom pipeline's own label
    ],
)
def test_a_label_maps_to_the_graphs_type(target: Target, label: str, kind: str | None) -> None:
    nlp = pipeline([{"label": label, "pattern": [{"LOWER": "zorblat"}]}])
    with engram.open(
        target, embedder=engram.HashingEmbedder(16), recogniser=SpacyRecogniser(nlp)
    ) as mem:
        mem.remember(REF, "we saw zorblat today")
        assert mem.graph.extract(REF, extractor="spacy").entities_added == 1
        assert mem.graph.entity(REF, "zorblat").type == kind


@pytest.mark.parametrize("label", sorted(ner.NEVER))
def test_a_time_or_an_amount_is_never_an_entity(label: str) -> None:
    assert ner.found("see zorblat now", [(4, 11, label)]) == ner.Found({}, 0)
    assert ner.found("see zorblat now", [(4, 11, label.lower())]) == ner.Found({}, 0)


@pytest.mark.parametrize(
    ("text", "span", "kept"),
    [
        ("Hey Mel, hi", (0, 7), "Mel"),  # a greeting trimmed
        ("ask Dr. Lee now", (4, 11), "Lee"),  # a title trimmed
        ("we love the Beatles", (8, 19), "Beatles"),
        ("we love The Beatles", (8, 19), "The Beatles"),  # a capital The stays
        ("I like Iron Man", (7, 15), "Iron Man"),  # a word that may end a name stays
        ("Ed Sheeran's song", (0, 12), "Ed Sheeran"),  # the possessive goes
        ("Cyberpunk 2077 is out", (0, 14), "Cyberpunk 2077"),
        ("call Mom now", (5, 8), None),  # a family word alone names nobody
        ("I did it", (0, 1), None),  # a pronoun
        ("this Friday then", (5, 11), None),  # a day
        ("on Christmas Eve", (3, 16), None),  # a holiday
        ("so X said", (3, 4), None),  # one letter
        ("Banana bread", (1, 4), None),  # not whole words of the text
        ("so 42 it is", (3, 5), None),  # no letter
    ],
)
def test_the_rules_hygiene_applies_to_a_span(
    text: str, span: tuple[int, int], kept: str | None
) -> None:
    found = ner.found(text, [(*span, "PERSON")])
    assert [n.name for n in found.entities.values()] == ([kept] if kept else [])
    assert found.dropped == (kept is None)


def test_a_name_over_the_limit_is_dropped() -> None:
    name = "Zorblat " * 40  # 320 characters, over the graph's 256
    assert ner.found(name, [(0, len(name.strip()), "ORG")]) == ner.Found({}, 1)


def test_a_name_met_twice_takes_its_first_type() -> None:
    found = ner.found("Zorblat met zorblat", [(12, 19, "ORG"), (0, 7, "PERSON")])
    assert found == ner.Found({"zorblat": ner.Named("Zorblat", "person")}, 0)


class _Recording:
    """A recogniser that keeps the texts it was given, and reads them with spaCy."""

    def __init__(self, inner: SpacyRecogniser) -> None:
        self.inner, self.model = inner, inner.model
        self.texts: list[str] = []

    def recognise(self, texts: Sequence[str]) -> list[list[Span]]:
        self.texts += texts
        return self.inner.recognise(texts)


def test_a_turn_is_read_after_its_speakers_prefix(target: Target) -> None:
    recording = _Recording(SpacyRecogniser(pipeline()))
    with engram.open(target, embedder=engram.HashingEmbedder(16), recogniser=recording) as mem:
        turn, plain = mem.remember_many(
            REF,
            [
                engram.Note("Ziggy: hey, ziggy ran to Porto.", metadata={"speaker": "Ziggy"}),
                "Ziggy: nobody said so.",
            ],
        )
        mem.graph.extract(REF, extractor="spacy")
        assert recording.texts == ["hey, ziggy ran to Porto.", "Ziggy: nobody said so."]
        ziggy, porto = mem.graph.entity(REF, "ziggy"), mem.graph.entity(REF, "Porto")
        assert _groundings(target) == {
            (turn.id, ziggy.id),  # from the text, not the prefix: the spans were moved
            (turn.id, porto.id),
            (plain.id, ziggy.id),  # no speaker named: read whole
        }


@pytest.mark.parametrize(
    ("text", "speaker", "start"),
    [
        ("Mel: hi there", "Mel", 5),
        ("Mel:hi", "Mel", 4),
        ("Mel:   hi", "Mel", 7),
        ("Mel: hi", None, 0),
        ("Mel: hi", "", 0),
        ("Mel: hi", 7, 0),
        ("Melissa: hi", "Mel", 0),
        ("Ana Lima: hi", "Ana Lima", 10),
    ],
)
def test_where_a_turns_words_begin(text: str, speaker: object, start: int) -> None:
    assert names.body(text, speaker) == start


# -- the backlog ----------------------------------------------------------------------
def test_a_second_extract_reads_the_next_facts(mem: Memory, target: Target) -> None:
    facts = mem.remember_many(REF, ["ziggy one.", "ziggy two.", "ziggy three."])
    assert mem.graph.extract(REF, extractor="spacy", limit=2).facts_read == 2
    assert _reads(target) == {(facts[0].id, "spacy"), (facts[1].id, "spacy")}
    assert mem.graph.extract(REF, extractor="spacy", limit=2).facts_read == 1
    before = mem.ledger(REF).entries
    assert mem.graph.extract(REF, extractor="spacy") == ExtractionReport("spacy")
    assert mem.ledger(REF).entries == before  # nothing to read: nothing written
    ziggy = mem.graph.entity(REF, "ziggy").id
    assert _groundings(target) == {(f.id, ziggy) for f in facts}


def test_a_reworded_fact_loses_its_groundings_and_is_read_again(
    mem: Memory, target: Target
) -> None:
    fact = mem.remember(REF, "we walked ziggy.")
    mem.graph.extract(REF, extractor="spacy")
    mem.correct(REF, fact.id, "we walked ana lima's dog.")
    with pytest.raises(NotFound):
        mem.graph.entity(REF, "ziggy")  # nothing grounds it now
    assert _groundings(target) == set() and _reads(target) == set()
    report = mem.graph.extract(REF, extractor="spacy")
    assert report == ExtractionReport("spacy", facts_read=1)  # "ana lima" matches no pattern
    mem.correct(REF, fact.id, "we walked ziggy again.")
    assert mem.graph.extract(REF, extractor="spacy").entities_added == 1


def test_a_forgotten_fact_takes_its_groundings_and_its_entity(mem: Memory, target: Target) -> None:
    fact, other = mem.remember_many(REF, ["we walked ziggy.", "ziggy slept."])
    mem.graph.extract(REF, extractor="spacy")
    ziggy = mem.graph.entity(REF, "ziggy")
    mem.forget(REF, fact.id)
    assert mem.graph.entity(REF, "ziggy") == ziggy  # the other fact still grounds it
    assert _reads(target) == {(other.id, "spacy")}
    mem.forget(REF, other.id, hard=True)
    with pytest.raises(NotFound):
        mem.graph.entity(REF, "ziggy")
    assert _groundings(target) == set() and _reads(target) == set()
    mem.restore(REF, fact.id)  # back, and unread again
    assert mem.graph.extract(REF, extractor="spacy").entities_added == 1
    assert mem.graph.entity(REF, "ziggy").id == ziggy.id  # its id is its name's


def test_an_asserted_entity_keeps_what_the_caller_gave(mem: Memory, target: Target) -> None:
    asserted = mem.graph.upsert_entity(REF, "Ziggy", type="dog")
    fact = mem.remember(REF, "we walked ziggy.")
    mem.graph.extract(REF, extractor="spacy")
    assert mem.graph.entity(REF, "ziggy") == asserted
    assert _groundings(target) == {(fact.id, asserted.id)}
    mem.forget(REF, fact.id, hard=True)
    assert mem.graph.entity(REF, "ziggy") == asserted  # asserted: never taken


class _Changing:
    """A recogniser that rewords a fact while it reads, then reads with spaCy."""

    def __init__(self, inner: SpacyRecogniser, meanwhile: Callable[[], None]) -> None:
        self.inner, self.meanwhile = inner, meanwhile
        self.model = inner.model

    def recognise(self, texts: Sequence[str]) -> list[list[Span]]:
        self.meanwhile()
        return self.inner.recognise(texts)


def test_a_fact_reworded_while_read_is_skipped(target: Target) -> None:
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as other:
        first, second = other.remember_many(REF, ["we walked ziggy.", "ziggy slept."])
        changing = _Changing(
            SpacyRecogniser(pipeline()),
            lambda: other.correct(REF, first.id, "we walked nobody."),
        )
        with engram.open(target, embedder=engram.HashingEmbedder(16), recogniser=changing) as mem:
            report = mem.graph.extract(REF, extractor="spacy")
            assert (report.facts_read, report.facts_skipped) == (1, 1)
            assert {f for f, _ in _groundings(target)} == {second.id}
            assert _reads(target) == {(second.id, "spacy")}


# -- failures and refusals ----------------------------------------------------------------
@Language.component("engram_test_fails_on_boom")
def _fails_on_boom(doc: Doc) -> Doc:
    if "boom" in doc.text:
        raise ValueError(f"cannot read {doc.text!r}")
    return doc


class _Wrong:
    """A recogniser whose spans are not in its texts."""

    model = "wrong"

    def __init__(self, answer: Callable[[Sequence[str]], Any]) -> None:
        self.answer = answer

    def recognise(self, texts: Sequence[str]) -> Any:
        return self.answer(texts)


WRONG: dict[str, Callable[[Sequence[str]], Any]] = {
    "too few lists": lambda texts: [],
    "a span past the text": lambda texts: [[(0, len(t) + 1, "PERSON")] for t in texts],
    "an empty span": lambda texts: [[(3, 3, "PERSON")] for t in texts],
    "no label": lambda texts: [[(0, 2, None)] for t in texts],
    "offsets as text": lambda texts: [[("0", "2", "PERSON")] for t in texts],
}


@pytest.mark.parametrize(
    "recogniser",
    [pytest.param("boom", id="the pipeline fails")]
    + [pytest.param(case, id=case) for case in WRONG],
)
def test_a_failing_recogniser_writes_nothing_and_the_backlog_stays(
    target: Target, recogniser: str
) -> None:
    if recogniser == "boom":
        nlp = pipeline()
        nlp.add_pipe("engram_test_fails_on_boom")
        chosen: Any = SpacyRecogniser(nlp)
        words = r"failed reading \(ValueError\)"
    else:
        chosen, words = _Wrong(WRONG[recogniser]), "the name recogniser 'wrong'"
    with engram.open(target, embedder=engram.HashingEmbedder(16), recogniser=chosen) as mem:
        mem.remember_many(REF, ["we walked ziggy.", "then boom went ziggy."])
        graph = _entities(target), _groundings(target, "rules")
        before = mem.ledger(REF).entries
        with pytest.raises(UpstreamFailure, match=words) as failed:
            mem.graph.extract(REF, extractor="spacy")
        assert "ziggy" not in failed.value.message  # never the facts' words
        assert (_entities(target), _groundings(target, "rules")) == graph
        assert _groundings(target) == set() and _reads(target) == set()
        assert mem.ledger(REF).entries == before


def test_without_a_recogniser_the_spacy_extractor_is_missing(target: Target) -> None:
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as mem:
        mem.remember(REF, ZIGGY)
        before = mem.ledger(REF).entries
        with pytest.raises(CapabilityMissing, match="needs a spaCy pipeline") as missing:
            mem.graph.extract(REF, extractor="spacy")
        assert missing.value.hint is not None and "engram-durable[nlp]" in missing.value.hint
        assert mem.ledger(REF).entries == before
        assert _reads(target) == set()


@pytest.mark.parametrize(
    ("arguments", "words"),
    [
        ({"limit": 0}, "limit must be between 1 and 1000"),
        ({"limit": 1001}, "limit must be between 1 and 1000"),
        ({"fact_ids": "f_1"}, "fact_ids must be a list"),
    ],
)
def test_bad_arguments_are_refused(mem: Memory, arguments: dict[str, Any], words: str) -> None:
    mem.remember(REF, ZIGGY)
    with pytest.raises(InvalidInput, match=words):
        mem.graph.extract(REF, extractor="spacy", **arguments)
    assert mem.graph.extract(REF, extractor="spacy", limit=1000).facts_read == 1


def test_fact_ids_are_the_scopes_live_facts(mem: Memory, target: Target) -> None:
    mine = mem.remember(REF, "we walked ziggy.")
    theirs = mem.remember(OTHER, "they walked ziggy.")
    with pytest.raises(NotFound, match="no live fact"):
        mem.graph.extract(REF, extractor="spacy", fact_ids=[mine.id, theirs.id])
    assert _reads(target) == set()
    assert mem.graph.extract(REF, extractor="spacy", fact_ids=[mine.id]).facts_read == 1
    assert mem.graph.extract(OTHER, extractor="spacy").facts_read == 1  # its own backlog


def test_the_rules_and_the_llm_backlog_are_apart(mem: Memory, target: Target) -> None:
    fact = mem.remember(REF, ZIGGY)
    mem.graph.extract(REF, extractor="spacy")
    spacys, rules = _groundings(target), _groundings(target, "rules")
    assert len(spacys) == 3 and len(rules) == 2
    assert rows(target, "SELECT count(*) FROM graph_reads WHERE extractor = 'llm'") == [(0,)]
    assert mem.graph.extract(REF, fact_ids=[fact.id]).extractor == "rules"
    assert (_groundings(target), _groundings(target, "rules")) == (spacys, rules)


def test_acting_keeps_the_recogniser(mem: Memory) -> None:
    mem.remember(REF, ZIGGY)
    acting = mem.acting(actor="reader-bot")
    assert acting.recogniser is mem.recogniser
    assert acting.graph.extract(REF, extractor="spacy").entities_added == 1
    assert mem.ledger(REF, limit=1).entries[0].actor == "reader-bot"


def test_open_refuses_a_pipeline_that_is_not_a_recogniser(target: Target) -> None:
    with pytest.raises(InvalidInput, match=r"engram\.SpacyRecogniser"):
        engram.open(target, embedder=None, recogniser=pipeline())  # type: ignore[arg-type]


# -- SpacyRecogniser ------------------------------------------------------------------
def test_a_pipeline_given_reads_in_batches_as_it_is() -> None:
    recogniser = SpacyRecogniser(pipeline(), batch_size=2)
    assert recogniser.model == "en_pipeline-0.0.0"
    texts = ["ziggy ran", "nothing here", "to Porto last Friday", "Ana Lima"]
    assert recogniser.recognise(texts) == [
        [(0, 5, "PERSON")],
        [],
        [(3, 8, "GPE"), (9, 20, "DATE")],
        [(0, 8, "PERSON")],
    ]
    assert recogniser.recognise([]) == []


@pytest.mark.parametrize("name", ["no_such_pipeline_x", "./no/such/dir", "a.b"])
def test_a_pipeline_not_installed_is_missing_and_nothing_is_downloaded(name: str) -> None:
    with pytest.raises(CapabilityMissing, match=r"no spaCy pipeline .* is installed") as missing:
        SpacyRecogniser(name)
    assert missing.value.hint is not None and "not on PyPI" in missing.value.hint


def test_without_spacy_the_recogniser_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "spacy", None)  # as if it were not installed
    with pytest.raises(CapabilityMissing, match="needs spaCy, which is not installed") as e:
        SpacyRecogniser("blank:en")
    assert e.value.hint is not None and "pip install '.[nlp]'" in e.value.hint


def test_a_pipeline_is_loaded_from_its_directory_on_first_use(tmp_path: Path) -> None:
    pipeline().to_disk(tmp_path / "pipe")
    recogniser = SpacyRecogniser(tmp_path / "pipe")
    assert recogniser.model == str(tmp_path / "pipe")
    assert recogniser._nlp is None  # nothing loaded yet
    assert recogniser.recognise(["ziggy met Mom"]) == [[(0, 5, "PERSON"), (10, 13, "PERSON")]]
    assert recogniser._nlp.pipe_names == ["entity_ruler"]


def test_a_directory_that_holds_no_pipeline_is_missing_when_used(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    recogniser = SpacyRecogniser(tmp_path / "empty")
    with pytest.raises(CapabilityMissing, match="cannot be loaded"):
        recogniser.recognise(["ziggy"])


def test_a_trained_pipeline_loaded_by_name_keeps_what_its_entities_need(
    tmp_path: Path,
) -> None:
    nlp = spacy.blank("en")
    nlp.add_pipe("tagger").add_label("NN")  # type: ignore[attr-defined]
    nlp.add_pipe("ner").add_label("PERSON")  # type: ignore[attr-defined]
    nlp.add_pipe("sentencizer")
    nlp.initialize()
    nlp.to_disk(tmp_path / "trained")
    ruled = pipeline()
    ruled.add_pipe("sentencizer", first=True)
    ruled.to_disk(tmp_path / "ruled")

    trained = SpacyRecogniser(tmp_path / "trained")
    trained.recognise(["ziggy ran"])
    assert trained._nlp.pipe_names == ["ner"]  # the tagger and sentencizer disabled
    assert set(trained._nlp.disabled) == {"tagger", "sentencizer"}
    kept = SpacyRecogniser(tmp_path / "ruled")
    kept.recognise(["ziggy ran"])
    assert kept._nlp.pipe_names == ["sentencizer", "entity_ruler"]  # patterns may need all


@pytest.mark.parametrize("batch_size", [0, 10_001, 2.5, "64"])
def test_a_bad_batch_size_is_refused(batch_size: Any) -> None:
    with pytest.raises(InvalidInput, match="batch_size"):
        SpacyRecogniser(pipeline(), batch_size=batch_size)


@pytest.mark.parametrize("nlp", [None, 7, ["ziggy"], "", " "])
def test_what_is_no_pipeline_is_refused(nlp: Any) -> None:
    with pytest.raises(InvalidInput, match="nlp must be a spaCy Language"):
        SpacyRecogniser(nlp)


def test_texts_must_be_a_list_of_texts() -> None:
    with pytest.raises(InvalidInput, match="a list of texts"):
        SpacyRecogniser(pipeline()).recognise("ziggy")  # type: ignore[arg-type]


# -- the setting ------------------------------------------------------------------------
def test_the_setting_makes_the_recogniser(tmp_path: Path) -> None:
    assert Settings.from_env({}).make_recogniser() is None
    pipeline().to_disk(tmp_path / "pipe")
    made = Settings.from_env({"ENGRAM_SPACY_MODEL": str(tmp_path / "pipe")}).make_recogniser()
    assert made is not None and made.model == str(tmp_path / "pipe")
    with pytest.raises(CapabilityMissing, match="ENGRAM_SPACY_MODEL: no spaCy pipeline"):
        Settings.from_env({"ENGRAM_SPACY_MODEL": "no_such_pipeline_x"}).make_recogniser()


def test_the_service_reads_with_the_pipeline_its_settings_name(
    target: Target, tmp_path: Path
) -> None:
    pipeline().to_disk(tmp_path / "pipe")
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as writer:
        writer.remember(REF, ZIGGY)
    settings = Settings.from_env(
        {
            **stores.env(target),
            "ENGRAM_EMBEDDER": "none",
            "ENGRAM_SPACY_MODEL": str(tmp_path / "pipe"),
        }
    )
    with TestClient(create_app(settings)) as client:
        memory = client.app.state.memory  # type: ignore[attr-defined]
        assert memory.recogniser.model == str(tmp_path / "pipe")
        assert memory.graph.extract(REF, extractor="spacy").entities_added == 1


def test_the_command_line_refuses_a_pipeline_not_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ENGRAM_DB_PATH", str(tmp_path / "cli.db"))
    monkeypatch.setenv("ENGRAM_SPACY_MODEL", "no_such_pipeline_x")
    assert main(["facts", "--resource", "u", "--embedder", "none"]) == 5
    err = capsys.readouterr().err
    assert "error[capability_missing]: ENGRAM_SPACY_MODEL: no spaCy pipeline" in err


# -- the rules' graph stays the rebuilt one -------------------------------------------
class SpacyReadingMachine(ReadingMachine):
    extractor = "spacy"


def test_a_pipelines_reading_leaves_the_rules_graph_as_the_rebuilt_one(target: Target) -> None:
    """The llm's property (tests/test_llm_graph_rebuild.py) with a pipeline naming every
    name of the machine in any case (a lowercase one the rules never find), and dates."""
    patterns = [
        {"label": "PERSON", "pattern": [{"LOWER": w} for w in name.lower().split()]}
        for name in NAMES
    ] + [{"label": "DATE", "pattern": "yesterday"}]
    recogniser = SpacyRecogniser(pipeline(patterns))
    with engram.open(target, embedder=engram.HashingEmbedder(16), recogniser=recogniser) as m:
        SpacyReadingMachine.memory = m
        run_state_machine_as_test(
            SpacyReadingMachine,
            settings=settings(
                max_examples=EXAMPLES,
                derandomize=not RANDOM,
                stateful_step_count=20,
                deadline=None,
                suppress_health_check=[HealthCheck.too_slow],
            ),
        )
