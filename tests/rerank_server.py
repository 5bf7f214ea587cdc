"""A Cohere-style rerank endpoint served on 127.0.0.1 by the tests themselves.

It is the embeddings endpoint's server (the same knobs: slow, failing, malformed, and
every request recorded) answering ``/v1/rerank``: each document's score is what
``scorer(query, document)`` says (by default the share of the query's words the document
holds), results listed best first as the real services list them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from embeddings_server import Endpoint, Reply
from engram import RemoteReranker

MODEL = "test-rerank"
_WORD = re.compile(r"\w+")


def overlap(query: str, document: str) -> float:
    """The share of the query's words found in the document."""
    wanted = set(_WORD.findall(query.lower()))
    return len(wanted & set(_WORD.findall(document.lower()))) / max(1, len(wanted))


class RerankEndpoint(Endpoint):
    """A rerank server in a thread; ``scorer`` decides each document's score."""

    def __init__(self) -> None:
        super().__init__()
        self.url = self.url.replace("/v1/embeddings", "/v1/rerank")
        self.scorer: Callable[[str, str], float] = overlap
        self.reply = self.scores
        self._rerankers: list[RemoteReranker] = []

    def scores(self, body: dict[str, Any]) -> Reply:
        """``{"results": [{"index", "relevance_score"}]}``, best first."""
        results = [
            {"index": i, "relevance_score": self.scorer(body["query"], document)}
            for i, document in enumerate(body["documents"])
        ]
        results.sort(key=lambda result: -result["relevance_score"])
        return 200, json.dumps({"model": MODEL, "results": results}).encode()

    def reranker(self, **settings: Any) -> RemoteReranker:
        made = RemoteReranker(self.url, MODEL, **settings)
        self._rerankers.append(made)
        return made

    def documents(self) -> list[list[str]]:
        return [seen.body["documents"] for seen in self.requests]

    def close(self) -> None:
        for made in self._rerankers:
            made.close()
        super().close()
