"""Input the service refuses, on both backends: refused with 400/404/409/413 and the one
error shape, in words, and nothing stored. The probes that once answered 500, stored
what could not be read back, or were coerced into something else."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from typing import Any

import jwt
import pytest
from fastapi.testclient import TestClient

import engram
import stores
from engram.api import create_app
from engram.core import limits
from engram.settings import Settings
from stores import Target

SECRET = "strict-secret-0123456789abcdef01234567"
SERVICE = "strict-service-token"
SNAPSHOT = """SELECT (SELECT count(*) FROM working), (SELECT count(*) FROM facts),
    (SELECT count(*) FROM agents), (SELECT count(*) FROM shares)"""
ODD_NUMBERS = ["¹", "①", "٣", "9" * 5000, "1e3", "0x10", " 5", "5 ", "+5", "-1", "1.0", ""]


@pytest.fixture
def client(target: Target) -> Iterator[TestClient]:
    memory = engram.open(target, embedder=engram.HashingEmbedder(32))
    settings = Settings(
        db_path=str(target),
        jwt_secret=SECRET,
        service_token_hashes=(hashlib.sha256(SERVICE.encode()).hexdigest(),),
    )
    with TestClient(create_app(settings, memory_store=memory)) as test:
        test.headers["Authorization"] = f"Bearer {SERVICE}"
        yield test


def _person() -> dict[str, str]:
    token = jwt.encode({"sub": "p1", "exp": int(time.time()) + 600}, SECRET, algorithm="HS256")
    return {"Authorization": f"Bearer {token}"}


def _refused(answer: Any, status: int = 400, code: str = "invalid_input") -> str:
    assert answer.status_code == status, answer.text
    body = answer.json()
    assert set(body) == {"error"} and {"code", "message"} <= set(body["error"]), body
    assert body["error"]["code"] == code, body
    message: str = body["error"]["message"]
    return message


def _agent_with_facts(client: TestClient, count: int = 2) -> str:
    agent: str = client.post("/agents", json={"name": "probe"}).json()["id"]
    for i in range(count):
        assert client.post(f"/agents/{agent}/facts", json={"content": f"fact {i}"}).is_success
    client.put(f"/agents/{agent}/memory/plan", json={"value": 1})
    return agent


def test_integers_are_ascii_digits_within_bounds(client: TestClient, target: Target) -> None:
    agent = _agent_with_facts(client)
    client.post("/api/v1/apps/app:a/memories", json={"memory": "likes tea"}, headers=_person())
    before = stores.rows(target, SNAPSHOT)
    probes: list[tuple[str, str, str, dict[str, str], dict[str, str]]] = [
        ("GET", f"/agents/{agent}/facts", "topK", {"query": "fact"}, {}),
        ("GET", f"/agents/{agent}/facts", "limit", {}, {}),
        ("GET", f"/agents/{agent}/memory", "limit", {}, {}),
        ("GET", "/agents", "limit", {}, {}),
        ("DELETE", f"/agents/{agent}/facts", "count", {}, {}),
        ("GET", "/api/v1/apps/app:a/memories/search", "topK", {"query": "tea"}, _person()),
        ("GET", "/api/v1/apps/memories/app:a", "limit", {}, _person()),
        ("DELETE", "/api/v1/apps/memories/app:a", "count", {}, _person()),
        ("GET", "/api/v1/memories", "limit", {"agent_id": "app:a"}, _person()),
        ("DELETE", "/api/v1/memories", "count", {"agent_id": "app:a"}, _person()),
    ]
    for method, path, name, rest, headers in probes:
        for odd in [*ODD_NUMBERS, str(2**70)]:
            answer = client.request(method, path, params={**rest, name: odd}, headers=headers)
            assert name in _refused(answer), (path, name, odd)
    assert stores.rows(target, SNAPSHOT) == before


def test_integers_past_storage_are_refused_in_bodies(client: TestClient, target: Target) -> None:
    agent = _agent_with_facts(client, 0)
    before = stores.rows(target, SNAPSHOT)
    for index in (2**70, 2**63, limits.MAX_COUNT + 1, -1):
        body = {"content": "sourced", "sourceRef": {"sandboxId": "sb", "entryIndex": index}}
        assert "entryIndex" in _refused(client.post(f"/agents/{agent}/facts", json=body))
    for field, value in (("expectedVersion", 2**70), ("ttlSeconds", 10**13)):
        answer = client.put(f"/agents/{agent}/memory/k", json={"value": 1, field: value})
        assert field in _refused(answer)
    assert stores.rows(target, SNAPSHOT) == before
    edge = {"content": "edge", "sourceRef": {"sandboxId": "sb", "entryIndex": limits.MAX_COUNT}}
    assert client.post(f"/agents/{agent}/facts", json=edge).status_code == 201


def nested(depth: int) -> Any:
    value: Any = 0
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


def test_values_nest_at_most_64_levels(client: TestClient, target: Target) -> None:
    agent = _agent_with_facts(client, 0)
    base = f"/agents/{agent}/memory"
    assert client.put(f"{base}/edge", json={"value": nested(limits.MAX_DEPTH)}).status_code == 200
    before = stores.rows(target, SNAPSHOT)
    for depth in (limits.MAX_DEPTH + 1, 300):
        assert "64 levels" in _refused(client.put(f"{base}/deep", json={"value": nested(depth)}))
    deep_fact = {"content": "x", "metadata": {"m": nested(limits.MAX_DEPTH)}}
    assert "64 levels" in _refused(client.post(f"/agents/{agent}/facts", json=deep_fact))
    unreadable = b'{"value": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    answer = client.put(f"{base}/deeper", content=unreadable, headers=_json())
    assert "nests too deeply" in _refused(answer)
    assert stores.rows(target, SNAPSHOT) == before
    assert client.get(f"{base}/edge").json()["value"] == nested(limits.MAX_DEPTH)
    assert list(client.get(base).json()["working"]) == ["edge", "plan"]


def test_bodies_are_strictly_typed_and_closed(client: TestClient, target: Target) -> None:
    agent = _agent_with_facts(client)
    before = stores.rows(target, SNAPSHOT)
    probes: list[tuple[str, str, dict[str, Any], str]] = [
        ("POST", f"/agents/{agent}/compactions", {"maxFacts": True}, "maxFacts"),
        ("POST", f"/agents/{agent}/compactions", {"maxAgeMs": "1"}, "maxAgeMs"),
        ("POST", f"/agents/{agent}/compactions", {"maxFacts": 1.5}, "maxFacts"),
        ("POST", f"/agents/{agent}/compactions", {"max_facts": 0}, "max_facts"),
        ("POST", "/agents", {"name": 5}, "name"),
        ("POST", "/agents", {"name": "x", "resource_id": "y"}, "resource_id"),
        ("POST", f"/agents/{agent}/facts", {"content": "x", "verified": True}, "verified"),
        ("POST", f"/agents/{agent}/facts", {"content": "x", "tags": "billing"}, "tags"),
        ("POST", f"/agents/{agent}/facts", {"content": "x", "createdAt": 1700000000}, "createdAt"),
        ("PUT", f"/agents/{agent}/memory/k", {"value": 1, "ttl_seconds": 60}, "ttl_seconds"),
        ("PUT", f"/agents/{agent}/memory/k", {"value": 1, "expectedVersion": True}, "expected"),
        ("POST", f"/agents/{agent}/spawn", {"name": ["x"]}, "name"),
    ]
    for method, path, body, named in probes:
        assert named in _refused(client.request(method, path, json=body)), body
    people = [
        ("POST", "/api/v1/apps/app:a/memories", {"memory": "x", "user": "p2"}),
        ("POST", "/api/v1/apps/app:a/memories", {"memory": 5}),
        ("PUT", "/api/v1/memory-shares", {"source": "app:a", "reader": "app:b", "person": "p2"}),
    ]
    for method, path, body in people:
        _refused(client.request(method, path, json=body, headers=_person()))
    assert stores.rows(target, SNAPSHOT) == before
    hint = client.post("/agents", json={"name": "x", "resource_id": "y"}).json()["error"]["hint"]
    assert "resourceId" in hint


def _json(content_type: str = "application/json") -> dict[str, str]:
    return {"content-type": content_type}


def test_unreadable_bodies_are_refused_in_words(client: TestClient, target: Target) -> None:
    agent = _agent_with_facts(client, 0)
    path = f"/agents/{agent}/memory/k"
    before = stores.rows(target, SNAPSHOT)
    value = json.dumps({"value": "é"})
    cases: list[tuple[bytes, dict[str, str], str]] = [
        (b'{"value": ', _json(), "not JSON"),
        (b'{"value": 1,}', _json(), "not JSON"),
        (b'{"value": "\xff"}', _json(), "not valid UTF-8: byte 0xff at position 11"),
        (value.encode("utf-16"), _json(), "not valid UTF-8"),
        (value.encode(), {}, "no content-type"),
        (value.encode(), _json("text/plain"), "'text/plain'"),
        (value.encode(), _json("application/x-www-form-urlencoded"), "application/json"),
        (value.encode("latin-1"), _json("application/json; charset=latin-1"), "UTF-8"),
        (b'{"value": 1' + b"0" * 5000 + b"}", _json(), "not usable JSON"),
        (b"[1, 2]", _json(), "must be a JSON object"),
        (b"", _json(), "needs a JSON body"),
    ]
    for body, headers, words in cases:
        answer = client.put(path, content=body, headers=headers)
        assert words in _refused(answer), (body[:30], headers)
    assert stores.rows(target, SNAPSHOT) == before
    plus_json = client.put(path, content=value.encode(), headers=_json("application/merge+json"))
    assert plus_json.status_code == 200, plus_json.text


def test_bodies_over_a_mebibyte_are_413(client: TestClient, target: Target) -> None:
    agent = _agent_with_facts(client, 0)
    before = stores.rows(target, SNAPSHOT)
    huge = json.dumps({"value": "x" * (1 << 20)}).encode()
    answer = client.put(f"/agents/{agent}/memory/k", content=huge, headers=_json())
    assert "1048576 bytes" in _refused(answer, 413, "too_large")

    def chunks() -> Iterator[bytes]:  # no content-length: counted as it arrives
        yield b'{"value": "'
        for _ in range(20):
            yield b"x" * 65536
        yield b'"}'

    streamed = client.put(f"/agents/{agent}/memory/k", content=chunks(), headers=_json())
    _refused(streamed, 413, "too_large")
    for length in ("9" * 21, "1" * 5000):  # declared: more than int() converts, at last
        declared = {**_json(), "content-length": length}
        answer = client.put(f"/agents/{agent}/memory/k", content=b'{"value": 1}', headers=declared)
        _refused(answer, 413, "too_large")
    assert stores.rows(target, SNAPSHOT) == before
    escaped = json.dumps({"value": "é" * 30_000}, ensure_ascii=True)  # 180 KB on the wire
    assert client.put(f"/agents/{agent}/memory/k", content=escaped, headers=_json()).is_success


def test_every_route_refuses_a_parameter_it_does_not_take(client: TestClient) -> None:
    agent = _agent_with_facts(client, 1)
    fact = client.get(f"/agents/{agent}/facts").json()["facts"][0]["id"]
    session = client.post(f"/agents/{agent}/sessions", json={}).json()["id"]
    fill = {"agent_id": agent, "key": "plan", "fact_id": fact, "app": "app:a", "memory_id": "m"}
    fill["session_id"] = session
    fill["entry_id"] = "1"
    fill |= {
        "entity": "Ana",
        "relation_id": "r_1",
        "relation_type": "knows",
        "name": "memory_search",
    }
    fill["document_id"] = "d_1"
    schema = client.get("/openapi.json").json()
    checked = 0
    for template, item in schema["paths"].items():
        path = template.format(**fill)
        headers = _person() if template.startswith("/api/v1") else {}
        for method in item:
            for unknown in ("top_k", "bogus", "limit " if method == "get" else "x"):
                answer = client.request(method, path, params={unknown: "3"}, headers=headers)
                message = _refused(answer)
                assert f"unknown query parameter {unknown!r}" in message, (method, path)
            checked += 1
    assert checked >= 28
    top_k = client.get(f"/agents/{agent}/facts", params={"query": "fact", "top_k": "3"})
    assert _refused(top_k) and top_k.json()["error"]["hint"] == "did you mean 'topK'?"
    twice = client.get(f"/agents/{agent}/facts?query=fact&topK=1&topK=2")
    assert "more than once" in _refused(twice)
    tags = client.get(f"/agents/{agent}/facts?query=fact&tags=a&tags=b")
    assert tags.status_code == 200, tags.text


def test_not_found_and_method_not_allowed_keep_the_shape(client: TestClient) -> None:
    _refused(client.get("/nowhere"), 404, "not_found")
    answer = client.patch("/agents")
    _refused(answer, 405, "method_not_allowed")
    assert answer.headers["allow"] == "GET, POST"


def test_an_empty_key_is_refused_in_words_not_redirected(
    client: TestClient, target: Target
) -> None:
    agent = client.post("/agents", json={"name": "probe"}).json()["id"]
    before = stores.rows(target, SNAPSHOT)
    base = f"/agents/{agent}/memory/"
    for method, body in (("GET", None), ("PUT", {"value": 1}), ("DELETE", None)):
        answer = client.request(method, base, json=body, follow_redirects=False)
        assert "the working-memory key is empty" in _refused(answer), method
    assert "no agent 'a_nobody'" in _refused(
        client.get("/agents/a_nobody/memory/", follow_redirects=False), 404, "not_found"
    )
    # A trailing slash is never followed of the app's own accord: no bare redirect.
    for path in (f"/agents/{agent}/facts/", "/agents/", f"/agents/{agent}/graph/entities/"):
        message = _refused(client.get(path, follow_redirects=False), 404, "not_found")
        assert message == f"no route at {path}: no path here ends with a slash"
    assert stores.rows(target, SNAPSHOT) == before
