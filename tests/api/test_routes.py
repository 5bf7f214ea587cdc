"""Every route and status code of the service, in-process, on a real SQLite file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import engram
from engram.api import create_app
from engram.embedders.local import LocalEmbedder
from engram.settings import Settings
from stores import Target


@pytest.fixture
def client(target: Target, local_embedder: LocalEmbedder) -> Iterator[TestClient]:
    memory = engram.open(target, embedder=local_embedder)
    with TestClient(create_app(memory_store=memory)) as test_client:
        yield test_client


def _agent(client: TestClient, **spec: Any) -> dict[str, Any]:
    answer = client.post("/agents", json={"name": "planner", **spec})
    assert answer.status_code == 201, answer.text
    body: dict[str, Any] = answer.json()
    return body


def _error(answer: Any, status: int, code: str) -> str:
    assert answer.status_code == status, answer.text
    error = answer.json()["error"]
    assert error["code"] == code
    message: str = error["message"]
    return message


def test_agents_register_get_spawn_end(client: TestClient) -> None:
    planner = _agent(client, teamId="acme")
    assert planner["id"].startswith("a_")
    assert planner["resourceRef"] == {"resourceId": "planner", "teamId": "acme"}
    assert client.get(f"/agents/{planner['id']}").json() == planner
    client.put(f"/agents/{planner['id']}/memory/goal", json={"value": {"ship": "v2"}})
    client.post(f"/agents/{planner['id']}/facts", json={"content": "the customer prefers email"})
    spawned = client.post(f"/agents/{planner['id']}/spawn", json={"name": "worker"})
    assert spawned.status_code == 201
    child, fork = spawned.json()["agent"], spawned.json()["fork"]
    assert child["resourceRef"] == {"resourceId": "worker", "teamId": "acme"}
    assert (fork["workingKeysCopied"], fork["semanticFactsCopied"]) == (1, 1)
    page = client.get(f"/agents/{child['id']}/memory").json()
    assert page["working"] == {"goal": {"ship": "v2"}} and page["semantic"] is True
    ended = client.post(f"/agents/{child['id']}/end").json()
    assert ended["status"] == "ended"
    assert client.get(f"/agents/{child['id']}/memory/goal").json()["value"] == {"ship": "v2"}


def test_unknown_agents_are_404(client: TestClient) -> None:
    for method, path in [
        ("GET", "/agents/a_nope"),
        ("POST", "/agents/a_nope/end"),
        ("GET", "/agents/a_nope/memory"),
        ("GET", "/agents/a_nope/memory/k"),
        ("GET", "/agents/a_nope/facts"),
    ]:
        _error(client.request(method, path), 404, "not_found")
    _error(client.post("/agents/a_nope/spawn", json={"name": "x"}), 404, "not_found")


def test_bad_agent_specs_are_400(client: TestClient) -> None:
    _error(client.post("/agents", json={}), 400, "invalid_input")
    _error(client.post("/agents", json={"name": ""}), 400, "invalid_input")
    _error(client.post("/agents", content=b"not json"), 400, "invalid_input")
    _error(client.post("/agents", json={"name": "x", "teamId": ""}), 400, "invalid_input")


def test_working_memory_routes(client: TestClient) -> None:
    agent = _agent(client)["id"]
    base = f"/agents/{agent}/memory"
    assert client.put(f"{base}/plan", json={"value": {"tier": "pro"}}).json()["version"] == 1
    assert client.get(f"{base}/plan").json()["value"] == {"tier": "pro"}
    assert client.put(f"{base}/a/b c", json={"value": None}).status_code == 200
    assert client.get(f"{base}/a/b c").json()["value"] is None
    _error(client.get(f"{base}/missing"), 404, "not_found")
    assert client.delete(f"{base}/plan").status_code == 204
    assert client.delete(f"{base}/plan").status_code == 204
    _error(client.get(f"{base}/plan"), 404, "not_found")
    message = _error(client.put(f"{base}/big", json={"value": "x" * 65536}), 400, "invalid_input")
    assert "64 KiB" in message
    _error(client.put(f"{base}/{'k' * 257}", json={"value": 1}), 400, "invalid_input")
    _error(client.put(f"{base}/k", json={"wrong": 1}), 400, "invalid_input")
    _error(client.put(f"{base}/k", content=b"{"), 400, "invalid_input")


def test_working_memory_pages(client: TestClient) -> None:
    agent = _agent(client)["id"]
    for i in range(5):
        client.put(f"/agents/{agent}/memory/k{i}", json={"value": i})
    page = client.get(f"/agents/{agent}/memory", params={"limit": 2}).json()
    assert page["working"] == {"k0": 0, "k1": 1} and page["nextAfter"] == "k1"
    rest = client.get(f"/agents/{agent}/memory", params={"after": "k1", "limit": 10}).json()
    assert list(rest["working"]) == ["k2", "k3", "k4"] and "nextAfter" not in rest
    for bad in ("0", "1001", "x", "-1"):
        _error(client.get(f"/agents/{agent}/memory", params={"limit": bad}), 400, "invalid_input")


def test_facts_routes(client: TestClient) -> None:
    agent = _agent(client)["id"]
    base = f"/agents/{agent}/facts"
    claimed = {"content": "upgraded to the Pro plan", "verified": True}
    assert "verified" in _error(client.post(base, json=claimed), 400, "invalid_input")
    made = client.post(base, json={"content": "upgraded to the Pro plan"})
    assert made.status_code == 201 and made.json()["verified"] is False
    sourced = client.post(
        base,
        json={"content": "refund confirmed", "sourceRef": {"sandboxId": "sb", "entryIndex": 4}},
    ).json()
    assert sourced["verified"] is True and sourced["sourceRef"]["entryIndex"] == 4
    for i in range(8):
        client.post(base, json={"content": f"note number {i}"})
    recalled = client.get(base, params={"query": "which plan did they buy?"}).json()["facts"]
    assert len(recalled) == 5 and recalled[0]["content"] == "upgraded to the Pro plan"
    assert len(client.get(base, params={"query": "note", "topK": 100}).json()["facts"]) == 10
    for bad in ("0", "101", "five"):
        _error(client.get(base, params={"query": "x", "topK": bad}), 400, "invalid_input")
    _error(client.get(base, params={"query": "  "}), 400, "invalid_input")
    listed = client.get(base, params={"limit": 4}).json()
    assert listed["facts"][0]["content"] == "note number 7"
    more = client.get(base, params={"limit": 100, "before": listed["nextBefore"]}).json()
    assert len(listed["facts"]) + len(more["facts"]) == 10
    _error(client.get(base, params={"limit": "1001"}), 400, "invalid_input")
    _error(client.post(base, json={"content": ""}), 400, "invalid_input")
    _error(client.post(base, json={"content": "x" * 2001}), 400, "invalid_input")
    bad_source = {"content": "x", "sourceRef": {"sandboxId": "sb", "entryIndex": -1}}
    _error(client.post(base, json=bad_source), 400, "invalid_input")


def test_a_fact_s_context_is_found_by_full_text_and_returned(client: TestClient) -> None:
    agent = _agent(client)["id"]
    base = f"/agents/{agent}/facts"
    made = client.post(
        base, json={"content": "Sounds great, see you there!", "context": "the pottery class"}
    )
    assert made.status_code == 201 and made.json()["context"] == "the pottery class"
    client.post(base, json={"content": "the invoice is overdue"})
    hits = client.get(base, params={"query": "pottery", "topK": 1}).json()["facts"]
    assert hits[0]["content"] == "Sounds great, see you there!"
    assert client.get(base, params={"limit": 1}).json()["facts"][0]["context"] is None
    _error(client.post(base, json={"content": "x", "context": "y" * 8001}), 400, "invalid_input")
    _error(client.post(base, json={"content": "x", "context": 5}), 400, "invalid_input")


def test_compactions_age_first_then_the_cap(client: TestClient) -> None:
    agent = _agent(client)["id"]
    for i in range(4):
        client.post(f"/agents/{agent}/facts", json={"content": f"fact {i}"})
    result = client.post(f"/agents/{agent}/compactions", json={"maxFacts": 1}).json()
    assert result["removed"] == 3 and len(result["overCap"]) == 3 and result["expired"] == []
    left = client.get(f"/agents/{agent}/facts").json()["facts"]
    assert [f["content"] for f in left] == ["fact 3"]
    aged = client.post(f"/agents/{agent}/compactions", json={"maxAgeMs": 0}).json()
    assert aged["removed"] == 0
    _error(client.post(f"/agents/{agent}/compactions", json={"maxFacts": -1}), 400, "invalid_input")


def test_memory_disabled_answers_501(target: Target) -> None:
    settings = Settings(db_path=str(target), memory_enabled=False, embedder="none")
    with TestClient(create_app(settings)) as client:
        agent = _agent(client)["id"]  # agents still work, without memory
        spawned = client.post(f"/agents/{agent}/spawn", json={"name": "child"}).json()
        assert spawned["fork"]["workingKeysCopied"] == spawned["fork"]["semanticFactsCopied"] == 0
        _error(client.get(f"/agents/{agent}/memory"), 501, "capability_missing")
        _error(
            client.put(f"/agents/{agent}/memory/k", json={"value": 1}), 501, "capability_missing"
        )


def test_facts_without_embeddings_answer_501(target: Target) -> None:
    with TestClient(create_app(Settings(db_path=str(target), embedder="none"))) as client:
        agent = _agent(client)["id"]
        assert client.put(f"/agents/{agent}/memory/k", json={"value": 1}).status_code == 200
        for answer in (
            client.post(f"/agents/{agent}/facts", json={"content": "x"}),
            client.get(f"/agents/{agent}/facts", params={"query": "x"}),
            client.get(f"/agents/{agent}/facts"),
        ):
            _error(answer, 501, "capability_missing")


def test_a_failing_embeddings_provider_is_502_and_nothing_is_stored(target: Target) -> None:
    dead = engram.RemoteEmbedder("http://127.0.0.1:9/v1/embeddings", "m", timeout=2)
    memory = engram.open(target, embedder=dead)
    with TestClient(create_app(memory_store=memory)) as client:
        agent = _agent(client)["id"]
        _error(
            client.post(f"/agents/{agent}/facts", json={"content": "x"}), 502, "upstream_failure"
        )
    with engram.open(target, embedder=None) as check:
        assert check.count(engram.ResourceRef("planner")) == 0


def test_a_storage_failure_is_500_and_says_no_more(target: Target) -> None:
    memory = engram.open(target, embedder=None)
    with TestClient(create_app(memory_store=memory), raise_server_exceptions=False) as client:
        agent = _agent(client)["id"]
        memory.close()  # the store goes away under the service
        message = _error(client.get(f"/agents/{agent}/memory"), 500, "storage_failure")
        assert message == "local storage failed" and str(target) not in message


def test_agents_resolve_after_a_restart(target: Target) -> None:
    settings = Settings(db_path=str(target), embedder="none")
    with TestClient(create_app(settings)) as client:
        agent = _agent(client, resourceId="shared")["id"]
        client.put(f"/agents/{agent}/memory/k", json={"value": "kept"})
        client.post(f"/agents/{agent}/end")
    with TestClient(create_app(settings)) as client:
        assert client.get(f"/agents/{agent}/memory/k").json()["value"] == "kept"


def test_openapi_and_health(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    assert "/agents/{agent_id}/facts" in schema["paths"]
    assert client.get("/healthz").json() == {"ok": True, "semantic": True}


def test_ids_no_agent_can_have_are_404(client: TestClient) -> None:
    for agent_id in ("x" * 100, "%00", "%F0%9F%99%82"):
        _error(client.get(f"/agents/{agent_id}"), 404, "not_found")
        _error(client.get(f"/agents/{agent_id}/memory/k"), 404, "not_found")


def test_a_second_app_reads_no_routes_parameters_again_nor_writes_its_schema(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every app holds the routes built once a process, and a copy of the schema written
    once: a second app, made and asked, reads no route's parameters and writes no schema.
    FastAPI 0.16x built an included router's routes at each app's first answer, every
    parameter and answer read into a model (about 0.3 s of a core an app, where a test
    builds hundreds), and each app wrote its schema anew (0.6 to 1.1 s)."""
    import fastapi.routing

    from engram.api import openapi

    def served(name: str, embedder: engram.HashingEmbedder | None) -> dict[str, Any]:
        memory = engram.open(tmp_path / f"{name}.db", embedder=embedder)
        with TestClient(create_app(memory_store=memory)) as client:
            health = client.get("/healthz")  # its own memory's, from the shared route
            assert health.json() == {"ok": True, "semantic": embedder is not None}
            assert client.get("/agents").status_code == 200
            assert client.get("/ui/").status_code == 200
            answer = client.get("/agents", params={"bogus": "1"})  # the query check holds
            assert answer.status_code == 400, answer.text
            assert "bogus" in answer.json()["error"]["message"]
            schema: dict[str, Any] = client.get("/openapi.json").json()
            return schema

    first = served("first", engram.HashingEmbedder(32))
    read: list[str] = []
    reading, writing = fastapi.routing.get_dependant, openapi.get_openapi

    def counted(*args: Any, **kwargs: Any) -> Any:
        read.append(kwargs.get("path", ""))
        return reading(*args, **kwargs)

    def written(*args: Any, **kwargs: Any) -> Any:
        read.append("the schema")
        return writing(*args, **kwargs)

    monkeypatch.setattr(fastapi.routing, "get_dependant", counted)
    monkeypatch.setattr(openapi, "get_openapi", written)
    assert served("second", None) == first
    assert read == []
    # each app's schema is its own: one changed leaves the next as published
    with engram.open(tmp_path / "third.db", embedder=None) as memory:
        create_app(memory_store=memory).openapi()["paths"].clear()
        assert create_app(memory_store=memory).openapi() == first
