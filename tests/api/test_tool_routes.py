"""The memory tools through the real app (in-process) on both backends: an agent's, and
an application's agent's over the person a token names (their allowances read, what they
forget gone for good), a visitor with no token told in spec 003's sentence, and refusals
that answer the model in a sentence and write nothing."""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Iterator

import jwt
import pytest
from fastapi.testclient import TestClient

import engram
import stores
from answers import error, ok
from engram.api import create_app
from engram.core.people import NOT_SIGNED_IN
from engram.settings import Settings
from stores import Target

SECRET = "tools-secret-0123456789abcdef0123456789"
SERVICE = "tools-service-token"
ROWS = "SELECT (SELECT count(*) FROM facts), (SELECT count(*) FROM ledger)"
NAMES = ["memory_add", "memory_search", "memory_update", "memory_delete", "memory_merge"]
REFLECTING = [*NAMES, "memory_reflect"]  # an agent's tools; a person's never reflect


@pytest.fixture
def http(target: Target) -> Iterator[TestClient]:
    settings = Settings(
        db_path=str(target),
        jwt_secret=SECRET,
        service_token_hashes=(hashlib.sha256(SERVICE.encode()).hexdigest(),),
    )
    with engram.open(target, embedder=engram.HashingEmbedder(32)) as memory:
        app = create_app(settings, memory_store=memory)
        with TestClient(app, headers={"Authorization": f"Bearer {SERVICE}"}) as test:
            yield test


def _person(uid: str) -> dict[str, str]:
    signed = jwt.encode({"sub": uid, "exp": int(time.time()) + 3600}, SECRET, algorithm="HS256")
    return {"Authorization": f"Bearer {signed}"}


def _id(text: str) -> str:
    return re.findall(r"\[(f_[0-9a-f]+)\]", text)[-1]


def test_an_agent_s_tools_are_listed_and_called(http: TestClient, target: Target) -> None:
    agent = ok(http.post("/agents", json={"name": "helper"}), 201)["id"]
    tools = f"/agents/{agent}/tools"
    listed = ok(http.get(tools))["tools"]
    assert [t["name"] for t in listed] == REFLECTING
    assert listed[0]["parameters"]["required"] == ["content"]
    added = ok(http.post(f"{tools}/memory_add", json={"content": "Ana drinks green tea"}))
    assert added == {"text": added["text"], "isError": False}
    fact = _id(added["text"])
    found = ok(http.post(f"{tools}/memory_search", json={"query": "tea", "topK": 3}))
    assert f"[{fact}] Ana drinks green tea" in found["text"]
    # A refusal answers the model, 200, and writes nothing.
    before = stores.rows(target, ROWS)
    refused = ok(http.post(f"{tools}/memory_search", json={"query": "tea", "topK": 50}))
    assert refused["isError"] and "topK must be from 1 to 20" in refused["text"]
    for body in ({"id": "f_nope", "content": "x"}, {"id": fact}):
        assert ok(http.post(f"{tools}/memory_update", json=body))["isError"]
    assert stores.rows(target, ROWS) == before
    # What the route itself cannot serve is an error page.
    error(http.post(f"{tools}/memory_think", json={}), 404, "not_found")
    error(http.post(f"{tools}/memory_add", json=["content"]), 400, "invalid_input")
    error(http.post("/agents/a_nobody/tools/memory_add", json={"content": "x"}), 404, "not_found")
    assert stores.rows(target, ROWS) == before
    # An ended agent's memory is read, not changed.
    assert ok(http.post(f"/agents/{agent}/end"))["status"] == "ended"
    assert not ok(http.post(f"{tools}/memory_search", json={"query": "tea"}))["isError"]
    error(http.post(f"{tools}/memory_delete", json={"id": fact}), 409, "conflict")


def test_a_person_s_tools_read_what_they_allowed_and_forget_for_good(
    http: TestClient, target: Target
) -> None:
    p1, p2 = _person("p1"), _person("p2")
    notes, calendar = "/api/v1/apps/app:notes/tools", "/api/v1/apps/app:calendar/tools"
    listed = ok(http.get(notes, headers=p1))["tools"]
    assert [t["name"] for t in listed] == NAMES
    mine = ok(http.post(f"{notes}/memory_add", json={"content": "p1 likes oolong"}, headers=p1))
    assert mine["is_error"] is False and "isError" not in mine
    fact = _id(mine["text"])
    ok(http.post(f"{calendar}/memory_add", json={"content": "p1 has yoga on tuesdays"}, headers=p1))
    alone = ok(http.post(f"{notes}/memory_search", json={"query": "yoga oolong"}, headers=p1))
    assert "oolong" in alone["text"] and "yoga" not in alone["text"]
    allowed = {"source": "app:calendar", "reader": "app:notes"}
    ok(http.put("/api/v1/memory-shares", json=allowed, headers=p1))
    shared = ok(http.post(f"{notes}/memory_search", json={"query": "yoga oolong"}, headers=p1))
    assert "yoga on tuesdays (" in shared["text"] and "remembered by app:calendar" in shared["text"]
    # Another person reaches nothing of p1's.
    before = stores.rows(target, ROWS)
    theirs = ok(http.post(f"{notes}/memory_delete", json={"id": fact}, headers=p2))
    assert theirs["is_error"] and "nothing changed" in theirs["text"]  # as an update answers
    assert (
        "oolong"
        not in ok(http.post(f"{notes}/memory_search", json={"query": "oolong"}, headers=p2))["text"]
    )
    assert stores.rows(target, ROWS) == before
    # p1's forget is real: nothing in the trash.
    ok(http.post(f"{notes}/memory_delete", json={"id": fact}, headers=p1))
    assert stores.rows(target, "SELECT count(*) FROM facts WHERE id = ?", (fact,)) == [(0,)]


def test_a_visitor_with_no_token_is_told_nothing_is_remembered(
    http: TestClient, target: Target
) -> None:
    notes = "/api/v1/apps/app:notes/tools"
    before = stores.rows(target, ROWS)
    for name, args in (("memory_add", {"content": "x"}), ("memory_search", {"query": "x"})):
        answer = http.post(f"{notes}/{name}", json=args, headers={"Authorization": ""})
        assert ok(answer) == {"text": NOT_SIGNED_IN, "is_error": False}
    listed = http.get(notes, headers={"Authorization": ""})
    assert [t["name"] for t in ok(listed)["tools"]] == NAMES
    junk = {"Authorization": "Bearer junk"}
    bad = http.post(f"{notes}/memory_add", json={"content": "x"}, headers=junk)
    assert bad.status_code == 401
    assert stores.rows(target, ROWS) == before


def test_the_client_lists_and_calls_tools(http: TestClient) -> None:
    client = engram.Client(token=SERVICE, http=http)
    agent = client.register("helper")["id"]
    assert [t["name"] for t in client.tools(agent)] == REFLECTING
    added = client.call_tool(agent, "memory_add", {"content": "Bo plays chess"})
    assert added["isError"] is False
    assert "Bo plays chess" in client.call_tool(agent, "memory_search", {"query": "chess"})["text"]
    assert client.call_tool(agent, "memory_add", {})["isError"] is True
    with pytest.raises(engram.NotFound):
        client.call_tool(agent, "memory_think", {})
    token = jwt.encode({"sub": "p1", "exp": int(time.time()) + 3600}, SECRET, algorithm="HS256")
    person = engram.Client(token=token, http=http).app("app:notes")
    assert [t["name"] for t in person.tools()] == NAMES
    assert person.call_tool("memory_add", {"content": "p1 runs"})["is_error"] is False
