"""Generated requests from the service's own OpenAPI schema: no input is a 500."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import jwt
import schemathesis
from hypothesis import HealthCheck, settings

import engram
from engram.api import create_app
from engram.settings import Settings

SECRET = "fuzz-secret-0123456789abcdef0123456789"
_dir = tempfile.TemporaryDirectory()
_path = Path(_dir.name) / "fuzz.db"
_memory = engram.open(_path, embedder=engram.HashingEmbedder(16))
_agent = _memory.agents.register("fuzzed")
_app = create_app(Settings(db_path=str(_path), jwt_secret=SECRET), memory_store=_memory)
schema = schemathesis.openapi.from_asgi("/openapi.json", _app)
TOKEN = jwt.encode({"sub": "p1", "exp": int(time.time()) + 86_400}, SECRET, algorithm="HS256")


@schema.parametrize()
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_no_input_is_a_server_error(case: Any) -> None:
    if case.path_parameters and "agent_id" in case.path_parameters:
        case.path_parameters["agent_id"] = _agent.id  # reach past the agent lookup
    response = case.call(headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code < 500, (case.method, case.formatted_path, response.text)
