"""Embedders for tests about how embedding is called: one that records its calls and
can hold one open, one that tells passages from queries, one that fails like a provider."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

import engram
from engram.core.ports import Embedder, EmbedKind, Vectors
from engram.embedders.coalescing import CoalescingEmbedder
from engram.embedders.hashing import HashingEmbedder

WAIT = 60  # seconds: a bound on waits that end at once when the code is right


class Recorded:
    """``inner`` with a record of every call (its kind and texts), and a gate: while it is
    closed, a call waits inside the embedder, so the calls after it queue behind it."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.calls: list[tuple[EmbedKind, tuple[str, ...]]] = []
        self.entered = threading.Event()
        self.gate = threading.Event()
        self.gate.set()

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> Vectors:
        self.calls.append((kind, tuple(texts)))
        self.entered.set()
        assert self.gate.wait(WAIT)
        return self.inner.embed(texts, kind)


class Sided(HashingEmbedder):
    """Hashing vectors for passages, the opposite vectors for queries: a query embedded as
    a passage (or the reverse) comes back wrong."""

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> Vectors:
        vectors = super().embed(texts, kind)
        return -vectors if kind == "query" else vectors


class FailingPassages(HashingEmbedder):
    """Fails every passage call as a provider would; embeds queries."""

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> Vectors:
        if kind == "passage":
            raise engram.UpstreamFailure("the embeddings provider answered HTTP 500")
        return super().embed(texts, kind)


def until(condition: Callable[[], bool]) -> None:
    """Returns once ``condition`` (which other threads make true) holds: checked every
    millisecond, for at most ``WAIT`` seconds."""
    deadline = time.monotonic() + WAIT
    tick = threading.Event()  # never set: a wait that cannot end early
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("the condition never held")
        tick.wait(0.001)


def queued(coalescer: CoalescingEmbedder) -> int:
    """How many calls wait for a batch of ``coalescer`` (the batch being embedded aside)."""
    return len(coalescer._waiting)
