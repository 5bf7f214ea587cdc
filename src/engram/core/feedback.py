"""Relevance feedback over the candidates already found: a third list for the fusion.

The words that recur in the best full-text hits (found in at least two of the top three,
not in the query, not function words) say what the question is about in the scope's own
words. The query with those words is scored by BM25 over the candidates both halves
found, and that list joins the fusion (:func:`engram.core.ranking.fuse`): it reorders the
candidates, never adds one, so it costs a read of the candidates' rows and no second
search of the scope. BM25's constants are the usual ones (k1 1.2, b 0.75); its document
frequencies are the candidates' own.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

from engram.core import query
from engram.core.query import STOPWORDS
from engram.core.ranking import Candidate
from engram.core.relevance import stem

HITS = 3  # the top full-text hits the words come from
AGREE = 2  # in how many of them a word must be
WORDS = 5  # at most this many words join the query
K1, B = 1.2, 0.75


def tokens(text: str) -> Counter[str]:
    """The stemmed words of ``text`` with their counts (each distinct word stemmed once)."""
    counted: Counter[str] = Counter()
    for word, n in Counter(query.WORD.findall(text.lower())).items():
        counted[stem(word)] += n
    return counted


def words(query_terms: Sequence[str], top: Sequence[str]) -> list[str]:
    """The feedback words of the top full-text hits' texts, most shared first."""
    asked = {stem(t) for t in query_terms}
    seen: Counter[str] = Counter()
    order: dict[str, int] = {}
    for text in top[:HITS]:
        for word in tokens(text):
            if len(word) > 2 and word not in asked and word not in STOPWORDS:
                seen[word] += 1
                order.setdefault(word, len(order))
    shared = [w for w, n in seen.items() if n >= AGREE]
    shared.sort(key=lambda w: (-seen[w], order[w]))
    return shared[:WORDS]


def _counts(text: str, wanted: set[str], starts: tuple[str, ...]) -> tuple[int, dict[str, int]]:
    """How many words ``text`` has, and how often each ``wanted`` stem occurs in it;
    ``starts``: what a word stemming to one of them begins with (:func:`_start`), so a
    text holding none of those is not stemmed word by word."""
    lowered = text.lower()
    raw = query.WORD.findall(lowered)
    found: dict[str, int] = {}
    if not any(start in lowered for start in starts):
        return len(raw), found
    for word, n in Counter(raw).items():
        stemmed = stem(word)
        if stemmed in wanted:
            found[stemmed] = found.get(stemmed, 0) + n
    return len(raw), found


def _start(stemmed: str) -> str:
    """What every word that :func:`stem` gives ``stemmed`` begins with: the stem itself,
    less the "y" that stands for an "ies" it took off ("parties" -> "party")."""
    return stemmed[:-1] if stemmed.endswith("y") else stemmed


def scores(terms: Sequence[str], texts: Mapping[str, str]) -> list[Candidate]:
    """The candidates ``texts`` (by id) scored by BM25 for ``terms``, best first; those
    holding none of them are left out."""
    wanted = list(dict.fromkeys(stem(t) for t in terms))
    looked = set(wanted)
    starts = tuple({_start(w) for w in wanted})
    docs = {fid: _counts(text, looked, starts) for fid, text in texts.items()}
    if not docs or not wanted:
        return []
    average = sum(length for length, _ in docs.values()) / len(docs)
    frequency = {t: sum(1 for _, c in docs.values() if t in c) for t in wanted}
    ranked = []
    for fid, (length, counts) in docs.items():
        score = 0.0
        for term in wanted:
            tf = counts.get(term, 0)
            if not tf:
                continue
            idf = math.log(1 + (len(docs) - frequency[term] + 0.5) / (frequency[term] + 0.5))
            score += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / (average or 1)))
        if score > 0:
            ranked.append(Candidate(fid, score))
    ranked.sort(key=lambda c: (-c.score, c.id))
    return ranked
