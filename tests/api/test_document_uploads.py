"""Documents over HTTP beyond text in JSON, through the real app on a SQLite file: a PDF
uploaded as multipart (pages kept), a Markdown upload with its fields, HTML as JSON text,
a URL fetched from a loopback server only when the service allows private addresses, and
refusals (both text and url, a bad field, no file, too big) that write nothing."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import engram
from engram.api import bodies, create_app
from engram.settings import Settings
from pdfs import pdf
from stores import rows
from web_server import PAGE, Served, serving

SERVICE = "uploads-service-token"


@pytest.fixture(scope="module")
def web() -> Iterator[Served]:
    with serving() as served:
        yield served


def _client(db_path: Path, *, allow_private: bool) -> Iterator[TestClient]:
    settings = Settings(
        db_path=str(db_path),
        service_token_hashes=(hashlib.sha256(SERVICE.encode()).hexdigest(),),
        ingest_allow_private=allow_private,
    )
    memory = engram.open(db_path, embedder=engram.HashingEmbedder(32))
    with TestClient(
        create_app(settings, memory_store=memory), headers={"Authorization": f"Bearer {SERVICE}"}
    ) as test:
        yield test
    memory.close()


@pytest.fixture
def http(db_path: Path) -> Iterator[TestClient]:
    yield from _client(db_path, allow_private=False)


def _documents(http: TestClient) -> str:
    made = http.post("/agents", json={"name": "reader"})
    assert made.status_code == 201, made.text
    return f"/agents/{made.json()['id']}/documents"


def _nothing_stored(db_path: Path) -> bool:
    return rows(db_path, "SELECT count(*) FROM documents") == [(0,)]


def test_a_pdf_upload_keeps_its_pages(http: TestClient) -> None:
    base = _documents(http)
    data = pdf([["The first page."], ["The second page."]])
    made = http.post(base, files={"file": ("chart.pdf", data, "application/octet-stream")})
    assert made.status_code == 200, made.text
    answer = made.json()
    assert answer["status"] == "created" and answer["source"] == "chart.pdf"
    assert answer["chunks"] == 2
    doc = http.get(f"{base}/{answer['documentId']}").json()
    assert doc["mediaType"] == "application/pdf"
    again = http.post(base, files={"file": ("chart.pdf", data)}).json()
    assert again["status"] == "unchanged"


def test_an_upload_takes_its_fields(http: TestClient) -> None:
    base = _documents(http)
    made = http.post(
        base,
        files={"file": ("notes", b"# Notes\n\nFirst.\n\n## More\n\nSecond.", "text/markdown")},
        data={"name": "my notes", "chunkTokens": "16", "tags": ["a", "b"], "type": "note"},
    )
    assert made.status_code == 200, made.text
    doc = http.get(f"{base}/{made.json()['documentId']}").json()
    assert doc["source"] == "my notes" and doc["chunker"] == "markdown:16"
    assert [c["heading"] for c in doc["chunks"]] == ["Notes", "Notes › More"]


def test_html_as_json_text(http: TestClient) -> None:
    base = _documents(http)
    body = {"text": PAGE.decode(), "name": "tides.html", "mediaType": "text/html"}
    made = http.post(base, json=body)
    assert made.status_code == 200, made.text
    assert http.get(f"{base}/{made.json()['documentId']}").json()["title"] == "Tides"


def test_a_url_is_fetched_only_when_private_addresses_are_allowed(
    db_path: Path, web: Served
) -> None:
    url = f"{web.base}/tides.html"
    for allowed, status in ((False, 400), (True, 200)):
        for http in _client(db_path, allow_private=allowed):
            answer = http.post(_documents(http), json={"url": url, "chunkTokens": 64})
            assert answer.status_code == status, answer.text
    assert answer.json()["source"] == url
    for http in _client(db_path, allow_private=True):
        missing = http.post(_documents(http), json={"url": f"{web.base}/missing"})
        assert missing.status_code == 502, missing.text
        assert missing.json()["error"]["code"] == "upstream_failure"


@pytest.mark.parametrize(
    ("url", "allow_private"),
    [
        ("http://0177.0.0.1/", True),  # no URL parser's reading is fetched
        ("http://\uff11\uff12\uff17.0.0.1/", True),  # full-width digits
        ("http://[2002:7f00:1::]/", False),  # 6to4 of 127.0.0.1
    ],
)
def test_a_url_that_spells_loopback_another_way_is_400(
    db_path: Path, url: str, allow_private: bool
) -> None:
    for http in _client(db_path, allow_private=allow_private):
        answer = http.post(_documents(http), json={"url": url})
        assert answer.status_code == 400, answer.text
        assert answer.json()["error"]["code"] == "invalid_input"
    assert _nothing_stored(db_path)


@pytest.mark.parametrize(
    ("request_", "status"),
    [
        ({"json": {"text": "x", "name": "x.md", "url": "https://example.com/"}}, 400),
        ({"json": {"url": "ftp://example.com/x"}}, 400),
        ({"json": {"url": "https://example.com/", "name": "x"}}, 400),
        ({"files": {"file": ("x.md", b"# X")}, "data": {"chunkTokens": "many"}}, 400),
        ({"files": {"file": ("x.md", b"# X")}, "data": {"path": "/etc/passwd"}}, 400),
        ({"files": {"other": ("x.md", b"# X")}}, 400),
        ({"files": {"file": ("x.md", b"")}}, 400),
        ({"files": {"file": ("blob", b"\x00\x01\x02")}}, 400),
        ({"files": {"file": ("x.pdf", b"%PDF-1.4 broken")}}, 422),
        ({"files": {"file": ("x.md", b"# X\n\n" + b"y" * 5000)}}, 413),
    ],
)
def test_refusals_write_nothing(
    http: TestClient,
    db_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    request_: dict[str, object],
    status: int,
) -> None:
    monkeypatch.setattr(bodies, "MAX_UPLOAD_BYTES", 4096)
    base = _documents(http)
    refused = http.post(base, **request_)  # type: ignore[arg-type]
    assert refused.status_code == status, refused.text
    assert _nothing_stored(db_path)


@pytest.mark.parametrize("digits", ["\u00b9", "\u0663\u0662", "\uff13\uff12", "1" * 5000, "9" * 20])
def test_chunk_tokens_other_than_ascii_digits_in_range_are_400_naming_the_field(
    http: TestClient, db_path: Path, digits: str
) -> None:
    files = {"file": ("x.md", b"# X\n\nwords")}
    refused = http.post(_documents(http), files=files, data={"chunkTokens": digits})
    assert refused.status_code == 400, refused.text
    assert "chunkTokens" in refused.json()["error"]["message"]
    assert _nothing_stored(db_path)
