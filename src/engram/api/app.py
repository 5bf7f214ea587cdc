"""The application factory: the store opens before the service answers anything."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated

from fastapi import Depends, FastAPI, Header, Request

from engram.api import agents, errors, memory, people
from engram.api.identity import Verifier
from engram.core.memory import Memory
from engram.opening import open as open_memory
from engram.settings import Settings


def require_service(
    request: Request, authorization: Annotated[str | None, Header()] = None
) -> None:
    """The agent routes: a service token whenever auth is configured."""
    request.app.state.verifier.service(authorization)


def create_app(settings: Settings | None = None, *, memory_store: Memory | None = None) -> FastAPI:
    """The service over ``memory_store``, or over the store ``settings`` name (opened now,
    so a bad path fails here, before anything listens)."""
    settings = settings or Settings()
    store = memory_store or open_memory(
        settings.db_path,
        embedder=settings.make_embedder(),
        max_facts=settings.max_facts,
        max_age=settings.max_age,
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        if memory_store is None:  # close only what this app opened; a caller's is theirs
            store.close()

    app = FastAPI(title="engram", version="0.1.0", lifespan=lifespan)
    app.state.memory = store
    app.state.memory_enabled = settings.memory_enabled
    app.state.verifier = Verifier(settings)
    errors.install(app)
    service_only = [Depends(require_service)]
    app.include_router(agents.router, dependencies=service_only)
    app.include_router(memory.router, dependencies=service_only)
    app.include_router(people.router)

    @app.get("/healthz", tags=["service"])
    def healthz() -> dict[str, object]:
        return {"ok": True, "semantic": store.embedder is not None}

    return app
