"""The MCP server through the SDK's own client: every tool listed and called in-process,
ledgered via=mcp; `engram mcp` as a real stdio subprocess; /mcp inside the real app
(tokens, scopes, one person never reading another's memories) and inside a real
`engram serve` subprocess."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import jwt
import pytest
from fastapi.testclient import TestClient
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from test_service_process import running

import engram
from answers import error, ok
from engram.api import create_app
from engram.cli.main import main
from engram.core.installing import DISTRIBUTION
from engram.mcp import catalogue, server
from engram.settings import Settings

ENGRAM = str(Path(sys.executable).parent / "engram")
SECRET = "mcp-secret-0123456789abcdef0123456789ab"
SERVICE = "mcp-service-token"
TOOLS = [
    "memory_add",
    "memory_search",
    "memory_update",
    "memory_delete",
    "memory_merge",
    "memory_reflect",
    "memory_list",
    "graph_search",
    "graph_neighbourhood",
    "working_get",
    "working_set",
]
# What the SDK's client sends first, and what a stateless server answers alone.
ACCEPT = {"Accept": "application/json, text/event-stream"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}


@pytest.fixture
def mem(tmp_path: Path) -> Iterator[engram.Memory]:
    with engram.open(tmp_path / "e.db", embedder=engram.HashingEmbedder(32)) as memory:
        yield memory


def _id(text: str) -> str:
    return re.findall(r"\[(f_[0-9a-f]+)\]", text)[-1]


async def _calls(client: Client, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    return [await client.call_tool(name, arguments) for name, arguments in calls]


def test_every_tool_is_listed_and_called_and_ledgered_via_mcp(mem: engram.Memory) -> None:
    ref = engram.ResourceRef("mcp-agent")
    mem.graph.upsert_entity(ref, "Ana", type="person", summary="drinks green tea")
    acting = mem.acting(actor="t", via="mcp")
    app = server.build(lambda _request: catalogue.agent(acting, ref))
    answers: list[str] = []

    async def session() -> None:
        async with Client(app) as client:
            listed = (await client.list_tools()).tools
            assert [t.name for t in listed] == TOOLS
            assert listed[0].input_schema == dict(mem.create_tools(ref)[0].parameters)
            added = [
                (await client.call_tool("memory_add", {"content": words})).content[0].text
                for words in ("Ana drinks green tea", "Ana likes tea that is green", "Bo plays")
            ]
            one, two, three = _id(added[0]), _id(added[1]), _id(added[2])
            found = await _calls(
                client,
                [
                    ("memory_search", {"query": "green tea"}),
                    ("memory_update", {"id": one, "content": "Ana drinks green tea daily"}),
                    ("memory_list", {"limit": 5}),
                    ("memory_merge", {"ids": [one, two], "content": "Ana drinks green tea"}),
                    ("memory_delete", {"id": three}),  # one went into the merged fact
                    ("memory_reflect", {"dryRun": True}),
                    ("graph_search", {"query": "Ana"}),
                    ("graph_neighbourhood", {"entity": "Ana"}),
                    ("working_set", {"key": "plan", "value": {"step": 2}, "ttlSeconds": 60}),
                    ("working_get", {"key": "plan"}),
                ],
            )
            for result in found:
                assert not result.is_error, result.content
                answers.append(result.content[0].text)

    anyio.run(session)
    assert "Ana drinks green tea" in answers[0]
    assert "Ana" in answers[6] and "person" in answers[6]
    assert json.loads(answers[9]) == {"step": 2}
    entries = mem.ledger(ref).entries
    assert entries and all(e.via == "mcp" and e.actor == "t" for e in entries[:-1])
    assert entries[-1].via == "library"  # the entity the test itself wrote


def test_an_engram_error_reaches_the_model_as_a_tool_error(mem: engram.Memory) -> None:
    ref = engram.ResourceRef("mcp-agent")
    app = server.build(lambda _request: catalogue.agent(mem.acting(via="mcp"), ref))

    async def session() -> list[Any]:
        async with Client(app) as client:
            return await _calls(
                client,
                [
                    ("memory_update", {"id": "f_0123", "content": "x"}),
                    ("memory_add", {"content": "x", "scope": "someone else's"}),
                    ("working_get", {"key": "unset"}),
                    ("memory_forget_everything", {}),
                ],
            )

    missing, unknown, unset, no_tool = anyio.run(session)
    assert all(r.is_error for r in (missing, unknown, unset, no_tool))
    assert "no fact 'f_0123'" in missing.content[0].text
    assert "takes no argument 'scope'" in unknown.content[0].text
    assert "unset" in unset.content[0].text
    assert "no tool 'memory_forget_everything'" in no_tool.content[0].text
    assert mem.count(ref) == 0 and not mem.ledger(ref).entries


def test_engram_mcp_answers_over_stdio(tmp_path: Path) -> None:
    db = str(tmp_path / "e.db")
    launch = ["--db", db, "--embedder", "none", "mcp", "--resource", "r1", "--team", "t"]
    params = StdioServerParameters(command=ENGRAM, args=launch, env=dict(os.environ))

    async def session() -> tuple[list[str], Any]:
        async with Client(params) as client:
            names = [t.name for t in (await client.list_tools()).tools]
            kept = await client.call_tool("working_set", {"key": "k", "value": [1, 2]})
            return names, kept

    names, kept = anyio.run(session)
    assert names == [n for n in TOOLS if n != "memory_reflect"] or names == TOOLS
    assert not kept.is_error, kept.content
    with engram.open(db) as mem:
        ref = engram.ResourceRef("r1", team_id="t")
        assert mem.working.get(ref, "k") == [1, 2]
        assert mem.ledger(ref).entries[0].via == "mcp"


def test_engram_mcp_needs_one_scope_and_an_owner_for_an_app(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ENGRAM_OWNER_UID", raising=False)
    db = ["--db", str(tmp_path / "e.db"), "--embedder", "none"]
    for launch in (["mcp"], ["mcp", "--resource", "r", "--app", "app:x"]):
        assert main([*db, *launch]) == 2
        assert "needs --resource ID or --app APP" in capsys.readouterr().err
    assert main([*db, "mcp", "--app", "app:x"]) == 2
    assert "no owner is configured" in capsys.readouterr().err


# -- /mcp in the service ------------------------------------------------------------------
@pytest.fixture
def http(tmp_path: Path) -> Iterator[TestClient]:
    settings = Settings(
        db_path=str(tmp_path / "e.db"),
        jwt_secret=SECRET,
        service_token_hashes=(hashlib.sha256(SERVICE.encode()).hexdigest(),),
    )
    with (
        engram.open(tmp_path / "e.db", embedder=engram.HashingEmbedder(32)) as memory,
        TestClient(create_app(settings, memory_store=memory)) as test,
    ):
        yield test


def _person(uid: str) -> dict[str, str]:
    signed = jwt.encode({"sub": uid, "exp": int(time.time()) + 3600}, SECRET, algorithm="HS256")
    return {"Authorization": f"Bearer {signed}", **ACCEPT}


SERVICE_HEADERS = {"Authorization": f"Bearer {SERVICE}", **ACCEPT}


def _call(http: TestClient, url: str, headers: dict[str, str], name: str, **args: Any) -> Any:
    message = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": name, "arguments": args},
    }
    return ok(http.post(url, json=message, headers=headers))["result"]


def test_mcp_over_http_serves_an_agent_s_scope_to_a_service_token(http: TestClient) -> None:
    agent = ok(http.post("/agents", json={"name": "a"}, headers=SERVICE_HEADERS), 201)["id"]
    url = f"/mcp?agent={agent}"
    assert ok(http.post(url, json=INITIALIZE, headers=SERVICE_HEADERS))["result"]["serverInfo"]
    added = _call(http, url, SERVICE_HEADERS, "memory_add", content="Ana drinks tea")
    assert not added["isError"]
    listed = ok(http.get(f"/agents/{agent}/facts", headers=SERVICE_HEADERS))["facts"]
    assert [f["content"] for f in listed] == ["Ana drinks tea"]
    ok(http.post(f"/agents/{agent}/end", headers=SERVICE_HEADERS))
    tools = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
    names = [
        t["name"]
        for t in ok(http.post(url, json=tools, headers=SERVICE_HEADERS))["result"]["tools"]
    ]
    assert names == [
        "memory_search",
        "memory_list",
        "graph_search",
        "graph_neighbourhood",
        "working_get",
    ]
    refused = _call(http, url, SERVICE_HEADERS, "memory_add", content="more")
    assert refused["isError"] and "no tool 'memory_add'" in refused["content"][0]["text"]


def refused_rpc(answer: Any, status: int, code: str) -> dict[str, Any]:
    """A refusal of /mcp: the HTTP status, and a JSON-RPC error an MCP client shows in
    words (the request's id; the service's error code in its data)."""
    assert answer.status_code == status, answer.text
    body = answer.json()
    assert body["jsonrpc"] == "2.0" and body["id"] == INITIALIZE.get("id"), body
    assert body["error"]["data"]["code"] == code and body["error"]["message"], body
    found: dict[str, Any] = body["error"]
    return found


def test_mcp_over_http_refuses_who_may_not_call(http: TestClient) -> None:
    agent = ok(http.post("/agents", json={"name": "a"}, headers=SERVICE_HEADERS), 201)["id"]
    refused = http.post(f"/mcp?agent={agent}", json=INITIALIZE, headers=ACCEPT)
    refused_rpc(refused, 401, "unauthenticated")
    assert refused.headers["www-authenticate"] == "Bearer"
    bad = {"Authorization": "Bearer nonsense", **ACCEPT}
    refused_rpc(http.post("/mcp?app=app:x", json=INITIALIZE, headers=bad), 401, "unauthenticated")
    nobody = jwt.encode({"exp": int(time.time()) + 60}, SECRET, algorithm="HS256")
    no_person = {"Authorization": f"Bearer {nobody}", **ACCEPT}
    refused_rpc(http.post("/mcp?app=app:x", json=INITIALIZE, headers=no_person), 403, "forbidden")
    person = _person("p1")
    refused_rpc(http.post(f"/mcp?agent={agent}", json=INITIALIZE, headers=person), 403, "forbidden")
    refused_rpc(http.post("/mcp", json=INITIALIZE, headers=person), 400, "invalid_input")
    odd = http.post("/mcp?app=x&scope=y", json=INITIALIZE, headers=person)
    refused_rpc(odd, 400, "invalid_input")
    nowhere = http.post("/mcp?agent=a_none", json=INITIALIZE, headers=SERVICE_HEADERS)
    refused_rpc(nowhere, 404, "not_found")


def test_a_call_over_the_body_limit_is_a_json_rpc_error_in_words(http: TestClient) -> None:
    """A tool call past 1 MiB is refused before MCP reads it, as a JSON-RPC error with
    the call's id: an MCP client shows why, not a bare HTTP status."""
    agent = ok(http.post("/agents", json={"name": "a"}, headers=SERVICE_HEADERS), 201)["id"]
    call = {
        "jsonrpc": "2.0",
        "id": 41,
        "method": "tools/call",
        "params": {"name": "memory_add", "arguments": {"content": "x" * (1 << 20)}},
    }
    answer = http.post(f"/mcp?agent={agent}", json=call, headers=SERVICE_HEADERS)
    assert answer.status_code == 413
    body = answer.json()
    assert body["id"] == 41 and body["error"]["data"]["code"] == "too_large"
    assert "the most a request may carry" in body["error"]["message"]


