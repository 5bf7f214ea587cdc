"""Relations stated in plain sentences, read by rules between a text's mentions, with
the time the sentence gives them.

A relation is read only where the words between two mentions of one sentence are one of
a few clear patterns; anything else (a negation, a wish, a question, an adverb not
listed) reads nothing: "Ana wants to move to Oslo" and "Ana doesn't live in Oslo" state
no relation. The types, source first:

- ``lives_in`` ("Ana lives in Oslo", "has lived in"), ``works_for`` ("works at", "works
  for", "is employed by", "got a job at", "is a nurse at"), ``studies_at`` ("studies at",
  "is a student at", "graduated from"), ``moved_to`` ("moved to", "moved back to"; not
  "is moving to"), ``born_in`` ("was born in"), ``from`` ("is from", "comes from", "grew
  up in"), ``located_in`` ("is based in", "is located in"; and "in Porto, Portugal": the
  first place in the second), ``married_to`` ("is married to", "married", "Ana and Luis
  got married"), ``friend_of`` ("is a friend of", "is friends with", "Ana's friend
  Luis");
- family, with a role: "Ana's brother Luis", "Ana's sister, Maria, ...", "Luis is Ana's
  brother", "Luis is the brother of Ana" give ``brother_of`` from Luis to Ana: the
  relative is the source, as the chat model's ``sister_of`` has it (:mod:`llm`), and the
  role is the type's first part, in its plain form (:data:`ROLES`: "mom" is ``mother``).

Subjects listed with "and" share the relation ("Ana and Luis live in Oslo": two).

**Time.** A year, a month and year, or a date in the same sentence, after "in", "since",
"from", "as of" or "on" ("in March 2019", "since 2019"), and "last year", "this year",
"last month", "this month", are the relation's ``time`` as written; :func:`valid_at`
gives the start of the period it names, "last year" counted from the fact's own time
(the first of January of the year before). Other relative times ("two years ago", "last
summer") stay as written, with no ``valid_at``: resolving them would guess.

Pure and deterministic: the same text and mentions give the same relations, in order of
position. The graph stores what they read in each fact as that fact's relations, marked
as the rules', with ``valid_at`` resolved against the fact's own time
(:mod:`engram.core.graph.indexing`). Measured on the labelled sentences in BENCHMARKS.md
(``bench/names.py``): dev relations 0.984 / 0.604 / 0.748, held-out 0.907 / 0.505 / 0.649.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from engram.core.graph.extraction import Mention
from engram.core.graph.ordinary import KIN

# A kin word's plain form, as a family relation's type says it: "brother_of".
ROLES = {
    **{word: word for word in KIN},
    "mom": "mother",
    "mum": "mother",
    "mommy": "mother",
    "mama": "mother",
    "dad": "father",
    "daddy": "father",
    "papa": "father",
    "kid": "child",
    "auntie": "aunt",
    "grandma": "grandmother",
    "granny": "grandmother",
    "grandpa": "grandfather",
    "stepmom": "stepmother",
    "stepdad": "stepfather",
    "bestie": "friend",
    "neighbour": "neighbor",
    "coworker": "colleague",
    "parents": "parent",
}

_ADVERB = r"(?:(?:now|still|currently|recently|just|also|finally|already|actually)\s+)?"
_HAS = r"(?:(?:has|have|had)\s+(?:been\s+)?)?"
_PATTERNS: tuple[tuple[str, str], ...] = (
    ("studies_at", r"(?:studies|study|studied|is studying|are studying|(?:is|was|are|were)"
     r" (?:a )?students?|enrolled|graduated) (?:at|from)"),
    ("works_for", r"(?:works|work|worked|working|is working|are working) (?:at|for)"
     r"|(?:works|worked|is working) as an? [a-z]+(?: [a-z]+)? (?:at|for)"
     r"|(?:is|was|are|were) (?:employed|hired) (?:at|by)|(?:got|took|started|has|found) (?:a|the)"
     r"(?: new)? job (?:at|with)|(?:is|was) an? [a-z]+(?: [a-z]+)? (?:at|with)|joined"
     r"|(?:teaches|taught|writes|wrote) (?:at|for)"),
    ("lives_in", r"(?:lives|live|lived|living|is living|are living|resides|settled) in"),
    ("moved_to", r"(?:moved|relocated)(?: back| here| over)? to"),
    ("born_in", r"(?:was|were) born in"),
    ("from", r"(?:is|are|was|were) (?:originally )?from|(?:comes|come|came) from"
     r"|(?:grew|grow) up in"),
    ("located_in", r"(?:is|are|was) (?:located|based|situated|headquartered) in"),
    ("married_to", r"(?:is|was|got|has been) married to|married"),
    ("friend_of", r"(?:is|was|has been) (?:a |an )?(?:good |close |best |old )?friends?"
     r" (?:of|with)|(?:is|are) friends with"),
)  # fmt: skip
_BETWEEN = re.compile(
    r",?\s+"
    + _ADVERB
    + _HAS
    + r"(?:"
    + "|".join(f"(?P<{name}>{pattern})" for name, pattern in _PATTERNS)
    + r")\s+(?:the\s+)?(?:(?:dr|mr|mrs|ms|prof|professor)\.?\s+)?",
    re.IGNORECASE,
)
_KIN = "|".join(sorted(ROLES, key=lambda w: (-len(w), w)))
# "Ana's brother Luis", "Ana's sister, Maria,": from the possessive to the relative.
_POSSESSED = re.compile(
    rf"['\u2019]s?\s+(?:(?:older|younger|big|little|best|old|new)\s+)?({_KIN}),?\s+"
)
# "Luis is Ana's brother": after the possessive, the role.
_IS = re.compile(r"\s+(?:is|was)\s+")
_ROLE_AFTER = re.compile(rf"['\u2019]s?\s+(?:(?:older|younger|big|little|best|old)\s+)?({_KIN})\b")
_ROLE_OF = re.compile(rf"\s+(?:is|was)\s+(?:the|a)\s+({_KIN})\s+of\s+")
_AND = re.compile(r"\s*,\s*|\s+and\s+|\s*,\s*and\s+")
# "Gustavo plays FIFA with his nephew Enzo": the relative of the sentence's subject.
_THEIR = re.compile(
    rf"\b(?:his|her|their)\s+(?:(?:older|younger|big|little|best|old)\s+)?({_KIN}),?\s+$"
)
_GOT_MARRIED = re.compile(r"\s+(?:got|are|were)\s+married\b")
_PLACE_PAIR = re.compile(r",\s+")
_BEFORE_PLACE = re.compile(r"\b(?:in|from|to|near|visit|visited|visiting)\s+$", re.IGNORECASE)

_MONTHS = (
    "january february march april may june july august september october november december"
).split()
_MONTH = r"(?:" + "|".join(m.capitalize() for m in _MONTHS) + r")"
_TIME = re.compile(
    r"\b(?:(?:in|as of|on)\s+(?P<at>(?:\d{1,2}\s+)?(?:" + _MONTH + r"\s+)?"
    r"(?:\d{1,2},?\s+)?\d{4})\b"
    r"|(?P<since>since\s+(?:\d{1,2}\s+)?(?:" + _MONTH + r"\s+)?"
    r"(?:\d{1,2},?\s+)?\d{4})\b"
    r"|(?P<rel>(?:last|this)\s+(?:year|month))\b"
    r"|(?P<loose>(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten)\s+"
    r"(?:years?|months?|weeks?|days?)\s+ago|last\s+(?:week|summer|winter|spring|fall"
    r"|autumn)))",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[.!?\n]+(?:\s|$)")
_NAMED = ("name", "speaker")  # kinds a relation may join: not handles, tags or links


@dataclass(frozen=True, slots=True)
class Stated:
    """A relation a text states: ``mentions[source]`` -[type]-> ``mentions[target]``,
    with its time as written (None when the sentence gives none)."""

    source: int
    type: str
    target: int
    time: str | None = None


def relations(text: str, mentions: Sequence[Mention]) -> list[Stated]:
    """The relations ``text`` states between its ``mentions`` (in order of position, as
    :func:`engram.core.graph.extraction.extract` gives them), each once, in order of
    their source's then target's position."""
    if len(mentions) < 2:
        return []
    found: dict[tuple[int, str, int], Stated] = {}
    for source, kind, target in _read(text, mentions):
        if source == target or mentions[source].name == mentions[target].name:
            continue
        if (source, kind, target) not in found:
            # kin, friends and places in places: a state whose start no sentence says here
            timeless = kind.endswith("_of") or (kind == "located_in" and source + 1 == target)
            time = None if timeless else _time(text, mentions[source].start, mentions[target].end)
            found[(source, kind, target)] = Stated(source, kind, target, time)
    return sorted(found.values(), key=lambda s: (s.source, s.target, s.type))


def _read(text: str, mentions: Sequence[Mention]) -> Iterator[tuple[int, str, int]]:
    for i in range(len(mentions) - 1):
        a, b = mentions[i], mentions[i + 1]
        if a.kind not in _NAMED or b.kind not in _NAMED:
            continue
        gap = text[a.end : b.start]
        if len(gap) > 80:
            continue
        if said := _BETWEEN.fullmatch(gap):
            kind = said.lastgroup or ""
            for subject in _subjects(text, mentions, i):
                yield subject, kind, i + 1
            if kind == "located_in" or _BEFORE_PLACE.search(text, max(0, a.start - 12), a.start):
                yield from _place_pair(text, mentions, i + 1)
        elif role := _POSSESSED.fullmatch(gap):
            yield from _family(role.group(1), i + 1, i)
        elif role := _ROLE_OF.fullmatch(gap) or (
            _IS.fullmatch(gap) and _ROLE_AFTER.match(text, b.end)
        ):
            yield from _family(role.group(1), i, i + 1)
        elif _AND.fullmatch(gap) and _GOT_MARRIED.match(text, b.end):
            yield i, "married_to", i + 1
        elif _PLACE_PAIR.fullmatch(gap) and _BEFORE_PLACE.search(
            text, max(0, a.start - 12), a.start
        ):
            yield i, "located_in", i + 1
        elif (role := _THEIR.search(gap)) and (head := _subject(text, mentions, i)) is not None:
            yield from _family(role.group(1), i + 1, head)


def _subjects(text: str, mentions: Sequence[Mention], i: int) -> Iterator[int]:
    """The mention at ``i`` and those listed before it with "and" or commas."""
    yield i
    while i > 0 and mentions[i - 1].kind in _NAMED:
        if not _AND.fullmatch(text[mentions[i - 1].end : mentions[i].start]):
            return
        i -= 1
        yield i


def _subject(text: str, mentions: Sequence[Mention], i: int) -> int | None:
    """The first name of the sentence holding the mention at ``i``, if a name."""
    while i > 0 and not _SENTENCE_END.search(text, mentions[i - 1].end, mentions[i].start):
        i -= 1
    return i if mentions[i].kind in _NAMED else None


def _place_pair(text: str, mentions: Sequence[Mention], i: int) -> Iterator[tuple[int, str, int]]:
    """ "in Porto, Portugal": the place at ``i`` located in the one after it."""
    if i + 1 < len(mentions) and _PLACE_PAIR.fullmatch(
        text[mentions[i].end : mentions[i + 1].start]
    ):
        yield i, "located_in", i + 1


def _family(word: str, relative: int, of: int) -> Iterator[tuple[int, str, int]]:
    role = ROLES[word.casefold()]
    if role == "friend":  # friends both ways: the first named is the source
        yield min(relative, of), "friend_of", max(relative, of)
    else:
        yield relative, f"{role}_of", of


def _time(text: str, start: int, end: int) -> str | None:
    """The first time stated in the sentence holding ``text[start:end]``."""
    begin = 0
    for stop in _SENTENCE_END.finditer(text, 0, start):
        begin = stop.end()
    after = _SENTENCE_END.search(text, end)
    found = _TIME.search(text, begin, after.start() if after else len(text))
    if found is None:
        return None
    return found.group(found.lastgroup or 0)


def valid_at(time: str | None, written: datetime) -> datetime | None:
    """When a relation stated with ``time`` (as :func:`relations` gives it) began: the
    first moment of the year, month or day it names, in UTC; "last year", "this year",
    "last month" and "this month" counted from ``written``, the fact's own time. None
    for no time or one that names no such period ("two years ago")."""
    if time is None:
        return None
    words = time.replace(",", " ").split()
    folded = [w.casefold() for w in words]
    if folded[-1] in ("year", "month"):
        back = 1 if folded[0] == "last" else 0
        if folded[-1] == "year":
            return datetime(written.year - back, 1, 1, tzinfo=UTC)
        months = written.year * 12 + written.month - 1 - back
        return datetime(months // 12, months % 12 + 1, 1, tzinfo=UTC)
    if not words[-1].isdigit() or len(words[-1]) != 4:
        return None
    year = int(words[-1])
    month = next((_MONTHS.index(w) + 1 for w in folded if w in _MONTHS), None)
    day = next((int(w) for w in words[:-1] if w.isdigit()), None)
    try:
        return datetime(year, month or 1, day if month and day else 1, tzinfo=UTC)
    except ValueError:
        return None
