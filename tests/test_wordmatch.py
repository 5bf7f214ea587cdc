"""The list for a hybrid question full text finds nothing for, or that asks what the facts
imply: candidates scored word by word, by meaning, with each word embedded once."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import ClassVar

import numpy as np
import pytest

import engram
from engram import ResourceRef
from engram.core import asked, wordmatch
from engram.core.ranking import Candidate, Traits

AT = datetime(2026, 1, 1, tzinfo=UTC)


class Words:
    """An embedder of single words onto fixed axes (a word's own axis, plus a shared one
    for the words of one meaning), counting what it is asked to embed."""

    model = "words"
    dimension = 8
    AXES: ClassVar[dict[str, int]] = {"contact": 0, "email": 0, "phone": 0, "refund": 1}

    def __init__(self) -> None:
        self.asked: list[str] = []

    def embed(self, texts: Sequence[str], kind: str) -> np.ndarray:
        self.asked += list(texts)
        out = np.zeros((len(texts), self.dimension), np.float32)
        for row, text in enumerate(texts):
            out[row, 2 + sum(map(ord, text)) % 5] = 0.5  # every word its own small part
            out[row, self.AXES.get(text, 7)] += 1.0
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def words_of(embedder: Words, held: int = wordmatch.WORDS_HELD) -> wordmatch.WordVectors:
    return wordmatch.WordVectors(lambda words: embedder.embed(words, "passage"), embedder, held)


def by_words(terms: list[str], vectors: wordmatch.WordVectors, **contents: str) -> list[str]:
    """The ids ``by_words`` ranks, of candidates given in the vector half's order."""
    nearest = [Candidate(fid, 1.0) for fid in contents]
    held = {fid: Traits(content, AT, None) for fid, content in contents.items()}
    return [c.id for c in wordmatch.by_words(terms, nearest, held, vectors)]


def test_candidates_are_ranked_by_their_words_nearest_the_question_s(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    vectors = words_of(Words())
    asked = ["contact"]
    assert by_words(asked, vectors, a="user confirmed the refund", b="customer prefers email") == [
        "b",
        "a",
    ]
    assert by_words(asked, vectors, a="one candidate") == []
    assert by_words(["the"], vectors, a="x y", b="y z") == []
    monkeypatch.setattr(wordmatch, "CANDIDATES", 2)  # the vector half's best two alone
    assert by_words(asked, vectors, a="a refund", b="a refund again", c="an email") == ["a", "b"]


def test_each_word_is_embedded_once_and_at_most_so_many_are_held() -> None:
    embedder = Words()
    vectors = words_of(embedder, held=3)
    vectors.of(["contact", "email"])
    vectors.of(["email", "contact", "email"])
    assert embedder.asked == ["contact", "email"]
    first = vectors.of(["phone", "refund"])
    assert embedder.asked == ["contact", "email", "phone", "refund"]
    vectors.of(["contact"])  # asked since "email" was: held still
    assert embedder.asked[-1] == "refund"
    vectors.of(["email"])  # the least recently used, let go
    assert embedder.asked[-1] == "email"
    assert np.isclose(np.linalg.norm(first["phone"]), 1.0, atol=1e-3)
    # held under keyed digests: no word stays in the copy
    assert all(isinstance(k, bytes) and b"phone" not in k for k in vectors._vectors)


@pytest.mark.parametrize(
    ("question", "read"),
    [
        ("email them", False),  # full text finds one
        ("how to contact them", True),  # it finds nothing
        ("would they likely want an email", True),  # it finds one, but the question supposes
    ],
)
def test_the_list_reads_where_full_text_finds_nothing_or_the_question_supposes(
    db_path: object, monkeypatch: pytest.MonkeyPatch, question: str, read: bool
) -> None:
    """Where full text finds a candidate, it and the vector half decide as before (the
    list, read beside them on LoCoMo, moved single-hop and temporal questions down),
    unless the question asks what the facts imply ("would ... likely"), whose answer
    shares few words with them."""
    called: list[bool] = []
    real = wordmatch.by_words
    monkeypatch.setattr(wordmatch, "by_words", lambda *a: called.append(True) or real(*a))
    ref = ResourceRef("w")
    with engram.open(db_path, embedder=engram.HashingEmbedder(64)) as mem:  # type: ignore[arg-type]
        mem.remember_many(ref, ["the customer prefers email", "user confirmed the refund"])
        assert mem.recall(ref, question, top_k=2)
    assert called == ([True] if read else [])


@pytest.mark.parametrize(
    ("question", "supposes"),
    [
        ("Would Caroline likely enjoy a hike?", True),
        ("What might Bo's degree be in?", True),
        ("Could Ana probably run a marathon?", True),
        ("WOULD they move?", True),
        ("What did Caroline paint?", False),
        ("When is the deploy?", False),
        ("Where does the wouldbe author live?", False),  # a word holding "would"
        ("When did Caroline say she would go camping?", False),  # asks for a time
    ],
)
def test_a_question_that_supposes_is_told_from_one_that_asks_what_is_stated(
    question: str, supposes: bool
) -> None:
    assert asked.supposes(question) is supposes
