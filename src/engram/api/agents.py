"""Routes for agents: register, list, look up, spawn (with a fork of memory), end."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request

from engram import wire
from engram.api.context import memory_of
from engram.api.openapi import errors
from engram.api.params import Limit
from engram.core import limits
from engram.wire import AgentOut, AgentPageOut, AgentSpec, ForkOut, SpawnOut, SpawnSpec

router = APIRouter(prefix="/agents", tags=["agents"], responses=errors(400, 401, 403, 500, 503))


@router.post("", status_code=201, responses=errors(413))
def register(spec: AgentSpec, request: Request) -> AgentOut:
    """Registers an agent; ``resourceId`` defaults to its name."""
    agent = memory_of(request).agents.register(
        spec.name, resource_id=spec.resource_id, team_id=spec.team_id
    )
    return AgentOut.of(agent)


@router.get("")
def listing(
    request: Request,
    limit: Limit = limits.DEFAULT_PAGE,
    after: Annotated[wire.After | None, Query(description="nextAfter of the previous page")] = None,
    name: Annotated[wire.Name | None, Query(description="only the agents of this name")] = None,
) -> AgentPageOut:
    """Every registered agent, ended or not, in ascending id order; ``nextAfter`` when
    more follow."""
    page = memory_of(request).agents.list(after=after, limit=limit, name=name)
    return AgentPageOut(agents=[AgentOut.of(a) for a in page.agents], next_after=page.next_after)


@router.get("/{agent_id}", responses=errors(404))
def get(agent_id: str, request: Request) -> AgentOut:
    """One agent, ended or not."""
    return AgentOut.of(memory_of(request).agents.get(agent_id))


@router.post("/{agent_id}/spawn", status_code=201, responses=errors(404, 409, 413))
def spawn(agent_id: str, spec: SpawnSpec, request: Request) -> SpawnOut:
    """Registers a child (same team) and forks the parent's memory into its scope; 409
    when that scope already holds memory, unless ``intoExisting``."""
    child, fork = memory_of(request).agents.spawn(
        agent_id,
        spec.name,
        resource_id=spec.resource_id,
        copy_memory=request.app.state.memory_enabled,
        into_existing=spec.into_existing,
    )
    return SpawnOut(agent=AgentOut.of(child), fork=ForkOut.of(fork))


@router.post("/{agent_id}/end", responses=errors(404))
def end(agent_id: str, request: Request) -> AgentOut:
    """Marks the agent ended; its memory stays readable by its id, and refuses writes."""
    return AgentOut.of(memory_of(request).agents.end(agent_id))
