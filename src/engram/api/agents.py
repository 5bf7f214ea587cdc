"""Routes for agents: register, look up, spawn (with a fork of memory), end."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from engram.api.shapes import JSON, AgentSpec, SpawnSpec, agent_json, fork_json
from engram.core.memory import Memory

router = APIRouter(prefix="/agents", tags=["agents"])


def memory_of(request: Request) -> Memory:
    memory: Memory = request.app.state.memory
    return memory


@router.post("", status_code=201)
def register(spec: AgentSpec, request: Request) -> JSON:
    """Registers an agent; ``resourceId`` defaults to its name."""
    agent = memory_of(request).agents.register(
        spec.name, resource_id=spec.resource_id, team_id=spec.team_id
    )
    return agent_json(agent)


@router.get("/{agent_id}")
def get(agent_id: str, request: Request) -> JSON:
    return agent_json(memory_of(request).agents.get(agent_id))


@router.post("/{agent_id}/spawn", status_code=201)
def spawn(agent_id: str, spec: SpawnSpec, request: Request) -> JSONResponse:
    """Registers a child (same team) and forks the parent's memory into its scope."""
    child, fork = memory_of(request).agents.spawn(
        agent_id,
        spec.name,
        resource_id=spec.resource_id,
        copy_memory=request.app.state.memory_enabled,
    )
    return JSONResponse({"agent": agent_json(child), "fork": fork_json(fork)}, status_code=201)


@router.post("/{agent_id}/end")
def end(agent_id: str, request: Request) -> JSON:
    """Marks the agent ended; its memory stays readable by its id."""
    return agent_json(memory_of(request).agents.end(agent_id))
