"""What kind of name a question asks for: "Where has Ana been?" a place, "Who came?" a
person, "Which company does Bo work for?" an organisation, "What video games does Nate
play?" a work.

Recall favours the candidates whose own words hold a name of that kind
(:func:`engram.core.signals.by_kind`, the types read by
:mod:`engram.core.graph.entity_types`). The question's first wh-word decides: "where" asks
for a place; "who", "whom" and "whose" for a person; "what" and "which" for the kind of
the nouns between them and the question's verb ("which US states", "what video games
does"), by the words that name places and organisations in entity names
(:data:`~engram.core.graph.places.PLACE_WORDS`,
:data:`~engram.core.graph.organisations.WORDS`) and a few more of each, and
titled works' nouns. Anything else ("when", "how many", "what kind of art") asks for no
kind of name: None. :func:`wh` is that first wh-word.
"""

from __future__ import annotations

import re

from engram.core.graph import organisations
from engram.core.graph.models import ORGANISATION, PERSON, PLACE, WORK
from engram.core.graph.places import PLACE_WORDS
from engram.core.query import WORD

_NOUNS = {
    **{w: PLACE for w in PLACE_WORDS},
    **{
        w: PLACE
        for w in "country place location destination spot area continent neighbourhood"
        " neighborhood".split()
    },
    **{w: ORGANISATION for w in organisations.WORDS},
    **{
        w: ORGANISATION
        for w in "organisation organization employer firm business store shop restaurant"
        " brand band".split()
    },
    **{
        w: WORK
        for w in "book movie film show novel song album game series podcast painting poem"
        " artwork".split()
    },
}
# What ends the nouns after "what" or "which": the question's verb.
_VERBS = frozenset(
    "do does did is are was were has have had can could will would should might may must"
    " am be been".split()
)
_WH = frozenset("what which who whom whose where when why how".split())
_PERSON_WH = frozenset({"who", "whom", "whose"})
_NOUNS_READ = 4  # "which outdoor spot", "what kind of art": a head noun comes early


_SUPPOSING = re.compile(r"\b(?:would|might|likely|probably|could)\b", re.IGNORECASE)


def supposes(question: str) -> bool:
    """Whether ``question`` asks what the memory implies rather than states ("Would Ana
    likely enjoy hiking?", "What might Bo's degree be in?"): its answer shares few words
    with the facts that imply it. A question asking when asks for the time of something
    stated, whatever it supposes ("When did Ana say she would move?")."""
    return _SUPPOSING.search(question) is not None and wh(question) != "when"


def wh(question: str) -> str | None:
    """The first wh-word of ``question`` ("what", "when", "how"...), lower case, or None."""
    words, at = _wh(question)
    return None if at is None else words[at]


def kind(question: str) -> str | None:
    """The kind of name ``question`` asks for (a type of
    :mod:`engram.core.graph.entity_types`), or None."""
    words, at = _wh(question)
    if at is None:
        return None
    wh = words[at]
    if wh == "where":
        return PLACE
    if wh in _PERSON_WH:
        return PERSON
    if wh not in ("what", "which"):
        return None
    found = None
    for word in words[at + 1 : at + 1 + _NOUNS_READ]:
        if word in _VERBS or word in _WH:
            break
        found = _noun(word) or found
    return found


def _wh(question: str) -> tuple[list[str], int | None]:
    """The question's words, lower case, and where its first wh-word is (None: nowhere)."""
    words = [w.lower() for w in WORD.findall(question)]
    return words, next((n for n, w in enumerate(words) if w in _WH), None)


def _noun(word: str) -> str | None:
    """The kind a noun (or its plural: "cities", "games") names."""
    forms = [word]
    if word.endswith("s"):
        forms += [word[:-3] + "y", word[:-1]] if word.endswith("ies") else [word[:-1]]
    return next((_NOUNS[form] for form in forms if form in _NOUNS), None)
