"""Query parameters, typed for OpenAPI and parsed strictly.

An integer is written with the digits 0-9 and nothing else (``int()`` would take ``¹``,
``①`` or five thousand digits), a boolean is ``true`` or ``false``, a time is ISO 8601 with
its UTC offset. A parameter the route does not take, or a single-valued one given twice,
is refused (400), never ignored: ``?top_k=3`` must not quietly return five.
"""

from __future__ import annotations

import re
import types
from collections.abc import Iterator
from datetime import datetime
from typing import Annotated, Any, Union, get_args, get_origin

from fastapi import Query, Request
from pydantic import BeforeValidator, WithJsonSchema
from pydantic.alias_generators import to_camel

from engram.core import limits
from engram.core.errors import InvalidInput
from engram.wire import parse_time

DIGITS = re.compile(r"[0-9]{1,20}")


def ascii_integer(raw: object) -> object:
    """Lets an integer through only when written with at most 20 ASCII digits."""
    if isinstance(raw, str) and not DIGITS.fullmatch(raw):
        raise ValueError(f"must be a whole number written with the digits 0-9, got {raw[:40]!r}")
    return raw


def plain_boolean(raw: object) -> object:
    if isinstance(raw, str) and raw not in ("true", "false"):
        raise ValueError(f"must be true or false, got {raw[:40]!r}")
    return raw == "true" if isinstance(raw, str) else raw


Integer = BeforeValidator(ascii_integer)
Limit = Annotated[
    int,
    Query(ge=1, le=limits.MAX_PAGE, description="page size (default 100, at most 1000)"),
    Integer,
]
TopK = Annotated[
    int,
    Query(
        alias="topK",
        ge=1,
        le=limits.MAX_TOP_K,
        description="how many to recall (default 5, at most 100)",
    ),
    Integer,
]
Count = Annotated[
    int,
    Query(
        ge=0,
        le=limits.MAX_COUNT,
        description="how many you were shown: when there are more now, none is forgotten (409)",
    ),
    Integer,
]
Flag = BeforeValidator(plain_boolean)
Time = Annotated[
    datetime | None,
    BeforeValidator(parse_time),
    WithJsonSchema({"type": "string", "format": "date-time"}),
]


class KnownQuery:
    """A dependency of every route: refuses query parameters the route does not declare
    (on the event loop: it computes and never waits)."""

    def __init__(self) -> None:
        self._by_route: dict[int, tuple[frozenset[str], frozenset[str]]] = {}

    async def __call__(self, request: Request) -> None:
        route = request.scope.get("route")
        dependant = getattr(route, "dependant", None)
        if dependant is None:
            return
        names, lists = self._declared(id(route), dependant)
        given = request.query_params.multi_items()
        seen: set[str] = set()
        for name, _ in given:
            if name not in names:
                raise InvalidInput(_unknown(name, names), hint=_suggest(name, names))
            if name in seen and name not in lists:
                raise InvalidInput(f"query parameter {name!r} is given more than once")
            seen.add(name)

    def _declared(self, key: int, dependant: Any) -> tuple[frozenset[str], frozenset[str]]:
        found = self._by_route.get(key)
        if found is None:
            params = list(_query_params(dependant))
            names = frozenset(p.alias for p in params)
            lists = frozenset(p.alias for p in params if _is_list(p.field_info.annotation))
            found = self._by_route[key] = (names, lists)
        return found


def _query_params(dependant: Any) -> Iterator[Any]:
    """The query parameters of a route and of everything it depends on."""
    yield from dependant.query_params
    for sub in dependant.dependencies:
        yield from _query_params(sub)


def _is_list(annotation: object) -> bool:
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        return any(_is_list(arg) for arg in get_args(annotation))
    if origin is Annotated:
        return _is_list(get_args(annotation)[0])
    return origin in (list, tuple, set, frozenset)


def _unknown(name: str, names: frozenset[str]) -> str:
    takes = ", ".join(sorted(names)) if names else "none"
    return f"unknown query parameter {name[:60]!r}; this route takes: {takes}"


def _suggest(name: str, names: frozenset[str]) -> str | None:
    camel = to_camel(name)
    return f"did you mean {camel!r}?" if camel != name and camel in names else None
