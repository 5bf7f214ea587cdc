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
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engram.core import ledger, limits, query, recording, rules
from engram.core.clock import Clock, from_us, now_us
from engram.core.errors import InvalidInput, NotFound
from engram.core.models import Writer
from engram.core.records import Feedback as Feedback  # re-exported
from engram.core.records import Injected as Injected
from engram.core.records import Reason as Reason
from engram.core.records import Signal as Signal
from engram.core.records import SignalKind as SignalKind
from engram.core.relevance import stem
from engram.core.specifics import NEGATIONS, TOKEN, negated
from engram.core.text import check_text

if TYPE_CHECKING:
    from engram.core.ports import Embedder, Store, Tx
    from engram.core.scopes import Scope

SIGNALS: tuple[SignalKind, ...] = ("used", "ignored")
REASONS: tuple[Reason, ...] = ("cited", "terms", "sentence", "none")

SHARE = 0.5  # the share of a fact's salient weight a response must hold
MIN_TERMS = 2  # and in at least this many terms
COSINE = 0.80  # a response sentence this near to the fact (rule 3)

_CITATION = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_CLAUSE = re.compile(r"[,;:.!?()\n]+|\b(?:and|but|so|because|while|which)\b", re.IGNORECASE)


@dataclass(frozen=True)
class _Read:
    """A text read once: its words (as terms match them), its clauses' words, the words
    holding a digit, and for each word the clauses holding it; so a check of each of up
    to 100 facts against a response of 100,000 characters reads the response once, not
    once a fact (which cost 5 to 14 s a request)."""

    words: frozenset[str]
    clauses: tuple[tuple[str, frozenset[str]], ...]
    numbers: frozenset[str]
    holding: dict[str, list[int]]  # a word: the clauses holding it, in order
    negated: bool  # whether the whole text negates (:func:`~engram.core.specifics.negated`)

    @classmethod
    def of(cls, text: str) -> _Read:
        parts = [c for c in _CLAUSE.split(text) if c and c.strip()] or [text]
        clauses = tuple((c, frozenset(_words(c))) for c in parts)
        holding: dict[str, list[int]] = {}
        for n, (_, words) in enumerate(clauses):
            for word in words:
                holding.setdefault(word, []).append(n)
        everything = frozenset(_words(text))
        numbers = frozenset(w for w in everything if any(c.isdigit() for c in w))
        whole = negated(" ".join(c for c, _ in clauses))
        return cls(everything, clauses, numbers, holding, whole)


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
    read = _Read.of(response)
    asked = _words(query or "")
    shares = {f.id: _terms_share(f.text, read, asked) for f in facts}
    pending = [f for f in facts if f.id not in cited and shares[f.id][1] is False]
    cosines = _cosines(pending, split(response), read, embedder) if pending else {}
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
    for word in TOKEN.findall(text):
        lower = word.lower()
        if lower in query.STOPWORDS or lower in NEGATIONS:
            continue
        number = any(c.isdigit() for c in word)
        key = lower if number else stem(lower)
        weight = 2 if number or word[0].isupper() else 1
        if key not in found or found[key].weight < weight:
            found[key] = _Term(key, weight, number)
    return list(found.values())


def _words(text: str) -> set[str]:
    """The keys a text's words match as: numbers as written, other words stemmed."""
    words = (w.lower() for w in TOKEN.findall(text))
    return {w if any(c.isdigit() for c in w) else stem(w) for w in words}


def _terms_share(fact: str, response: _Read, asked: set[str]) -> tuple[float, bool]:
    """The share of the fact's salient weight the response holds, and whether rule 2 and
    its checks take it as used."""
    terms = salient(fact)
    total = sum(t.weight for t in terms)
    if not total:
        return 0.0, False
    matched = [t for t in terms if t.stem in response.words]
    share = sum(t.weight for t in matched) / total
    enough = share >= SHARE and len(matched) >= MIN_TERMS
    new = not asked or any(t.stem not in asked for t in matched)
    if not (enough and new) or _other_figure(terms, response):
        return share, False
    return share, agrees(fact, response)


def agrees(fact: str, text: str | _Read) -> bool:
    """Whether ``text`` negates as ``fact`` does, read in the clause of ``text`` holding
    most of the fact's salient weight (the whole text when no clause holds any)."""
    read = _Read.of(text) if isinstance(text, str) else text
    weights: dict[int, int] = {}
    for term in salient(fact):
        for n in read.holding.get(term.stem, ()):
            weights[n] = weights.get(n, 0) + term.weight
    if not weights:
        return read.negated == negated(fact)
    heaviest = max(weights.values())
    first = min(n for n, weight in weights.items() if weight == heaviest)
    return negated(read.clauses[first][0]) == negated(fact)


def _other_figure(terms: Sequence[_Term], response: _Read) -> bool:
    """Whether the fact holds numbers, the response none of them and numbers of its own."""
    numbers = {t.stem for t in terms if t.number}
    if not numbers:
        return False
    return bool(response.numbers) and not numbers & response.numbers


