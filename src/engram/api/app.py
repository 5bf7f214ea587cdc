"""The application factory: the store opens before the service answers anything."""

from __future__ import annotations

import functools
import inspect
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Request
from starlette.routing import BaseRoute

from engram.api import (
    agents,
    declared,
    documents,
    errors,
    facts,
    health,
    memory,
    openapi,
    page,
    people,
    portability,
    sessions,
    tools,
)
from engram.api.bodies import BodyGate
from engram.api.context import require_service
from engram.api.identity import Verifier
from engram.api.params import KnownQuery
from engram.core.graph.indexing import load_rules
from engram.core.memory import Memory
from engram.core.ports import Embedder
from engram.embedders.coalescing import CoalescingEmbedder
from engram.mcp import http as mcp_http
from engram.opening import open as open_memory
from engram.settings import Settings
from engram.wire import Health

# FastAPI's own OpenTelemetry (FastAPI 0.16x; none before), every part of it off.
TELEMETRY_OFF: dict[str, Any] = (
    {
        "telemetry": {
            "tracing": False,
            "metrics": False,
            "logs": False,
            "operation_spans": False,
            "auto_configure": False,
        }
    }
    if "telemetry" in inspect.signature(FastAPI.__init__).parameters
    else {}
)

TITLE, VERSION = "engram", "0.1.0"
DESCRIPTION = """Durable memory for AI agents: working memory by key, facts recalled by
meaning, a knowledge graph of entities and relations, and what applications remember of
people.

Every refusal answers `{"error": {"code", "message", "hint"?}}`. Request bodies are JSON
(`content-type: application/json`, UTF-8, at most 1 MiB), strictly typed and closed: a
field or query parameter a route does not take is refused, never ignored."""


def create_app(settings: Settings | None = None, *, memory_store: Memory | None = None) -> FastAPI:
    """The service over ``memory_store``, or over the store ``settings`` name (opened now,
    so a bad path fails here, before anything listens)."""
    settings = settings or Settings()
    store = memory_store or open_memory(
        settings.db_path,
        embedder=service_embedder(settings),
        reranker=settings.make_reranker(),
        chat=settings.make_chat(),
        recogniser=settings.make_recogniser(),
        **settings.store_options(),
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if settings.extractor == "rules":  # loaded before the first write, which waited
            load_rules()
        async with mcp_http.serving(app):
            yield
        if memory_store is None:  # close only what this app opened; a caller's is theirs
            if isinstance(store.embedder, CoalescingEmbedder):
                store.embedder.close()  # a request still waiting answers 503, none hangs
            store.close()

    app = FastAPI(
        title=TITLE,
        version=VERSION,
        description=DESCRIPTION,
        lifespan=lifespan,
        redirect_slashes=False,  # a trailing slash is refused in words, never a bare 307
        # FastAPI's own OpenTelemetry off, whatever the process's providers or its
        # FASTAPI_OTEL_AUTO_CONFIGURE say: its logs carry exception messages (a memory's
        # words among them) to whatever collector the environment names.
        **TELEMETRY_OFF,
    )
    app.state.memory = store
    app.state.memory_enabled = settings.memory_enabled
    app.state.ingest_allow_private = settings.ingest_allow_private
    app.state.verifier = Verifier(settings)
    errors.install(app)
    openapi.install(app, schema)
    app.add_middleware(BodyGate, shapes={mcp_http.PATH: mcp_http.body_refusal})
    app.router.routes.extend(routes())
    mcp_http.mount(app)  # /mcp: the MCP server over streamable HTTP (engram.mcp.http)
    return app


@functools.cache
def routes() -> tuple[BaseRoute, ...]:
    """Every route an app serves but ``/mcp`` (the app's own), built once a process and held
    by every app, and what its schema publishes (:func:`schema`): a route reads its
    memory, settings and verifier from the request's app when called. FastAPI reads a
    route's parameters and answers into models as it builds it, and FastAPI 0.16x builds
    an included router's routes when the app including it first answers: included into
    each app, that was about 0.3 s of a core at each app's first request (89 routes), and
    a test builds hundreds of apps. Included here once, into a router holding the app's
    own query check, they are built once. An app's ``dependency_overrides`` do not reach
    them (engram sets none)."""
    built = APIRouter(dependencies=[Depends(KnownQuery())])
    service_only = [Depends(require_service)]
    built.include_router(agents.router, dependencies=service_only)
    built.include_router(facts.router, dependencies=service_only)
    built.include_router(declared.router(), dependencies=service_only)
    built.include_router(memory.router, dependencies=service_only)  # after the keys' routes
    built.include_router(sessions.router, dependencies=service_only)
    built.include_router(health.router, dependencies=service_only)
    built.include_router(portability.router, dependencies=service_only)
    built.include_router(documents.router, dependencies=service_only)
    built.include_router(people.router)
    built.include_router(declared.router(mount=declared.PEOPLE))
    built.include_router(tools.router, dependencies=service_only)
    built.include_router(tools.people_router)
    built.include_router(page.router())

    @built.get("/healthz", tags=["service"], responses=openapi.errors(400))
    def healthz(request: Request) -> Health:
        """Whether the service answers, and whether it recalls by meaning."""
        memory: Memory = request.app.state.memory
        return Health(ok=True, semantic=memory.embedder is not None)

    return tuple(built.routes)


@functools.cache
def schema() -> dict[str, Any]:
    """The OpenAPI schema every app publishes, of :func:`routes`: made once a process, each
    app given its own copy (:func:`openapi.install`)."""
    return openapi.published(TITLE, VERSION, DESCRIPTION, routes())


def service_embedder(settings: Settings) -> Embedder | None:
    """The embedder ``settings`` name, coalescing concurrent requests' texts into one model
    call unless ``ENGRAM_COALESCE_EMBEDDINGS`` is false (embedders/coalescing.py)."""
    embedder = settings.make_embedder()
    if embedder is None or not settings.coalesce_embeddings:
        return embedder
    return CoalescingEmbedder(embedder)
