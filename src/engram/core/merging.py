"""Merged words a chat model writes, checked: ``mem.merge`` with no ``content`` asks the
memory's chat model for one statement holding what 2 to 10 facts say, and keeps it only
when it cites every figure (:mod:`engram.core.specifics`: numbers as written or as words)
and every name (a capitalised word that is not a common word) the facts hold. A model
that drops one raises UpstreamFailure, and nothing is merged: the words are the model's,
the duty to lose nothing is engram's."""

from __future__ import annotations

from collections.abc import Sequence

from engram.core import specifics
from engram.core.errors import UpstreamFailure
from engram.core.ports import ChatModel
from engram.core.query import STOPWORDS

SYSTEM = (
    "You merge notes that an AI agent's memory holds about the same thing into one note. "
    "Write one self-contained statement in the notes' language that keeps every fact, "
    "number, date and name they hold; where they disagree, keep both and say so. Answer "
    "with the statement alone: no preamble, no quotes, no list."
)


def question(contents: Sequence[str]) -> str:
    """The user message: the notes, numbered, the last one ending the message."""
    return "Notes:\n" + "\n".join(f"{n}. {text}" for n, text in enumerate(contents, 1))


def write(chat: ChatModel, contents: Sequence[str]) -> str:
    """The model's merged words for ``contents``, checked to cite what they hold."""
    answer = chat.complete(SYSTEM, question(contents)).strip().strip('"').strip()
    left_out = missing(contents, answer)
    if left_out:
        raise UpstreamFailure(
            f"the chat model's merged words leave out {', '.join(left_out)}; nothing was merged",
            hint="pass the merged words as content",
        )
    return answer


def missing(contents: Sequence[str], merged: str) -> list[str]:
    """The figures and names of ``contents`` that ``merged`` does not hold, in order."""
    have = specifics.of(merged)
    said = {w.lower() for w in specifics.TOKEN.findall(merged)}
    gone: list[str] = []
    for text in contents:
        for figure in sorted(specifics.of(text).figures - have.figures):
            if figure not in gone:
                gone.append(figure)
        for word in specifics.TOKEN.findall(text):
            if _name(word) and word.lower() not in said and word not in gone:
                gone.append(word)
    return gone


def _name(word: str) -> bool:
    return word[:1].isupper() and word.lower() not in STOPWORDS and not word.isdigit()
