"""The service in-process over a test's store, for route tests: one service token, the
hashing embedder, and a client that sends the token on every request."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from fastapi.testclient import TestClient

import engram
from answers import ok
from engram.api import create_app
from engram.settings import Settings
from stores import Target


@contextmanager
def serving(target: Target, token: str, **settings: Any) -> Iterator[TestClient]:
    """A client of the app over ``target``, authorised by the service token ``token``;
    ``settings`` are more Settings fields (and ``self_improve`` opens the store so too)."""
    made = Settings(
        db_path=str(target),
        service_token_hashes=(hashlib.sha256(token.encode()).hexdigest(),),
        **settings,
    )
    improve = settings.get("self_improve", True)
    memory = engram.open(target, embedder=engram.HashingEmbedder(32), self_improve=improve)
    with memory, TestClient(create_app(made, memory_store=memory)) as client:
        client.headers["Authorization"] = f"Bearer {token}"
        yield client


def agent(http: TestClient, name: str) -> str:
    """A new agent's base path (``/agents/a_…``)."""
    return f"/agents/{ok(http.post('/agents', json={'name': name}), 201)['id']}"
