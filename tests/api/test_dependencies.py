"""What runs before a route: the checks that compute and never wait run on the event loop
(FastAPI runs a plain function dependency on its thread pool, a hand-over to a worker
thread and back on every request); the routes that touch the store keep their threads."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio.to_thread
import pytest
from fastapi.testclient import TestClient

import engram
from engram.api import create_app


def test_a_write_hands_over_to_a_thread_once_for_its_route(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = engram.open(tmp_path / "e.db", embedder=engram.HashingEmbedder(64))
    with memory, TestClient(create_app(memory_store=memory)) as http:
        agent = http.post("/agents", json={"name": "counted"}).json()["id"]
        handed: list[str] = []
        run_sync = anyio.to_thread.run_sync

        async def counted(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
            handed.append(repr(func)[:80])
            return await run_sync(func, *args, **kwargs)

        monkeypatch.setattr(anyio.to_thread, "run_sync", counted)
        assert http.post(f"/agents/{agent}/facts", json={"content": "tea"}).status_code == 201
        assert len(handed) == 1 and "_run_sync_endpoint" in handed[0], handed
        handed.clear()
        assert http.put(f"/agents/{agent}/memory/k", json={"value": 1}).status_code == 200
        assert len(handed) == 1 and "_run_sync_endpoint" in handed[0], handed
