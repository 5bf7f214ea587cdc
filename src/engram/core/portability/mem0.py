"""Memories exported from mem0, read as engram's records.

Takes what ``Memory.get_all()`` answers (``{"results": [...]}`` or a bare list) and the
platform's export shapes (``{"memories": [...]}``, JSONL of the same records). Each
record's words are ``memory`` (or ``text``/``content``); ``id`` is kept in metadata as
``mem0_id`` (mem0's ids are UUIDs, not engram's), ``categories`` become tags, ``user_id``,
``agent_id``, ``run_id`` and ``hash`` join the metadata, ``created_at``/``updated_at`` are
kept, and ``expiration_date`` becomes the fact's ``expires_at`` (a day: its start in
UTC). mem0 exports carry no vectors, so the facts are embedded.

Nothing a mem0 user wrote goes silently:

- each problem is reported at the line of the file where its record starts (a
  pretty-printed ``get_all()`` too), by mem0's own field name, in the file's order;
- a record whose words are blank carries nothing: it is skipped and listed, never fatal;
- NUL characters, which mem0 keeps and no store's text can hold, become U+FFFD, and the
  record is listed among those taken with a change;
- a record with the same words as an earlier one is a second source of the same fact:
  its id, metadata and times join the first's metadata under ``mem0_also``;
- a memory longer than a fact holds is kept whole as consecutive facts, one a piece,
  each embedded (``mem0_part``: index, count and the whitespace after it).

Going out (:func:`document`), a scope's facts are mem0's records again, as they came.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from engram.core import limits
from engram.core.models import Fact
from engram.core.portability.records import (
    Parsed,
    Skipped,
    jsonl_lines,
    objects,
    pieces,
    record,
)

_WORDS = ("memory", "text", "content")
_KEPT = ("user_id", "agent_id", "run_id", "actor_id", "hash", "role")
_LISTS = ("results", "memories")  # where a document keeps its records, in this order
_TIMES = (("created_at", "createdAt"), ("updated_at", "updatedAt"))
# engram's field of a converted record → mem0's (the words' is the record's own key)
_THEIRS = {
    "tags": "categories",
    "createdAt": "created_at",
    "updatedAt": "updated_at",
    "expiresAt": "expiration_date",
}
ALSO = "mem0_also"  # the other mem0 records of the same words, in metadata
PART = "mem0_part"  # [index, count, gap] of a piece of words longer than a fact holds
_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def parse(text: str) -> Parsed:
    parsed = Parsed()
    rows = _located(text)
    if rows is None:  # JSONL of records, each line read on its own
        rows = list(objects(jsonl_lines(text), parsed.errors))
        if parsed.errors:
            return parsed
    first: dict[str, dict[str, Any]] = {}  # normalised words → the converted record
    kept = []
    for line, item in rows:
        converted = _fact(item, line, parsed)
        if converted is None:
            continue
        fact, words = converted
        same = limits.normalize_for_hash(fact["content"])
        if same in first:
            _also(first[same], item, line, words, parsed)
        else:
            first[same] = fact
            kept.append((line, item, fact, words))
    for line, item, fact, words in kept:
        before = len(parsed.errors)
        for part in _parts(fact, line, words, parsed):
            record(part, line, parsed)
        if len(parsed.errors) > before:
            parsed.bad[line] = item
            parsed.errors[before:] = [_named(e, words) for e in parsed.errors[before:]]
    parsed.errors.sort(key=lambda e: e[0])  # in the file's order
    parsed.changed.sort(key=lambda c: c[0])
    return parsed


def _located(text: str) -> list[tuple[int, Any]] | None:
    """The records of a JSON document (a list, or an object holding one under
    ``results`` or ``memories``), each with the line it starts at; None when the text is
    not one JSON document (JSONL, perhaps)."""
    try:
        whole = json.loads(text) if text.strip() else None
    except (ValueError, RecursionError):
        return None
    if isinstance(whole, list):
        start = _skip(text, 0)
    elif isinstance(whole, dict) and any(isinstance(whole.get(k), list) for k in _LISTS):
        found = dict(_members(text))
        start = next(found[k] for k in _LISTS if isinstance(whole.get(k), list))
    else:
        return None
    lines, counted, line = [], 0, 1
    for at, item in _elements(text, start):
        line += text.count("\n", counted, at)
        counted = at
        lines.append((line, item))
    return lines


def _skip(text: str, at: int) -> int:
    """Where the JSON whitespace from ``at`` ends."""
    return _SPACE.match(text, at).end()  # type: ignore[union-attr]  # matches always


def _members(text: str) -> Iterator[tuple[str, int]]:
    """Each member of the top-level JSON object: its name and where its value starts."""
    at = _skip(text, _skip(text, 0) + 1)
    while not text.startswith("}", at):
        name, at = _DECODER.raw_decode(text, at)
        at = _skip(text, at) + 1  # past the colon
        at = _skip(text, at)
        yield name, at
        _, at = _DECODER.raw_decode(text, at)
        at = _skip(text, at)
        if text.startswith(",", at):
            at = _skip(text, at + 1)


def _elements(text: str, start: int) -> Iterator[tuple[int, Any]]:
    """Each item of the JSON array that starts at ``start``, with where it starts."""
    at = _skip(text, start + 1)
    while not text.startswith("]", at):
        item, end = _DECODER.raw_decode(text, at)
        yield at, item
        at = _skip(text, end)
        if text.startswith(",", at):
            at = _skip(text, at + 1)


def _fact(item: Any, line: int, parsed: Parsed) -> tuple[dict[str, Any], str] | None:
    """The record as engram's and the name of its words' field, or None when it is bad
    (an error) or blank (skipped)."""
    if not isinstance(item, dict):
        parsed.errors.append((line, "record", "not a JSON object"))
        parsed.bad[line] = item
        return None
    key = next((k for k in _WORDS if k in item), None)
    if key is None:
        parsed.errors.append((line, "memory", "missing: a record has memory, text or content"))
        parsed.bad[line] = item
        return None
    words = item[key]
    if not isinstance(words, str):
        parsed.errors.append((line, key, f"{key} must be a string, got {type(words).__name__}"))
        parsed.bad[line] = item
        return None
    if not words.strip():
        parsed.skipped.append(Skipped(line, key, "blank: there is nothing to remember", item))
        return None
    if "\x00" in words:
        count = words.count("\x00")
        words = words.replace("\x00", "\ufffd")
        said = f"{count} NUL character(s) became U+FFFD: no store's text holds NUL"
        parsed.changed.append((line, key, said))
    metadata = dict(item["metadata"]) if isinstance(item.get("metadata"), dict) else {}
    for name in _KEPT:
        if item.get(name) is not None:
            metadata[name] = item[name]
    if item.get("id") is not None:
        metadata["mem0_id"] = str(item["id"])
    fact: dict[str, Any] = {"kind": "fact", "content": words, "metadata": metadata}
    categories = item.get("categories")
    if isinstance(categories, list):
        fact["tags"] = [str(c) for c in categories]
    for theirs, ours in (*_TIMES, ("expiration_date", "expiresAt")):
        if isinstance(item.get(theirs), str):
            fact[ours] = _aware(item[theirs])
    return fact, key


def _parts(fact: dict[str, Any], line: int, words: str, parsed: Parsed) -> list[dict[str, Any]]:
    """The record as facts: itself, or, when its words are longer than a fact holds,
    one fact a consecutive piece of them, each carrying the record's metadata and its
    place (``mem0_part``: index, count, and the whitespace that followed it), so the
    whole goes back out as it came."""
    text = fact["content"].strip()
    if len(text) <= limits.MAX_FACT_CHARS:
        return [fact]
    cut = pieces(text, limits.MAX_FACT_CHARS)
    said = f"{len(text)} characters, more than a fact holds: kept whole as {len(cut)} facts"
    parsed.changed.append((line, words, f"{said} in order ({PART})"))
    return [
        {**fact, "content": piece, "metadata": {**fact["metadata"], PART: [n, len(cut), gap]}}
        for n, (piece, gap) in enumerate(cut)
    ]


def _also(
    first: dict[str, Any], item: dict[str, Any], line: int, words: str, parsed: Parsed
) -> None:
    """A record of the same words as ``first``'s: its id, metadata and times kept in the
    first's metadata as another source of the same fact."""
    source = {k: item[k] for k in ("id", *_KEPT) if item.get(k) is not None}
    if "metadata" in item:  # null too: it goes back out as it came
        source["metadata"] = item["metadata"]
    source |= {theirs: item[theirs] for theirs, _ in _TIMES if item.get(theirs) is not None}
    first["metadata"].setdefault(ALSO, []).append(source)
    said = "the same words as an earlier record: kept as another source of that fact"
    parsed.changed.append((line, words, f"{said} ({ALSO})"))


