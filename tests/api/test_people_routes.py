"""The people routes speak of their own fields and answer one problem alike: words that
are blank or too long are a 422 naming ``memory`` whether remembered or corrected, and
``.../{app}/export`` is its own route, never read as a memory called export."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from test_isolation import SECRET, token

import engram
from engram.api import create_app
from engram.settings import Settings
from stores import Target


@pytest.fixture
def client(target: Target) -> Iterator[TestClient]:
    settings = Settings(db_path=str(target), jwt_secret=SECRET, owner_uid="owner")
    memory = engram.open(target, embedder=engram.HashingEmbedder(32))
    with TestClient(create_app(settings, memory_store=memory)) as test_client:
        yield test_client


@pytest.mark.parametrize(
    ("words", "said"),
    [(" ", "memory must not be empty"), ("x" * 2001, "memory is 2001 characters")],
)
def test_bad_words_are_one_422_naming_memory_however_they_come(
    client: TestClient, words: str, said: str
) -> None:
    me = token("p1")
    kept = client.post("/api/v1/apps/app:a/memories", json={"memory": "likes tea"}, headers=me)
    memory_id = kept.json()["id"]
    for answer in (
        client.post("/api/v1/apps/app:a/memories", json={"memory": words}, headers=me),
        client.patch(
            f"/api/v1/apps/memories/app:a/{memory_id}", json={"memory": words}, headers=me
        ),
        client.patch(f"/api/v1/memories/{memory_id}", json={"memory": words}, headers=me),
    ):
        assert answer.status_code == 422, answer.text
        assert answer.json()["error"]["message"].startswith(said), answer.text
    listed = client.get("/api/v1/apps/memories/app:a", headers=me).json()
    assert [m["memory"] for m in listed["memories"]] == ["likes tea"]  # nothing stored


def test_export_is_its_own_route_for_every_method(client: TestClient) -> None:
    me = token("p1")
    client.post("/api/v1/apps/app:a/memories", json={"memory": "likes tea"}, headers=me)
    path = "/api/v1/apps/memories/app:a/export"
    assert client.get(path, headers=me).status_code == 200
    for method in ("PATCH", "DELETE", "POST", "PUT"):
        answer = client.request(method, path, json={"memory": "x"}, headers=me)
        assert answer.status_code == 405 and answer.headers["allow"] == "GET", method
    schema = client.get("/openapi.json").json()
    id_schema = schema["paths"]["/api/v1/apps/memories/{app}/{memory_id}"]["patch"]["parameters"]
    memory_id = next(p for p in id_schema if p["name"] == "memory_id")["schema"]
    assert memory_id["not"] == {"const": "export"}


def _beside(path: str, other: str) -> bool:
    """Whether ``path`` has a parameter where ``other`` has a word, and is ``other``
    elsewhere: a URL of ``other`` may also be one of ``path``'s."""
    mine, theirs = path.split("/"), other.split("/")
    return (
        len(mine) == len(theirs)
        and all(a == b or a.startswith("{") for a, b in zip(mine, theirs, strict=True))
        and any(
            a.startswith("{") and not b.startswith("{") for a, b in zip(mine, theirs, strict=True)
        )
    )


def test_an_operation_whose_urls_another_path_answers_documents_405(client: TestClient) -> None:
    """PATCH or DELETE of .../{app}/export is the export's path answering 405 (its id is
    never export): an operation that can meet that answer says so, as the fuzzer checks."""
    paths = client.get("/openapi.json").json()["paths"]
    met = set()
    for path, operations in paths.items():
        for other, theirs in paths.items():
            if _beside(path, other):
                for method in operations.keys() - theirs.keys() - {"parameters"}:
                    met.add((method, path))
                    assert "405" in operations[method]["responses"], (method, path, other)
    assert met == {
        ("patch", "/api/v1/apps/memories/{app}/{memory_id}"),
        ("delete", "/api/v1/apps/memories/{app}/{memory_id}"),
    }
