"""The embeddings of concurrent calls, computed together: the service's embedder.

The service answers each request on a thread of its own, and each remember embeds one or
a few texts. One text at a time, the local model runs at ~80 sentences/s; a list of them,
sorted by length and run 16 at a time, at ~130 on LoCoMo turns and ~440 on short
sentences (BENCHMARKS.md, "Embedding throughput", "Writes at the embedder's limit").
:class:`CoalescingEmbedder` gives concurrent requests the list's speed: each call joins
a queue; whichever caller finds the model free takes everything waiting of the oldest
call's kind (at most ``max_batch`` texts, whole calls only, in arrival order), embeds it
in one call of the wrapped embedder, and hands every caller its own rows. While the model
runs, new calls wait and go together in the next batch: batches are as large as the load
makes them, with no timer and no waiting window, so a lone call is embedded at once.

There is no thread of its own: the caller that finds the model free embeds the batch (its
own call or not) and then, if its own call is still waiting, waits or takes the next turn.
So nothing is left running when the service stops, and nothing leaks when it is dropped.

A failure of the wrapped embedder fails every call of its batch with the same error (an
UpstreamFailure, for a provider): each of those requests stores nothing, as when it
embedded alone. A call of another kind or beyond the batch is not in it and is not failed.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from engram.core.documents.chunking import estimate_tokens
from engram.core.documents.models import DEFAULT_MAX_TOKENS
from engram.core.errors import Unavailable
from engram.core.ports import Embedder, EmbedKind, TokenCounter, Vectors

MAX_BATCH = 64
"""Texts per batch at most: 4 of the local model's sorted runs of 16. More waiting calls
than that are the next batch's; a single call of more texts is a batch of its own."""


@dataclass(slots=True, eq=False)
class _Call:
    """One caller's texts and, once answered (under the lock), its vectors or its error."""

    texts: tuple[str, ...]
    kind: EmbedKind
    answered: bool = False
    vectors: Vectors | None = None
    error: BaseException | None = field(default=None, repr=False)

    def outcome(self) -> Vectors:
        if self.error is not None:
            raise self.error
        assert self.vectors is not None  # answered without an error: vectors were set
        return self.vectors


class CoalescingEmbedder:
    """``inner``'s vectors, with the texts of concurrent calls embedded in one call of it.

    Thread-safe. ``inner`` is called by one thread at a time. Each call gets exactly the
    rows ``inner`` gives for its texts, in its order; kinds are never mixed in a batch.
    """

    def __init__(self, inner: Embedder, *, max_batch: int = MAX_BATCH) -> None:
        if max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        self._inner = inner
        self._max_batch = max_batch
        self._turn = threading.Condition()
        self._waiting: list[_Call] = []  # arrival order; a batch being embedded is not here
        self._running = False
        self._closed = False

    @property
    def model(self) -> str:
        return self._inner.model

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    @property
    def inner(self) -> Embedder:
        return self._inner

    @property
    def max_tokens(self) -> int:
        """The wrapped embedder's window (chunks of a document are cut to fit it)."""
        inner = self._inner
        return inner.max_tokens if isinstance(inner, TokenCounter) else DEFAULT_MAX_TOKENS

    def count_tokens(self, text: str) -> int:
        """The wrapped embedder's count, or the estimate it would get unwrapped: counting
        needs no turn at the model."""
        inner = self._inner
        if isinstance(inner, TokenCounter):
            return inner.count_tokens(text)
        return estimate_tokens(text)

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> Vectors:
        """One row per text, in ``texts``' order, as ``inner.embed(texts, kind)`` gives
        them; blocks until they are ready (embedding, perhaps, other callers' texts too).
        Raises what ``inner`` raised for the batch this call was in (UpstreamFailure for
        a provider's failure), and Unavailable once closed, or when closed while waiting."""
        call = _Call(tuple(texts), kind)
        with self._turn:
            if self._closed:
                raise _closed()
            self._waiting.append(call)
        while (batch := self._await_turn(call)) is not None:
            self._run(batch)
        return call.outcome()

    def close(self) -> None:
        """Fails every call not yet in a batch with Unavailable and refuses new ones; the
        batch being embedded, if any, still answers its callers. Idempotent."""
        with self._turn:
            self._closed = True
            for call in self._waiting:
                call.error, call.answered = _closed(), True
            self._waiting = []
            self._turn.notify_all()

    def _await_turn(self, call: _Call) -> list[_Call] | None:
        """None once ``call`` is answered; otherwise, when the model is free, the batch
        this thread is to embed (it holds the model until ``_run`` returns)."""
        with self._turn:
            while not call.answered and self._running:
                self._turn.wait()
            if call.answered:
                return None
            self._running = True
            return self._take()

    def _take(self) -> list[_Call]:
        """The oldest waiting call and, after it, the waiting calls of its kind that fit in
        ``max_batch`` texts, in arrival order (the first that does not fit ends it)."""
        kind = self._waiting[0].kind
        batch: list[_Call] = []
        left: list[_Call] = []
        size, full = 0, False
        for call in self._waiting:
            if (
                call.kind == kind
                and not full
                and (not batch or size + len(call.texts) <= self._max_batch)
            ):
                batch.append(call)
                size += len(call.texts)
            else:
                full = full or call.kind == kind
                left.append(call)
        self._waiting = left
        return batch

    def _run(self, batch: list[_Call]) -> None:
        """Embeds ``batch`` in one call of ``inner`` and answers each of its calls, then
        frees the model for whoever waits."""
        vectors: Vectors | None = None
        error: BaseException | None = None
        try:
            vectors = self._inner.embed([t for call in batch for t in call.texts], batch[0].kind)
        except BaseException as exc:  # every call of the batch fails with it, no one hangs
            error = exc
        with self._turn:
            start = 0
            for call in batch:
                if vectors is not None:
                    call.vectors = vectors[start : start + len(call.texts)].copy()
                    start += len(call.texts)
                call.error, call.answered = error, True
            self._running = False
            self._turn.notify_all()
        if error is not None and not isinstance(error, Exception):
            raise error  # an interrupt reaches the thread it interrupted too


def _closed() -> Unavailable:
    return Unavailable(
        "the service is shutting down: this request was not embedded and stored nothing",
        hint="retry once the service is back",
    )
