"""The wiki route: ``POST /agents/{id}/wiki/compilations`` folds the agent's facts
written since the last compile into its wiki pages (documents ``wiki:<path>``), one
ledger entry per batch naming the caller."""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import Field

from engram.api.context import agent_memory
from engram.api.openapi import errors
from engram.core.wiki import MAX_BATCH, WikiReport
from engram.wire import Answer, Body

router = APIRouter(
    prefix="/agents/{agent_id}/wiki",
    tags=["wiki"],
    responses=errors(400, 401, 403, 404, 500, 503),
)


class CompileSpec(Body):
    """``batch``: facts folded at a time (each batch one ledger entry)."""

    batch: int = Field(default=500, ge=1, le=MAX_BATCH)


class WikiOut(Answer):
    """The facts folded, the pages written (unchanged pages are not listed) and the
    watermark after (``created_us.seq``, null before any fact was folded)."""

    facts: int
    pages: list[str]
    watermark: str | None

    @classmethod
    def of(cls, report: WikiReport) -> WikiOut:
        return cls(facts=report.facts, pages=list(report.pages), watermark=report.watermark)


@router.post("/compilations", responses=errors(409, 413, 501, 502))
def compile_wiki(agent_id: str, body: CompileSpec, request: Request) -> WikiOut:
    """Folds the facts written since the watermark into the pages they touch (index,
    entities, types, daily log), regenerated whole; a page whose words did not change
    writes nothing, and a second compile with no new fact changes nothing. 409 when the
    agent has ended."""
    memory, agent = agent_memory(request, agent_id, write=True, facts=True)
    return WikiOut.of(memory.wiki.compile(agent.ref, batch=body.batch))
