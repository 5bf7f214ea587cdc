"""Any OpenAI-compatible chat endpoint (``POST /v1/chat/completions``: OpenAI's, vLLM's,
llama.cpp's server, Ollama's and the routes compatible with them) as a chat model.

One ``complete`` call is one HTTP request: ``{"model", "messages": [{"role": "system",
...}, {"role": "user", ...}], "temperature": 0}`` (``Authorization: Bearer`` when a key is
given), answered with ``{"choices": [{"message": {"content": "..."}}, ...]}``. Temperature
0 asks the same reading of the same words every time. The transport is
:mod:`engram.embedders.endpoint`'s (``timeout`` bounds the whole request, body included).

The answer is checked: ``choices`` a non-empty list whose first item holds a ``message``
object whose ``content`` is a string. Anything else, like every failure of the endpoint
(unreachable, timed out, non-2xx status, not JSON), is an :class:`UpstreamFailure`;
messages never contain the api key. What the content says is the caller's to check.
"""

from __future__ import annotations

from typing import Any

from engram.core.errors import InvalidInput, UpstreamFailure
from engram.embedders.endpoint import RemoteModel, parse_json, shown

NOUN = "the chat endpoint"


class RemoteChat(RemoteModel):
    """Answers from an OpenAI-compatible chat endpoint; thread-safe, one client reused.

    ``url`` is the full endpoint (e.g. ``http://127.0.0.1:8080/v1/chat/completions``).
    ``api_key``, when non-empty, is sent as ``Authorization: Bearer``. ``timeout`` (seconds)
    bounds one answer, which a model writes slowly: 60 unless told. Raises InvalidInput
    naming the bad setting.
    """

    def __init__(
        self, url: str, model: str, *, api_key: str | None = None, timeout: float = 60.0
    ) -> None:
        super().__init__(
            url,
            model,
            api_key=api_key,
            timeout=timeout,
            example="http://host:port/v1/chat/completions",
            noun=NOUN,
            failed="nothing was written",
        )

    def complete(self, system: str, user: str) -> str:
        """The model's answer to ``user`` under the ``system`` instructions, at temperature
        0. Raises UpstreamFailure when the endpoint fails, times out or answers malformed."""
        if not isinstance(system, str) or not isinstance(user, str):
            raise InvalidInput("complete takes a system text and a user text")
        payload: dict[str, Any] = {
            "model": self._model,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
            "temperature": 0,
        }
        return _content(self._endpoint.post(payload))


def _content(body: bytes) -> str:
    """The first choice's message content, from the checked answer."""
    document = parse_json(body, NOUN)
    choices = document.get("choices") if isinstance(document, dict) else None
    if not isinstance(choices, list) or not choices:
        raise UpstreamFailure(f"{NOUN}'s answer has no 'choices' list with a choice in it")
    first = choices[0]
    message = first.get("message") if isinstance(first, dict) else None
    if not isinstance(message, dict):
        raise UpstreamFailure(f"{NOUN}'s first choice has no 'message' object")
    content = message.get("content")
    if not isinstance(content, str):
        raise UpstreamFailure(
            f"{NOUN}'s message 'content' is not a string: {shown(content)}",
        )
    return content
