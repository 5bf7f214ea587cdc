"""LangGraph's search filters, compared as its ``InMemoryStore`` compares them: plain
equality (nested dicts and lists too) and ``$eq $ne $gt $gte $lt $lte``; an ordering
operator on a missing or non-numeric value does not match (upstream raises TypeError).
A key names a top-level field, or, when the value has no field of that name, a dotted
path into nested ones (``"user.level"``), as upstream's SQL stores read it."""

from __future__ import annotations

from typing import Any


def matches(value: dict[str, Any], filter: dict[str, Any] | None) -> bool:
    return not filter or all(_compare(_at(value, k), want) for k, want in filter.items())


def _at(value: dict[str, Any], key: str) -> Any:
    """The field ``key`` names: its own, else the dotted path's (None when absent)."""
    if key in value or "." not in key:
        return value.get(key)
    found: Any = value
    for part in key.split("."):
        if not isinstance(found, dict):
            return None
        found = found.get(part)
    return found


def _compare(value: Any, want: Any) -> bool:
    if isinstance(want, dict):
        if any(k.startswith("$") for k in want):
            return all(_apply(value, op, operand) for op, operand in want.items())
        return isinstance(value, dict) and all(_compare(value.get(k), v) for k, v in want.items())
    if isinstance(want, list | tuple):
        return (
            isinstance(value, list | tuple)
            and len(value) == len(want)
            and all(_compare(v, w) for v, w in zip(value, want, strict=True))
        )
    return bool(value == want)


_ORDER = {
    "$gt": lambda a, b: a > b,
    "$gte": lambda a, b: a >= b,
    "$lt": lambda a, b: a < b,
    "$lte": lambda a, b: a <= b,
}


def _apply(value: Any, operator: str, operand: Any) -> bool:
    if operator == "$eq":
        return bool(value == operand)
    if operator == "$ne":
        return bool(value != operand)
    if operator not in _ORDER:
        raise ValueError(f"Unsupported operator: {operator}")
    try:
        return bool(_ORDER[operator](float(value), float(operand)))
    except (TypeError, ValueError):
        return False
