"""The schema the service publishes documents what it answers: errors in one shape, the
bearer scheme, integers as integers. Whether every answer matches it, on both backends, is
``test_fuzz.py``'s to check, with the requests it generates from it."""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path
from typing import Any

import engram
from engram.api import create_app
from engram.settings import Settings

SECRET = "openapi-secret-0123456789abcdef012345"
SERVICE = "openapi-service-token"


def _published() -> dict[str, Any]:
    """The schema the service publishes (it does not depend on the store behind it)."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "schema.db"
        settings = Settings(
            db_path=str(path),
            jwt_secret=SECRET,
            service_token_hashes=(hashlib.sha256(SERVICE.encode()).hexdigest(),),
        )
        with engram.open(path, embedder=None) as memory:
            return create_app(settings, memory_store=memory).openapi()


def test_the_schema_documents_what_the_service_answers() -> None:
    published = _published()
    components = published["components"]
    assert "HTTPValidationError" not in components["schemas"]
    assert components["securitySchemes"]["HTTPBearer"] == {
        "type": "http",
        "scheme": "bearer",
        "description": components["securitySchemes"]["HTTPBearer"]["description"],
    }
    integers = {"limit", "topK", "count"}
    operations = 0
    for path, item in published["paths"].items():
        for method, operation in item.items():
            operations += 1
            answers = operation["responses"]
            for status in ("400", "422"):  # 422 only where the domain refuses words
                if status in answers:
                    error = answers[status]["content"]["application/json"]["schema"]["$ref"]
                    assert error.endswith("/ErrorAnswer"), (method, path, status)
            assert "400" in answers, (method, path)
            for status, answer in answers.items():
                if status.startswith("2") and status != "204":
                    body = answer["content"]["application/json"]["schema"]
                    assert "$ref" in body or "anyOf" in body, (method, path, status)
            for parameter in operation.get("parameters", []):
                if parameter["name"] in integers:
                    assert parameter["schema"]["type"] == "integer", (method, path)
                    assert {"minimum", "maximum"} <= set(parameter["schema"]), (method, path)
            if path.startswith("/api/v1/apps/{app}/tools"):  # a visitor needs no token
                assert operation["security"] == [{"HTTPBearer": []}, {}], (method, path)
            elif path != "/healthz":
                assert operation["security"] == [{"HTTPBearer": []}], (method, path)
    assert operations >= 29
