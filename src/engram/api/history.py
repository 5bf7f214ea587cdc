"""Routes for an agent's history: the write ledger and its reverts, the trash and its
restores, and deletions for good.

Agent routes forget softly (``DELETE /facts/{id}`` moves a fact to the trash, from which
it can be restored until the retention deletes it); ``?hard=true`` and ``POST
/deletions`` delete for good, erasing the ledger's before-states of the facts.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request

from engram.api.context import agent_memory
from engram.api.openapi import errors
from engram.api.params import Integer
from engram.core import limits
from engram.core.errors import InvalidInput
from engram.wire import (
    DeletionOut,
    Deletions,
)

router = APIRouter(
    prefix="/agents/{agent_id}",
    tags=["history"],
    responses=errors(400, 401, 403, 404, 500, 501, 503),
)
EntryId = Annotated[int, Path(ge=1, le=limits.MAX_COUNT, description="a ledger entry"), Integer]


@router.post("/deletions", responses=errors(409))
def delete(agent_id: str, body: Deletions, request: Request) -> DeletionOut:
    """Deletes for good, live or trashed: ``{"factIds": [...]}`` (unknown ids are
    skipped), or ``{"scope": true, "expectedCount": N}`` for every fact of the agent
    (``turnUserId``: only that second user's). Their words are then nowhere in the
    store, the ledger's before-states included (those entries are marked scrubbed)."""
    memory, agent = agent_memory(request, agent_id, write=True)
    if (body.fact_ids is None) == (not body.scope):
        raise InvalidInput('give factIds, or "scope": true, not both')
    if body.fact_ids is not None:
        if body.expected_count is not None or body.turn_user_id is not None:
            raise InvalidInput("expectedCount and turnUserId go with a scope's deletion")
        return DeletionOut.of(memory.delete_traces(agent.ref, body.fact_ids))
    if body.expected_count is None:
        raise InvalidInput("a scope's deletion needs expectedCount: how many facts you saw")
    receipt = memory.delete_scope(
        agent.ref, turn_user_id=body.turn_user_id, expected_count=body.expected_count
    )
    return DeletionOut.of(receipt)
