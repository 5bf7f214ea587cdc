"""Documents through the real app (in-process) on both backends: text in, the same text
again a no-op, a document read back with its chunks, forgotten; refusals write nothing,
and no field names a path on the server."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

import engram
from engram.api import create_app
from engram.settings import Settings
from stores import Target, rows

SERVICE = "documents-service-token"
TEXT = "# Guide\n\nInstall it.\n\n## Use\n\nRun it."


@pytest.fixture
def http(target: Target) -> Iterator[TestClient]:
    settings = Settings(
        db_path=str(target),
        jwt_secret="documents-secret-0123456789abcdef0123456789",
        service_token_hashes=(hashlib.sha256(SERVICE.encode()).hexdigest(),),
    )
    memory = engram.open(target, embedder=engram.HashingEmbedder(32))
    with TestClient(
        create_app(settings, memory_store=memory), headers={"Authorization": f"Bearer {SERVICE}"}
    ) as test:
        yield test
    memory.close()


def _documents(http: TestClient) -> str:
    made = http.post("/agents", json={"name": "reader"})
    assert made.status_code == 201, made.text
    return f"/agents/{made.json()['id']}/documents"


def test_text_in_read_back_and_forgotten(http: TestClient) -> None:
    base = _documents(http)
    made = http.post(base, json={"text": TEXT, "name": "guide.md"})
    assert made.status_code == 200, made.text
    answer = made.json()
    assert answer["status"] == "created" and answer["chunks"] == 2
    again = http.post(base, json={"text": TEXT, "name": "guide.md"}).json()
    assert again["status"] == "unchanged" and again["documentId"] == answer["documentId"]
    listed = http.get(base).json()["documents"]
    assert [d["source"] for d in listed] == ["guide.md"] and "chunks" not in listed[0]
    doc = http.get(f"{base}/{answer['documentId']}").json()
    assert doc["title"] == "Guide"
    assert [(c["heading"], TEXT[c["start"] : c["end"]]) for c in doc["chunks"]] == [
        ("Guide", "# Guide\n\nInstall it."),
        ("Guide › Use", "## Use\n\nRun it."),
    ]
    agent = base.removesuffix("/documents")
    first = doc["chunks"][0]
    (came,) = http.get(f"{agent}/facts/{first['factId']}/provenance").json()["provenance"]
    assert came == {
        "documentId": answer["documentId"],
        "source": "guide.md",
        "mediaType": "text/markdown",
        "idx": 0,
        "start": first["start"],
        "end": first["end"],
        "heading": "Guide",
        "page": None,
    }
    assert http.get(f"{agent}/facts/f_nothing/provenance").status_code == 404
    assert http.delete(f"{base}/{answer['documentId']}").status_code == 204
    assert http.get(base).json()["documents"] == []
    assert http.delete(f"{base}/{answer['documentId']}").status_code == 404


@pytest.mark.parametrize(
    "body",
    [
        {"text": TEXT, "name": "g.md", "chunkTokens": 8},
        {"text": TEXT, "name": "g.md", "strategy": "sentences"},
        {"text": TEXT, "name": "g.md", "mediaType": "application/pdf"},
        {"path": "/etc/passwd", "name": "g.md"},
        {"text": TEXT, "name": "g.md", "path": "/etc/passwd"},
        {"name": "g.md"},
    ],
)
def test_refusals_write_nothing(http: TestClient, target: Target, body: dict[str, object]) -> None:
    base = _documents(http)
    refused = http.post(base, json=body)
    assert refused.status_code == 400, refused.text
    assert rows(target, "SELECT count(*) FROM documents") == [(0,)]
