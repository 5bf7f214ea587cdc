"""Which injected facts a response used: deterministic detection of retrieval feedback.

A fact injected into a prompt counts as **used** when any of these holds, in this order
(the reason names the first that held), and as **ignored** otherwise:

1. ``cited``: the response names its id, or cites it as ``[n]`` (``n`` its 1-based
   position among the injected facts; ``[1, 3]`` cites both);
2. ``terms``: the response holds at least half of the fact's salient weight, in at least
   two salient terms. Salient terms are the fact's words stemmed
   (:func:`engram.core.relevance.stem`), stopwords dropped
   (:data:`engram.core.query.STOPWORDS`); numbers and capitalised words weigh 2, others 1.
   A number matches only whole and as written (``15`` never matches ``150``, nor
   ``349.99`` ``394.99``);
3. ``sentence``: with an embedder, some sentence of the response has a cosine of at least
   0.80 to the fact.

Two checks keep rules 2 and 3 from taking a response that mentions a fact for one that
used it:

- **a different figure.** A fact holding numbers, none of which the response holds, is
  not used by a response that states numbers of its own: it gave another figure (``the
  rent is 1200`` against ``the rent is 950``), so the fact's own content was not used.
- **the opposite polarity.** The clause that holds most of the fact's salient weight, in
  the response (rule 2) or in its sentence nearest to the fact (rule 3), must negate as
  the fact does (clauses end at punctuation and at ``and``, ``but``, ``so``,
  ``because``, ``while``, ``which``, as a negation's scope ends there; negations are
  ``not``, ``never``, ``no``, ``n't``, ...; each counted, an even count affirming). A
  response that says the opposite of a fact did not use it: it contradicted or corrected
  it. Sentence vectors barely separate a sentence from its negation, so the check
  applies to rule 3 too.

With a ``query``, the question's own words say nothing of use: a response echoes them
whatever it drew on. They stay in the fact's terms, but rule 2 also needs a matched term
the query does not hold.

The score is the evidence's strength: 1.0 for a citation, the matched share of salient
weight for terms, the best cosine for a sentence; for an ignored fact, the best of the
share and the cosine. Nothing here reads or writes a store; the thresholds are the
method's (half the weight, two terms, 0.80), not fitted to any labelled set
(BENCHMARKS.md, "Retrieval feedback").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from engram.core import query
from engram.core.ports import Embedder
from engram.core.relevance import stem

SignalKind = Literal["used", "ignored"]
Reason = Literal["cited", "terms", "sentence", "none"]
SIGNALS: tuple[SignalKind, ...] = ("used", "ignored")
REASONS: tuple[Reason, ...] = ("cited", "terms", "sentence", "none")

SHARE = 0.5  # the share of a fact's salient weight a response must hold
MIN_TERMS = 2  # and in at least this many terms
COSINE = 0.80  # a response sentence this near to the fact (rule 3)

_NEGATIONS = frozenset("not no never nothing nobody none neither nor cannot without t".split())
# a word, or a figure whole as written (``349.99``, ``7:45``, ``1,200``)
_TOKEN = re.compile(r"\d+(?:[.,:]\d+)*|\w+", re.UNICODE)
_CITATION = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_CLAUSE = re.compile(r"[,;:.!?()\n]+|\b(?:and|but|so|because|while|which)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Injected:
    """A fact as it was injected: its id and its words."""

    id: str
    text: str


@dataclass(frozen=True)
class Signal:
    """Whether a response used an injected fact, why, and how strongly."""

    fact_id: str
    signal: SignalKind
    reason: Reason
    score: float


@dataclass(frozen=True)
class _Term:
    stem: str
    weight: int
    number: bool


def detect(
    facts: Sequence[Injected],
    response: str,
    *,
    embedder: Embedder | None = None,
    query: str | None = None,
) -> list[Signal]:
    """One signal per fact, in the facts' order. Deterministic for a given embedder; the
    embedder is called once (the facts and the response's sentences together), and only
    when some fact is neither cited nor used by its terms."""
    cited = citations(facts, response)
    sentences = split(response)
    asked = _words(query or "")
    shares = {f.id: _terms_share(f.text, response, asked) for f in facts}
    pending = [f for f in facts if f.id not in cited and shares[f.id][1] is False]
    cosines = _cosines(pending, sentences, response, embedder) if pending else {}
    return [_signal(f, cited, shares[f.id], cosines.get(f.id)) for f in facts]


def _signal(
    fact: Injected, cited: set[str], share: tuple[float, bool], cosine: float | None
) -> Signal:
    if fact.id in cited:
        return Signal(fact.id, "used", "cited", 1.0)
    if share[1]:
        return Signal(fact.id, "used", "terms", round(share[0], 6))
    if cosine is not None and cosine >= COSINE:
        return Signal(fact.id, "used", "sentence", round(cosine, 6))
    return Signal(fact.id, "ignored", "none", round(max(share[0], cosine or 0.0), 6))


def citations(facts: Sequence[Injected], response: str) -> set[str]:
    """The ids of ``facts`` the response names or cites by position."""
    cited = {f.id for f in facts if f.id and _names(response, f.id)}
    for match in _CITATION.finditer(response):
        for number in match.group(1).split(","):
            n = int(number)
            if 1 <= n <= len(facts):
                cited.add(facts[n - 1].id)
    return cited


def _names(response: str, fact_id: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(fact_id)}(?![\w-])", response) is not None


def split(response: str) -> list[str]:
    """The response's sentences: split after ``.``, ``!``, ``?``, ``;`` and at line breaks."""
    return [s.strip() for s in _SENTENCE.split(response) if s.strip()]


def salient(text: str) -> list[_Term]:
    """The fact's salient terms, each once with its greatest weight, in order."""
    found: dict[str, _Term] = {}
    for word in _TOKEN.findall(text):
        lower = word.lower()
        if lower in query.STOPWORDS or lower in _NEGATIONS:
            continue
        number = any(c.isdigit() for c in word)
        key = lower if number else stem(lower)
        weight = 2 if number or word[0].isupper() else 1
        if key not in found or found[key].weight < weight:
            found[key] = _Term(key, weight, number)
    return list(found.values())


def _words(text: str) -> set[str]:
    """The keys a text's words match as: numbers as written, other words stemmed."""
    words = (w.lower() for w in _TOKEN.findall(text))
    return {w if any(c.isdigit() for c in w) else stem(w) for w in words}


def _terms_share(fact: str, response: str, asked: set[str]) -> tuple[float, bool]:
    """The share of the fact's salient weight the response holds, and whether rule 2 and
    its checks take it as used."""
    terms = salient(fact)
    total = sum(t.weight for t in terms)
    if not total:
        return 0.0, False
    said = _words(response)
    matched = [t for t in terms if t.stem in said]
    share = sum(t.weight for t in matched) / total
    enough = share >= SHARE and len(matched) >= MIN_TERMS
    new = not asked or any(t.stem not in asked for t in matched)
    if not (enough and new) or _other_figure(terms, response):
        return share, False
    return share, agrees(fact, response)


def agrees(fact: str, text: str) -> bool:
    """Whether ``text`` negates as ``fact`` does, read in the clause of ``text`` holding
    most of the fact's salient weight (the whole text when no clause holds any)."""
    terms = salient(fact)
    clauses = [c for c in _CLAUSE.split(text) if c and c.strip()] or [text]
    weights = [sum(t.weight for t in terms if t.stem in _words(c)) for c in clauses]
    best = clauses[weights.index(max(weights))] if max(weights) else text
    return _negated(best) == _negated(fact)


def _other_figure(terms: Sequence[_Term], response: str) -> bool:
    """Whether the fact holds numbers, the response none of them and numbers of its own."""
    numbers = {t.stem for t in terms if t.number}
    if not numbers:
        return False
    stated = {w for w in _words(response) if any(c.isdigit() for c in w)}
    return bool(stated) and not numbers & stated


def _negated(text: str) -> bool:
    """Whether a text negates: an odd count of negation words (``n't`` reads as ``t``)."""
    count = sum(1 for w in query.WORD.findall(text.lower()) if w in _NEGATIONS)
    return count % 2 == 1


def _cosines(
    facts: Sequence[Injected],
    sentences: Sequence[str],
    response: str,
    embedder: Embedder | None,
) -> dict[str, float]:
    """Each fact's best cosine to a response sentence of the same polarity and holding no
    other figure; empty without an embedder or sentences."""
    if embedder is None or not sentences:
        return {}
    vectors = embedder.embed([f.text for f in facts] + list(sentences), "passage")
    near = vectors[: len(facts)] @ vectors[len(facts) :].T
    best: dict[str, float] = {}
    for i, fact in enumerate(facts):
        if _other_figure(salient(fact.text), response):
            continue
        row = [float(c) for c in near[i]]
        j = max(range(len(sentences)), key=row.__getitem__)
        if agrees(fact.text, sentences[j]):
            best[fact.id] = row[j]
    return best
