"""The access log: one JSON line per HTTP request, written when its response is done.

``{"time": …, "method": "GET", "path": "/healthz", "status": 200, "duration_ms": 0.42}``
on the ``engram.access`` logger at INFO. The query string is left out: it carries what
people search their memories for. A request that fails before answering logs 500, the
status the service answers it with.
"""

from __future__ import annotations

import json
import logging
import time
from datetime import UTC, datetime

from starlette.types import ASGIApp, Message, Receive, Scope, Send

LOGGER = logging.getLogger("engram.access")


class AccessLog:
    """ASGI middleware around the whole app; anything but HTTP passes through untouched."""

    def __init__(self, app: ASGIApp, logger: logging.Logger = LOGGER) -> None:
        self.app = app
        self.logger = logger

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            self.logger.info(line(scope, status, time.perf_counter() - started))


def line(scope: Scope, status: int, seconds: float) -> str:
    """One request as one JSON object."""
    return json.dumps(
        {
            "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
            "method": scope.get("method", ""),
            "path": scope.get("path", ""),
            "status": status,
            "duration_ms": round(seconds * 1000, 2),
        },
        ensure_ascii=False,
    )


def to_stderr(logger: logging.Logger = LOGGER) -> None:
    """Sends the access log to stderr, one line per request, at INFO."""
    if not any(getattr(h, "engram_access", False) for h in logger.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(message)s"))
        handler.engram_access = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