def test_a_malformed_message_is_a_json_rpc_error_in_words(http: TestClient) -> None:
    agent = ok(http.post("/agents", json={"name": "a"}, headers=SERVICE_HEADERS), 201)["id"]
    url = f"/mcp?agent={agent}"
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call"}
    cases: list[tuple[Any, int, Any, int, str]] = [
        # (message, HTTP status, id answered, JSON-RPC code, the words)
        ({"jsonrpc": "2.0", "id": 1}, 400, 1, -32600, "a request needs a method"),
        ({"foo": "bar"}, 400, None, -32600, 'jsonrpc must be "2.0"'),
        ([INITIALIZE, INITIALIZE], 400, None, -32600, "a batch of messages is not taken"),
        ("hello", 400, None, -32600, "must be a JSON-RPC message object"),
        (call | {"id": {"a": 1}}, 400, None, -32600, "id must be a string or an integer"),
        (call | {"id": True}, 400, None, -32600, "id must be a string or an integer"),
        (call | {"method": 5}, 400, 7, -32600, "method must be a non-empty string"),
        (call | {"params": "x"}, 400, 7, -32600, "params must be an object"),
        (
            call | {"params": {"name": 5}},
            200,
            7,
            -32602,
            "invalid params for tools/call: params.name must be a string, got the number 5",
        ),
        (
            call | {"params": {"name": "memory_search", "arguments": [1]}},
            200,
            7,
            -32602,
            "params.arguments must be an object, got a list",
        ),
        (
            {"jsonrpc": "2.0", "id": 8, "method": "initialize", "params": {}},
            200,
            8,
            -32602,
            "params.protocolVersion is required",
        ),
    ]
    for message, status, ident, code, words in cases:
        answer = http.post(url, json=message, headers=SERVICE_HEADERS)
        assert answer.status_code == status, (message, answer.text)
        body = answer.json()
        assert (body["jsonrpc"], body["id"], body["error"]["code"]) == ("2.0", ident, code)
        assert words in body["error"]["message"], (message, body)
        for leak in ("pydantic", "validation error", "union[", "input_type", "[type="):
            assert leak not in answer.text.lower(), (message, answer.text)
    # What is well formed still reaches the SDK: an unknown method is its answer.
    unknown = ok(http.post(url, json=call | {"method": "nope"}, headers=SERVICE_HEADERS))
    assert unknown["error"]["code"] == -32601


