"""Consolidation through the real app (in-process) on both backends, and through the
Client: a dry run that writes nothing, a run and its entries, the memory_reflect tool,
and refusals (an unknown step, an ended agent, self-improvement off) that write nothing."""

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

SERVICE = "consolidation-service-token"
TWINS = ["Ana moved to Lyon in 2020.", "ana moved to Lyon in 2020!", "Ana moved to Lyon in 2021."]


def _app(target: Target, *, self_improve: bool = True) -> Iterator[TestClient]:
    with serving(target, SERVICE, self_improve=self_improve) as client:
        yield client


@pytest.fixture
def http(target: Target) -> Iterator[TestClient]:
    yield from _app(target)


def _agent(http: TestClient, name: str) -> str:
    made = new_agent(http, name)
    for content in TWINS:
        ok(http.post(f"{made}/facts", json={"content": content}), 201)
    return made


def _entries(target: Target) -> int:
    return int(stores.rows(target, "SELECT count(*) FROM ledger")[0][0])


def test_a_dry_run_then_a_run_then_nothing_left(http: TestClient, target: Target) -> None:
    agent = _agent(http, "tidy")
    before = _entries(target)
    planned = ok(http.post(f"{agent}/consolidations", json={"dryRun": True}))
    assert planned["dryRun"] is True and planned["changed"] == 1
    merge = next(s for s in planned["steps"] if s["step"] == "merge")
    assert merge["counts"] == {"merged": 1, "kept": 1} and merge["entry"] is None
    assert [s["step"] for s in planned["steps"]] == list(engram.core.consolidation.STEPS)
    assert _entries(target) == before
    done = ok(http.post(f"{agent}/consolidations", json={"steps": ["merge"]}))
    (step,) = done["steps"]
    assert step["factIds"] == merge["factIds"] and step["entry"] and not step["truncated"]
    assert list(step["merged"].values()) == [merge["factIds"]]
    assert _entries(target) == before + 1
    assert ok(http.post(f"{agent}/consolidations", json={}))["changed"] == 0
    assert len(ok(http.get(f"{agent}/facts"))["facts"]) == 2  # 2020 and 2021 both stay


def test_refusals_write_nothing(http: TestClient, target: Target) -> None:
    agent = _agent(http, "refused")
    before = _entries(target)
    for body in ({"steps": ["shrink"]}, {"steps": []}, {"dryRun": "maybe"}, {"step": "merge"}):
        error(http.post(f"{agent}/consolidations", json=body), 400, "invalid_input")
    error(http.post("/agents/a_none/consolidations", json={}), 404, "not_found")
    ok(http.post(f"{agent}/end"))
    error(http.post(f"{agent}/consolidations", json={}), 409, "conflict")
    assert ok(http.post(f"{agent}/consolidations", json={"dryRun": True}))["changed"] == 1
    assert _entries(target) == before + 1  # the end alone


def test_the_client_and_the_reflect_tool(http: TestClient) -> None:
    agent = _agent(http, "client")
    client = engram.Client(token=SERVICE, http=http)
    agent_id = agent.rsplit("/", 1)[1]
    assert client.consolidate(agent_id, dry_run=True)["changed"] == 1
    names = [t["name"] for t in client.tools(agent_id)]
    assert names[-1] == "memory_reflect"
    answer = client.call_tool(agent_id, "memory_reflect", {})
    assert answer["text"].startswith("Changed 1 in all. merge: 1 merged")
    assert client.consolidate(agent_id, steps=["merge", "prune"])["changed"] == 0
    with pytest.raises(engram.InvalidInput):
        client.consolidate(agent_id, steps=["shrink"])


def test_a_service_that_does_not_self_improve_answers_501(target: Target) -> None:
    for http in _app(target, self_improve=False):
        agent = _agent(http, "still")
        error(http.post(f"{agent}/consolidations", json={}), 501, "capability_missing")
        names = [t["name"] for t in ok(http.get(f"{agent}/tools"))["tools"]]
        assert "memory_reflect" not in names
        error(http.post(f"{agent}/tools/memory_reflect", json={}), 404, "not_found")
