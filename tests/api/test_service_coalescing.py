"""The service embeds concurrent requests together (ENGRAM_COALESCE_EMBEDDINGS), with the
guarantees of one request alone: each fact gets its own vector, a provider failure
stores nothing, and a stopping service answers what still waits."""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

import engram
import stores
from engram.api import create_app
from engram.core.ports import Embedder
from engram.embedders.coalescing import CoalescingEmbedder
from engram.embedders.local import LocalEmbedder
from engram.settings import Settings
from engram.storage.sql.dialect import SQLITE
from fake_embedders import WAIT, FailingPassages, Recorded, queued, until


def _serving(monkeypatch: pytest.MonkeyPatch, embedder: Embedder) -> None:
    """The service's settings make ``embedder`` (the app wraps it as it wraps any)."""
    monkeypatch.setattr(Settings, "make_embedder", lambda self, kind=None: embedder)


def _agent(client: TestClient) -> str:
    agent: str = client.post("/agents", json={"name": "planner"}).json()["id"]
    return agent


def test_the_service_coalesces_unless_told_not_to(db_path: Path) -> None:
    app = create_app(Settings(db_path=str(db_path)))
    embedder = app.state.memory.embedder
    assert isinstance(embedder, CoalescingEmbedder) and isinstance(embedder.inner, LocalEmbedder)
    app.state.memory.close()
    off = Settings.from_env({"ENGRAM_DB_PATH": str(db_path), "ENGRAM_COALESCE_EMBEDDINGS": "false"})
    app = create_app(off)
    assert isinstance(app.state.memory.embedder, LocalEmbedder)
    app.state.memory.close()
    with engram.open(db_path) as memory:  # the library embeds as it is called
        assert isinstance(memory.embedder, LocalEmbedder)


def test_concurrent_writers_each_store_the_vector_of_their_own_words(
    db_path: Path, monkeypatch: pytest.MonkeyPatch, local_embedder: LocalEmbedder
) -> None:
    recorded = Recorded(local_embedder)
    _serving(monkeypatch, recorded)
    facts = [f"{name} booked the {thing} for {day}" for name, thing, day in _phrases(24)]
    with TestClient(create_app(Settings(db_path=str(db_path)))) as client:
        agent = _agent(client)
        start = threading.Barrier(len(facts))

        def post(content: str) -> int:
            start.wait(WAIT)
            return client.post(f"/agents/{agent}/facts", json={"content": content}).status_code

        with ThreadPoolExecutor(len(facts)) as pool:
            assert list(pool.map(post, facts)) == [201] * len(facts)
    stored = stores.rows(
        db_path, "SELECT f.content, v.vector FROM facts f JOIN fact_vectors v ON v.fact = f.seq"
    )
    assert sorted(content for content, _ in stored) == sorted(facts)
    for content, blob in stored:
        alone = local_embedder.embed([content], "passage")[0]
        # stored at float16: within its rounding of the vector embedded alone
        np.testing.assert_allclose(SQLITE.unvector(blob), alone, atol=1e-3)
    assert len(recorded.calls) < len(facts)  # requests were embedded together


def test_a_failing_batch_answers_502_to_each_request_and_stores_nothing(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded = Recorded(FailingPassages(32))
    _serving(monkeypatch, recorded)
    app = create_app(Settings(db_path=str(db_path)))
    with TestClient(app) as client:
        agent = _agent(client)
        recorded.gate.clear()  # the first request holds the model; the others queue
        answers = _posting(client, agent, 6, recorded, app.state.memory.embedder)
        recorded.gate.set()
        codes = [answer.result(WAIT) for answer in answers]
        health = client.get(f"/agents/{agent}/health").json()
    assert [status for status, _ in codes] == [502] * 6
    assert {code for _, code in codes} == {"upstream_failure"}
    assert [len(texts) for _, texts in recorded.calls] == [1, 5]  # two batches, all failed
    assert health["facts"]["live"] == 0 and stores.vectors(db_path) == []


def test_stopping_answers_the_waiting_requests_503_and_stores_nothing_for_them(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded = Recorded(engram.HashingEmbedder(32))
    _serving(monkeypatch, recorded)
    app = create_app(Settings(db_path=str(db_path)))
    coalescer = app.state.memory.embedder
    with TestClient(app) as client:
        agent = _agent(client)
        recorded.gate.clear()
        answers = _posting(client, agent, 4, recorded, coalescer)
        coalescer.close()  # as the service's shutdown does, with requests still waiting
        waiting = [answer.result(WAIT) for answer in answers[1:]]
        recorded.gate.set()
        running = answers[0].result(WAIT)
    assert waiting == [(503, "unavailable")] * 3
    assert running == (201, None)  # the batch already embedding is written
    assert len(stores.vectors(db_path)) == 1


def _posting(
    client: TestClient, agent: str, count: int, recorded: Recorded, coalescer: CoalescingEmbedder
) -> list[Future[tuple[int, str | None]]]:
    """``count`` facts posted at once: the first held in the embedder (whose gate the
    caller closed), the others queued behind it. Each answer's (status, error code)."""
    pool = ThreadPoolExecutor(count)

    def post(i: int) -> tuple[int, str | None]:
        answer = client.post(f"/agents/{agent}/facts", json={"content": f"fact number {i}"})
        return answer.status_code, answer.json().get("error", {}).get("code")

    first = pool.submit(post, 0)
    assert recorded.entered.wait(WAIT)
    rest = [pool.submit(post, i) for i in range(1, count)]
    until(lambda: queued(coalescer) == count - 1)
    pool.shutdown(wait=False)
    return [first, *rest]


def _phrases(count: int) -> list[tuple[str, str, str]]:
    names = ["Maria", "Tom", "Aisha", "Kenji", "Lucas", "Priya", "Omar", "Sofia"]
    things = ["flight", "dentist", "design review", "piano lesson", "hotel", "vet visit"]
    days = ["Monday", "Friday", "the weekend", "next month", "Tuesday"]
    return [(names[i % 8], things[i % 6], days[i % 5]) for i in range(count)]
