"""English words, for telling a name from a word where its capital cannot.

A sentence's first word has a capital whatever it is: "Sunniva fixed the boiler" and
"Work called" look alike to a reader of capitals. What tells them apart is whether the
word is an English word. The lists are SCOWL's American and British English
(``english.txt`` beside this module, its source and notices in its header): 65,525
words written in lowercase, 41,005 of them in the lists' small editions (the common
words), 1,090 also written with a capital ("Will", "Reading", "Chase").

Read once, when a reading first asks (about 20 ms); nothing here is downloaded.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import NamedTuple

from engram.core.graph import given_names


class _Lists(NamedTuple):
    words: frozenset[str]  # every word
    common: frozenset[str]  # those of the small editions
    named: frozenset[str]  # those also written with a capital


def word(folded: str) -> bool:
    """Whether ``folded`` (case folded) is an English word: "work", "will", "yaw", or
    words joined by hyphens ("dairy-free")."""
    words = _lists().words
    return folded in words or ("-" in folded and all(p in words for p in folded.split("-")))


def common(folded: str) -> bool:
    """Whether ``folded`` is a word of the lists' small editions: "apple", "orange"; not
    "amazon" nor "tesla"."""
    return folded in _lists().common


def vocabulary() -> frozenset[str]:
    """Every English word of the lists, in lowercase: for a text's words looked up at once."""
    return _lists().words


def only_word(folded: str) -> bool:
    """Whether ``folded`` is a common English word and nothing else: never written with a
    capital in the lists, nor a given name (:mod:`engram.core.graph.given_names`): "work",
    "teacher", "traffic"; not "will" nor "chase" (names too), "ciara" (a given name), nor
    "yaw" (a word few write, a name many do)."""
    lists = _lists()
    return folded in lists.common and folded not in lists.named and folded not in given_names.GIVEN


@cache
def _lists() -> _Lists:
    text = resources.files(__package__).joinpath("english.txt").read_text(encoding="utf-8")
    words: set[str] = set()
    common: set[str] = set()
    named: set[str] = set()
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        entry = line.rstrip("+*")
        words.add(entry)
        if "+" in line[len(entry) :]:
            common.add(entry)
        if "*" in line[len(entry) :]:
            named.add(entry)
    return _Lists(frozenset(words), frozenset(common), frozenset(named))
