from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

import engram
from engram import InvalidInput
from engram.cli.main import main
from engram.embedders.local import LocalEmbedder
from engram.embedders.remote import RemoteEmbedder
from engram.embedders.reranker import RemoteReranker
from engram.settings import Settings


def test_defaults() -> None:
    settings = Settings.from_env({})
    assert settings == Settings()
    assert (settings.db_path, settings.embedder) == ("./engram.db", "local")
    assert settings.embeddings_timeout_ms == 30_000 and settings.max_age is None


def test_every_variable_is_read() -> None:
    settings = Settings.from_env(
        {
            "ENGRAM_DB_PATH": "/data/e.db",
            "ENGRAM_EMBEDDINGS_URL": "http://127.0.0.1:9/v1/embeddings",
            "ENGRAM_EMBEDDINGS_MODEL": "m",
            "ENGRAM_EMBEDDINGS_API_KEY": "k",
            "ENGRAM_EMBEDDINGS_ASYMMETRIC": "true",
            "ENGRAM_EMBEDDINGS_TIMEOUT_MS": "1500",
            "ENGRAM_MAX_FACTS": "10",
            "ENGRAM_VECTOR_INDEX_ABOVE": "5000",
            "ENGRAM_MAX_AGE_MS": "60000",
        }
    )
    assert settings.embedder == "remote"  # a URL and a model turn the remote embedder on
    assert settings.embeddings_asymmetric and settings.embeddings_timeout_ms == 1500
    assert (settings.max_facts, settings.max_age) == (10, timedelta(minutes=1))
    assert settings.vector_index_above == 5000
    embedder = settings.make_embedder()
    assert isinstance(embedder, RemoteEmbedder) and embedder.model == "m"
    embedder.close()
    assert settings.make_embedder("none") is None


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"ENGRAM_EMBEDDINGS_URL": "http://x/v1/embeddings"}, "only ENGRAM_EMBEDDINGS_URL"),
        ({"ENGRAM_EMBEDDINGS_MODEL": "m"}, "only ENGRAM_EMBEDDINGS_MODEL"),
        (
            {"ENGRAM_RERANK_URL": "http://x/v1/rerank"},
            "ENGRAM_RERANK_URL and ENGRAM_RERANK_MODEL go together: only ENGRAM_RERANK_URL",
        ),
        (
            {"ENGRAM_RERANK_MODEL": "m", "ENGRAM_EMBEDDINGS_URL": "", "ENGRAM_RERANK_URL": " "},
            "ENGRAM_RERANK_URL and ENGRAM_RERANK_MODEL go together: only ENGRAM_RERANK_MODEL",
        ),
        ({"ENGRAM_RERANK_TIMEOUT_MS": "0"}, "ENGRAM_RERANK_TIMEOUT_MS"),
        ({"ENGRAM_EMBEDDER": "magic"}, "ENGRAM_EMBEDDER must be local, e5, remote or none"),
        ({"ENGRAM_EMBEDDINGS_ASYMMETRIC": "perhaps"}, "ENGRAM_EMBEDDINGS_ASYMMETRIC"),
        ({"ENGRAM_EMBEDDINGS_TIMEOUT_MS": "0"}, "ENGRAM_EMBEDDINGS_TIMEOUT_MS"),
        ({"ENGRAM_MAX_FACTS": "-1"}, "ENGRAM_MAX_FACTS"),
        ({"ENGRAM_VECTOR_INDEX_ABOVE": "many"}, "ENGRAM_VECTOR_INDEX_ABOVE"),
        ({"ENGRAM_MAX_AGE_MS": "1h"}, "ENGRAM_MAX_AGE_MS"),
        ({"ENGRAM_DB_URL": "mysql://h/db"}, "ENGRAM_DB_URL must be a postgresql:// URL"),
        (
            {"ENGRAM_DB_URL": "postgresql://h/db", "ENGRAM_DB_PATH": "/data/e.db"},
            "set one of ENGRAM_DB_PATH",
        ),
    ],
)
def test_bad_values_name_the_variable(env: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        Settings.from_env(env)


def test_a_database_url_names_the_store() -> None:
    settings = Settings.from_env({"ENGRAM_DB_URL": " postgresql://u@db:5432/engram "})
    assert settings.db_path == "postgresql://u@db:5432/engram"


def test_remote_without_an_endpoint_is_refused() -> None:
    with pytest.raises(InvalidInput, match="ENGRAM_EMBEDDINGS_URL"):
        Settings.from_env({"ENGRAM_EMBEDDER": "remote"}).make_embedder()


def test_the_rerank_variables_make_a_remote_reranker() -> None:
    assert Settings.from_env({}).make_reranker() is None  # no reranker unless asked for
    settings = Settings.from_env(
        {
            "ENGRAM_RERANK_URL": "http://127.0.0.1:9/v1/rerank",
            "ENGRAM_RERANK_MODEL": "rerank-m",
            "ENGRAM_RERANK_API_KEY": "rk",
            "ENGRAM_RERANK_TIMEOUT_MS": "2500",
        }
    )
    assert (settings.rerank_api_key, settings.rerank_timeout_ms) == ("rk", 2500)
    assert settings.embedder == "local"  # a reranker is no embedder
    reranker = settings.make_reranker()
    assert isinstance(reranker, RemoteReranker) and reranker.model == "rerank-m"
    reranker.close()


def test_a_bad_rerank_url_names_the_rerank_settings() -> None:
    settings = Settings.from_env(
        {"ENGRAM_RERANK_URL": "ftp://host/rerank", "ENGRAM_RERANK_MODEL": "m"}
    )
    with pytest.raises(InvalidInput, match="the rerank settings are invalid: url must be") as e:
        settings.make_reranker()
    assert e.value.hint is not None and "ENGRAM_RERANK_URL" in e.value.hint


def test_local_is_the_packaged_model() -> None:
    assert isinstance(Settings().make_embedder(), LocalEmbedder)


@pytest.fixture
def endpoint() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A real embeddings endpoint on loopback, answering with hashing vectors."""
    seen: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append(body)
            vectors = engram.HashingEmbedder(16).embed(body["input"], "passage")
            data = [{"index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]
            answer = json.dumps({"data": data}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1/embeddings", seen
    server.shutdown()
    server.server_close()


def test_the_cli_follows_the_environment(
    endpoint: tuple[str, list[dict[str, Any]]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url, seen = endpoint
    monkeypatch.setenv("ENGRAM_DB_PATH", str(tmp_path / "env.db"))
    monkeypatch.setenv("ENGRAM_EMBEDDINGS_URL", url)
    monkeypatch.setenv("ENGRAM_EMBEDDINGS_MODEL", "hashing-over-http")
    monkeypatch.setenv("ENGRAM_EMBEDDINGS_ASYMMETRIC", "true")
    monkeypatch.setenv("ENGRAM_MAX_FACTS", "2")
    for text in ("first fact", "second fact", "third fact"):
        assert main(["remember", text, "--resource", "u"]) == 0
    # one request per fact; opening a store that holds facts asks the model's dimension once
    assert [body["input"] for body in seen] == [
        ["first fact"],
        ["dimension probe"],
        ["second fact"],
        ["dimension probe"],
        ["third fact"],
    ]
    assert {body["input_type"] for body in seen} == {"passage"}
    assert main(["--json", "facts", "--resource", "u"]) == 0
    listed = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert [f["content"] for f in listed["facts"]] == ["third fact", "second fact"]
    assert main(["recall", "fact", "--resource", "u"]) == 0
    assert seen[-1]["input_type"] == "query"
    monkeypatch.setenv("ENGRAM_EMBEDDINGS_MODEL", "")
    assert main(["recall", "fact", "--resource", "u"]) == 2
    assert "error[invalid_input]: ENGRAM_EMBEDDINGS_URL and ENGRAM_EMBEDDINGS_MODEL" in (
        capsys.readouterr().err
    )


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("ENGRAM_PORT", "¹"),  # str.isdigit() says yes; int() says no
        ("ENGRAM_PORT", "٣"),  # int() reads it; a port is written in ASCII digits
        ("ENGRAM_PORT", "65536"),
        ("ENGRAM_MAX_FACTS", "9" * 5000),  # beyond int()'s digit limit
        ("ENGRAM_MAX_FACTS", str(2**70)),  # beyond what SQLite stores
        ("ENGRAM_MAX_AGE_MS", "-5"),
        ("ENGRAM_EMBEDDINGS_TIMEOUT_MS", "1e3"),
    ],
)
def test_numbers_are_ascii_integers_within_bounds(name: str, value: str) -> None:
    with pytest.raises(InvalidInput, match=f"{name} must be an integer from"):
        Settings.from_env({name: value})


@pytest.mark.parametrize("value", ["٣", "\uff13", "11", "nan", "-0.5"])
def test_a_strength_is_an_ascii_number_from_0_to_10(value: str) -> None:
    with pytest.raises(InvalidInput, match="ENGRAM_PRUNE_BELOW must be a number from 0 to 10"):
        Settings.from_env({"ENGRAM_PRUNE_BELOW": value})


def test_the_access_log_is_on_unless_turned_off() -> None:
    assert Settings.from_env({}).access_log is True
    assert Settings.from_env({"ENGRAM_ACCESS_LOG": "false"}).access_log is False
    with pytest.raises(InvalidInput, match="ENGRAM_ACCESS_LOG"):
        Settings.from_env({"ENGRAM_ACCESS_LOG": "verbose"})
