"""The knowledge graph's records and the checks on what a caller gives for them.

An entity is unique in its scope by its normalised name (and its aliases' normalised
names). A relation joins two entities of one scope with a type, and keeps two times
apart: when it held in the world (``valid_at`` to ``invalid_at``, either unknown) and
when engram knew it (``created_at`` to ``expired_at``, the latter set when a newer
relation or a caller retired it). An extracted relation says which extractor read it:
the rules' (:mod:`engram.core.graph.relations`) follow their facts' words and are
none of a caller's to retire or delete.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from engram.core import limits
from engram.core.errors import InvalidInput
from engram.core.models import JSONValue
from engram.core.scopes import Scope
from engram.core.text import check_text

Origin = Literal["asserted", "extracted", "imported"]
ORIGINS: tuple[Origin, ...] = ("asserted", "extracted", "imported")
Extractor = Literal["rules", "llm", "spacy"]
EXTRACTORS: tuple[Extractor, ...] = ("rules", "llm", "spacy")

# The types an entity is read as (:mod:`engram.core.graph.entity_types` reads them), and a
# fixed order of them, for ties between the types an entity's mentions were read with.
# Here, apart from the rules, so that what names a type loads none of the rules' lists.
PERSON, PLACE, ORGANISATION, LANGUAGE = "person", "place", "organisation", "language"
GROUP, WORK, EVENT, PRODUCT = "group", "work", "event", "product"
ORDER = (PERSON, ORGANISATION, PLACE, LANGUAGE, GROUP, WORK, PRODUCT, EVENT)

MAX_NAME_CHARS = 256
MAX_TYPE_CHARS = 128
MAX_ALIASES = 64
MAX_SUMMARY_CHARS = 2000


@dataclass(frozen=True, slots=True)
class Entity:
    """Someone or something the scope's memories are about."""

    id: str
    name: str
    norm: str
    type: str | None
    aliases: tuple[str, ...]
    summary: str | None
    attributes: dict[str, JSONValue]
    origin: Origin
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class Relation:
    """``source`` -[type]-> ``target``, with the facts that support it."""

    id: str
    source: str
    target: str
    type: str
    origin: Origin
    valid_at: datetime | None
    invalid_at: datetime | None
    created_at: datetime
    expired_at: datetime | None
    facts: tuple[str, ...] = ()
    attributes: dict[str, JSONValue] = field(default_factory=dict)
    extractor: Extractor | None = None  # an extracted relation's: rules or llm

    def live(self, at: datetime | None = None) -> bool:
        """Whether it holds now (``at`` None: neither ended nor retired), or held in the
        world at ``at`` as engram knows it now: valid then, and not retired without an
        end (a relation retired with no ``invalid_at`` was withdrawn, not ended)."""
        if at is None:
            return self.expired_at is None and self.invalid_at is None
        valid = (self.valid_at is None or self.valid_at <= at) and (
            self.invalid_at is None or at < self.invalid_at
        )
        return valid and (self.expired_at is None or self.invalid_at is not None)


@dataclass(frozen=True, slots=True)
class Mention:
    """A fact's words ``[start, end)`` name ``entity``, read by the rules as of ``type``
    (:mod:`engram.core.graph.entity_types`; None when they could not tell)."""

    fact_id: str
    start: int
    end: int
    entity: str
    type: str | None = None


@dataclass(frozen=True, slots=True)
class FactReading:
    """What the rules read in one fact: its mentions, the entities it grounds and the
    relations it states (each supported by the fact alone, :func:`rule_relation_id`)."""

    fact_id: str
    mentions: tuple[Mention, ...]
    grounds: tuple[str, ...]
    relations: tuple[Relation, ...] = ()


