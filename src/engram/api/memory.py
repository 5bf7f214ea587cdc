"""Routes for an agent's memory: working memory by key, facts, compactions.

Every route resolves the scope from the agent's persisted spec, so it works for ended
agents and after a restart.
"""

from __future__ import annotations

from datetime import timedelta

from fastapi import APIRouter, Request, Response

from engram.api.agents import memory_of
from engram.api.shapes import (
    JSON,
    CompactionSpec,
    NewFact,
    PutValue,
    compaction_json,
    entry_json,
    fact_json,
    int_param,
    ref_json,
)
from engram.core import limits
from engram.core.errors import CapabilityMissing
from engram.core.memory import Memory
from engram.core.models import SourceRef
from engram.core.scopes import ResourceRef

router = APIRouter(prefix="/agents/{agent_id}", tags=["memory"])


def _scope(request: Request, agent_id: str, *, facts: bool = False) -> tuple[Memory, ResourceRef]:
    memory = memory_of(request)
    if not request.app.state.memory_enabled:
        raise CapabilityMissing("memory is disabled (ENGRAM_MEMORY_ENABLED=false)")
    ref = memory.agents.get(agent_id).ref
    if facts and memory.embedder is None:
        raise CapabilityMissing(
            "facts need an embeddings endpoint, and none is configured",
            hint="set ENGRAM_EMBEDDINGS_URL and ENGRAM_EMBEDDINGS_MODEL, or ENGRAM_EMBEDDER=local",
        )
    return memory, ref


@router.get("/memory")
def working_page(
    agent_id: str, request: Request, limit: str | None = None, after: str | None = None
) -> JSON:
    """One page of working memory in ascending UTF-8 key order; ``nextAfter`` when more."""
    memory, ref = _scope(request, agent_id)
    size = int_param(limit, "limit", default=limits.DEFAULT_PAGE, maximum=limits.MAX_PAGE)
    page = memory.working.list(ref, after=after, limit=size)
    body: JSON = {
        "agentId": agent_id,
        "resourceRef": ref_json(ref),
        "semantic": memory.embedder is not None,
        "working": page.as_dict(),
    }
    if page.next_after is not None:
        body["nextAfter"] = page.next_after
    return body


@router.get("/memory/{key:path}")
def working_get(agent_id: str, key: str, request: Request) -> JSON:
    memory, ref = _scope(request, agent_id)
    return entry_json(memory.working.entry(ref, key))


@router.put("/memory/{key:path}")
def working_put(agent_id: str, key: str, body: PutValue, request: Request) -> JSON:
    memory, ref = _scope(request, agent_id)
    return entry_json(memory.working.set(ref, key, body.value))


@router.delete("/memory/{key:path}", status_code=204)
def working_delete(agent_id: str, key: str, request: Request) -> Response:
    """Idempotent: 204 whether or not the key was set."""
    memory, ref = _scope(request, agent_id)
    memory.working.delete(ref, key)
    return Response(status_code=204)


@router.post("/facts", status_code=201)
def remember(agent_id: str, body: NewFact, request: Request) -> JSON:
    memory, ref = _scope(request, agent_id, facts=True)
    source = body.source_ref
    fact = memory.remember(
        ref,
        body.content,
        source_ref=None if source is None else SourceRef(source.sandbox_id, source.entry_index),
        context=body.context,
    )
    return fact_json(fact)


@router.get("/facts")
def facts(
    agent_id: str,
    request: Request,
    query: str | None = None,
    topK: str | None = None,
    limit: str | None = None,
    before: str | None = None,
) -> JSON:
    """``?query=`` recalls by meaning (``topK`` default 5, max 100); without it, the
    newest facts first (``limit`` default 100, max 1000; ``nextBefore`` when more)."""
    memory, ref = _scope(request, agent_id, facts=True)
    if query is not None:
        k = int_param(topK, "topK", default=limits.DEFAULT_TOP_K, maximum=limits.MAX_TOP_K)
        hits = memory.recall(ref, query, top_k=k)
        return {"facts": [{**fact_json(h.fact), "score": h.score} for h in hits]}
    size = int_param(limit, "limit", default=limits.DEFAULT_PAGE, maximum=limits.MAX_PAGE)
    page = memory.facts(ref, limit=size, before=before)
    body: JSON = {"facts": [fact_json(f) for f in page.facts]}
    if page.next_before is not None:
        body["nextBefore"] = page.next_before
    return body


@router.post("/compactions")
def compact(agent_id: str, body: CompactionSpec, request: Request) -> JSON:
    """Prunes now: facts older than ``maxAgeMs`` first, then the oldest beyond ``maxFacts``."""
    memory, ref = _scope(request, agent_id, facts=True)
    max_age = None if body.max_age_ms is None else timedelta(milliseconds=body.max_age_ms)
    return compaction_json(memory.compact(ref, max_facts=body.max_facts, max_age=max_age))
