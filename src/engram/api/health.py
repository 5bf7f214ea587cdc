"""Routes for the health report: an agent's memory (ended agents too: it only reads) and
the whole store's. Service token, as every agent route."""

from __future__ import annotations

from fastapi import APIRouter, Request

from engram.api.context import agent_memory, enabled_memory
from engram.api.openapi import errors
from engram.wire import HealthReportOut

router = APIRouter(tags=["health"], responses=errors(400, 401, 403, 500, 501, 503))


@router.get("/agents/{agent_id}/health", responses=errors(404))
def agent_health(agent_id: str, request: Request) -> HealthReportOut:
    """What the agent's memory holds: facts live and trashed by type, verified, without
    a vector, strengths; full-text rows against facts; working keys; the ledger;
    sessions. Never writes."""
    memory, agent = agent_memory(request, agent_id)
    return HealthReportOut.of(memory.health(agent.ref))


@router.get("/health/report")
def store_health(request: Request) -> HealthReportOut:
    """The same counts over the whole store, with the bytes it takes, its schema version
    and its embedding model. Never writes."""
    return HealthReportOut.of(enabled_memory(request).health())
