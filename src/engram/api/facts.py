"""Routes for an agent's facts: remember, recall or list, one by id, forget, compact.

A parameter that would be ignored is refused instead: recall's filters without a
``query``, the listing's ``limit``/``before`` with one.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request

from engram.api.context import agent_memory
from engram.api.openapi import errors
from engram.api.params import Count, Flag, Limit, MinScore, MinStrength, Time, TopK
from engram.core import limits
from engram.core.errors import InvalidInput
from engram.core.models import SourceRef
from engram.wire import (
    CompactionOut,
    CompactionSpec,
    ConversationOut,
    FactCorrection,
    FactForgotten,
    FactOut,
    FactsForgotten,
    FactsOut,
    NewConversation,
    NewFact,
    RecalledFact,
    RecallOut,
)
from engram.wire.documents import ProvenanceOut, ProvenancesOut

router = APIRouter(
    prefix="/agents/{agent_id}",
    tags=["facts"],
    responses=errors(400, 401, 403, 404, 500, 501, 503),
)
RECALL_ONLY = (
    "topK",
    "type",
    "tags",
    "verifiedOnly",
    "mode",
    "createdAfter",
    "createdBefore",
    "minStrength",
    "minScore",
)
LISTING_ONLY = ("limit", "before")


@router.post("/facts", status_code=201, responses=errors(409, 413, 502))
def remember(agent_id: str, body: NewFact, request: Request) -> FactOut:
    """Remembers a fact (the same words again answer the stored fact)."""
    memory, agent = agent_memory(request, agent_id, write=True, facts=True)
    source = body.source_ref
    fact = memory.remember(
        agent.ref,
        body.content,
        source_ref=None if source is None else SourceRef(source.sandbox_id, source.entry_index),
        type=body.type,
        tags=body.tags or (),
        metadata=body.metadata,
        created_at=body.created_at,
        context=body.context,
        strength=body.strength,
    )
    return FactOut.of(fact)


@router.post("/conversations", status_code=201, responses=errors(409, 413, 502))
def remember_conversation(
    agent_id: str, body: NewConversation, request: Request
) -> ConversationOut:
    """Remembers a conversation's turns: each a fact ``"speaker: text"`` at its time,
    its neighbouring turns as context, and an entry of the session ``sessionId``
    (started when new) that the fact points at. Later turns appended to the session
    complete the context of the turns before them."""
    memory, agent = agent_memory(request, agent_id, write=True, facts=True)
    done = memory.remember_conversation(
        agent.ref,
        [t.turn() for t in body.turns],
        session_id=body.session_id,
        expected_next=body.expected_next,
        context_turns=body.context_turns,
    )
    return ConversationOut.of(done)


@router.get("/facts", responses=errors(502))
def facts(
    agent_id: str,
    request: Request,
    query: Annotated[str | None, Query(description="recall by meaning")] = None,
    top_k: TopK = limits.DEFAULT_TOP_K,
    type: Annotated[str | None, Query(description="recall: only facts of this type")] = None,
    tags: Annotated[list[str] | None, Query(description="recall: facts with all these")] = None,
    verified_only: Annotated[bool, Query(alias="verifiedOnly"), Flag] = False,
    mode: Annotated[Literal["hybrid", "text", "vector"], Query()] = "hybrid",
    created_after: Annotated[Time, Query(alias="createdAfter")] = None,
    created_before: Annotated[Time, Query(alias="createdBefore")] = None,
    min_strength: MinStrength = None,
    min_score: MinScore = None,
    limit: Limit = limits.DEFAULT_PAGE,
    before: Annotated[str | None, Query(description="nextBefore of the previous page")] = None,
) -> RecallOut | FactsOut:
    """``?query=`` recalls by meaning (``topK`` default 5, max 100; filtered by ``type``,
    ``tags``, ``verifiedOnly``, ``createdAfter``/``createdBefore``, ``minStrength``;
    ``mode`` hybrid, text or vector); without it, the newest facts first (``limit``
    default 100, max 1000; ``nextBefore`` when more follow)."""
    given = set(request.query_params)
    memory, agent = agent_memory(request, agent_id, facts=True)
    if query is None:
        _refuse(given, RECALL_ONLY, "filter a recall: give ?query= too")
        page = memory.facts(agent.ref, limit=limit, before=before)
        return FactsOut(facts=[FactOut.of(f) for f in page.facts], next_before=page.next_before)
    _refuse(given, LISTING_ONLY, "page the listing: a recall takes topK")
    hits = memory.recall(
        agent.ref,
        query,
        top_k=top_k,
        type=type,
        tags=tags or (),
        created_after=created_after,
        created_before=created_before,
        verified_only=verified_only,
        mode=mode,
        min_strength=min_strength,
        min_score=min_score,
    )
    return RecallOut(facts=[RecalledFact.of_hit(h) for h in hits])


Hard = Annotated[
    bool,
    Query(description="delete for good (no trash; the ledger keeps none of its words)"),
    Flag,
]


@router.delete("/facts", responses=errors(409))
def forget_all(agent_id: str, request: Request, count: Count, hard: Hard = False) -> FactsForgotten:
    """Forgets every fact, confirming ``count``: when there are more now, nothing is
    forgotten (409). Softly (to the trash) unless ``hard=true``."""
    memory, agent = agent_memory(request, agent_id, write=True, facts=True)
    forgotten = memory.forget_all(agent.ref, expected_count=count, hard=hard)
    return FactsForgotten(forgotten=forgotten)


@router.get("/facts/{fact_id}")
def fact(agent_id: str, fact_id: str, request: Request) -> FactOut:
    memory, agent = agent_memory(request, agent_id, facts=True)
    return FactOut.of(memory.fact(agent.ref, fact_id))


@router.get("/facts/{fact_id}/provenance")
def provenance(agent_id: str, fact_id: str, request: Request) -> ProvenancesOut:
    """The chunks of the agent's documents holding the fact's words (none for a fact no
    document holds); 404 when the agent has no such fact, live or in the trash."""
    memory, agent = agent_memory(request, agent_id)
    found = memory.provenance(agent.ref, fact_id)
    return ProvenancesOut(provenance=[ProvenanceOut.of(p) for p in found])


@router.patch("/facts/{fact_id}", responses=errors(409, 413, 502))
def correct(agent_id: str, fact_id: str, body: FactCorrection, request: Request) -> FactOut:
    """Corrects a fact's words in place (embedded again; ``createdAt`` stays). 409 when
    another fact of the agent already holds these words."""
    memory, agent = agent_memory(request, agent_id, write=True, facts=True)
    return FactOut.of(memory.correct(agent.ref, fact_id, body.content, by=body.by))


@router.delete("/facts/{fact_id}", responses=errors(409))
def forget(agent_id: str, fact_id: str, request: Request, hard: Hard = False) -> FactForgotten:
    """Forgets one fact; idempotent: ``forgotten`` says whether it was there. Softly:
    the fact goes to the trash (``GET /trash``, ``POST /trash/{id}/restore``) unless
    ``hard=true``, which deletes it for good."""
    memory, agent = agent_memory(request, agent_id, write=True, facts=True)
    forgotten = memory.forget(agent.ref, fact_id, hard=hard)
    return FactForgotten(id=fact_id, forgotten=forgotten, hard=hard)


@router.post("/compactions", responses=errors(409, 413))
def compact(agent_id: str, body: CompactionSpec, request: Request) -> CompactionOut:
    """Prunes now: facts older than ``maxAgeMs`` first, then the oldest beyond ``maxFacts``."""
    memory, agent = agent_memory(request, agent_id, write=True, facts=True)
    max_age = None if body.max_age_ms is None else timedelta(milliseconds=body.max_age_ms)
    result = memory.compact(agent.ref, max_facts=body.max_facts, max_age=max_age)
    return CompactionOut.of(result)


def _refuse(given: set[str], names: tuple[str, ...], why: str) -> None:
    misplaced = [name for name in names if name in given]
    if misplaced:
        raise InvalidInput(f"{', '.join(misplaced)} {why}")
