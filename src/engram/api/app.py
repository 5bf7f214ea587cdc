"""The application factory: the store opens before the service answers anything."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from engram.api import agents, errors, memory
from engram.core.memory import Memory
from engram.opening import open as open_memory
from engram.settings import Settings


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
        store.close()

    app = FastAPI(title="engram", version="0.1.0", lifespan=lifespan)
    app.state.memory = store
    app.state.memory_enabled = settings.memory_enabled
    errors.install(app)
    app.include_router(agents.router)
    app.include_router(memory.router)

    @app.get("/healthz", tags=["service"])
    def healthz() -> dict[str, object]:
        return {"ok": True, "semantic": store.embedder is not None}

    return app
