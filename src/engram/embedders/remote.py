"""Any OpenAI-compatible embeddings endpoint (``POST /v1/embeddings``) as an embedder.

One ``embed`` call is one HTTP request carrying every text. ``timeout`` bounds the
whole request, reading the body included: each phase (connect, write, pool, read) is
given the time left, and a monotonic deadline is checked between body chunks, so a
server that answers slowly or drips its answer fails at about ``timeout``.

Every failure of the endpoint (unreachable, timed out, non-2xx status, malformed
answer) is an :class:`UpstreamFailure`; vectors of an unexpected width are an
:class:`EmbedderMismatch`. Messages never contain the api key.
"""

from __future__ import annotations

import contextlib
import json
import math
import socket
import threading
import time
from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np
import numpy.typing as npt

from engram.core.errors import EmbedderMismatch, InvalidInput, UpstreamFailure
from engram.core.ports import EmbedKind, Vectors

PROBE_TEXT = "dimension probe"
MAX_BODY_BYTES = 256 << 20  # a larger answer is refused rather than held in memory
ERROR_EXCERPT_BYTES = 2048  # how much of a failed answer is read for the message
EXCERPT_CHARS = 200


class RemoteEmbedder:
    """Embeddings from an OpenAI-compatible endpoint; thread-safe, one client reused.

    ``url`` is the full endpoint (e.g. ``http://127.0.0.1:8080/v1/embeddings``).
    ``api_key``, when non-empty, is sent as ``Authorization: Bearer``. ``asymmetric``
    adds ``input_type`` (``"passage"`` or ``"query"``) for models that embed the two
    differently. ``dimension``, when given, is what the endpoint must return; when
    not, it is learned from the first answer (or one probe request) and kept.

    Raises InvalidInput naming the bad setting.
    """

    def __init__(
        self,
        url: str,
        model: str,
        *,
        api_key: str | None = None,
        asymmetric: bool = False,
        timeout: float = 30.0,
        dimension: int | None = None,
    ) -> None:
        self._url = _check_url(url)
        self._model = _check_model(model)
        self._timeout = _check_timeout(timeout)
        self._dimension = _check_dimension(dimension)
        self._api_key = _check_api_key(api_key)
        self._asymmetric = bool(asymmetric)
        self._lock = threading.Lock()  # guards _dimension
        self._probe_lock = threading.Lock()  # one probe at a time
        self._client = httpx.Client(follow_redirects=False)

    @property
    def model(self) -> str:
        return self._model

    @property
    def dimension(self) -> int:
        """The given dimension, else the learned one (one probe request, then cached).

        Raises UpstreamFailure when the probe fails; nothing is cached then.
        """
        with self._lock:
            known = self._dimension
        if known is not None:
            return known
        with self._probe_lock:
            with self._lock:
                known = self._dimension
            if known is None:
                known = self.embed([PROBE_TEXT], "passage").shape[1]
        return known

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> Vectors:
        """One L2-normalised float32 row per text, all texts in one request.

        No request for no texts. Raises UpstreamFailure when the endpoint fails, times
        out or answers malformed, and EmbedderMismatch when its vectors are not
        ``dimension`` wide.
        """
        if isinstance(texts, str) or kind not in ("passage", "query"):
            raise InvalidInput("embed takes a list of texts and kind 'passage' or 'query'")
        if not texts:
            with self._lock:
                return np.zeros((0, self._dimension or 0), np.float32)
        payload: dict[str, Any] = {"model": self._model, "input": list(texts)}
        if self._asymmetric:
            payload["input_type"] = kind
        vectors = _parse(self._post(payload), len(texts))
        self._settle_dimension(vectors.shape[1])
        return vectors

    def close(self) -> None:
        """Closes the HTTP client and its connections."""
        self._client.close()

    def __enter__(self) -> RemoteEmbedder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RemoteEmbedder({self._where()!r}, {self._model!r})"

    # -- internals ---------------------------------------------------------------
    def _settle_dimension(self, width: int) -> None:
        with self._lock:
            if self._dimension is None:
                self._dimension = width
            expected = self._dimension
        if width != expected:
            raise EmbedderMismatch(
                f"the embeddings endpoint returned {width}-dimensional vectors; "
                f"expected {expected}",
                hint=f"check that {self._where()} serves model {self._model!r}",
            )

    def _post(self, payload: dict[str, Any]) -> bytes:
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
                        body = _read(response, deadline, ERROR_EXCERPT_BYTES, truncate=True)
                        raise self._status_failure(response.status_code, body)
                    return _read(response, deadline, MAX_BODY_BYTES, truncate=False)
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
                self._redact(
                    f"the embeddings endpoint {self._where()} failed: {type(exc).__name__}: {exc}"
                )
            ) from exc

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    def _status_failure(self, status: int, body: bytes) -> UpstreamFailure:
        excerpt = " ".join(body.decode("utf-8", "replace").split())[:EXCERPT_CHARS]
        hint = None
        if status in (401, 403):
            hint = "check the api key"
        elif status == 429 or status >= 500:
            hint = "the endpoint is overloaded or failing; try again later"
        return UpstreamFailure(
            self._redact(
                f"the embeddings endpoint {self._where()} answered HTTP {status}: "
                f"{excerpt or '(empty body)'}"
            ),
            hint=hint,
        )

    def _timed_out(self) -> UpstreamFailure:
        return UpstreamFailure(
            f"the embeddings endpoint {self._where()} did not answer within "
            f"{self._timeout:g} s; nothing was embedded"
        )

    def _where(self) -> str:
        url = httpx.URL(self._url)
        return str(url.copy_with(username=None, password=None, query=None))

    def _redact(self, message: str) -> str:
        return message.replace(self._api_key, "[api key]") if self._api_key else message


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