def _cosines(
    facts: Sequence[Injected],
    sentences: Sequence[str],
    response: _Read,
    embedder: Embedder | None,
) -> dict[str, float]:
    """Each fact's best cosine to a response sentence of the same polarity and holding no
    other figure; empty without an embedder or sentences."""
    if embedder is None or not sentences:
        return {}
    vectors = embedder.embed([f.text for f in facts] + list(sentences), "passage")
    near = vectors[: len(facts)] @ vectors[len(facts) :].T
    best: dict[str, float] = {}
    read: dict[int, _Read] = {}  # each sentence read once, however many facts it is nearest
    for i, fact in enumerate(facts):
        if _other_figure(salient(fact.text), response):
            continue
        j = int(near[i].argmax())
        if j not in read:
            read[j] = _Read.of(sentences[j])
        if agrees(fact.text, read[j]):
            best[fact.id] = float(near[i][j])
    return best


MAX_RESPONSE_CHARS = limits.MAX_RESPONSE_CHARS
MAX_INJECTED = limits.MAX_INJECTED


class Usage:
    """``mem.usage``: retrieval feedback through the library. Each write is one ledger
    entry (op ``usage.record`` or ``usage.detect``, one ``feedback`` item per row); such
    an entry cannot be reverted (a signal is an observation, only added). Strength
    changes from signals are not made here: the rows are stored for whatever reads them.
    Recall never writes them."""

    def __init__(
        self, store: Store, embedder: Embedder | None, *, clock: Clock = now_us, writer: Writer
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._now = clock
        self._writer = writer

    def record(
        self,
        ref: Scope,
        fact_id: str,
        signal: str,
        *,
        reason: str | None = None,
        query: str | None = None,
    ) -> Feedback:
        """Stores that a response used or ignored the scope's fact ``fact_id``; the row.
        Raises InvalidInput (a signal other than used or ignored, a reason over 128
        characters, a query over 8000) and NotFound (no such fact in the scope)."""
        kind = _kind(signal)
        why = None if reason is None else limits.check_label(reason, "reason")
        asked = _query(query)
        at = self._now()
        row = Feedback(new_feedback_id(), fact_id, kind, why, None, asked, from_us(at))
        self._write(ref, "usage.record", [fact_id], [row], at)
        return row

    def detect(
        self,
        ref: Scope,
        injected_ids: Sequence[str],
        response: str,
        *,
        query: str | None = None,
        record: bool = True,
    ) -> list[Signal]:
        """One signal per injected fact, in the given order (``[n]`` cites the n-th), by
        :func:`detect` with the store's embedder; stored as one ledger entry unless
        ``record`` is false. The facts are read in one snapshot and the embedder runs
        outside any transaction. Raises InvalidInput (no ids, more than 100, an id
        twice, a response over 100,000 characters, a query over 8000) and NotFound (an
        id that is no fact of the scope; nothing is stored)."""
        ids = _injected(injected_ids)
        text = check_text(response, "response", max_chars=MAX_RESPONSE_CHARS, empty=True)
        asked = _query(query)
        found = self._store.run(lambda tx: self._facts(tx, ref, ids), write=False)
        facts = [Injected(i, found[i]) for i in ids]
        signals = detect(facts, text, embedder=self._embedder, query=asked)
        if record:
            at = self._now()
            rows = [
                Feedback(
                    new_feedback_id(), s.fact_id, s.signal, s.reason, s.score, asked, from_us(at)
                )
                for s in signals
            ]
            self._write(ref, "usage.detect", ids, rows, at)
        return signals

    def signals(self, ref: Scope, fact_id: str) -> list[Feedback]:
        """The signals stored about the scope's fact (live or in the trash), oldest
        first; NotFound for a fact the scope does not hold, as every read of one fact."""
        store = self._store

        def read(tx: Tx) -> list[Feedback]:
            rows = store.usage.of_fact(tx, ref, fact_id)
            if not rows:
                rules.require_fact(store, tx, ref, fact_id)
            return rows

        return store.run(read, write=False)

    def _facts(self, tx: Tx, ref: Scope, ids: Sequence[str]) -> dict[str, str]:
        found = self._store.facts.by_ids(tx, ref, ids)
        missing = [i for i in ids if i not in found]
        if missing:
            raise NotFound(f"no fact {missing[0]} in this scope")
        return {i: f.content for i, f in found.items()}

    def _write(
        self, ref: Scope, op: str, ids: Sequence[str], rows: Sequence[Feedback], at: int
    ) -> None:
        store = self._store

        def work(rec: ledger.Entry) -> None:
            self._facts(rec.tx, ref, ids)  # still there: a forget may have come between
            store.usage.add(rec.tx, ref, rows)
            for row in rows:
                rec.record("feedback", row.id, "add")

        store.run(
            lambda tx: recording.write(store, tx, ref, op, self._writer, at, work), lock=[ref]
        )


def new_feedback_id() -> str:
    return "u_" + secrets.token_hex(12)


def _kind(signal: object) -> SignalKind:
    for kind in SIGNALS:
        if signal == kind:
            return kind
    raise InvalidInput(f"signal must be one of {', '.join(SIGNALS)}, got {signal!r}")


def _query(query: object) -> str | None:
    return None if query is None else limits.check_query(query)


def _injected(ids: object) -> list[str]:
    if isinstance(ids, str) or not isinstance(ids, Sequence):
        raise InvalidInput("injected_ids must be a list of fact ids")
    if not ids or len(ids) > MAX_INJECTED:
        raise InvalidInput(f"injected_ids must hold 1 to {MAX_INJECTED} ids, got {len(ids)}")
    checked = [check_text(i, "a fact id", max_chars=limits.MAX_KEY_CHARS) for i in ids]
    if len(set(checked)) != len(checked):
        raise InvalidInput("injected_ids holds an id twice; [n] citations need each once")
    return checked
