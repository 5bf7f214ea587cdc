"""A turn's vector reads its words without its speaker's label, and a question's vector
leaves out the speakers it names (engram.core.spoken); a store written before keeps
reading whole contents until it is re-embedded."""

from __future__ import annotations

import numpy as np
import pytest

import engram
from engram import ResourceRef, Turn
from engram.core import spoken
from engram.core.ports import ModelRecord
from engram.opening import open_store
from fake_embedders import Recorded
from stores import Target

CAROLINE = Turn("Caroline", "I researched adoption agencies")
MELANIE = Turn("Melanie", "Deadline: the pottery class starts soon")


def _passages(embedder: Recorded) -> list[str]:
    return [t for kind, texts in embedder.calls if kind == "passage" for t in texts]


def _queries(embedder: Recorded) -> list[str]:
    return [t for kind, texts in embedder.calls if kind == "query" for t in texts]


def test_words_leave_out_only_the_speakers_own_label() -> None:
    assert spoken.words("Caroline: I went", {"speaker": "Caroline"}) == "I went"
    assert spoken.words("Deadline: March 3", None) == "Deadline: March 3"
    assert spoken.words("Deadline: March 3", {"speaker": "Caroline"}) == "Deadline: March 3"
    assert spoken.words("Caroline:", {"speaker": "Caroline"}) == "Caroline:"  # nothing after


def test_a_question_leaves_out_the_speakers_it_names_and_their_possessive() -> None:
    assert spoken.question("What is Caroline's identity?", {"caroline"}) == "What is identity?"
    assert spoken.question("When did Jon and Gina meet?", {"jon", "gina"}) == "When did and meet?"
    assert spoken.question("What did Rosa say?", {"caroline"}) == "What did Rosa say?"
    assert spoken.question("Caroline?", {"caroline"}) == "Caroline?"  # nothing else left


def test_a_turns_vector_reads_its_words_and_a_question_leaves_out_its_speaker(
    target: Target, ref: ResourceRef
) -> None:
    embedder = Recorded(engram.HashingEmbedder(64))
    with engram.open(target, embedder=embedder) as mem:
        said = mem.remember_conversation(ref, [CAROLINE, MELANIE]).facts
        noted = mem.remember(ref, "Note: buy milk")
        assert _passages(embedder) == [
            "I researched adoption agencies",
            "Deadline: the pottery class starts soon",
            "Note: buy milk",
        ]
        stored = mem._store.run(lambda tx: mem._store.facts.vectors(tx, ref, [said[0].id]))
        words = engram.HashingEmbedder(64).embed(["I researched adoption agencies"], "passage")
        np.testing.assert_allclose(stored[said[0].id], words[0], atol=1e-3)
        record = mem._store.run(lambda tx: mem._store.models.get(tx))
        assert record == ModelRecord(f"hashing-64{spoken.SUFFIX}", 64)
        assert mem.embedder is embedder  # the one given

        # The first time, the halves ran at once and were read again once the full-text
        # half showed the question names a speaker; then this process knows the scope
        # has speakers and reads that half first.
        asked = "What did Caroline research?"
        for mode, embedded in [
            ("hybrid", [asked, "What did research?"]),
            ("hybrid", ["What did research?"]),
            ("vector", ["What did research?"]),
        ]:
            embedder.calls.clear()
            mem.recall(ref, asked, mode=mode)
            assert _queries(embedder) == embedded, mode
        embedder.calls.clear()
        mem.recall(ref, "What did Rosa research?")  # no one of that name spoke
        assert _queries(embedder) == ["What did Rosa research?"]
    with engram.open(target, embedder=embedder) as mem:  # a scope no one spoke in
        other = ResourceRef("notes")
        mem.remember_many(other, ["Ivan ordered the training plan", "Zara wrote the blog"])
        embedder.calls.clear()
        mem.recall(other, "What did Ivan say about the training?")
        assert _queries(embedder) == ["What did Ivan say about the training?"]
        # By meaning alone, who said the vector half's candidates is read, not a
        # full-text half: none here, so the question is embedded once as asked; in the
        # scope with speakers, a process that has not met them embeds it again.
        texts: list[object] = []
        text_half = mem._store.candidates.text
        mem._store.candidates.text = lambda *a: texts.append(a) or text_half(*a)  # type: ignore[method-assign]
        embedder.calls.clear()
        mem.recall(other, "What did Ivan say about the training?", mode="vector")
        assert _queries(embedder) == ["What did Ivan say about the training?"]
        assert texts == []
        embedder.calls.clear()
        mem.recall(ref, asked, mode="vector")
        assert _queries(embedder) == [asked, "What did research?"]

        embedder.calls.clear()
        mem.correct(ref, said[0].id, "Caroline: I researched foster care")
        mem.correct(ref, noted.id, "Note: buy oat milk")
        assert _passages(embedder) == ["I researched foster care", "Note: buy oat milk"]


def test_a_question_naming_a_speaker_finds_what_was_said_first(
    target: Target, ref: ResourceRef
) -> None:
    """Hashing vectors: were her name in her turns' vectors and in the question's, each
    of her greetings would share half its words with the question, more than the turn
    that answers it."""
    with engram.open(target, embedder=engram.HashingEmbedder(256)) as mem:
        greetings = [Turn("Caroline", word) for word in ("hi", "hello", "hey", "howdy")]
        mem.remember_conversation(ref, [*greetings, Turn("Melanie", "research paper")])
        hits = mem.recall(ref, "Caroline research?", mode="vector", top_k=1)
        assert hits[0].fact.content == "Melanie: research paper"


@pytest.mark.parametrize("backend", ["sqlite"])
def test_a_store_written_before_reads_whole_contents_until_re_embedded(
    target: Target, ref: ResourceRef
) -> None:
    inner = engram.HashingEmbedder(64)
    store = open_store(target)
    try:  # a store whose vectors the same model made of whole contents
        store.run(lambda tx: store.models.put(tx, ModelRecord(inner.model, inner.dimension)))
    finally:
        store.close()
    embedder = Recorded(inner)
    with engram.open(target, embedder=embedder) as mem:
        fact = mem.remember_conversation(ref, [CAROLINE]).facts[0]
        mem.recall(ref, "What did Caroline research?")
        assert _passages(embedder) == ["Caroline: I researched adoption agencies"]
        assert _queries(embedder) == ["What did Caroline research?"]
    embedder.calls.clear()
    with engram.open(target, embedder=embedder, reembed=True) as mem:
        assert _passages(embedder) == ["I researched adoption agencies"]
        stored = mem._store.run(lambda tx: mem._store.models.get(tx))
        assert stored == ModelRecord(inner.model + spoken.SUFFIX, inner.dimension)
        assert mem._store.run(lambda tx: mem._store.facts.vectors(tx, ref, [fact.id]))
