"""HTTP's conditional headers, for an operation that is a compare-and-set
(``Surface.precondition``): ``If-Match: "N"`` names the version read (the ETag an
answer sent), ``If-None-Match: *`` says the key must be unset (version 0). They name the
same version the body may, and must agree with it."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Header

from engram.api.params import DIGITS
from engram.core import limits
from engram.core.errors import Conflict, InvalidInput

IfMatch = Annotated[
    str | None,
    Header(
        description='compare-and-set: the version read, as "N" (its ETag)',
        pattern=r'^\s*(W/)?"?[0-9]{1,15}"?\s*$',
    ),
]
IfNoneMatch = Annotated[
    str | None, Header(description="* sets the key only if it is unset", pattern=r"^\s*\*\s*$")
]
HEADERS: dict[str, Any] = {"if_match": IfMatch, "if_none_match": IfNoneMatch}


def expected(in_body: int | None, if_match: str | None, if_none_match: str | None) -> int | None:
    """The one version a compare-and-set names, from the body or the headers. Two that
    disagree cannot both hold: at least one is stale, a conflict, and nothing is
    written (each alone is a valid request, and so is asking both)."""
    named = [
        v for v in (in_body, _if_match(if_match), _if_none_match(if_none_match)) if v is not None
    ]
    if len(set(named)) > 1:
        raise Conflict(
            "the body's expectedVersion and the If-Match/If-None-Match headers name "
            f"different versions ({', '.join(map(str, sorted(set(named))))}): "
            "at most one of them is the key's"
        )
    return named[0] if named else None


def _if_match(raw: str | None) -> int | None:
    if raw is None:
        return None
    tag = raw.strip().removeprefix("W/").strip('"')
    if not DIGITS.fullmatch(tag) or int(tag) > limits.MAX_COUNT:
        raise InvalidInput(
            f'If-Match must be one version, as "N" (the ETag read), got {raw[:40]!r}'
        )
    return int(tag)


def _if_none_match(raw: str | None) -> int | None:
    if raw is None:
        return None
    if raw.strip() != "*":
        raise InvalidInput(f"If-None-Match takes only *, got {raw[:40]!r}")
    return 0
