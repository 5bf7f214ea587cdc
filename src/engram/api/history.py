"""Routes for an agent's history: the write ledger and its reverts, the trash and its
restores, and deletions for good.

Agent routes forget softly (``DELETE /facts/{id}`` moves a fact to the trash, from which
it can be restored until the retention deletes it); ``?hard=true`` and ``POST
/deletions`` delete for good, erasing the ledger's before-states of the facts.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request

from engram.api.context import agent_memory
from engram.api.openapi import errors
from engram.api.params import Integer, Limit
from engram.core import limits
from engram.core.errors import InvalidInput
from engram.wire import (
    DeletionOut,
    Deletions,
    LedgerEntryOut,
    LedgerOut,
    TrashedFact,
    TrashOut,
)

router = APIRouter(
    prefix="/agents/{agent_id}",
    tags=["history"],
    responses=errors(400, 401, 403, 404, 500, 501, 503),
)
EntryId = Annotated[int, Path(ge=1, le=limits.MAX_COUNT, description="a ledger entry"), Integer]


@router.get("/trash")
def trash(
    agent_id: str,
    request: Request,
    limit: Limit = limits.DEFAULT_PAGE,
    before: Annotated[str | None, Query(description="nextBefore of the previous page")] = None,
) -> TrashOut:
    """Softly forgotten facts, most recently forgotten first, each with when the trash
    deletes it for good (``purgeAt``)."""
    memory, agent = agent_memory(request, agent_id)
    page = memory.trash(agent.ref, limit=limit, before=before)
    return TrashOut(
        facts=[TrashedFact.of_trashed(t) for t in page.facts], next_before=page.next_before
    )


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


@router.get("/ledger")
def ledger(
    agent_id: str,
    request: Request,
    limit: Limit = limits.DEFAULT_PAGE,
    before: Annotated[
        int | None,
        Query(ge=1, le=limits.MAX_COUNT, description="nextBefore of the previous page"),
        Integer,
    ] = None,
    object_id: Annotated[
        str | None,
        Query(alias="objectId", max_length=limits.MAX_KEY_CHARS, description="a fact id or key"),
    ] = None,
) -> LedgerOut:
    """Every write to the agent's memory, newest first: who, through what, when, and what
    it changed."""
    memory, agent = agent_memory(request, agent_id)
    page = memory.ledger(agent.ref, limit=limit, before=before, object_id=object_id)
    return LedgerOut(
        entries=[LedgerEntryOut.of(e) for e in page.entries], next_before=page.next_before
    )


@router.get("/facts/{fact_id}/history")
def history(agent_id: str, fact_id: str, request: Request) -> LedgerOut:
    """The entries that changed one fact, newest first (a fact deleted for good keeps
    them); 404 when the agent never held such a fact."""
    memory, agent = agent_memory(request, agent_id)
    return LedgerOut(entries=[LedgerEntryOut.of(e) for e in memory.history(agent.ref, fact_id)])


@router.post("/ledger/{entry_id}/revert", responses=errors(409))
def revert(agent_id: str, entry_id: EntryId, request: Request) -> LedgerEntryOut:
    """Undoes one entry as a new one (which it answers). 409 when later entries changed
    the same objects (``later`` names them; nothing changed), when a deletion for good
    erased its before-states, or for an entry that cannot be undone."""
    memory, agent = agent_memory(request, agent_id, write=True)
    return LedgerEntryOut.of(memory.revert(agent.ref, entry_id))
