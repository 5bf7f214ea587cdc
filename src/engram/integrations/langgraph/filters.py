"""LangGraph's search filters, compared as its ``InMemoryStore`` compares them: plain
equality (nested dicts and lists too) and ``$eq $ne $gt $gte $lt $lte`` on top-level
fields; an ordering operator on a missing or non-numeric value does not match (upstream
raises TypeError)."""

from __future__ import annotations

from typing import Any


def matches(value: dict[str, Any], filter: dict[str, Any] | None) -> bool:
    return not filter or all(_compare(value.get(k), want) for k, want in filter.items())


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
