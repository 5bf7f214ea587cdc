"""Generated requests from the service's own OpenAPI schema: no input is a 500, on either
backend (PostgreSQL refuses some text SQLite would take, so both are fuzzed)."""

from __future__ import annotations

import time
from typing import Any

import jwt
import schemathesis
from hypothesis import HealthCheck, given, settings

import engram
from engram.api import create_app
from engram.settings import Settings
from stores import Target

SECRET = "fuzz-secret-0123456789abcdef0123456789"


def _bearer() -> dict[str, str]:
    """A person's token, minted for each request: fuzzing every route takes minutes on a
    loaded machine, longer than a token minted once should be trusted to last."""
    token = jwt.encode({"sub": "p1", "exp": int(time.time()) + 3600}, SECRET, algorithm="HS256")
    return {"Authorization": f"Bearer {token}"}


def test_no_input_is_a_server_error(target: Target) -> None:
    memory = engram.open(target, embedder=engram.HashingEmbedder(16))
    agent = memory.agents.register("fuzzed").id
    app = create_app(Settings(db_path=str(target), jwt_secret=SECRET), memory_store=memory)
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) > 20
    try:
        for operation in operations:
            _fuzz(operation, agent)
    finally:
        memory.close()


def _fuzz(operation: Any, agent: str) -> None:
    @given(case=operation.as_strategy())
    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
    def check(case: Any) -> None:
        if case.path_parameters and "agent_id" in case.path_parameters:
            case.path_parameters["agent_id"] = agent  # reach past the agent lookup
        response = case.call(headers=_bearer())
        assert response.status_code < 500, (case.method, case.formatted_path, response.text)

    check()
