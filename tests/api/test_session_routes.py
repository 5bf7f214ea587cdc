"""Sessions and episodes through the real app (in-process) on both backends: the routes,
engram.Client with the library's names, and refusals that write nothing."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from fastapi.testclient import TestClient

import engram
from engram import Conflict, InvalidInput, NotFound, SourceRef
from engram.api import create_app
from engram.core.sessions import Entry
from engram.settings import Settings
from stores import ManualClock, Target

SERVICE = "sessions-service-token"
T0 = "2024-05-01T09:00:00Z"


@pytest.fixture
def http(target: Target, clock: ManualClock) -> Iterator[TestClient]:
    settings = Settings(
        db_path=str(target),
        service_token_hashes=(hashlib.sha256(SERVICE.encode()).hexdigest(),),
    )
    memory = engram.open(target, embedder=None, clock=clock)
    app = create_app(settings, memory_store=memory)
    with TestClient(app, headers={"Authorization": f"Bearer {SERVICE}"}) as test:
        yield test


def _agent(http: TestClient, name: str, team: str = "acme") -> str:
    made = http.post("/agents", json={"name": name, "teamId": team})
    assert made.status_code == 201, made.text
    agent: str = made.json()["id"]
    return agent


def _error(answer: Any, status: int, code: str) -> None:
    assert answer.status_code == status, answer.text
    assert answer.json()["error"]["code"] == code, answer.text


def test_sessions_entries_and_episodes_over_http(http: TestClient) -> None:
    planner = _agent(http, "planner")
    started = http.post(f"/agents/{planner}/sessions", json={"name": "morning"})
    assert started.status_code == 201, started.text
    session = started.json()
    assert (session["nextIndex"], session["forkOf"], session["depth"]) == (0, None, 0)
    entries = [
        {"kind": "message", "content": "plan the deploy", "role": "user", "at": T0},
        {"kind": "tool_call", "content": "", "data": {"tool": "ci", "args": [1]}},
    ]
    path = f"/sessions/{session['id']}/entries"
    wrote = http.post(path, json={"entries": entries, "expectedNext": 0})
    assert wrote.status_code == 201 and wrote.json() == {
        "sessionId": session["id"],
        "start": 0,
        "stop": 2,
    }
    again = http.post(path, json={"entries": entries, "expectedNext": 0})
    assert again.json()["stop"] == 2  # a retry writes nothing
    _error(http.post(path, json={"entries": entries[:1], "expectedNext": 1}), 409, "conflict")
    page = http.get(f"/agents/{planner}/episodes").json()
    assert [e["content"] for e in page["entries"]] == ["plan the deploy", ""]
    assert page["entries"][1]["data"] == {"tool": "ci", "args": [1]}
    assert "nextAfter" not in page
    first = http.get(f"/agents/{planner}/episodes", params={"limit": 1}).json()
    assert first["nextAfter"].startswith("2024-05-01T09:00:00")
    rest = http.get(f"/agents/{planner}/episodes", params={"after": first["nextAfter"]}).json()
    assert [e["index"] for e in rest["entries"]] == [1]
    found = http.get(f"/agents/{planner}/episodes", params={"query": "DEPLOY"}).json()
    assert [e["index"] for e in found["entries"]] == [0]

    spawned = http.post(f"/agents/{planner}/spawn", json={"name": "worker"}).json()
    child_session = spawned["fork"]["sessionId"]
    http.post(f"/sessions/{child_session}/entries", json={"entries": [entries[0]]})
    child = spawned["agent"]["id"]
    lineage = http.get(f"/agents/{child}/episodes", params={"branch": "lineage"}).json()
    assert [(e["sessionId"], e["index"]) for e in lineage["entries"]] == [
        (child_session, 0),  # at the same time as its parent's entry 0: nearer first
        (session["id"], 0),
        (session["id"], 1),
    ]
    tree = http.get(f"/agents/{child}/episodes/tree").json()["roots"]
    assert [r["session"]["id"] for r in tree] == [session["id"]]
    assert [c["session"]["id"] for c in tree[0]["children"]] == [child_session]
    assert tree[0]["children"][0]["session"]["forkOf"] == {
        "sandboxId": session["id"],
        "entryIndex": 1,
    }


def test_refusals_write_nothing(http: TestClient) -> None:
    planner = _agent(http, "planner")
    session = http.post(f"/agents/{planner}/sessions", json={}).json()["id"]
    path = f"/sessions/{session}/entries"
    for bad in (
        {"entries": [{"kind": "k" * 129, "content": "x"}]},
        {"entries": [{"kind": "m", "content": "x", "role": "r" * 129}]},
        {"entries": [{"kind": "m", "content": "é" * (32 * 1024 + 1)}]},
        {"entries": [{"kind": "m", "content": "x", "at": "2024-05-01T09:00:00"}]},
        {"entries": [{"kind": "m", "content": "x"}] * 1001},
        {"entries": [{"kind": "m", "content": "x"}], "extra": 1},
    ):
        answer = http.post(path, json=bad)
        assert answer.status_code in (400, 413), answer.text
    _error(http.post("/sessions/s_missing/entries", json={"entries": []}), 404, "not_found")
    _error(
        http.get(f"/agents/{planner}/episodes", params={"after": "2024-05-01"}),
        400,
        "invalid_input",
    )
    _error(http.get(f"/agents/{planner}/episodes", params={"branch": "all"}), 400, "invalid_input")
    stranger = _agent(http, "stranger", team="other")
    fork = {"forkOf": {"sandboxId": session, "entryIndex": 0}}
    _error(http.post(f"/agents/{stranger}/sessions", json=fork), 404, "not_found")
    assert http.get(f"/agents/{planner}/episodes").json()["entries"] == []


def test_the_client_speaks_the_librarys_names(http: TestClient) -> None:
    client = engram.Client(token=SERVICE, http=http)
    planner = client.register("planner", team_id="acme")["id"]
    session = client.sessions.start(planner, name="run")["id"]
    at = datetime(2024, 5, 1, 9, tzinfo=UTC)
    batch = [Entry("message", "ship it", role="user", at=at), Entry("note", "done", data=[1])]
    assert client.sessions.append(session, batch, expected_next=0) == range(0, 2)
    assert client.sessions.append(session, batch, expected_next=0) == range(0, 2)
    with pytest.raises(Conflict):
        client.sessions.append(session, batch[:1], expected_next=1)
    with pytest.raises(InvalidInput):
        client.sessions.append(session, [Entry("m", "x", at=datetime(2024, 5, 1))])
    with pytest.raises(NotFound):
        client.sessions.start(planner, fork_of=SourceRef(session, 9))
    worker = client.register("worker", team_id="acme")["id"]
    forked = client.sessions.start(worker, fork_of=SourceRef(session, 0))
    client.sessions.append(forked["id"], [Entry("message", "on it")])
    page = client.episodic_recall(worker, branch="lineage")
    assert [e["content"] for e in page["entries"]] == ["ship it", "on it"]
    assert client.episodic_recall(worker, after=at)["entries"][0]["content"] == "on it"
    [root] = client.episodic_tree(worker)
    assert root["session"]["id"] == session and len(root["children"]) == 1
