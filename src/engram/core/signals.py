"""What a memory knows beyond its words, as more lists for the fusion.

A hybrid recall's two halves find the candidates; these lists reorder them, each over
the candidates only (never adding one but the speaker's nearest), fused beside the
halves by :func:`engram.core.ranking.fuse`:

- **feedback**: the query widened by the words its best full-text hits share, scored by
  BM25 over the candidates (:mod:`engram.core.feedback`);
- **speaker**: when the question names someone who said some of the candidates (their
  ``speaker``, as a conversation's turns carry it), the turns that person said;
- **the speaker's nearest**: when such a question asks anything but when, that person's
  words among the nearest by meaning. Where recall knows before the vector half that the
  question names a speaker, that half is read :data:`NEAREST` deep for this list alone
  (the half and the other lists keep the pool), so this list may add candidates: a
  question about what someone likes or did gathers their words from across the
  conversation. A question asking when asks for the time of an event, which the other
  speaker's turns tell as often ("how was the hike yesterday?"), so it reads none;
- **time**: when the question names a period (:mod:`engram.core.when`: a day, a month,
  a range of days, a time relative to a day it names or to when it is asked), the
  candidates that happened in it, or whose words say it relative to when they were said
  ("I went yesterday");
- **kind**: when the question asks for a kind of name (:mod:`engram.core.asked`: "where"
  a place, "who" a person, "which company" an organisation), the candidates whose own
  words (not their context, not their speaker's label) hold a name of that kind, as the
  graph's rules typed it when they read the fact (its mentions,
  :mod:`engram.core.graph.entity_types`): one read of the store, whatever the facts'
  length; a store whose graph reads no facts has none;
- **words**: when the full-text half found nothing (the vector half would decide
  alone), or the question asks what the facts imply rather than what they state
  (:func:`engram.core.asked.supposes`: "would Ana likely enjoy hiking?"), the vector
  half's best by how near their words come to the question's, word by word
  (:mod:`engram.core.wordmatch`).

The speaker, speaker's nearest, time and kind lists hold their candidates at one score,
so each counts as the fusion counts a list that cannot tell its members apart (half of a
list's range) and nothing is weighted. Measured on the LoCoMo dev split in BENCHMARKS.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from datetime import datetime
from functools import lru_cache

from engram.core import asked, feedback, query, when, wordmatch
from engram.core.query import STOPWORDS
from engram.core.ranking import Candidate, Traits

# How many of the nearest by meaning a question naming a speaker reads for that person's
# words: four times recall's candidate pool, a bounded read (their rows' traits too).
NEAREST = 200


def lists(
    question: str,
    terms: Sequence[str],
    text: Sequence[Candidate],
    traits: Mapping[str, Traits],
    kinds: Mapping[str, AbstractSet[str]] | None = None,
    asked_at: datetime | None = None,
    nearest: Sequence[Candidate] = (),
    wider: Mapping[str, Traits] | None = None,
    words: wordmatch.WordVectors | None = None,
) -> list[list[Candidate]]:
    """The lists that are not empty, for the candidates ``traits`` describes (by id);
    ``text`` is the full-text half, best first; ``kinds`` the types of the names each
    candidate's own words hold (:func:`by_kind`), read where the question asks a kind;
    ``asked_at`` when the question was asked (:func:`by_time`); ``nearest`` the vector half,
    best first, read deeper where the question names a speaker, with ``wider`` the traits
    of those of its candidates ``traits`` does not hold (:func:`by_speaker_nearest`);
    ``words`` the store's embedder's words, for the words list where ``text`` is empty or
    the question supposes."""
    found = [
        _feedback(terms, text, traits),
        by_speaker(question, traits),
        by_time(question, traits, asked_at),
        by_kind(question, kinds or {}),
        by_speaker_nearest(question, nearest, {**traits, **(wider or {})}),
        wordmatch.by_words(terms, nearest, traits, words)
        if words and (not text or asked.supposes(question))
        else [],
    ]
    return [candidates for candidates in found if candidates]


def reads_nearest(question: str, named: AbstractSet[str]) -> bool:
    """Whether the vector half of ``question`` is searched :data:`NEAREST` deep: it names
    a speaker (``named``, :func:`named_speakers`) and asks anything but when."""
    return bool(named) and asked.wh(question) != "when"


def by_speaker_nearest(
    question: str, nearest: Sequence[Candidate], traits: Mapping[str, Traits]
) -> list[Candidate]:
    """The candidates of ``nearest`` said by someone the question names, for a question
    asking anything but when."""
    named = named_speakers(question, traits)
    if not reads_nearest(question, named):
        return []
    return _flat(
        c.id
        for c in nearest
        if (t := traits.get(c.id)) is not None and t.speaker and _first_word(t.speaker) in named
    )


def _feedback(
    terms: Sequence[str], text: Sequence[Candidate], traits: Mapping[str, Traits]
) -> list[Candidate]:
    top = [traits[c.id].text for c in text[: feedback.HITS] if c.id in traits]
    more = feedback.words(terms, top)
    if not more:
        return []
    return feedback.scores([*terms, *more], {fid: t.text for fid, t in traits.items()})


def by_speaker(question: str, traits: Mapping[str, Traits]) -> list[Candidate]:
    """The candidates said by someone the question names (:func:`named_speakers`)."""
    named = named_speakers(question, traits)
    return _flat(fid for fid, t in traits.items() if t.speaker and _first_word(t.speaker) in named)


def named_speakers(question: str, traits: Mapping[str, Traits]) -> set[str]:
    """The first words (lower case) of the names of those who said the candidates that
    the question names: a speaker is named when the first word of their name is a word
    of the question (not a function word)."""
    words = {w.lower() for w in query.WORD.findall(question)}
    firsts = {_first_word(t.speaker) for t in traits.values() if t.speaker}
    return {first for first in firsts if first is not None and first in words}


def by_time(
    question: str, traits: Mapping[str, Traits], asked_at: datetime | None = None
) -> list[Candidate]:
    """The candidates that happened in a period the question names, or whose own words
    refer to a day in it relative to when they were said ("yesterday", "last week":
    :func:`engram.core.when.referred`); the question's own relative times ("what did I
    do yesterday?") are read against ``asked_at`` where it names no day."""
    periods = when.periods(question, asked_at)
    if not periods:
        return []
    return _flat(fid for fid, t in traits.items() if _in(periods, t))


def _in(periods: Sequence[when.Period | when.Days], traits: Traits) -> bool:
    if any(p.holds(traits.at) for p in periods):
        return True
    referred = when.referred(traits.content, traits.at)
    return any(p.meets(first, last) for first, last in referred for p in periods)


def by_kind(question: str, kinds: Mapping[str, AbstractSet[str]]) -> list[Candidate]:
    """The candidates whose own words name the kind of thing the question asks for;
    ``kinds`` holds the types of the names in each candidate's words, by id."""
    wanted = asked.kind(question)
    if wanted is None:
        return []
    return _flat(fid for fid, held in kinds.items() if wanted in held)


@lru_cache(maxsize=4096)  # a conversation has few speakers, met on every turn
def _first_word(name: str) -> str | None:
    words = query.WORD.findall(name.lower())
    return words[0] if words and words[0] not in STOPWORDS else None


def _flat(ids: Iterable[str]) -> list[Candidate]:
    return [Candidate(fid, 1.0) for fid in sorted(ids)]
