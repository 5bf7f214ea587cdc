"""English words, for telling a name from a word where its capital cannot.

A sentence's first word has a capital whatever it is, and chat writes names without one:
"Sunniva fixed the boiler" and "Work called" look alike to a reader of capitals, and so
do "with ikram" and "with excitement". What tells them apart is whether the word is an
English word. The lists are SCOWL's American and British English (``english.txt``
beside this module, its source and notices in its header): 65,525 words written in
lowercase, 1,090 of them also written with a capital ("Will", "Reading", "Chase").

Read once, when a reading first asks (about 15 ms); nothing here is downloaded.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

from engram.core.graph import given_names


def word(folded: str) -> bool:
    """Whether ``folded`` (case folded) is an English word: "work", "will", "japan"."""
    return folded in _lists()[0]


def only_word(folded: str) -> bool:
    """Whether ``folded`` is an English word and nothing else: never written with a
    capital in the lists, nor a given name (:mod:`engram.core.graph.given_names`):
    "work", "teacher", "traffic"; not "will", "chase", "bolt" nor "ciara"."""
    words, named = _lists()
    return folded in words and folded not in named and folded not in given_names.GIVEN


@cache
def _lists() -> tuple[frozenset[str], frozenset[str]]:
    """Every word, and those also written with a capital."""
    text = resources.files(__package__).joinpath("english.txt").read_text(encoding="utf-8")
    words: set[str] = set()
    named: set[str] = set()
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        if line.endswith("*"):
            line = line[:-1]
            named.add(line)
        words.add(line)
    return frozenset(words), frozenset(named)
