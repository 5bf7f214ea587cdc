"""Routes for an agent's working memory: JSON values by key.

Every route resolves the scope from the agent's persisted spec, so it works for ended
agents (read-only) and after a restart. A key is the rest of the path, percent-decoded:
any key the library takes, newlines and slashes included, is reachable.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated

from fastapi import APIRouter, Header, Path, Query, Request, Response
from starlette.convertors import Convertor, register_url_convertor

from engram.api.context import agent_memory
from engram.api.openapi import errors
from engram.api.params import DIGITS, Limit
from engram.core import limits
from engram.core.errors import InvalidInput
from engram.wire import EntryOut, PutValue, ResourceRefOut, WorkingPageOut


class KeyConvertor(Convertor[str]):
    """The rest of the path, whatever it holds (Starlette's ``path`` stops at a newline)."""

    regex = r"[\s\S]+"

    def convert(self, value: str) -> str:
        return value

    def to_string(self, value: str) -> str:
        return value


register_url_convertor("key", KeyConvertor())

router = APIRouter(
    prefix="/agents/{agent_id}/memory",
    tags=["working memory"],
    responses=errors(400, 401, 403, 404, 500, 501, 503),
)
Key = Annotated[
    str,
    Path(
        min_length=1,
        max_length=limits.MAX_KEY_CHARS,
        description="1-256 characters, percent-encoded (a slash may stay as it is)",
    ),
]


@router.get("")
def working_page(
    agent_id: str,
    request: Request,
    limit: Limit = limits.DEFAULT_PAGE,
    after: Annotated[str | None, Query(description="a key: the page starts after it")] = None,
) -> WorkingPageOut:
    """One page of working memory in ascending UTF-8 key order; ``nextAfter`` when more."""
    memory, agent = agent_memory(request, agent_id)
    page = memory.working.list(agent.ref, after=after, limit=limit)
    return WorkingPageOut(
        agent_id=agent.id,
        resource_ref=ResourceRefOut.of(agent.ref),
        semantic=memory.embedder is not None,
        working=page.as_dict(),
        next_after=page.next_after,
        unreadable=list(page.unreadable) or None,
    )


@router.get("/{key:key}")
def working_get(agent_id: str, key: Key, request: Request, response: Response) -> EntryOut:
    """The value with its version (also the ``ETag``); 404 when the key is unset."""
    memory, agent = agent_memory(request, agent_id)
    entry = memory.working.entry(agent.ref, key)
    response.headers["ETag"] = f'"{entry.version}"'
    return EntryOut.of(entry)


@router.put("/{key:key}", responses=errors(409, 413))
def working_put(
    agent_id: str,
    key: Key,
    body: PutValue,
    request: Request,
    response: Response,
    if_match: Annotated[
        str | None, Header(description='compare-and-set: the version read, as "N"')
    ] = None,
    if_none_match: Annotated[
        str | None, Header(description="* sets the key only if it is unset")
    ] = None,
) -> EntryOut:
    """Sets the value. A compare-and-set (``expectedVersion``, ``If-Match: "N"``, or
    ``If-None-Match: *`` for a key that must be unset) answers 409 on a stale version and
    writes nothing. ``ttlSeconds`` makes the key expire."""
    memory, agent = agent_memory(request, agent_id, write=True)
    expected = _expected_version(body.expected_version, if_match, if_none_match)
    ttl = None if body.ttl_seconds is None else timedelta(seconds=body.ttl_seconds)
    entry = memory.working.set(agent.ref, key, body.value, expected_version=expected, ttl=ttl)
    response.headers["ETag"] = f'"{entry.version}"'
    return EntryOut.of(entry)


@router.delete("/{key:key}", status_code=204, response_class=Response, responses=errors(409))
def working_delete(agent_id: str, key: Key, request: Request) -> None:
    """Idempotent: 204 whether or not the key was set."""
    memory, agent = agent_memory(request, agent_id, write=True)
    memory.working.delete(agent.ref, key)


def _expected_version(
    in_body: int | None, if_match: str | None, if_none_match: str | None
) -> int | None:
    """The one version a compare-and-set names, from the body or the headers."""
    named = [
        v for v in (in_body, _if_match(if_match), _if_none_match(if_none_match)) if v is not None
    ]
    if len(set(named)) > 1:
        raise InvalidInput(
            "the body's expectedVersion and the If-Match/If-None-Match headers disagree"
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


@router.api_route("/", methods=["GET", "PUT", "DELETE"], include_in_schema=False)
def empty_key(agent_id: str, request: Request) -> None:
    """``…/memory/`` names no key: refused for what it is (the app follows no trailing
    slash, so it is never taken for the listing), once the agent is known. Declared after
    the key's routes: a route's pattern ends in ``$``, which also matches before a final
    newline, so ``…/memory/%0A`` (the key "\n") would land here first."""
    agent_memory(request, agent_id)
    raise InvalidInput(
        "the working-memory key is empty: nothing follows /memory/",
        hint=f"a key is 1-{limits.MAX_KEY_CHARS} characters, percent-encoded after /memory/",
    )
