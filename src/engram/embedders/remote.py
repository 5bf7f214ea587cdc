"""Any OpenAI-compatible embeddings endpoint (``POST /v1/embeddings``) as an embedder.

One ``embed`` call is one HTTP request carrying every text, over the transport of
:mod:`engram.embedders.endpoint` (``timeout`` bounds the whole request, body included).

Every failure of the endpoint (unreachable, timed out, non-2xx status, malformed
answer) is an :class:`UpstreamFailure`; vectors of an unexpected width are an
:class:`EmbedderMismatch`. Messages never contain the api key.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from engram.core.errors import EmbedderMismatch, InvalidInput, UpstreamFailure
from engram.core.ports import EmbedKind, Vectors
from engram.embedders.endpoint import RemoteModel, parse_json

PROBE_TEXT = "dimension probe"
NOUN = "the embeddings endpoint"


class RemoteEmbedder(RemoteModel):
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
        super().__init__(
            url,
            model,
            api_key=api_key,
            timeout=timeout,
            example="http://host:port/v1/embeddings",
            noun=NOUN,
            failed="nothing was embedded",
        )
        self._dimension = _check_dimension(dimension)
        self._asymmetric = bool(asymmetric)
        self._lock = threading.Lock()  # guards _dimension
        self._probe_lock = threading.Lock()  # one probe at a time

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
        vectors = _parse(self._endpoint.post(payload), len(texts))
        self._settle_dimension(vectors.shape[1])
        return vectors

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
                hint=f"check that {self._endpoint.where()} serves model {self._model!r}",
            )


def _parse(body: bytes, expected: int) -> Vectors:
    """Rows ordered by ``index``, checked (count, width, finite, non-zero) and normalised."""
    document = parse_json(body, NOUN)
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
def _check_dimension(dimension: object) -> int | None:
    if dimension is None:
        return None
    if isinstance(dimension, bool) or not isinstance(dimension, int) or dimension <= 0:
        raise InvalidInput(f"dimension must be a positive integer, got {dimension!r}")
    return dimension