def _read(response: httpx.Response, deadline: float, limit: int, *, truncate: bool) -> bytes:
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
            raise UpstreamFailure(
                f"the embeddings endpoint's answer is larger than {limit >> 20} MiB"
            )
    return b"".join(chunks)[:limit]


def _parse(body: bytes, expected: int) -> Vectors:
    """Rows ordered by ``index``, checked (count, width, finite, non-zero) and normalised."""
    try:
        document = json.loads(body)
    except (ValueError, RecursionError) as exc:  # bad UTF-8 and bad JSON are ValueErrors
        raise UpstreamFailure("the embeddings endpoint's answer is not JSON") from exc
    rows = document.get("data") if isinstance(document, dict) else None
    if not isinstance(rows, list):
        raise UpstreamFailure("the embeddings endpoint's answer has no 'data' list")
    if len(rows) != expected:
        raise UpstreamFailure(
            f"the embeddings endpoint returned {len(rows)} embeddings for {expected} texts"
        )
    matrix = _matrix(_ordered(rows))
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if not np.all(norms > 0):
        raise UpstreamFailure("the embeddings endpoint returned an all-zero embedding")
    unit: Vectors = (matrix / norms).astype(np.float32)
    return unit


def _ordered(rows: list[Any]) -> list[Any]:
    """The rows' embeddings in ``index`` order (given order when no row has an index)."""
    if not all(isinstance(row, dict) and "embedding" in row for row in rows):
        raise UpstreamFailure("the embeddings endpoint returned a row without 'embedding'")
    if all("index" not in row for row in rows):
        return [row["embedding"] for row in rows]
    indices = [row.get("index") for row in rows]
    if sorted(i for i in indices if type(i) is int) != list(range(len(rows))):
        raise UpstreamFailure(
            "the embeddings endpoint's 'index' values are not each input's position once"
        )
    by_index = {row["index"]: row["embedding"] for row in rows}
    return [by_index[i] for i in range(len(rows))]


def _matrix(embeddings: list[Any]) -> npt.NDArray[np.float64]:
    """One float64 row per embedding; all rows numeric, finite and equally wide."""
    if not all(isinstance(e, list) and e for e in embeddings):
        raise UpstreamFailure(
            "the embeddings endpoint returned an embedding that is not a non-empty list of numbers"
        )
    widths = {len(e) for e in embeddings}
    if len(widths) != 1:
        raise UpstreamFailure(
            f"the embeddings endpoint returned vectors of different lengths {sorted(widths)}"
        )
    matrix = np.array(embeddings)
    if matrix.ndim != 2 or matrix.dtype.kind not in "fiu":
        raise UpstreamFailure("the embeddings endpoint returned non-numeric vector values")
    matrix = matrix.astype(np.float64)
    if not np.all(np.isfinite(matrix)):
        raise UpstreamFailure("the embeddings endpoint returned non-finite vector values")
    return matrix


# -- settings ----------------------------------------------------------------------
def _check_url(url: object) -> str:
    if not isinstance(url, str):
        raise InvalidInput("url must be a string such as http://host:port/v1/embeddings")
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError, TypeError) as exc:
        raise InvalidInput(f"url is not a valid URL: {exc}") from exc
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise InvalidInput(
            "url must be an http:// or https:// URL with a host, "
            "such as http://host:port/v1/embeddings"
        )
    return url


def _check_model(model: object) -> str:
    if not isinstance(model, str) or not model.strip():
        raise InvalidInput("model must be a non-empty model name")
    return model


def _check_timeout(timeout: object) -> float:
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise InvalidInput(f"timeout must be a positive number of seconds, got {timeout!r}")
    return float(timeout)


def _check_dimension(dimension: object) -> int | None:
    if dimension is None:
        return None
    if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension <= 0:
        raise InvalidInput(f"dimension must be a positive integer, got {dimension!r}")
    return dimension


def _check_api_key(api_key: object) -> str | None:
    if api_key is None or api_key == "":
        return None
    if not isinstance(api_key, str) or not all(33 <= ord(c) <= 126 for c in api_key):
        raise InvalidInput("api_key must be printable ASCII without spaces")
    return api_key
