#!/usr/bin/env python3
"""`engram serve`'s app, as it serves (access log on), over a store whose embedder hashes
words (``HashingEmbedder(384)``, a few microseconds a text): what a request costs the
service with no model in it. Its settings come from ENGRAM_… variables as the service's
do; it stops on SIGTERM or SIGINT.

    .venv/bin/python bench/hashing_service.py   # ENGRAM_DB_PATH, ENGRAM_PORT
"""

from __future__ import annotations

import os

import uvicorn

import engram
from engram.api import create_app
from engram.api.access_log import AccessLog
from engram.settings import Settings


def main() -> None:
    settings = Settings.from_env(os.environ)
    memory = engram.open(settings.db_path, embedder=engram.HashingEmbedder(384))
    try:
        app = create_app(settings, memory_store=memory)
        # as `engram serve` runs it (uvicorn's choices); BENCH_UVICORN=plain: its pure-Python
        # HTTP parser and asyncio's own loop, to compare
        plain = os.environ.get("BENCH_UVICORN") == "plain"
        config = uvicorn.Config(
            AccessLog(app),
            host="127.0.0.1",
            port=settings.port,
            log_level="warning",
            access_log=False,
            http="h11" if plain else "auto",
            loop="asyncio" if plain else "auto",
        )
        uvicorn.Server(config).run()
    finally:
        memory.close()


if __name__ == "__main__":
    main()
