"""One JSON POST to a remote model's HTTP endpoint: the transport that the remote embedder,
the remote reranker and the remote chat model share, and the checks of their settings.

``timeout`` bounds the whole request, reading the body included: each phase (connect,
write, pool, read) is given the time left, and a monotonic deadline is checked between
body chunks, so a server that answers slowly or drips its answer fails at about
``timeout``.

Every failure of the endpoint (unreachable, timed out, non-2xx status, an answer too
large) is an :class:`UpstreamFailure` naming the endpoint as ``noun`` says ("the
embeddings endpoint"); what the answer means is the caller's to check. Messages never
contain the api key.
"""

from __future__ import annotations

import contextlib
import json
import math
import socket
import threading
import time
from typing import Any, Self

import httpx

from engram.core.errors import InvalidInput, UpstreamFailure

MAX_BODY_BYTES = 256 << 20  # a larger answer is refused rather than held in memory
ERROR_EXCERPT_BYTES = 2048  # how much of a failed answer is read for the message
EXCERPT_CHARS = 200


class JSONEndpoint:
    """POSTs JSON to one URL and returns the answer's body; thread-safe, one client reused.

    ``api_key``, when given, is sent as ``Authorization: Bearer``. ``noun`` names the
    endpoint in messages ("the rerank endpoint"); ``failed`` says what did not happen when
    it times out ("nothing was embedded").
    """

    def __init__(
        self, url: str, *, api_key: str | None, timeout: float, noun: str, failed: str
    ) -> None:
        self._url = url
        self._api_key = api_key
        self._timeout = timeout
        self._noun = noun
        self._failed = failed
        self._client = httpx.Client(follow_redirects=False)

    def post(self, payload: dict[str, Any]) -> bytes:
        """The answer's body; raises UpstreamFailure on any failure or at the deadline."""
        deadline = time.monotonic() + self._timeout
        content = json.dumps(payload, ensure_ascii=True).encode("ascii")
        try:
            with self._client.stream(
                "POST",
                self._url,
                content=content,
                headers=self._headers(),
                timeout=httpx.Timeout(_left(deadline)),
            ) as response:
                # A server that stalls mid-body would otherwise hold a read for the whole
                # read timeout again; closing the response at the deadline ends it.
                watchdog = threading.Timer(_left(deadline), _cut, (response,))
                watchdog.daemon = True
                watchdog.start()
                try:
                    if not response.is_success:
                        body = self._read(response, deadline, ERROR_EXCERPT_BYTES, truncate=True)
                        raise self._status_failure(response.status_code, body)
                    return self._read(response, deadline, MAX_BODY_BYTES, truncate=False)
                finally:
                    watchdog.cancel()
        except _DeadlinePassed as exc:
            raise self._timed_out() from exc
        except httpx.TimeoutException as exc:
            raise self._timed_out() from exc
        except (httpx.HTTPError, httpx.StreamError) as exc:
            if time.monotonic() >= deadline:
                raise self._timed_out() from exc
            raise UpstreamFailure(
                self._redact(f"{self._noun} {self.where()} failed: {type(exc).__name__}: {exc}")
            ) from exc

    def where(self) -> str:
        """The URL as it may be shown: no credentials, no query."""
        url = httpx.URL(self._url)
        return str(url.copy_with(username=None, password=None, query=None))

    def close(self) -> None:
        """Closes the HTTP client and its connections."""
        self._client.close()

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def _read(
        self, response: httpx.Response, deadline: float, limit: int, *, truncate: bool
    ) -> bytes:
        """The body, checking the deadline between chunks; at most ``limit`` bytes."""
        chunks: list[bytes] = []
        size = 0
        _left(deadline)
        for chunk in response.iter_bytes():
            _left(deadline)
            chunks.append(chunk)
            size += len(chunk)
            if size >= limit:
                if truncate:
                    break
                raise UpstreamFailure(f"{self._noun}'s answer is larger than {limit >> 20} MiB")
        return b"".join(chunks)[:limit]

    def _status_failure(self, status: int, body: bytes) -> UpstreamFailure:
        excerpt = " ".join(body.decode("utf-8", "replace").split())[:EXCERPT_CHARS]
        hint = None
        if status in (401, 403):
            hint = "check the api key"
        elif status == 429 or status >= 500:
            hint = "the endpoint is overloaded or failing; try again later"
        return UpstreamFailure(
            self._redact(
                f"{self._noun} {self.where()} answered HTTP {status}: {excerpt or '(empty body)'}"
            ),
            hint=hint,
        )

    def _timed_out(self) -> UpstreamFailure:
        return UpstreamFailure(
            f"{self._noun} {self.where()} did not answer within {self._timeout:g} s; {self._failed}"
        )

    def _redact(self, message: str) -> str:
        return message.replace(self._api_key, "[api key]") if self._api_key else message


class RemoteModel:
    """What every model served over HTTP has: its name, its endpoint, and closing it.

    Raises InvalidInput naming the bad setting (``url``, ``model``, ``timeout``,
    ``api_key``); ``example`` shows a good url in the message.
    """

    def __init__(
        self,
        url: str,
        model: str,
        *,
        api_key: str | None,
        timeout: float,
        example: str,
        noun: str,
        failed: str,
    ) -> None:
        checked_url = check_url(url, example)
        self._model = check_model(model)
        self._endpoint = JSONEndpoint(
            checked_url,
            api_key=check_api_key(api_key),
            timeout=check_timeout(timeout),
            noun=noun,
            failed=failed,
        )

    @property
    def model(self) -> str:
        return self._model

    def close(self) -> None:
        """Closes the HTTP client and its connections."""
        self._endpoint.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._endpoint.where()!r}, {self._model!r})"


class _DeadlinePassed(Exception):
    """The whole-request deadline passed while the body was being read."""


def _cut(response: httpx.Response) -> None:
    """Ends a read blocked in another thread: shutting the socket down wakes it (a plain
    close does not), and the read then fails with an error."""
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def _left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise _DeadlinePassed
    return left


def parse_json(body: bytes, noun: str) -> object:
    """The answer as JSON; UpstreamFailure when it is not (bad UTF-8 included)."""
    try:
        document: object = json.loads(body)
    except (ValueError, RecursionError) as exc:  # bad UTF-8 and bad JSON are ValueErrors
        raise UpstreamFailure(f"{noun}'s answer is not JSON") from exc
    return document


def shown(value: object) -> str:
    """A value from an answer as a message shows it: short."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:40]}…"


# -- settings ----------------------------------------------------------------------
def check_url(url: object, example: str) -> str:
    """``url`` if it is an http(s) URL with a host; ``example`` shows one in the message."""
    if not isinstance(url, str):
        raise InvalidInput(f"url must be a string such as {example}")
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError, TypeError) as exc:
        raise InvalidInput(f"url is not a valid URL: {exc}") from exc
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise InvalidInput(f"url must be an http:// or https:// URL with a host, such as {example}")
    return url


def check_model(model: object) -> str:
    if not isinstance(model, str) or not model.strip():
        raise InvalidInput("model must be a non-empty model name")
    return model


def check_timeout(timeout: object) -> float:
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise InvalidInput(f"timeout must be a positive number of seconds, got {timeout!r}")
    return float(timeout)


def check_api_key(api_key: object) -> str | None:
    """None for no key (None or empty); a key must be printable ASCII without spaces."""
    if api_key is None or api_key == "":
        return None
    if not isinstance(api_key, str) or not all(33 <= ord(c) <= 126 for c in api_key):
        raise InvalidInput("api_key must be printable ASCII without spaces")
    return api_key
