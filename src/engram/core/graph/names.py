"""Entities' names: one normal form per name, and which entity of a scope a name means.

A scope holds one entity per normal form (:func:`normalise`): case, Unicode width, spacing,
surrounding punctuation, a possessive and a leading "the" make no difference.

Resolution needs no model. A name means the entity whose normal name, or one of whose
aliases, it equals. Failing that, the entity whose name or alias has character 3-grams
with a Jaccard similarity of at least 0.9 to it ("Ginas Boutique" and "Gina's Boutique!"),
which the name then becomes an alias of. Both names must be at least 6 characters long,
spaces and punctuation aside, with characters of Shannon entropy at least 1.5 bits
(Graphiti's thresholds, graphiti_core/utils/maintenance/dedup_helpers.py): short or
repetitive names share too many 3-grams by chance, so they merge only when equal.
Graphiti also lets a name of two short words through; here length alone decides, so "Al
Bo" never merges with "Al Bob". A typed entity never takes a name of another type; a name
or entity without a type matches any.

A conversation's turn opens with its speaker's name (``"Ana: ..."``): :func:`body` says
where its words begin, for every reader that leaves the label out.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from engram.core.fields import SPACES

SIMILAR = (9, 10)  # Jaccard of 3-grams >= 9/10, compared in integers
MIN_SIMILAR_CHARS = 6
MIN_ENTROPY_BITS = 1.5

_SPACES = re.compile(r"\s+")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})
_KEEP_LEADING = "@#"  # a handle's or a tag's mark is part of it
# ASCII punctuation (Unicode category P) and whitespace, for the common case.
_ASCII_TRAILING = "".join(
    c for c in map(chr, range(128)) if c.isspace() or unicodedata.category(c)[0] == "P"
)
_ASCII_LEADING = "".join(c for c in _ASCII_TRAILING if c not in _KEEP_LEADING)
_IN_A_SET = "\\]-[^"  # what a character set of a pattern escapes


def _in_set(chars: str) -> str:
    return "".join("\\" + c if c in _IN_A_SET else c for c in chars)


# The characters beyond ASCII that NFKC or the apostrophes fold into ASCII punctuation
# (a modifier letter apostrophe, "…", a fullwidth "！", the small and vertical forms), as
# a pattern's set: alone they leave nothing either. From this Python's Unicode data; a
# test finds them again in every character.
FOLDED_PUNCTUATION = (
    "\\u02bc\\u037e\\u2018-\\u2019\\u2024-\\u2026\\u203c\\u2047-\\u2049\\u207d-\\u207e"
    "\\u208d-\\u208e\\ufe10\\ufe13-\\ufe16\\ufe19\\ufe30\\ufe33-\\ufe38\\ufe47-\\ufe48"
    "\\ufe4d-\\ufe50\\ufe52\\ufe54-\\ufe57\\ufe59-\\ufe5c\\ufe5f-\\ufe61\\ufe63\\ufe68"
    "\\ufe6a-\\ufe6b\\uff01-\\uff03\\uff05-\\uff0a\\uff0c-\\uff0f\\uff1a-\\uff1b"
    "\\uff1f-\\uff20\\uff3b-\\uff3d\\uff3f\\uff5b\\uff5d"
)
# A name as a schema can say it: some character that is neither whitespace nor ASCII
# punctuation nor folded into it (a name of those alone has nothing left once normalised).
NAMED = (
    "^[^\\x00]*[^"
    + SPACES
    + "\\x00"
    + _in_set(_ASCII_TRAILING.strip())
    + FOLDED_PUNCTUATION
    + "][^\\x00]*$"
)
_CLOSES = {")": "(", "]": "[", "}": "{"}  # a closing bracket and its opener


def body(text: str, speaker: object) -> int:
    """Where a conversation turn's words begin: after its ``"{speaker}: "`` prefix when
    ``speaker`` (the fact's metadata's) is a name (the rules ground it), else 0."""
    if not isinstance(speaker, str) or not speaker or not text.startswith(speaker + ":"):
        return 0
    after = len(speaker) + 1
    return after + len(text[after:]) - len(text[after:].lstrip())


def normalise(name: str) -> str:
    """The form two names of one entity share: Unicode NFKC, case folded, whitespace
    collapsed, surrounding punctuation stripped (a leading ``@`` or ``#`` kept), a final
    possessive ``'s`` (or the ``'`` of ``James'``) dropped, a leading "the" dropped when
    more follows. ``""`` for whitespace and ASCII punctuation alone (and what folds into
    it: :data:`FOLDED_PUNCTUATION`), as :data:`NAMED` says; punctuation of other
    scripts alone is its own normal form (folded, collapsed), since no pattern every
    validator reads can tell it apart. Idempotent."""
    if name.isascii():
        text = name.casefold()
    else:
        text = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
    text = _SPACES.sub(" ", text.translate(_APOSTROPHES))
    before = None
    while text != before:
        before, text = text, _strip(text)
        if text.endswith("'s"):
            text = text[:-2]
        elif text.endswith("s'"):
            text = text[:-1]
        elif text.startswith("the ") and len(text) > 4:
            text = text[4:]
    if not text and not name.isascii():
        folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).casefold())
        kept = _SPACES.sub(" ", folded.translate(_APOSTROPHES)).strip()
        # Non-ASCII space around ASCII punctuation (":\xa0") is ASCII punctuation alone.
        return "" if kept.isascii() else kept
    return text


def occurs(norm: str, words: str) -> bool:
    """Whether the normal name ``norm`` occurs in ``words`` (a normal form) as whole
    words: no letter or digit right before or after it."""
    return re.search(rf"(?<!\w){re.escape(norm)}(?!\w)", words) is not None


def _strip(text: str) -> str:
    """``text`` without surrounding punctuation, keeping a leading ``@``/``#`` and a final
    bracket that closes one inside ("a_(b)")."""
    if text.isascii() and "(" not in text and "[" not in text and "{" not in text:
        return text.lstrip(_ASCII_LEADING).rstrip(_ASCII_TRAILING)
    start, end = 0, len(text)
    while start < end and _punctuation(text[start]) and text[start] not in _KEEP_LEADING:
        start += 1
    while end > start and _punctuation(text[end - 1]):
        closer = _CLOSES.get(text[end - 1])
        if closer and text.count(closer, start, end) >= text.count(text[end - 1], start, end):
            break
        end -= 1
    return text[start:end]


def _punctuation(char: str) -> bool:
    return unicodedata.category(char)[0] == "P" or char.isspace()


# -- similarity ------------------------------------------------------------------------
def letters(norm: str) -> str:
    """The letters and digits of a normal name: what its 3-grams and entropy are read from."""
    return "".join(c for c in norm if c.isalnum())


def shingles(norm: str) -> frozenset[str]:
    """The character 3-grams of a normal name's letters and digits."""
    chars = letters(norm)
    if len(chars) < 3:
        return frozenset({chars} if chars else ())
    return frozenset(chars[i : i + 3] for i in range(len(chars) - 2))


def entropy(norm: str) -> float:
    """Shannon entropy, in bits, of the letters and digits of a normal name."""
    chars = letters(norm)
    return sum(n / len(chars) * math.log2(len(chars) / n) for n in Counter(chars).values())


def may_be_similar(norm: str) -> bool:
    """Whether a normal name is long and varied enough to merge with a name it does not
    equal: at least 6 letters or digits, of entropy at least 1.5 bits."""
    return len(letters(norm)) >= MIN_SIMILAR_CHARS and entropy(norm) >= MIN_ENTROPY_BITS


def similar(a: frozenset[str], b: frozenset[str]) -> bool:
    """Jaccard(a, b) >= 0.9, exactly (in integers)."""
    union = len(a | b)
    return union > 0 and SIMILAR[1] * len(a & b) >= SIMILAR[0] * union


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 0.0


# -- resolution ------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Named:
    """An entity of the scope as resolution sees it: its id, name, type and aliases."""

    id: str
    name: str
    type: str | None = None
    aliases: tuple[str, ...] = ()


How = Literal["name", "alias", "similar"]


@dataclass(frozen=True, slots=True)
class Resolution:
    """The entity a name means, how it was found, and the alias to record: the name's
    normal form when it matched by similarity, else None."""

    entity: str
    how: How
    alias: str | None = None


class Resolver:
    """The entities of one scope, indexed for :meth:`resolve`; add entities as they are
    made. Not thread-safe: one per unit of work."""

    def __init__(self, entities: Iterable[Named] = ()) -> None:
        self._exact: dict[str, list[tuple[int, str, str | None]]] = defaultdict(list)
        self._grams: dict[str, set[tuple[str, str]]] = defaultdict(set)
        self._shingles: dict[str, frozenset[str]] = {}
        self._types: dict[str, str | None] = {}
        for entity in entities:
            self.add(entity)

    def add(self, entity: Named) -> None:
        """Indexes ``entity``'s name and aliases (empty normal forms are skipped)."""
        self._types[entity.id] = _type(entity.type)
        for rank, name in enumerate((entity.name, *entity.aliases)):
            norm = normalise(name)
            if not norm:
                continue
            self._exact[norm].append((min(rank, 1), entity.id, _type(entity.type)))
            if may_be_similar(norm):
                grams = self._shingles.setdefault(norm, shingles(norm))
                for gram in grams:
                    self._grams[gram].add((entity.id, norm))

    def resolve(self, name: str, type: str | None = None) -> Resolution | None:
        """The entity ``name`` means (see the module), or None for a new entity. Several
        matches of one kind: an entity's own name before an alias, then the highest
        similarity, then the smallest id, so the answer never depends on insertion order."""
        norm, kind = normalise(name), _type(type)
        exact = sorted((rank, eid) for rank, eid, t in self._exact.get(norm, ()) if _fits(kind, t))
        if exact:
            rank, eid = exact[0]
            return Resolution(eid, "name" if rank == 0 else "alias")
        if not norm or not may_be_similar(norm):
            return None
        best = self._most_similar(shingles(norm), kind)
        return Resolution(best, "similar", norm) if best is not None else None

    def _most_similar(self, grams: frozenset[str], kind: str | None) -> str | None:
        scored = [
            (-jaccard(grams, other), eid)
            for eid, norm in self._probe(grams)
            if _fits(kind, self._types[eid]) and similar(grams, other := self._shingles[norm])
        ]
        return min(scored)[1] if scored else None

    def _probe(self, grams: frozenset[str]) -> set[tuple[str, str]]:
        """Every indexed name that may share 90% of ``grams``: a name missing more than
        ``len - ceil(0.9 len)`` of them cannot, so it holds one of any that many plus one
        (the rarest are probed)."""
        need = -(-SIMILAR[0] * len(grams) // SIMILAR[1])
        rarest = sorted(grams, key=lambda g: (len(self._grams.get(g, ())), g))
        found: set[tuple[str, str]] = set()
        for gram in rarest[: len(grams) - need + 1]:
            found |= self._grams.get(gram, set())
        return found


def resolve(name: str, type: str | None, entities: Iterable[Named]) -> Resolution | None:
    """:meth:`Resolver.resolve` over ``entities``, for a one-off question."""
    return Resolver(entities).resolve(name, type)


def _type(value: str | None) -> str | None:
    return value.strip().casefold() or None if value is not None else None


def _fits(a: str | None, b: str | None) -> bool:
    return a is None or b is None or a == b
