"""A person's memories of an application page past 1,000 with a ``before`` cursor, by
either route, on both backends; every memory comes back once, newest first."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import jwt
import pytest
from fastapi.testclient import TestClient

import engram
from engram.api import create_app
from engram.settings import Settings
from stores import Target

SECRET = "pages-secret-0123456789abcdef0123456789"
HELD = 1005


@pytest.fixture
def client(target: Target) -> Iterator[TestClient]:
    memory = engram.open(target, embedder=engram.HashingEmbedder(16))
    start = datetime(2024, 1, 1, tzinfo=UTC)
    notes = [engram.Note(f"note {i}", created_at=start + timedelta(minutes=i)) for i in range(HELD)]
    memory.remember_many(engram.PersonAppRef("p1", "app:notes"), notes)
    memory.remember(engram.PersonAppRef("p2", "app:notes"), "someone else's")
    settings = Settings(db_path=str(target), jwt_secret=SECRET)
    with TestClient(create_app(settings, memory_store=memory)) as test:
        token = jwt.encode({"sub": "p1", "exp": int(time.time()) + 600}, SECRET, algorithm="HS256")
        test.headers["Authorization"] = f"Bearer {token}"
        yield test


@pytest.mark.parametrize(
    ("path", "params"),
    [("/api/v1/apps/memories/app:notes", {}), ("/api/v1/memories", {"agent_id": "app:notes"})],
)
def test_paging_past_a_thousand(client: TestClient, path: str, params: dict[str, str]) -> None:
    seen: list[str] = []
    before = None
    for _ in range(3):
        page = client.get(
            path, params={**params, "limit": 1000} | ({"before": before} if before else {})
        )
        assert page.status_code == 200, page.text
        body = page.json()
        assert body["count"] == HELD
        seen += [m["memory"] for m in body["memories"]]
        before = body.get("nextBefore")
        if before is None:
            break
    assert len(seen) == len(set(seen)) == HELD
    assert seen == [f"note {i}" for i in reversed(range(HELD))]  # newest first
    bad = client.get(path, params={**params, "before": "not-a-cursor"})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_input"
