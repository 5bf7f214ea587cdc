"""The chat model: RemoteChat against a real chat endpoint served on 127.0.0.1 by the
test (what it sends, every way the endpoint fails), the ENGRAM_LLM_* settings that make
it, and the service and the command line that build it from them."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import engram
import stores
from chat_server import MODEL, ChatEndpoint, completion
from embeddings_server import Endpoint
from engram import InvalidInput, RemoteChat, ResourceRef, UpstreamFailure
from engram.api import create_app
from engram.cli.main import main
from engram.settings import Settings
from stores import Target


@pytest.fixture
def endpoint() -> Iterator[ChatEndpoint]:
    served = ChatEndpoint()
    yield served
    served.close()


def test_one_call_is_one_request_at_temperature_zero(endpoint: ChatEndpoint) -> None:
    endpoint.answers["the text"] = "the answer"
    assert endpoint.chat().complete("be brief", "the text") == "the answer"
    [seen] = endpoint.requests
    assert seen.path == "/v1/chat/completions"
    assert seen.body == {
        "model": MODEL,
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "the text"},
        ],
        "temperature": 0,
    }
    assert "authorization" not in seen.headers


MALFORMED: dict[str, tuple[int, bytes, str]] = {
    "HTTP 500": (500, b'{"error": "overloaded"}', 'answered HTTP 500: {"error": "overloaded"}'),
    "HTTP 429": (429, b"slow down", "answered HTTP 429: slow down"),
    "not JSON": (200, b"<html>oops</html>", "answer is not JSON"),
    "a list": (200, b"[]", "no 'choices' list"),
    "no choices": (200, b'{"choices": []}', "no 'choices' list with a choice in it"),
    "a choice without a message": (200, b'{"choices": [{"text": "hi"}]}', "no 'message'"),
    "a message that is a string": (200, b'{"choices": [{"message": "hi"}]}', "no 'message'"),
    "null content": (200, completion(None), "'content' is not a string: None"),
    "a list content": (200, completion([{"type": "text"}]), "not a string: [{'type': 'text'}]"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_failing_or_garbled_answer_is_upstream_failure(endpoint: ChatEndpoint, case: str) -> None:
    status, body, words = MALFORMED[case]
    endpoint.reply = lambda _: (status, body)
    with pytest.raises(UpstreamFailure, match=re.escape(words)):
        endpoint.chat().complete("system", "user")


def test_a_slow_endpoint_fails_at_the_timeout(endpoint: ChatEndpoint) -> None:
    endpoint.delay = 60.0  # far past the timeout, however loaded the machine
    started = time.monotonic()
    with pytest.raises(UpstreamFailure, match="did not answer within 1 s; nothing was written"):
        endpoint.chat(timeout=1.0).complete("system", "user")
    assert time.monotonic() - started < 10.0


def test_the_bearer_key_is_sent_and_never_shown(endpoint: ChatEndpoint) -> None:
    endpoint.chat(api_key="sk-chat-123").complete("system", "user")
    assert endpoint.requests[0].headers["authorization"] == "Bearer sk-chat-123"

    def echo_the_key(body: dict[str, Any]) -> tuple[int, bytes]:
        return 401, f"bad key {endpoint.requests[-1].headers['authorization']}".encode()

    endpoint.reply = echo_the_key
    with pytest.raises(UpstreamFailure) as caught:
        endpoint.chat(api_key="sk-chat-123").complete("system", "user")
    assert "HTTP 401" in str(caught.value) and "sk-chat-123" not in str(caught.value)
    assert caught.value.hint == "check the api key"


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"url": "ftp://host/v1/chat/completions"}, "url"),
        ({"model": ""}, "model"),
        ({"timeout": -1}, "timeout"),
        ({"api_key": "two words"}, "api_key"),
    ],
)
def test_bad_settings_are_invalid_input(settings: dict[str, Any], named: str) -> None:
    arguments: dict[str, Any] = {"url": "http://127.0.0.1:9/v1/chat/completions", "model": MODEL}
    with pytest.raises(InvalidInput) as caught:
        RemoteChat(**(arguments | settings))
    assert caught.value.message.startswith(named)


def test_open_refuses_what_is_no_chat_model(target: Target) -> None:
    with pytest.raises(InvalidInput, match="chat must be None or a ChatModel"):
        engram.open(target, embedder=None, chat="gpt")  # type: ignore[arg-type]


# -- settings ---------------------------------------------------------------------------
def test_the_llm_variables_make_a_remote_chat_model() -> None:
    assert Settings.from_env({}).make_chat() is None  # no chat model unless asked for
    settings = Settings.from_env(
        {
            "ENGRAM_LLM_URL": "http://127.0.0.1:9/v1/chat/completions",
            "ENGRAM_LLM_MODEL": "chat-m",
            "ENGRAM_LLM_API_KEY": "sk",
            "ENGRAM_LLM_TIMEOUT_MS": "2500",
        }
    )
    assert (settings.llm_api_key, settings.llm_timeout_ms) == ("sk", 2500)
    assert settings.embedder == "local"  # a chat model is no embedder
    chat = settings.make_chat()
    assert isinstance(chat, RemoteChat) and chat.model == "chat-m"
    chat.close()


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"ENGRAM_LLM_URL": "http://x/v1/chat/completions"},
            "ENGRAM_LLM_URL and ENGRAM_LLM_MODEL go together: only ENGRAM_LLM_URL",
        ),
        ({"ENGRAM_LLM_MODEL": "m"}, "go together: only ENGRAM_LLM_MODEL"),
        ({"ENGRAM_LLM_TIMEOUT_MS": "0"}, "ENGRAM_LLM_TIMEOUT_MS"),
    ],
)
def test_bad_llm_variables_name_the_variable(env: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        Settings.from_env(env)


def test_a_bad_llm_url_names_the_llm_settings() -> None:
    settings = Settings.from_env({"ENGRAM_LLM_URL": "ftp://host/chat", "ENGRAM_LLM_MODEL": "m"})
    with pytest.raises(InvalidInput, match="the LLM settings are invalid: url must be") as e:
        settings.make_chat()
    assert e.value.hint is not None and "ENGRAM_LLM_URL" in e.value.hint


# -- the edges build it -------------------------------------------------------------------
TEXT = "Ziggy was chasing the red ball."


def test_the_service_reads_with_the_chat_model_its_settings_name(
    target: Target, endpoint: ChatEndpoint, request: pytest.FixtureRequest
) -> None:
    endpoint.answers[TEXT] = {"entities": [{"name": "Ziggy", "type": "animal"}], "relations": []}
    embeddings = Endpoint()
    request.addfinalizer(embeddings.close)
    settings = Settings.from_env(
        {
            **stores.env(target),
            "ENGRAM_EMBEDDINGS_URL": embeddings.url,
            "ENGRAM_EMBEDDINGS_MODEL": "test-embed",
            "ENGRAM_LLM_URL": endpoint.url,
            "ENGRAM_LLM_MODEL": MODEL,
            "ENGRAM_LLM_API_KEY": "sk-service-7",
        }
    )
    with TestClient(create_app(settings)) as client:
        memory = client.app.state.memory  # type: ignore[attr-defined]
        assert memory.chat is not None and memory.chat.model == MODEL
        ref = ResourceRef("served")
        memory.remember(ref, TEXT)
        assert memory.graph.extract(ref, extractor="llm").entities_added == 1
    assert endpoint.requests[0].headers["authorization"] == "Bearer sk-service-7"


def test_the_command_line_builds_the_chat_model_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ENGRAM_DB_PATH", str(tmp_path / "cli.db"))
    monkeypatch.setenv("ENGRAM_LLM_URL", "ftp://host/v1/chat/completions")
    monkeypatch.setenv("ENGRAM_LLM_MODEL", MODEL)
    assert main(["facts", "--resource", "u", "--embedder", "none"]) == 2
    assert "error[invalid_input]: the LLM settings are invalid" in capsys.readouterr().err
