"""What a vector reads of a conversation: a turn's words without its speaker's label, and
a question without the names of those who speak.

A conversation's turn is stored as ``"{speaker}: {text}"`` (the speaker also in its
metadata), so a speaker's name opens half a scope's facts. Embedded whole, that name
weighs on every turn's vector, and a question that names the speaker ("what did Caroline
research?") finds her turns before the turn that answers it: who said something is the
speaker list's to read (:mod:`engram.core.signals`), what was said is the vector's. So a
turn's vector reads its words after its speaker's label (:func:`words`: the ``speaker``
of its metadata opening its content, as ``remember_conversation`` writes it; any other
fact's vector reads its whole content), and a question's vector reads the question
without the first names of the speakers its full-text candidates were said by
(:func:`question`; only for a question that may name someone, :func:`may_name`. Recall
reads that half first in a scope where the process met speakers before; elsewhere its
halves keep running at once, and it reads again when the question names a speaker).
Measured on LoCoMo dev (BENCHMARKS.md): the vector half alone 0.499 to 0.620
recall@10, the hybrid 0.763 to 0.795 with neighbour context and 0.693 to 0.724 without,
every category up.

Vectors of a turn's words and vectors of its whole content are not comparable, so the
store's model record says which it holds (:data:`SUFFIX` after the model's name): a store
written before keeps its vectors and is read as written until it is
re-embedded (``reembed=True``), which moves it to its words (:func:`reading` chooses).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from engram.core.graph.names import body
from engram.core.ports import Embedder, EmbedKind, Store, Vectors
from engram.core.query import STOPWORDS, WORD

SUFFIX = " (words without speaker labels)"
_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")
_POSSESSIVE = ("'s", "\u2019s")


def words(content: str, metadata: Mapping[str, Any] | None) -> str:
    """What the vector of a fact with ``content`` and ``metadata`` reads when its store
    reads turns' words: a turn's words after its speaker's label (``"{speaker}: "``, the
    ``speaker`` of its metadata), else the whole content."""
    start = body(content, (metadata or {}).get("speaker"))
    return content[start:] if start and content[start:] else content


def passages(
    embedder: Embedder, facts: Sequence[tuple[str, Mapping[str, Any] | None]]
) -> list[str]:
    """The texts ``embedder`` embeds for these (content, metadata): :func:`words` where
    it reads turns' words, else the contents."""
    if not reads_words(embedder):
        return [content for content, _ in facts]
    return [words(content, metadata) for content, metadata in facts]


def question(text: str, speakers: Collection[str]) -> str:
    """``text`` without the words (and their possessive) that are one of ``speakers``
    (case-folded first names); ``text`` itself when nothing else would be left."""
    if not speakers:
        return text
    kept: list[str] = []
    at = 0
    for match in _WORD.finditer(text):
        word = match.group().casefold()
        for ending in _POSSESSIVE:
            word = word.removesuffix(ending)
        if word in speakers:
            kept.append(text[at : match.start()])
            at = match.end()
    kept.append(text[at:])
    left = re.sub(r"[ \t]{2,}", " ", "".join(kept)).strip()
    return left if _WORD.search(left) else text


class TurnWords:
    """``inner`` as the embedder of a store whose vectors read turns' words
    (:func:`passages` chooses the texts): its model is ``inner``'s with :data:`SUFFIX`,
    so its vectors are never compared with ``inner``'s; it embeds what it is given, and
    every other attribute is ``inner``'s (a token counter stays one)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner

    @property
    def model(self) -> str:
        return self.inner.model + SUFFIX

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> Vectors:
        return self.inner.embed(texts, kind)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def reading(store: Store, embedder: Embedder, *, reembed: bool = False) -> Embedder:
    """The embedder ``store`` is read and written with: ``embedder`` as it is for a store
    whose vectors it made of whole contents (its record names ``embedder``'s own model:
    a store written before turns were read by their words) unless it is being
    re-embedded, else reading turns' words."""
    if isinstance(embedder, TurnWords):
        return embedder
    stored = store.run(lambda tx: store.models.get(tx), write=False)
    if stored is not None and stored.model == embedder.model and not reembed:
        return embedder
    return TurnWords(embedder)


def given(embedder: Embedder | None) -> Embedder | None:
    """The embedder the caller gave, without what :func:`reading` put around it."""
    return embedder.inner if isinstance(embedder, TurnWords) else embedder


def may_name(text: str) -> bool:
    """Whether ``text`` holds a word that may name someone: one with a capital that is
    not a function word ("What did Caroline say?"; not "what plan is the user on?")."""
    return any(word[:1].isupper() and word.lower() not in STOPWORDS for word in WORD.findall(text))


def reads_words(embedder: Embedder | None) -> bool:
    """Whether ``embedder``'s vectors read turns' words (questions then leave out the
    speakers' names)."""
    return isinstance(embedder, TurnWords)