def test_a_person_never_reads_another_s_memories_through_mcp(http: TestClient) -> None:
    ana, bob, url = _person("ana"), _person("bob"), "/mcp?app=app:notes"
    added = _call(http, url, ana, "memory_add", content="Ana's door code is 4471")
    assert not added["isError"], added
    fact = _id(added["content"][0]["text"])
    for name, args in [
        ("memory_search", {"query": "door code 4471"}),
        ("memory_list", {}),
    ]:
        seen = _call(http, url, bob, name, **args)["content"][0]["text"]
        assert "4471" not in seen and fact not in seen
    deleted = _call(http, url, bob, "memory_delete", id=fact)
    updated = _call(http, url, bob, "memory_update", id=fact, content="Bob's now")
    assert deleted["isError"] and updated["isError"]  # another's id answers alike
    assert "nothing changed" in deleted["content"][0]["text"]
    mine = _call(http, url, ana, "memory_list")["content"][0]["text"]
    assert "4471" in mine


def test_a_person_s_tools_say_a_forget_is_for_good(http: TestClient) -> None:
    """A person's forget is real (spec 003): their delete and merge say so to the model;
    an agent's, which go to the trash, do not."""
    agent = ok(http.post("/agents", json={"name": "a"}, headers=SERVICE_HEADERS), 201)["id"]
    listing = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}

    def said(url: str, headers: dict[str, str]) -> dict[str, str]:
        found = ok(http.post(url, json=listing, headers=headers))["result"]["tools"]
        return {t["name"]: t["description"] for t in found}

    theirs = said("/mcp?app=app:notes", _person("ana"))
    agents = said(f"/mcp?agent={agent}", SERVICE_HEADERS)
    for name in ("memory_delete", "memory_merge"):
        assert "for good" in theirs[name] and "for good" not in agents[name], name


