"""An OpenAI-compatible chat endpoint served on 127.0.0.1 by the tests themselves.

It is the embeddings endpoint's server (the same knobs: slow, failing, malformed, and
every request recorded) answering ``/v1/chat/completions`` with canned answers: the
answer whose fact text ends the user message (the longest such text), as the message's
content (a string as it is, anything else as JSON); a text with no answer gets
``{"entities": [], "relations": []}``, and one whose answer is a ``(status, body)`` pair
gets that reply instead.
"""

from __future__ import annotations

import json
from typing import Any

from embeddings_server import Endpoint, Reply
from engram import RemoteChat

MODEL = "test-chat"
NOTHING = {"entities": [], "relations": []}


class ChatEndpoint(Endpoint):
    """A chat server in a thread; ``answers`` maps a fact's text to its canned answer."""

    def __init__(self) -> None:
        super().__init__()
        self.url = self.url.replace("/v1/embeddings", "/v1/chat/completions")
        self.answers: dict[str, Any] = {}
        self.reply = self.complete
        self._chats: list[RemoteChat] = []

    def complete(self, body: dict[str, Any]) -> Reply:
        asked = body["messages"][-1]["content"]
        texts = sorted((t for t in self.answers if asked.endswith(t)), key=len, reverse=True)
        answer = self.answers[texts[0]] if texts else NOTHING
        if isinstance(answer, tuple):
            status, raw = answer
            return status, raw
        content = answer if isinstance(answer, str) else json.dumps(answer)
        return 200, completion(content)

    def chat(self, **settings: Any) -> RemoteChat:
        made = RemoteChat(self.url, MODEL, **settings)
        self._chats.append(made)
        return made

    def asked(self) -> list[str]:
        """The user messages received, in order."""
        return [seen.body["messages"][-1]["content"] for seen in self.requests]

    def close(self) -> None:
        for made in self._chats:
            made.close()
        super().close()


class ReadsNothing:
    """A chat model in-process that finds nothing in any fact: the llm extractor's routes
    answer 200 where the service under test would otherwise have no model (501)."""

    model = "reads-nothing"

    def complete(self, system: str, user: str) -> str:
        return json.dumps(NOTHING)


def completion(content: Any) -> bytes:
    """A chat completion whose one choice's message holds ``content``."""
    return json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": MODEL,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
        }
    ).encode()
