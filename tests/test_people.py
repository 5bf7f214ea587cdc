from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

import engram
from engram.api import create_app
from engram.core.people import (
    NOT_SIGNED_IN,
    AppMemory,
    acting_person,
    tool_recall,
    tool_remember,
)
from engram.settings import Settings
from stores import Target


def test_tools_answer_a_visitor_not_signed_in_in_a_sentence(mem: engram.Memory) -> None:
    app = AppMemory(mem, "app:a")
    assert tool_remember(app, None, "my name is Ana") == NOT_SIGNED_IN
    assert tool_recall(app, None, "name") == NOT_SIGNED_IN
    assert mem.count(app.scope("anyone")) == 0
    assert tool_remember(app, "p1", "my name is Ana") == "Remembered: my name is Ana"
    assert tool_recall(app, "p1", "name") == "- my name is Ana"
    assert tool_recall(app, "p2", "name") == "Nothing remembered matches."


def test_a_scheduled_run_acts_as_the_owner() -> None:
    assert acting_person(None, scheduled=True, owner="owner") == "owner"
    assert acting_person("p1", scheduled=False, owner="owner") == "p1"
    assert acting_person(None, scheduled=False, owner="owner") is None


def test_recall_marks_what_other_applications_remembered(mem: engram.Memory) -> None:
    a, b = AppMemory(mem, "app:a"), AppMemory(mem, "app:b")
    a.remember("p1", "likes green tea")
    b.remember("p1", "likes green apples")
    assert [h.remembered_by for h in b.recall("p1", "green", top_k=10)] == [None]
    mem.sharing.allow("p1", "app:a", "app:b")
    found = b.recall("p1", "green", top_k=10)
    assert [(h.hit.fact.content, h.remembered_by) for h in found] == [
        ("likes green apples", None),
        ("likes green tea", "app:a"),
    ]
    assert (
        tool_recall(b, "p1", "green").splitlines()[1] == "- likes green tea (remembered by app:a)"
    )


def test_without_an_embedder_people_routes_answer_503_in_a_sentence(target: Target) -> None:
    import time

    import jwt

    secret = "people-secret-0123456789abcdef0123456"
    token = jwt.encode({"sub": "p1", "exp": int(time.time()) + 3600}, secret, algorithm="HS256")
    headers = {"Authorization": f"Bearer {token}"}
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as memory:
        kept = AppMemory(memory, "app:a").remember("p1", "remembered before")
    settings = Settings(db_path=str(target), embedder="none", jwt_secret=secret)
    with TestClient(create_app(settings)) as client:
        answer = client.post("/api/v1/apps/app:a/memories", json={"memory": "x"}, headers=headers)
        assert answer.status_code == 503
        assert answer.json()["error"]["message"].startswith("Semantic memory is not available")
        listed = client.get("/api/v1/apps/memories/app:a", headers=headers).json()
        assert [m["memory"] for m in listed["memories"]] == ["remembered before"]
        # the runtimes-service route corrects without embedding: the words change, the
        # vector stays that of the old words
        fixed = client.patch(
            f"/api/v1/memories/{kept.id}", json={"memory": "new words"}, headers=headers
        )
        assert fixed.status_code == 200 and fixed.json()["memory"]["memory"] == "new words"
        runtime = client.patch(
            f"/api/v1/apps/memories/app:a/{kept.id}", json={"memory": "y"}, headers=headers
        )
        assert runtime.status_code == 503
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as memory:
        scope = AppMemory(memory, "app:a").scope("p1")
        assert memory.recall(scope, "new words", mode="text")[0].fact.id == kept.id
        assert memory.recall(scope, "remembered before", mode="vector")[0].fact.id == kept.id


@pytest.mark.parametrize("app", ["a", "", "app:"])
def test_applications_are_written_app_uid(mem: engram.Memory, app: str) -> None:
    with pytest.raises(engram.InvalidInput):
        AppMemory(mem, app)
