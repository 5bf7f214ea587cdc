"""The service with a reranker built from its settings (ENGRAM_RERANK_*), against real
embeddings and rerank endpoints on loopback: recall follows the reranker, and a failing
reranker answers 502."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

import stores
from embeddings_server import Endpoint
from engram.api import create_app
from engram.settings import Settings
from rerank_server import MODEL, RerankEndpoint
from stores import Target

NOTES = [f"tea note {n}" for n in (4, 1, 6, 3, 5, 2)]


@pytest.fixture
def embeddings() -> Iterator[Endpoint]:
    served = Endpoint()
    yield served
    served.close()


@pytest.fixture
def rerank() -> Iterator[RerankEndpoint]:
    served = RerankEndpoint()
    served.scorer = lambda query, document: float(document.split()[-1])
    yield served
    served.close()


def _settings(target: Target, embeddings: Endpoint, rerank: RerankEndpoint) -> Settings:
    return Settings.from_env(
        {
            **stores.env(target),
            "ENGRAM_EMBEDDINGS_URL": embeddings.url,
            "ENGRAM_EMBEDDINGS_MODEL": "test-embed",
            "ENGRAM_RERANK_URL": rerank.url,
            "ENGRAM_RERANK_MODEL": MODEL,
            "ENGRAM_RERANK_API_KEY": "rk-service-7",
        }
    )


def _agent_with_notes(client: TestClient) -> str:
    agent: str = client.post("/agents", json={"name": "planner"}).json()["id"]
    for note in NOTES:
        assert client.post(f"/agents/{agent}/facts", json={"content": note}).status_code == 201
    return agent


def test_recall_follows_the_reranker_the_settings_name(
    target: Target, embeddings: Endpoint, rerank: RerankEndpoint
) -> None:
    app = create_app(_settings(target, embeddings, rerank))
    with TestClient(app) as client:
        agent = _agent_with_notes(client)
        answer = client.get(f"/agents/{agent}/facts", params={"query": "tea note", "topK": 3})
        text = client.get(
            f"/agents/{agent}/facts", params={"query": "tea note", "topK": 3, "mode": "text"}
        )
    assert answer.status_code == 200, answer.text
    facts = answer.json()["facts"]
    assert [f["content"] for f in facts] == ["tea note 6", "tea note 5", "tea note 4"]
    assert [f["rerankScore"] for f in facts] == [6.0, 5.0, 4.0]
    assert all(f["score"] > 0 for f in facts)  # the fused score, still there
    assert [f["rerankScore"] for f in text.json()["facts"]] == [None] * 3
    assert len(rerank.requests) == 1  # the text-only recall asked nothing
    assert rerank.requests[0].headers["authorization"] == "Bearer rk-service-7"
    assert rerank.requests[0].body["query"] == "tea note"


@pytest.mark.parametrize(
    "reply",
    [
        (500, b'{"error": "boom"}'),
        (200, b"not json"),
        (200, json.dumps({"results": [{"index": 0, "relevance_score": 1.0}] * 6}).encode()),
    ],
    ids=["HTTP 500", "not JSON", "one index six times"],
)
def test_a_failing_reranker_is_502(
    target: Target, embeddings: Endpoint, rerank: RerankEndpoint, reply: tuple[int, bytes]
) -> None:
    rerank.reply = lambda body: reply
    with TestClient(create_app(_settings(target, embeddings, rerank))) as client:
        agent = _agent_with_notes(client)
        answer = client.get(f"/agents/{agent}/facts", params={"query": "tea note"})
        assert answer.status_code == 502, answer.text
        error = answer.json()["error"]
        assert error["code"] == "upstream_failure" and "rerank endpoint" in error["message"]
        assert "rk-service-7" not in answer.text
        listed = client.get(f"/agents/{agent}/facts")  # listing needs no reranker
        assert listed.status_code == 200 and len(listed.json()["facts"]) == 6