# A fresh interpreter: whether the service loaded the SDK, before and after /mcp is asked.
_LOADS_ON_ASKING = """
import asyncio, hashlib, json, sys
import httpx, engram
from engram.api import create_app
from engram.settings import Settings

INITIALIZE = json.loads(sys.argv[2])
LOADED = "mcp.server.streamable_http_manager"
token = hashlib.sha256(b"t").hexdigest()
settings = Settings(db_path=sys.argv[1], service_token_hashes=(token,))
memory = engram.open(sys.argv[1], embedder=engram.HashingEmbedder(8))
app = create_app(settings, memory_store=memory)
headers = {"Authorization": "Bearer t", "Accept": "application/json, text/event-stream"}

async def main():
    async with app.router.lifespan_context(app):
        carrier = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=carrier, base_url="http://e") as http:
            print((await http.get("/healthz")).status_code, LOADED in sys.modules)
            agent = (await http.post("/agents", json={"name": "a"}, headers=headers)).json()
            ask = lambda: http.post(f"/mcp?agent={agent['id']}", json=INITIALIZE, headers=headers)
            answers = await asyncio.gather(ask(), ask(), ask())  # the first three at once
            print([int(a.status_code) for a in answers], LOADED in sys.modules)

asyncio.run(main())
"""


def test_the_sdk_is_loaded_by_the_first_mcp_request_not_by_the_start(tmp_path: Path) -> None:
    script = [sys.executable, "-c", _LOADS_ON_ASKING, str(tmp_path / "e.db")]
    done = subprocess.run([*script, json.dumps(INITIALIZE)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["200 False", "[200, 200, 200] True"]


def test_mcp_answers_inside_a_real_engram_serve(tmp_path: Path) -> None:
    env = {
        "ENGRAM_SERVICE_TOKENS": hashlib.sha256(SERVICE.encode()).hexdigest(),
        "ENGRAM_EMBEDDER": "none",
    }
    with running(tmp_path / "e.db", **env) as service:
        http = service.http
        headers = {"Authorization": f"Bearer {SERVICE}"}
        agent = ok(http.post("/agents", json={"name": "a"}, headers=headers), 201)["id"]
        answered = http.post(f"/mcp?agent={agent}", json=INITIALIZE, headers=SERVICE_HEADERS)
        server = ok(answered)["result"]["serverInfo"]
        assert server["name"] == "engram" and server["version"] == metadata.version(DISTRIBUTION)
        refused = http.post(f"/mcp?agent={agent}", json=INITIALIZE, headers=ACCEPT)
        refused_rpc(refused, 401, "unauthenticated")
        endpoint = str(http.base_url).rstrip("/") + f"/mcp?agent={agent}"

        async def session() -> tuple[int, Any]:
            async with (
                httpx2.AsyncClient(headers=headers) as carrier,
                Client(streamable_http_client(endpoint, http_client=carrier)) as client,
            ):
                listed = (await client.list_tools()).tools
                huge = {"key": "big", "value": "x" * (1 << 20)}  # refused before MCP reads it
                with pytest.raises(MCPError, match="the most a request may carry"):
                    await client.call_tool("working_set", huge)
                return len(listed), await client.call_tool("working_set", {"key": "k", "value": 1})

        listed, kept = anyio.run(session)
        assert listed == len(TOOLS) and not kept.is_error, kept.content
        assert ok(http.get(f"/agents/{agent}/memory/k", headers=headers))["value"] == 1
        # No stream for the server to speak first on, no session to end: 405, at once
        # (a GET held an event stream open for ever, one a request).
        stream = {**SERVICE_HEADERS, "Accept": "text/event-stream"}
        for method in ("GET", "DELETE"):
            with (
                httpx.Client(timeout=30) as quick,
                quick.stream(method, endpoint, headers=stream) as answer,
            ):
                assert answer.status_code == 405, answer.headers  # before any body is read
                answer.read()
            error(answer, 405, "method_not_allowed")
            assert answer.headers["allow"] == "POST"
