"""The agent routes a service needs beyond remember and recall, in-process, on both
backends: agents listed, facts by id, forget-all with a count, tags/type/metadata and
recall's filters, working memory's TTL and compare-and-set, ended agents read-only."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient

import engram
import stores
from engram.api import create_app
from engram.settings import Settings
from stores import ManualClock, Target


@pytest.fixture
def client(target: Target, clock: ManualClock) -> Iterator[TestClient]:
    memory = engram.open(target, embedder=engram.HashingEmbedder(64), clock=clock)
    with TestClient(create_app(Settings(db_path=str(target)), memory_store=memory)) as test:
        yield test


def _agent(client: TestClient, name: str = "planner", **spec: Any) -> str:
    made = client.post("/agents", json={"name": name, **spec})
    assert made.status_code == 201, made.text
    agent: str = made.json()["id"]
    return agent


def _error(answer: Any, status: int, code: str) -> str:
    assert answer.status_code == status, answer.text
    error = answer.json()["error"]
    assert error["code"] == code, answer.text
    message: str = error["message"]
    return message


def test_agents_are_listed_in_pages(client: TestClient) -> None:
    made = sorted(_agent(client, f"worker-{i % 2}") for i in range(5))
    client.post(f"/agents/{made[0]}/end")
    first = client.get("/agents", params={"limit": 2}).json()
    assert [a["id"] for a in first["agents"]] == made[:2] and first["nextAfter"] == made[1]
    rest = client.get("/agents", params={"after": first["nextAfter"]}).json()
    assert [a["id"] for a in rest["agents"]] == made[2:] and "nextAfter" not in rest
    assert first["agents"][0]["status"] == "ended"
    named = client.get("/agents", params={"name": "worker-1"}).json()["agents"]
    assert len(named) == 2 and {a["name"] for a in named} == {"worker-1"}
    _error(client.get("/agents", params={"limit": "0"}), 400, "invalid_input")


def test_facts_by_id(client: TestClient) -> None:
    base = f"/agents/{_agent(client)}/facts"
    fact = client.post(base, json={"content": "the invoice is due Friday"}).json()
    other = client.post(base, json={"content": "the customer prefers email"}).json()
    assert client.get(f"{base}/{fact['id']}").json() == fact
    fixed = client.patch(f"{base}/{fact['id']}", json={"content": "due Monday", "by": "ops"})
    assert fixed.status_code == 200, fixed.text
    body = fixed.json()
    assert (body["content"], body["correctedBy"], body["createdAt"]) == (
        "due Monday",
        "ops",
        fact["createdAt"],
    )
    taken = client.patch(f"{base}/{fact['id']}", json={"content": other["content"]})
    _error(taken, 409, "conflict")
    _error(client.patch(f"{base}/f_nope", json={"content": "x"}), 404, "not_found")
    _error(client.patch(f"{base}/{fact['id']}", json={"content": ""}), 400, "invalid_input")
    forgotten = {"id": fact["id"], "forgotten": True, "hard": False}
    assert client.delete(f"{base}/{fact['id']}").json() == forgotten
    again = client.delete(f"{base}/{fact['id']}").json()
    assert again == {**forgotten, "forgotten": False}
    _error(client.get(f"{base}/{fact['id']}"), 404, "not_found")


def test_forget_all_confirms_the_count(client: TestClient, target: Target) -> None:
    agent = _agent(client)
    base = f"/agents/{agent}/facts"
    for i in range(3):
        client.post(base, json={"content": f"fact number {i}"})
    _error(client.delete(base, params={"count": 2}), 409, "conflict")
    _error(client.delete(base), 400, "invalid_input")
    assert stores.rows(target, "SELECT count(*) FROM facts")[0][0] == 3
    assert client.delete(base, params={"count": 3}).json() == {"forgotten": 3}
    assert client.get(base).json()["facts"] == []


def test_tags_type_and_metadata_are_written_and_filter_recall(client: TestClient) -> None:
    base = f"/agents/{_agent(client)}/facts"
    billing = {
        "content": "refund of the pro plan approved",
        "type": "decision",
        "tags": ["billing", "pro"],
        "metadata": {"ticket": 42, "by": {"team": "support"}},
        "sourceRef": {"sandboxId": "sb-1", "entryIndex": 7},
        "createdAt": "2024-03-01T10:00:00Z",
    }
    made = client.post(base, json=billing).json()
    assert (made["type"], made["tags"], made["metadata"]) == (
        "decision",
        ["billing", "pro"],
        billing["metadata"],
    )
    assert made["createdAt"] == "2024-03-01T10:00:00Z" and made["verified"] is True
    client.post(base, json={"content": "refund of the pro plan discussed", "tags": ["chat"]})

    def recalled(**params: Any) -> list[str]:
        answer = client.get(base, params={"query": "refund pro plan", **params})
        assert answer.status_code == 200, answer.text
        return [f["content"] for f in answer.json()["facts"]]

    assert len(recalled()) == 2
    only = ["refund of the pro plan approved"]
    assert recalled(tags=["billing", "pro"]) == only
    assert recalled(tags=["billing", "chat"]) == []
    assert recalled(type="decision") == only
    assert recalled(verifiedOnly="true") == only
    assert recalled(createdBefore="2024-06-01T00:00:00Z") == only
    assert recalled(createdAfter="2024-06-01T00:00:00+00:00") == [
        "refund of the pro plan discussed"
    ]
    for mode in ("text", "vector"):
        hits = client.get(base, params={"query": "refund", "mode": mode}).json()["facts"]
        ranks = [(h["textRank"], h["vectorRank"]) for h in hits]
        assert ranks and all((t is None) == (mode == "vector") for t, _ in ranks)
        assert all((v is None) == (mode == "text") for _, v in ranks)
    for bad in (
        {"verifiedOnly": "1"},
        {"mode": "fuzzy"},
        {"createdAfter": "yesterday"},
        {"createdAfter": "2024-06-01T00:00:00"},  # no UTC offset
        {"createdAfter": "2024-06-02T00:00:00Z", "createdBefore": "2024-06-01T00:00:00Z"},
        {"limit": "5"},  # the listing's, not recall's
    ):
        _error(client.get(base, params={"query": "refund", **bad}), 400, "invalid_input")
    for recall_only in ({"topK": "3"}, {"tags": "billing"}, {"mode": "text"}):
        message = _error(client.get(base, params=recall_only), 400, "invalid_input")
        assert "query" in message


def test_working_memory_ttl(client: TestClient, clock: ManualClock) -> None:
    base = f"/agents/{_agent(client)}/memory"
    put = client.put(f"{base}/draft", json={"value": "soon gone", "ttlSeconds": 1})
    assert put.status_code == 200 and put.json()["expiresAt"] is not None
    assert client.put(f"{base}/kept", json={"value": 1}).json()["expiresAt"] is None
    for bad in (0, -1, 1.5, "60", True, 10**12):
        answer = client.put(f"{base}/draft", json={"value": 1, "ttlSeconds": bad})
        _error(answer, 400, "invalid_input")
    clock.advance(timedelta(milliseconds=990))
    assert client.get(f"{base}/draft").json()["value"] == "soon gone"
    clock.advance(timedelta(milliseconds=20))
    _error(client.get(f"{base}/draft"), 404, "not_found")
    assert list(client.get(base).json()["working"]) == ["kept"]


def test_working_memory_compare_and_set(client: TestClient) -> None:
    base = f"/agents/{_agent(client)}/memory"
    first = client.put(f"{base}/plan", json={"value": "a", "expectedVersion": 0})
    assert first.json()["version"] == 1 and first.headers["etag"] == '"1"'
    _error(client.put(f"{base}/plan", json={"value": "b", "expectedVersion": 0}), 409, "conflict")
    _error(client.put(f"{base}/plan", json={"value": "b", "expectedVersion": 5}), 409, "conflict")
    stale = client.put(f"{base}/plan", json={"value": "b"}, headers={"If-Match": '"7"'})
    _error(stale, 409, "conflict")
    assert client.get(f"{base}/plan").json()["value"] == "a"  # nothing written
    etag = client.get(f"{base}/plan").headers["etag"]
    second = client.put(f"{base}/plan", json={"value": "b"}, headers={"If-Match": etag})
    assert second.json()["version"] == 2
    taken = client.put(f"{base}/plan", json={"value": "c"}, headers={"If-None-Match": "*"})
    _error(taken, 409, "conflict")
    fresh = client.put(f"{base}/new", json={"value": 1}, headers={"If-None-Match": "*"})
    assert fresh.json()["version"] == 1
    disagree = client.put(
        f"{base}/plan", json={"value": "c", "expectedVersion": 2}, headers={"If-Match": '"1"'}
    )
    # Each names a valid version, so the schema allows the request (it cannot say that a
    # header and the body agree): it is refused as a conflict, not as malformed (it was a
    # 400 before the schema was held to the service). Nothing is written.
    assert "(1, 2)" in _error(disagree, 409, "conflict")
    for header in ({"If-Match": "*"}, {"If-Match": '"¹"'.encode()}, {"If-None-Match": '"1"'}):
        _error(
            client.put(f"{base}/plan", json={"value": "c"}, headers=header), 400, "invalid_input"
        )
    _error(
        client.put(f"{base}/plan", json={"value": "c", "expectedVersion": "2"}),
        400,
        "invalid_input",
    )
    assert client.get(f"{base}/plan").json() | {"updatedAt": None} == {
        "key": "plan",
        "value": "b",
        "version": 2,
        "updatedAt": None,
        "expiresAt": None,
    }


def test_an_ended_agent_reads_and_refuses_writes(client: TestClient, target: Target) -> None:
    agent = _agent(client)
    fact = client.post(f"/agents/{agent}/facts", json={"content": "kept after the end"}).json()
    client.put(f"/agents/{agent}/memory/plan", json={"value": 1})
    assert client.post(f"/agents/{agent}/end").json()["status"] == "ended"
    before = stores.rows(target, "SELECT count(*), max(version) FROM working")
    writes = [
        ("PUT", f"/agents/{agent}/memory/plan", {"json": {"value": 2}}),
        ("PUT", f"/agents/{agent}/memory/new", {"json": {"value": 2}}),
        ("DELETE", f"/agents/{agent}/memory/plan", {}),
        ("POST", f"/agents/{agent}/facts", {"json": {"content": "after the end"}}),
        ("PATCH", f"/agents/{agent}/facts/{fact['id']}", {"json": {"content": "changed"}}),
        ("DELETE", f"/agents/{agent}/facts/{fact['id']}", {}),
        ("DELETE", f"/agents/{agent}/facts", {"params": {"count": 1}}),
        ("POST", f"/agents/{agent}/compactions", {"json": {"maxFacts": 0}}),
    ]
    for method, path, kwargs in writes:
        message = _error(client.request(method, path, **kwargs), 409, "conflict")
        assert "ended" in message
    assert stores.rows(target, "SELECT count(*), max(version) FROM working") == before
    assert client.get(f"/agents/{agent}/memory/plan").json()["value"] == 1
    assert client.get(f"/agents/{agent}/facts/{fact['id']}").json()["content"] == fact["content"]
    assert len(client.get(f"/agents/{agent}/facts", params={"query": "kept"}).json()["facts"]) == 1
    assert client.get(f"/agents/{agent}/memory").status_code == 200


def test_spawn_into_a_resource_with_memory_needs_asking(client: TestClient) -> None:
    parent = _agent(client, "parent")
    client.put(f"/agents/{parent}/memory/plan", json={"value": "parent's"})
    other = _agent(client, "other")
    client.put(f"/agents/{other}/memory/plan", json={"value": "other's"})
    clobber = {"name": "worker", "resourceId": "other"}
    _error(client.post(f"/agents/{parent}/spawn", json=clobber), 409, "conflict")
    assert client.get(f"/agents/{other}/memory/plan").json()["value"] == "other's"
    merged = client.post(f"/agents/{parent}/spawn", json={**clobber, "intoExisting": True})
    assert merged.status_code == 201, merged.text
    _error(
        client.post(f"/agents/{parent}/spawn", json={**clobber, "intoExisting": 1}),
        400,
        "invalid_input",
    )
