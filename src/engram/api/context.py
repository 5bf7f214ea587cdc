"""What a route needs before it can act: the store, the caller's bearer token, and an
agent's scope (read-only once the agent has ended).

The checks of the token are ``async``: they compute and never wait, so they run on the
event loop, where a plain function dependency would take a hop through the thread pool
(a thread hand-over and back each) on every request."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from engram.core.errors import CapabilityMissing, Conflict
from engram.core.memory import Memory
from engram.core.records import Agent

bearer = HTTPBearer(
    auto_error=False,
    description="A service token on the agent routes; a person's JWT on the people routes",
)


async def authorization(
    request: Request,
    _: Annotated[HTTPAuthorizationCredentials | None, Security(bearer)],
) -> str | None:
    """The raw ``Authorization`` header, for the verifier to judge (its scheme included)."""
    return request.headers.get("authorization")


Authorization = Annotated[str | None, Depends(authorization)]


async def require_service(request: Request, header: Authorization) -> None:
    """The agent routes: a service token whenever auth is configured."""
    request.app.state.verifier.service(header)


def verified_person(request: Request, header: str | None) -> str:
    """The verified person calling (401 without a valid token, 403 for one naming nobody)."""
    uid: str = request.app.state.verifier.person(header)
    return uid


async def person(request: Request, header: Authorization) -> str:
    """:func:`verified_person`, as a route's dependency."""
    return verified_person(request, header)


Person = Annotated[str, Depends(person)]


def memory_of(request: Request) -> Memory:
    """The store, writing as the caller the request's token verified, through HTTP; an
    ``X-Request-Id`` header (up to 128 printable characters) goes into the ledger too."""
    memory: Memory = request.app.state.memory
    actor = request.app.state.verifier.actor(request.headers.get("authorization"))
    request_id = request.headers.get("x-request-id")
    if request_id is not None and not (
        0 < len(request_id) <= 128 and request_id.isascii() and request_id.isprintable()
    ):
        request_id = None
    return memory.acting(actor=actor, via="http", request_id=request_id)


def enabled_memory(request: Request) -> Memory:
    """The store, for a memory route; CapabilityMissing when memory is disabled."""
    if not request.app.state.memory_enabled:
        raise CapabilityMissing("memory is disabled (ENGRAM_MEMORY_ENABLED=false)")
    return memory_of(request)


def agent_memory(
    request: Request, agent_id: str, *, write: bool = False, facts: bool = False
) -> tuple[Memory, Agent]:
    """The store and the agent whose scope a memory route acts on.

    Raises CapabilityMissing (memory disabled; ``facts`` without an embedder), NotFound
    (no such agent) and, for a ``write``, Conflict when the agent has ended.
    """
    memory = enabled_memory(request)
    agent = memory.agents.get(agent_id)
    if write and agent.ended_at is not None:
        raise Conflict(
            f"agent {agent.id} has ended: its memory can be read, not changed",
            hint="spawn or register another agent to keep working",
        )
    if facts and memory.embedder is None:
        raise CapabilityMissing(
            "facts need an embeddings endpoint, and none is configured",
            hint="set ENGRAM_EMBEDDINGS_URL and ENGRAM_EMBEDDINGS_MODEL, or ENGRAM_EMBEDDER=local",
        )
    return memory, agent
