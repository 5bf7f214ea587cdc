"""What two near-identical sentences can still disagree on: figures, dates, polarity.

Sentence vectors and shared words barely tell "we met on the 3rd" from "we met on the
4th", or "she likes jazz" from "she doesn't like jazz". Whatever compares two facts for
sameness (consolidation's merge) or a response for use of a fact (retrieval feedback)
reads these apart:

- **figures**: numbers as written, thousands separators dropped (``1,200`` is ``1200``;
  ``3rd`` is ``3``), and number words (``three``, ``third``, ``dozen``);
- **dates**: month and weekday names (full or short) and the words that place a time
  relative to now (``yesterday``, ``tomorrow``, ``last``, ``next``, ``ago``, ...);
- **polarity**: whether the text negates, an odd count of negation words (``n't`` reads
  as ``t``; two negations affirm).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NEGATIONS = frozenset("not no never nothing nobody none neither nor cannot without t".split())
# a word, or a figure whole as written (``349.99``, ``7:45``, ``1,200``)
TOKEN = re.compile(r"\d+(?:[.,:]\d+)*|\w+", re.UNICODE)
_WORD = re.compile(r"\w+", re.UNICODE)
_ORDINAL = re.compile(r"(\d+)(?:st|nd|rd|th)$")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")

_NUMBER_WORDS = {
    word: str(n)
    for n, words in enumerate(
        (
            "zero",
            "one first once",
            "two second twice",
            "three third thrice",
            "four fourth",
            "five fifth",
            "six sixth",
            "seven seventh",
            "eight eighth",
            "nine ninth",
            "ten tenth",
            "eleven eleventh",
            "twelve twelfth dozen",
            "thirteen thirteenth",
            "fourteen fourteenth",
            "fifteen fifteenth",
            "sixteen sixteenth",
            "seventeen seventeenth",
            "eighteen eighteenth",
            "nineteen nineteenth",
            "twenty twentieth",
        )
    )
    for word in words.split()
}
_NUMBER_WORDS.update(
    {
        "thirty": "30",
        "forty": "40",
        "fifty": "50",
        "sixty": "60",
        "seventy": "70",
        "eighty": "80",
        "ninety": "90",
        "hundred": "100",
        "thousand": "1000",
        "million": "1000000",
        "billion": "1000000000",
        "half": "0.5",
        "quarter": "0.25",
    }
)
_MONTHS = (
    "january february march april may june july august september october november december"
).split()
_DAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_DATE_WORDS = {
    **{m: m for m in _MONTHS},
    **{m[:3]: m for m in _MONTHS if m != "may"},
    "sept": "september",
    **{d: d for d in _DAYS},
    **{d[:3]: d for d in _DAYS},
    "tues": "tuesday",
    "thurs": "thursday",
    **{
        w: w
        for w in (
            "yesterday today tonight tomorrow last next ago previous upcoming "
            "morning afternoon evening night weekend"
        ).split()
    },
}


@dataclass(frozen=True, slots=True)
class Specifics:
    """A text's figures, dates and polarity."""

    figures: frozenset[str]
    dates: frozenset[str]
    negated: bool


def of(text: str) -> Specifics:
    """The figures, dates and polarity of ``text``."""
    figures: set[str] = set()
    dates: set[str] = set()
    for token in TOKEN.findall(_THOUSANDS.sub("", text)):
        lower = token.lower()
        if lower[0].isdigit():
            ordinal = _ORDINAL.match(lower)
            figures.add(ordinal.group(1) if ordinal else lower)
        elif lower in _NUMBER_WORDS:
            figures.add(_NUMBER_WORDS[lower])
        elif lower in _DATE_WORDS:
            dates.add(_DATE_WORDS[lower])
    return Specifics(frozenset(figures), frozenset(dates), negated(text))


def agree(a: str, b: str) -> bool:
    """Whether two texts state the same figures and dates, with the same polarity."""
    return of(a) == of(b)


def negated(text: str) -> bool:
    """Whether a text negates: an odd count of negation words (``n't`` reads as ``t``)."""
    count = sum(1 for w in _WORD.findall(text.lower()) if w in NEGATIONS)
    return count % 2 == 1
