"""Routes for retrieval feedback: which injected facts an agent's response used or
ignored, detected (``POST .../feedback``) or recorded one by one
(``POST .../feedback/{fact_id}``), and a fact's signals read back. Each write is one ledger
entry naming the caller; another agent's fact is not found."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request

from engram.api.context import agent_memory
from engram.api.openapi import errors
from engram.wire import StoredId
from engram.wire.usage import (
    DetectionSpec,
    FeedbackListOut,
    FeedbackOut,
    SignalOut,
    SignalsOut,
    SignalSpec,
)

router = APIRouter(
    prefix="/agents/{agent_id}/feedback",
    tags=["feedback"],
    responses=errors(400, 401, 403, 404, 500, 503),
)

FactPath = Annotated[str, Path(min_length=1, max_length=64, description="a fact's id"), StoredId]


@router.post("", responses=errors(409, 413, 502))
def detect(agent_id: str, body: DetectionSpec, request: Request) -> SignalsOut:
    """One signal per fact of ``factIds``, in their order, detected from ``response``
    (core/usage.py: a citation, the fact's salient terms, or with an embedder a sentence
    as near as 0.80), and stored. 404 when an id is no fact of the agent (nothing is
    stored); 409 when the agent has ended."""
    memory, agent = agent_memory(request, agent_id, write=True)
    signals = memory.usage.detect(agent.ref, body.fact_ids, body.response, query=body.query)
    return SignalsOut(signals=[SignalOut.of(s) for s in signals])


@router.post("/{fact_id}", status_code=201, responses=errors(409, 413))
def record(agent_id: str, fact_id: FactPath, body: SignalSpec, request: Request) -> FeedbackOut:
    """Stores that a response used or ignored the fact; the stored row."""
    memory, agent = agent_memory(request, agent_id, write=True)
    row = memory.usage.record(agent.ref, fact_id, body.signal, reason=body.reason, query=body.query)
    return FeedbackOut.of(row)


@router.get("/{fact_id}")
def signals(agent_id: str, fact_id: FactPath, request: Request) -> FeedbackListOut:
    """The signals stored about the fact, oldest first (none yet: an empty list); 404
    when the agent holds no such fact, live or in the trash."""
    memory, agent = agent_memory(request, agent_id)
    return FeedbackListOut(
        feedback=[FeedbackOut.of(r) for r in memory.usage.signals(agent.ref, fact_id)]
    )
