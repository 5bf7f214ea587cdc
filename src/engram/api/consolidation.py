"""The consolidation route: ``POST /agents/{id}/consolidations`` runs the cycle (or the
steps named) over the agent's memory, each step that changes something one ledger entry
naming the caller. 501 when self-improvement is off."""

from __future__ import annotations

from fastapi import APIRouter, Request

from engram.api.context import agent_memory
from engram.api.openapi import errors
from engram.core.consolidation import STEPS
from engram.wire.consolidation import ConsolidationOut, ConsolidationSpec

router = APIRouter(
    prefix="/agents/{agent_id}/consolidations",
    tags=["consolidation"],
    responses=errors(400, 401, 403, 404, 500, 503),
)


@router.post("", responses=errors(409, 413, 501, 502))
def consolidate(agent_id: str, body: ConsolidationSpec, request: Request) -> ConsolidationOut:
    """Runs ``steps`` (reindex, strengthen, prune, merge, derive, compact; all when
    absent) over the agent's memory; with ``dryRun``, says what each would change and
    writes nothing. A second run changes nothing. 409 when the agent has ended; 501 when
    the service runs with ``ENGRAM_SELF_IMPROVE=false``."""
    memory, agent = agent_memory(request, agent_id, write=not body.dry_run)
    report = memory.consolidate(agent.ref, steps=body.steps or STEPS, dry_run=body.dry_run)
    return ConsolidationOut.of(report)
