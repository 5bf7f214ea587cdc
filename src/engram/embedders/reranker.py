"""Any Cohere-style rerank endpoint as a reranker (Cohere's, Jina's, vLLM's ``/v1/rerank``
and the routes compatible with them).

One ``rerank`` call is one HTTP request: ``POST {url}`` with ``{"model", "query",
"documents": [...], "top_n": len(documents)}`` (``Authorization: Bearer`` when a key is
given), answered with ``{"results": [{"index": i, "relevance_score": s}, ...]}`` in any
order. The transport is :mod:`engram.embedders.endpoint`'s (``timeout`` bounds the whole
request, body included).

The answer is checked whole: one result per document, every index exactly once, every
score a finite number. Anything else, like every failure of the endpoint (unreachable,
timed out, non-2xx status, not JSON), is an :class:`UpstreamFailure`; messages never
contain the api key.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from engram.core.errors import InvalidInput, UpstreamFailure
from engram.embedders.endpoint import RemoteModel, parse_json, shown

NOUN = "the rerank endpoint"


class RemoteReranker(RemoteModel):
    """Relevance scores from a Cohere-style rerank endpoint; thread-safe, one client reused.

    ``url`` is the full endpoint (e.g. ``http://127.0.0.1:8080/v1/rerank``). ``api_key``,
    when non-empty, is sent as ``Authorization: Bearer``. Raises InvalidInput naming the
    bad setting.
    """

    def __init__(
        self, url: str, model: str, *, api_key: str | None = None, timeout: float = 30.0
    ) -> None:
        super().__init__(
            url,
            model,
            api_key=api_key,
            timeout=timeout,
            example="http://host:port/v1/rerank",
            noun=NOUN,
            failed="nothing was reranked",
        )

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        """The endpoint's relevance score of each text to ``query``, in the texts' order,
        all texts in one request; no request for no texts.

        Raises UpstreamFailure when the endpoint fails, times out or answers malformed.
        """
        if not isinstance(query, str) or isinstance(texts, str):
            raise InvalidInput("rerank takes a query and a list of texts")
        if not texts:
            return []
        payload: dict[str, Any] = {
            "model": self._model,
            "query": query,
            "documents": list(texts),
            "top_n": len(texts),
        }
        return _scores(self._endpoint.post(payload), len(texts))


def _scores(body: bytes, expected: int) -> list[float]:
    """One score per document, in the documents' order, from the checked answer."""
    document = parse_json(body, NOUN)
    results = document.get("results") if isinstance(document, dict) else None
    if not isinstance(results, list):
        raise UpstreamFailure(f"{NOUN}'s answer has no 'results' list")
    if len(results) != expected:
        raise UpstreamFailure(f"{NOUN} returned {len(results)} results for {expected} documents")
    by_index: dict[int, float] = {}
    for result in results:
        index, score = _result(result, expected)
        if index in by_index:
            raise UpstreamFailure(f"{NOUN} returned index {index} more than once")
        by_index[index] = score
    return [by_index[i] for i in range(expected)]  # n distinct indices in range: all there


def _result(result: object, expected: int) -> tuple[int, float]:
    """A result's index (a document's position) and its finite score."""
    if not isinstance(result, dict):
        raise UpstreamFailure(f"{NOUN} returned a result that is not an object")
    index = result.get("index")
    if type(index) is not int or not 0 <= index < expected:
        raise UpstreamFailure(
            f"{NOUN} returned a result whose 'index' is not a document's position "
            f"(0 to {expected - 1}): {shown(index)}"
        )
    score = result.get("relevance_score")
    if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
        raise UpstreamFailure(
            f"{NOUN} returned a 'relevance_score' that is not a finite number: {shown(score)}"
        )
    return index, float(score)
