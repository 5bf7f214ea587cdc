"""The service against a real embeddings endpoint on loopback: slow, failing, wrong
dimension, asymmetric."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

import engram
import stores
from embeddings_server import Endpoint
from engram.api import create_app
from engram.settings import Settings
from stores import Target


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    served = Endpoint()
    yield served
    served.close()


def _settings(target: Target, endpoint: Endpoint, **extra: Any) -> Settings:
    return Settings.from_env(
        {
            **stores.env(target),
            "ENGRAM_EMBEDDINGS_URL": endpoint.url,
            "ENGRAM_EMBEDDINGS_MODEL": "test-embed",
            **{key: str(value) for key, value in extra.items()},
        }
    )


def _agent(client: TestClient) -> str:
    agent: str = client.post("/agents", json={"name": "planner"}).json()["id"]
    return agent


def _stored(target: Target) -> int:
    with engram.open(target, embedder=None) as memory:
        return memory.count(engram.ResourceRef("planner"))


def test_asymmetric_sends_input_type(target: Target, endpoint: Endpoint) -> None:
    settings = _settings(target, endpoint, ENGRAM_EMBEDDINGS_ASYMMETRIC="true")
    with TestClient(create_app(settings)) as client:
        agent = _agent(client)
        assert client.post(f"/agents/{agent}/facts", json={"content": "a b c"}).status_code == 201
        assert client.get(f"/agents/{agent}/facts", params={"query": "a"}).status_code == 200
    assert [seen.body.get("input_type") for seen in endpoint.requests] == ["passage", "query"]


def test_a_slow_provider_is_502_within_the_timeout(target: Target, endpoint: Endpoint) -> None:
    endpoint.delay = 60.0  # far past the timeout, however loaded the machine
    settings = _settings(target, endpoint, ENGRAM_EMBEDDINGS_TIMEOUT_MS=800)
    with TestClient(create_app(settings)) as client:
        agent = _agent(client)
        answer = client.post(f"/agents/{agent}/facts", json={"content": "x"})
        assert answer.status_code == 502 and answer.json()["error"]["code"] == "upstream_failure"
    assert _stored(target) == 0


def test_a_failing_provider_is_502(target: Target, endpoint: Endpoint) -> None:
    endpoint.reply = lambda body: (500, json.dumps({"error": "boom"}).encode())
    with TestClient(create_app(_settings(target, endpoint))) as client:
        agent = _agent(client)
        answer = client.post(f"/agents/{agent}/facts", json={"content": "x"})
        assert answer.status_code == 502 and "HTTP 500" in answer.json()["error"]["message"]
        recall = client.get(f"/agents/{agent}/facts", params={"query": "x"})
        assert recall.status_code == 502
    assert _stored(target) == 0


def test_another_dimension_is_refused_at_start_up(target: Target, endpoint: Endpoint) -> None:
    with TestClient(create_app(_settings(target, endpoint))) as client:
        agent = _agent(client)
        assert client.post(f"/agents/{agent}/facts", json={"content": "x"}).status_code == 201
    endpoint.width = 32
    with pytest.raises(engram.EmbedderMismatch, match=r"16 dimensions.*gives 32"):
        create_app(_settings(target, endpoint))
    assert _stored(target) == 1
