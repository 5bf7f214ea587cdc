"""Any key the library accepts is reachable over HTTP: set, read, listed and deleted by
``engram.Client`` and by a percent-encoded path, on both backends."""

from __future__ import annotations

import hashlib
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote

import pytest
import uvicorn
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engram
from engram.api import create_app
from engram.core import limits
from engram.settings import Settings
from stores import Target

SERVICE = "keys-service-token"
AWKWARD = ["a\nb", "\r\n", "line\u2028sep", "a/b/../c", ".", "..", "%2F", "a%0Ab", "?x=1#y", " "]


def accepted(key: str) -> bool:
    try:
        limits.check_key(key)
    except engram.InvalidInput:
        return False
    return True


keys = st.text(min_size=1, max_size=limits.MAX_KEY_CHARS).filter(accepted)


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """The app behind a real HTTP server in a thread: paths are decoded once, as in
    service (Starlette's TestClient decodes them twice, so ``%2F`` would arrive as ``/``)."""
    # With its protocol named, asyncio turns Nagle off on each connection: else every
    # answer waits out a delayed ACK (~40 ms).
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    try:
        while not server.started:
            assert thread.is_alive(), "the server stopped before it started"
            time.sleep(0.01)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join()
        listener.close()


@pytest.fixture
def client(target: Target) -> Iterator[engram.Client]:
    memory = engram.open(target, embedder=None)
    settings_ = Settings(
        db_path=str(target),
        service_token_hashes=(hashlib.sha256(SERVICE.encode()).hexdigest(),),
    )
    with (
        serving(create_app(settings_, memory_store=memory)) as url,
        engram.Client(url, token=SERVICE) as client,
    ):
        yield client
    memory.close()


def test_awkward_keys_round_trip(client: engram.Client) -> None:
    agent = client.register("keeper")["id"]
    for key in AWKWARD:
        assert client.working.set(agent, key, {"key": key})["key"] == key
        assert client.working.get(agent, key) == {"key": key}
    assert sorted(client.working.list(agent)["working"]) == sorted(AWKWARD)
    for key in AWKWARD:
        client.working.delete(agent, key)
        with pytest.raises(engram.NotFound):
            client.working.get(agent, key)


def test_a_newline_key_by_its_encoded_path(client: engram.Client) -> None:
    agent = client.register("keeper")["id"]
    path = f"/agents/{agent}/memory/a%0Ab"
    assert client.call_json("PUT", path, json={"value": 1})["key"] == "a\nb"
    assert client.working.get(agent, "a\nb") == 1
    assert client.call("DELETE", path) is None
    assert client.working.list(agent)["working"] == {}


@given(key=keys)
@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_any_key_the_library_takes_round_trips(client: engram.Client, key: str) -> None:
    agents = client.agents(name="keeper")["agents"]
    agent = agents[0]["id"] if agents else client.register("keeper")["id"]
    assert client.working.set(agent, key, [key])["key"] == key
    assert client.working.list(agent)["working"] == {key: [key]}
    encoded = quote(key, safe="").replace(".", "%2E")
    assert client.call_json("GET", f"/agents/{agent}/memory/{encoded}")["value"] == [key]
    client.working.delete(agent, key)
    with pytest.raises(engram.NotFound):
        client.working.get(agent, key)


def test_a_key_of_one_newline_is_a_key_not_the_empty_path(client: engram.Client) -> None:
    # A route's pattern ends in $, which also matches before a final newline: the
    # refusal of .../memory/ must not take .../memory/%0A for itself.
    agent = client.register("newline")["id"]
    assert client.call_json("PUT", f"/agents/{agent}/memory/%0A", json={"value": 2})["key"] == "\n"
    assert client.working.get(agent, "\n") == 2
    with pytest.raises(engram.InvalidInput, match="key is empty"):
        client.call("GET", f"/agents/{agent}/memory/")
