"""The route of the whole store's health report (an agent's is a declared operation,
engram.core.ops.Health). Service token, as every agent route."""

from __future__ import annotations

from fastapi import APIRouter, Request

from engram.api.context import enabled_memory
from engram.api.openapi import errors
from engram.wire import HealthReportOut

router = APIRouter(tags=["health"], responses=errors(400, 401, 403, 500, 501, 503))


@router.get("/health/report")
def store_health(request: Request) -> HealthReportOut:
    """The same counts over the whole store, with the bytes it takes, its schema version
    and its embedding model (graph drift is an agent's: a rebuild is per scope). Never
    writes."""
    return HealthReportOut.of(enabled_memory(request).health())
