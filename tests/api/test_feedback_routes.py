"""Retrieval feedback through the real app (in-process) on both backends: detection and
one signal recorded, read back, and refusals that write nothing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

import engram
import stores
from answers import error, ok
from services import agent as new_agent
from services import serving
from stores import Target

SERVICE = "feedback-service-token"


@pytest.fixture
def http(target: Target) -> Iterator[TestClient]:
    with serving(target, SERVICE) as client:
        yield client


def _fact(http: TestClient, agent: str, content: str) -> str:
    return str(ok(http.post(f"{agent}/facts", json={"content": content}), 201)["id"])


def _rows(target: Target) -> int:
    return int(stores.rows(target, "SELECT count(*) FROM retrieval_feedback")[0][0])


def test_detection_answers_and_stores_one_signal_per_fact(http: TestClient, target: Target) -> None:
    agent = new_agent(http, "reader")
    lisbon = _fact(http, agent, "Alice lives in Lisbon with two cats.")
    nurse = _fact(http, agent, "Alice works as a nurse.")
    body = {"factIds": [lisbon, nurse], "response": "Alice lives in Lisbon [2].", "query": "q"}
    got = ok(http.post(f"{agent}/feedback", json=body))["signals"]
    assert [(s["factId"], s["signal"], s["reason"]) for s in got] == [
        (lisbon, "used", "terms"),
        (nurse, "used", "cited"),
    ]
    stored = ok(http.get(f"{agent}/feedback/{lisbon}"))["feedback"]
    assert [(r["signal"], r["reason"], r["query"]) for r in stored] == [("used", "terms", "q")]
    made = ok(http.post(f"{agent}/feedback/{nurse}", json={"signal": "ignored"}), 201)
    assert (made["factId"], made["signal"], made["reason"], made["score"]) == (
        nurse,
        "ignored",
        None,
        None,
    )
    assert _rows(target) == 3


def test_refusals_write_nothing(http: TestClient, target: Target) -> None:
    agent, other = new_agent(http, "reader"), new_agent(http, "other")
    fact = _fact(http, agent, "Bob is a chef.")
    theirs = _fact(http, other, "Carol is a pilot.")
    base = f"{agent}/feedback"
    error(http.post(base, json={"factIds": [fact, theirs], "response": "x"}), 404, "not_found")
    error(http.post(base, json={"factIds": [], "response": "x"}), 400, "invalid_input")
    error(http.post(base, json={"factIds": [fact, fact], "response": "x"}), 400, "invalid_input")
    error(http.post(base, json={"factIds": [fact]}), 400, "invalid_input")
    error(http.post(f"{base}/{theirs}", json={"signal": "used"}), 404, "not_found")
    error(http.post(f"{base}/{fact}", json={"signal": "liked"}), 400, "invalid_input")
    error(
        http.post("/agents/a_nope/feedback", json={"factIds": [fact], "response": "x"}),
        404,
        "not_found",
    )
    assert _rows(target) == 0


def test_the_client_speaks_the_library_s_names(http: TestClient) -> None:
    client = engram.Client(token=SERVICE, http=http)
    agent = client.register("reader")["id"]
    fact = client.remember(agent, "Alice lives in Lisbon.")["id"]
    usage = client.usage(agent)
    [signal] = usage.detect([fact], "Alice lives in Lisbon.", query="where?")
    assert (signal["factId"], signal["signal"], signal["reason"]) == (fact, "used", "terms")
    assert usage.record(fact, "ignored", reason="wrong")["reason"] == "wrong"
    assert [r["signal"] for r in usage.signals(fact)] == ["used", "ignored"]
    with pytest.raises(engram.InvalidInput):
        usage.record(fact, "liked")  # refused before anything is sent
    with pytest.raises(engram.NotFound):
        usage.detect(["f_nope"], "x")
    with pytest.raises(engram.NotFound, match="f_nope"):
        usage.signals("f_nope")


def test_a_fact_s_signals_are_its_scope_s_and_unknown_ids_are_not_found(
    http: TestClient,
) -> None:
    mine, theirs = new_agent(http, "mine"), new_agent(http, "theirs")
    fact = _fact(http, mine, "Alice lives in Lisbon.")
    assert ok(http.get(f"{mine}/feedback/{fact}")) == {"feedback": []}  # seen, no signal yet
    ok(http.post(f"{mine}/feedback/{fact}", json={"signal": "used"}), 201)
    for base, fact_id in ((theirs, fact), (mine, "f_nope")):
        found = error(http.get(f"{base}/feedback/{fact_id}"), 404, "not_found")
        assert fact_id in found["message"]
