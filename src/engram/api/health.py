"""Routes for the health report: an agent's memory (ended agents too: it only reads) and
the whole store's. Service token, as every agent route."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request

from engram.api.context import agent_memory, enabled_memory
from engram.api.openapi import errors
from engram.api.params import Flag
from engram.wire import HealthReportOut

router = APIRouter(tags=["health"], responses=errors(400, 401, 403, 500, 501, 503))


GraphDrift = Annotated[
    bool,
    Query(
        alias="graphDrift",
        description="also rebuild the agent's graph from its facts by the rules and count "
        "how the stored one differs (reads every live fact)",
    ),
    Flag,
]


@router.get("/agents/{agent_id}/health", responses=errors(404))
def agent_health(
    agent_id: str, request: Request, graph_drift: GraphDrift = False
) -> HealthReportOut:
    """What the agent's memory holds: facts live and trashed by type, verified, without
    a vector, strengths; full-text rows against facts; working keys; the ledger;
    sessions; the graph (and, with ``graphDrift=true``, its drift from a rebuild);
    documents; retrieval feedback; what is kept past its time. Never writes."""
    memory, agent = agent_memory(request, agent_id)
    return HealthReportOut.of(memory.health(agent.ref, graph_drift=graph_drift))


@router.get("/health/report")
def store_health(request: Request) -> HealthReportOut:
    """The same counts over the whole store, with the bytes it takes, its schema version
    and its embedding model (graph drift is an agent's: a rebuild is per scope). Never
    writes."""
    return HealthReportOut.of(enabled_memory(request).health())
