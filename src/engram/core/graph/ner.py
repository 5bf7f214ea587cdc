"""The ``spacy`` extractor: the names a recogniser finds in facts
(:class:`engram.core.ports.NameRecogniser`, a spaCy pipeline at the edge), kept as the
rules keep a name and typed by their labels. Entities only: a recogniser gives no
relations.

Labels are spaCy's: the OntoNotes scheme of its English pipelines and the WikiNER one
(PER, LOC, ORG, MISC) of several others. :data:`TYPES` maps those that name someone or
something to the graph's types: PERSON and PER to ``person``; GPE, LOC and FAC to
``place``; ORG to ``organisation``; NORP to ``group`` (nationalities, religious and
political groups: peoples, not organisations); PRODUCT to ``product``; WORK_OF_ART to
``work``; EVENT to ``event``; LANGUAGE to ``language``. The labels of times and amounts
(:data:`NEVER`: DATE, TIME, PERCENT, MONEY, QUANTITY, ORDINAL, CARDINAL) are never
entities: a fact's own time carries its dates, as for the rules, and numbers name
nothing. Any other label (LAW, MISC, a custom pipeline's own) gives an entity with no
type, as a capitalised run does for the rules. Labels are compared in upper case.

The span comes from the recogniser, the hygiene from the rules: its ordinary words at
its ends are trimmed (:func:`engram.core.graph.extraction.trim`: "Hey Mel" is Mel, "Mom"
nothing), and a name is dropped when nothing is left, when it has no letter or a single
character, when it is a holiday ("Christmas Eve"), when it is over 256 characters, or
when its normal name is not whole words of the fact's normal form (a recogniser's
offsets are checked, not trusted). Each drop is counted. A name met twice in a fact
takes its first span's type. Recognised names never change a known entity: it gains the
fact's grounding, its name and type stay.

A conversation's turn, stored as ``"{speaker}: {text}"`` with its speaker in its
metadata, is read from its text (:func:`engram.core.graph.names.body`): the rules ground
the speaker, and the prefix only confused the one pipeline measured (it read "Maria:
Imagining" as one name; its recall in the text went from 0.73 to 0.76 without it,
BENCHMARKS.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from engram.core import ledger
from engram.core.errors import UpstreamFailure
from engram.core.graph.backlog import Named, Names
from engram.core.graph.models import MAX_NAME_CHARS, ExtractionReport, Extractor
from engram.core.graph.names import body, normalise, occurs
from engram.core.graph.ordinary import HOLIDAYS
from engram.core.models import Fact
from engram.core.ports import NameRecogniser, Span

TYPES: Mapping[str, str] = {
    "PERSON": "person",
    "PER": "person",
    "GPE": "place",
    "LOC": "place",
    "FAC": "place",
    "ORG": "organisation",
    "NORP": "group",
    "PRODUCT": "product",
    "WORK_OF_ART": "work",
    "EVENT": "event",
    "LANGUAGE": "language",
}
NEVER = frozenset({"DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL"})


@dataclass(frozen=True, slots=True)
class Found:
    """A fact's kept names (normal name -> as named, first span first) and how many of
    its entity spans were dropped."""

    entities: Mapping[str, Named]
    dropped: int


class NameReader:
    """The ``spacy`` extractor for :mod:`engram.core.graph.backlog`: every fact of a
    batch read by ``recogniser`` in one call."""

    extractor: Extractor = "spacy"

    def __init__(self, recogniser: NameRecogniser) -> None:
        self._recogniser = recogniser

    def read(self, facts: Sequence[Fact]) -> list[Found | None]:
        """Each fact's kept names, in order. Raises UpstreamFailure when the recogniser
        fails or answers spans that are not in its texts."""
        starts = [body(fact.content, fact.metadata.get("speaker")) for fact in facts]
        texts = [fact.content[start:] for fact, start in zip(facts, starts, strict=True)]
        spans = self._recogniser.recognise(texts)
        _check(spans, texts, self._recogniser.model)
        return [
            found(fact.content, [(s + start, e + start, label) for s, e, label in named])
            for fact, start, named in zip(facts, starts, spans, strict=True)
        ]

    def names(self, answer: Found) -> Iterable[str]:
        return answer.entities

    def keep(self, rec: ledger.Entry, fact: Fact, answer: Found, names: Names) -> ExtractionReport:
        added = names.entities(fact.id, answer.entities)
        return ExtractionReport("spacy", entities_added=added, entities_dropped=answer.dropped)


def found(text: str, spans: Iterable[Span]) -> Found:
    """What ``text`` keeps of the recogniser's ``spans`` (see the module)."""
    words = normalise(text)
    entities: dict[str, Named] = {}
    dropped = 0
    for start, end, label in sorted(spans):
        kind = label.strip().upper()
        if kind in NEVER:
            continue
        kept = span(text, start, end, words)
        if kept is None:
            dropped += 1
            continue
        surface = text[kept[0] : kept[1]]
        entities.setdefault(normalise(surface), Named(surface, TYPES.get(kind)))
    return Found(entities, dropped)


def span(text: str, start: int, end: int, words: str) -> tuple[int, int] | None:
    """What the name ``text[start:end]`` keeps: its span trimmed as the rules read words,
    or None when the rules' hygiene refuses it. ``words`` is ``normalise(text)``."""
    from engram.core.graph.extraction import trim  # the rules load when first used

    kept = trim(text, start, end)
    if kept is None or normalise(text[start:end]) in HOLIDAYS:  # before "Christmas" goes
        return None
    surface = text[kept[0] : kept[1]]
    norm = normalise(surface)
    if (
        len(norm) < 2
        or not any(c.isalpha() for c in norm)
        or norm in HOLIDAYS
        or len(surface) > MAX_NAME_CHARS
        or not occurs(norm, words)
    ):
        return None
    return kept


def _check(spans: object, texts: Sequence[str], model: str) -> None:
    """Raises UpstreamFailure unless ``spans`` holds, for each text, a list of
    ``(start, end, label)`` with ``0 <= start < end <= len(text)``."""
    if not isinstance(spans, list) or len(spans) != len(texts):
        raise UpstreamFailure(f"the name recogniser {model!r} did not answer one list a text")
    for text, found in zip(texts, spans, strict=True):
        if not isinstance(found, list) or not all(_span(s, len(text)) for s in found):
            raise UpstreamFailure(
                f"the name recogniser {model!r} answered a span that is not in its text"
            )


def _span(value: object, length: int) -> bool:
    if not isinstance(value, tuple) or len(value) != 3:
        return False
    start, end, label = value
    return (
        type(start) is int and type(end) is int and isinstance(label, str)
    ) and 0 <= start < end <= length