@dataclass(frozen=True, slots=True)
class ExtractionReport:
    """What one ``mem.graph.extract`` did.

    ``facts_read``: the facts read (and, for ``llm`` and ``spacy``, marked read for their
    words); ``entities_added`` and ``relations_added``: the ones new to the scope. For the
    model extractors: ``entities_dropped``, names found nowhere in their fact's words
    (``llm``) or that the rules' hygiene refuses (``spacy``: ordinary words alone, over
    256 characters; a label that is never an entity, such as ``DATE``, is not counted);
    ``facts_skipped``, facts forgotten or reworded while the model read them (left to the
    next extract). For ``llm`` only: ``relations_dropped``, relations with an end not
    kept, a bad type, a self-loop, or a single-valued type whose source holds another
    target; ``times_dropped``, ``valid_at`` values that were not ISO 8601 with an offset
    (their relations kept, without it); ``answers_rejected``, answers that were not the
    JSON asked for (their facts read, nothing kept).
    """

    extractor: Extractor
    facts_read: int = 0
    entities_added: int = 0
    relations_added: int = 0
    entities_dropped: int = 0
    relations_dropped: int = 0
    times_dropped: int = 0
    answers_rejected: int = 0
    facts_skipped: int = 0


def entity_id(scope: Scope, norm: str) -> str:
    """An entity's id, fixed by its scope and normalised name: an entity that goes (its
    last mention forgotten) and comes back (the fact restored) keeps its id."""
    digest = hashlib.sha256(f"{scope.key}\x00{norm}".encode()).hexdigest()
    return "e_" + digest[:24]


def rule_relation_id(
    scope: Scope, source: str, type: str, target: str, valid_at: datetime | None
) -> str:
    """A relation the rules read: its id fixed by its scope, ends, type and the time it
    began, so facts stating it share it and a fact restored gives it back."""
    start = "" if valid_at is None else valid_at.isoformat()
    key = "\x00".join((scope.key, source, type, target, start))
    return "r_" + hashlib.sha256(key.encode()).hexdigest()[:24]


def new_relation_id() -> str:
    return "r_" + secrets.token_hex(12)


def check_name(value: object, what: str = "name") -> str:
    return check_text(value, what, max_chars=MAX_NAME_CHARS, strip=True)


def check_type(value: object, what: str = "type") -> str:
    return check_text(value, what, max_chars=MAX_TYPE_CHARS, strip=True)


def check_aliases(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise InvalidInput("aliases must be a list of names")
    if len(value) > MAX_ALIASES:
        raise InvalidInput(f"{len(value)} aliases given; the limit is {MAX_ALIASES}")
    return tuple(dict.fromkeys(check_name(a, "alias") for a in value))


def check_summary(value: object) -> str | None:
    if value is None:
        return None
    return check_text(value, "summary", max_chars=MAX_SUMMARY_CHARS, strip=True) or None


def check_attributes(value: object) -> dict[str, JSONValue]:
    return limits.check_metadata(value)


def check_validity(
    valid_at: datetime | None, invalid_at: datetime | None
) -> tuple[datetime | None, datetime | None]:
    start = limits.check_time(valid_at, "valid_at")
    end = limits.check_time(invalid_at, "invalid_at")
    if start is not None and end is not None and start > end:
        raise InvalidInput(
            f"valid_at ({start.isoformat()}) must not be later than invalid_at ({end.isoformat()})"
        )
    return start, end


@dataclass(frozen=True, slots=True)
class StoredGraph:
    """A scope's graph as stored, as a rebuild compares it: its entities (id, normal
    name, origin, whether a model's grounding keeps it), its aliases (normal name,
    entity id), its mentions (fact id, start, end, entity id, type), the rules'
    groundings (fact id, entity id) of its entities, and the rules' relations, one row a
    supporting fact (fact id, relation id, source, type, target, ``valid_at`` in
    microseconds or None)."""

    entities: tuple[tuple[str, str, str, bool], ...]
    aliases: tuple[tuple[str, str], ...]
    mentions: frozenset[tuple[str, int, int, str, str | None]]
    groundings: frozenset[tuple[str, str]]
    relations: frozenset[tuple[str, str, str, str, str, int | None]] = frozenset()


@dataclass(frozen=True, slots=True)
class Difference:
    """What a rebuild has that the store lacks (``missing``), and the reverse (``extra``)."""

    missing: int
    extra: int


@dataclass(frozen=True, slots=True)
class GraphDrift:
    """The stored graph against the rules' rebuild from ``facts_read`` live facts."""

    facts_read: int
    entities: Difference
    mentions: Difference
    groundings: Difference
    relations: Difference = Difference(0, 0)

    @property
    def in_step(self) -> bool:
        return all(
            d.missing == d.extra == 0
            for d in (self.entities, self.mentions, self.groundings, self.relations)
        )
