"""``engram serve``: the HTTP service on the settings of the environment."""

from __future__ import annotations

import dataclasses
import os
import sys

from engram.opening import describe
from engram.settings import Settings


def serve(db_path: str | None) -> None:
    """Opens the store (a bad path fails here, before anything listens), then serves
    until interrupted."""
    import uvicorn

    from engram.api import create_app

    settings = Settings.from_env(os.environ)
    if db_path is not None:
        settings = dataclasses.replace(settings, db_path=db_path)
    settings.check_exposure()
    app = create_app(settings)
    embedder = app.state.memory.embedder
    print(
        f"engram listening on http://{settings.host}:{settings.port} "
        f"(store {describe(settings.db_path)}, "
        f"embedder {embedder.model if embedder else 'none'})",
        file=sys.stderr,
        flush=True,
    )
    uvicorn.run(app, host=settings.host, port=settings.port, log_level="warning")
