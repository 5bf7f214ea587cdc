"""Memories exported from mem0, read as engram's records.

Takes what ``Memory.get_all()`` answers (``{"results": [...]}`` or a bare list) and the
platform's export shapes (``{"memories": [...]}``, JSONL of the same records). Each
record's words are ``memory`` (or ``text``/``content``); ``id`` is kept in metadata as
``mem0_id`` (mem0's ids are UUIDs, not engram's), ``categories`` become tags, ``user_id``,
``agent_id``, ``run_id`` and ``hash`` join the metadata, ``created_at``/``updated_at`` are
kept, and ``expiration_date`` becomes the fact's ``expires_at`` (a day: its start in
UTC). No record is skipped silently: one without words is a bad record with its line.
mem0 exports carry no vectors, so the facts are embedded.
"""

from __future__ import annotations

import json
from typing import Any

from engram.core.portability.records import Parsed, objects, parse_json

_WORDS = ("memory", "text", "content")
_KEPT = ("user_id", "agent_id", "run_id", "actor_id", "hash", "role")


def parse(text: str) -> Parsed:
    stripped = text.strip()
    try:
        whole = json.loads(stripped) if stripped else None
        items = _items(whole) if whole is not None else None
    except (ValueError, RecursionError):  # JSONL, perhaps; each line is read on its own
        items = None
    if items is None:  # JSONL of records
        parsed = Parsed()
        rows: list[tuple[int, Any]] = list(objects(text.splitlines(), parsed.errors))
        if parsed.errors:
            return parsed
    else:
        rows = list(enumerate(items, 1))
    converted, errors = [], []
    for number, item in rows:
        fact = _fact(item)
        if isinstance(fact, str):
            errors.append((number, "memory", fact))
        else:
            converted.append(fact)
    parsed = parse_json(json.dumps(converted))
    parsed.errors = errors + parsed.errors
    return parsed


def _items(whole: Any) -> list[Any] | None:
    if isinstance(whole, list):
        return whole
    if isinstance(whole, dict):
        for name in ("results", "memories"):
            if isinstance(whole.get(name), list):
                return list(whole[name])
    return None


def _fact(item: Any) -> dict[str, Any] | str:
    if not isinstance(item, dict):
        return "not a JSON object"
    words = next((item[k] for k in _WORDS if isinstance(item.get(k), str)), None)
    if words is None or not words.strip():
        return "no words: the record has none of memory, text or content"
    metadata = dict(item.get("metadata") or {}) if isinstance(item.get("metadata"), dict) else {}
    for name in _KEPT:
        if item.get(name) is not None:
            metadata[name] = item[name]
    if item.get("id") is not None:
        metadata["mem0_id"] = str(item["id"])
    fact: dict[str, Any] = {"content": words, "metadata": metadata}
    categories = item.get("categories")
    if isinstance(categories, list):
        fact["tags"] = [str(c) for c in categories]
    named = (("created_at", "createdAt"), ("updated_at", "updatedAt"))
    for theirs, ours in (*named, ("expiration_date", "expiresAt")):
        if isinstance(item.get(theirs), str):
            fact[ours] = _aware(item[theirs])
    return fact


def _aware(value: str) -> str:
    """mem0 writes times with an offset, or naive in UTC (its platform): made explicit."""
    if len(value) == 10:  # a day, as mem0's expiration_date is given: its start, in UTC
        return value + "T00:00:00+00:00"
    if value.endswith("Z") or "+" in value[10:] or "-" in value[10:]:
        return value
    return value + "+00:00"