def _named(error: tuple[int, str, str], words: str) -> tuple[int, str, str]:
    """An error of the converted record, named by mem0's field, not engram's."""
    line, ours, message = error
    theirs = words if ours == "content" else _THEIRS.get(ours, ours)
    return line, theirs, re.sub(rf"\b{ours}\b", theirs, message)


def _aware(value: str) -> str:
    """mem0 writes times with an offset, or naive in UTC (its platform): made explicit."""
    if len(value) == 10:  # a day, as mem0's expiration_date is given: its start, in UTC
        return value + "T00:00:00+00:00"
    if value.endswith("Z") or "+" in value[10:] or "-" in value[10:]:
        return value
    return value + "+00:00"


# -- going out ---------------------------------------------------------------------------
def document(facts: Iterable[Fact]) -> str:
    """The scope's facts (oldest first) as mem0's ``get_all()`` answers them,
    ``{"results": [...]}``: a fact that came from mem0 as the record it came from (its id,
    metadata, categories, times and the fields mem0 keeps beside them; a memory kept in
    pieces whole again; each record of the same words on its own), any other fact as a
    record of its own id."""
    results: list[dict[str, Any]] = []
    held: list[str] = []  # the pieces of the memory being put back together
    for fact in facts:
        meta = dict(fact.metadata)
        part = meta.pop(PART, None)
        if isinstance(part, list) and len(part) == 3:
            held.append(fact.content + str(part[2]))
            if part[0] != part[1] - 1:
                continue
        words, held = "".join(held) or fact.content, []
        also = meta.pop(ALSO, [])
        results.append(_record(fact, words, meta))
        for other in also if isinstance(also, list) else []:
            results.append(_also_record(fact, words, other))
    return json.dumps({"results": results}, ensure_ascii=False, indent=2) + "\n"


def _record(fact: Fact, words: str, meta: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {"id": str(meta.pop("mem0_id", fact.id)), "memory": words}
    for name in _KEPT:
        if name in meta:
            found[name] = meta.pop(name)
    found.setdefault("hash", hashlib.md5(words.encode("utf-8")).hexdigest())  # as mem0's
    found["metadata"] = meta or None
    if fact.tags:
        found["categories"] = list(fact.tags)
    found["created_at"] = fact.created_at.isoformat()
    found["updated_at"] = fact.updated_at.isoformat()
    if fact.expires_at is not None:
        found["expiration_date"] = fact.expires_at.date().isoformat()
    return found


def _also_record(fact: Fact, words: str, other: object) -> dict[str, Any]:
    """A record of the same words that came in with the fact's: as it came."""
    given = dict(other) if isinstance(other, dict) else {}
    found: dict[str, Any] = {"id": str(given.pop("id", fact.id)), "memory": words}
    found.update(given)
    if fact.tags:
        found.setdefault("categories", list(fact.tags))
    return found
