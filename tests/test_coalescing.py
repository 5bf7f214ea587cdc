"""CoalescingEmbedder: concurrent calls embedded together, each caller its own vectors.

The real local model where the vectors matter; the small embedders of ``fake_embedders``
where a batch must be held open (a gate), fail, or tell the kinds apart.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import engram
from engram.core.documents import chunking
from engram.core.ports import EmbedKind
from engram.embedders.coalescing import CoalescingEmbedder
from engram.embedders.hashing import HashingEmbedder
from engram.embedders.local import LocalEmbedder
from fake_embedders import WAIT, FailingPassages, Recorded, Sided, queued, until


def _together(work: Callable[[int], object], count: int) -> list[object]:
    """``work(i)`` for i in range(count), each on a thread of its own, started together;
    each result, or the exception it raised."""
    start = threading.Barrier(count)

    def one(i: int) -> object:
        start.wait(WAIT)
        try:
            return work(i)
        except Exception as exc:
            return exc

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(one, range(count)))


def _queued_behind_a_held_call(
    coalescer: CoalescingEmbedder, recorded: Recorded, first: tuple[list[str], EmbedKind]
) -> threading.Thread:
    """A call of ``first`` held inside the embedder (the gate is closed), so that calls
    made now wait for the next batch."""
    recorded.gate.clear()
    held = threading.Thread(target=coalescer.embed, args=first)
    held.start()
    assert recorded.entered.wait(WAIT)
    return held


def test_each_caller_gets_exactly_its_own_vectors(local_embedder: LocalEmbedder) -> None:
    recorded = Recorded(local_embedder)
    coalescer = CoalescingEmbedder(recorded)
    texts = [
        [f"{name} moved the {thing} meeting to {day}" for name in names]
        for names, thing, day in zip(
            (["Maria"], ["Tom", "Aisha"], ["Kenji", "Lucas", "Priya"]) * 8,
            ("budget", "design review", "dentist", "flight", "lease", "piano lesson") * 4,
            ("Monday", "Tuesday", "Friday", "the weekend") * 6,
            strict=False,
        )
    ]
    got = _together(lambda i: coalescer.embed(texts[i], "passage"), len(texts))
    for mine, vectors in zip(texts, got, strict=True):
        assert isinstance(vectors, np.ndarray) and vectors.shape == (len(mine), 384)
        np.testing.assert_allclose(vectors, local_embedder.embed(mine, "passage"), atol=1e-6)
    assert sum(len(call[1]) for call in recorded.calls) == sum(map(len, texts))
    assert len(recorded.calls) < len(texts)  # some calls were embedded together


def test_the_calls_that_waited_are_one_batch_in_arrival_order() -> None:
    recorded = Recorded(HashingEmbedder(32))
    coalescer = CoalescingEmbedder(recorded)
    held = _queued_behind_a_held_call(coalescer, recorded, (["first"], "passage"))
    waiting = [
        threading.Thread(target=coalescer.embed, args=([f"t{i}"], "passage")) for i in range(6)
    ]
    for thread in waiting:
        thread.start()
    until(lambda: queued(coalescer) == 6)
    recorded.gate.set()
    for thread in [held, *waiting]:
        thread.join(WAIT)
    assert [call[1] for call in recorded.calls] == [("first",), tuple(f"t{i}" for i in range(6))]


def test_kinds_are_never_mixed() -> None:
    inner = Sided(32)
    recorded = Recorded(inner)
    coalescer = CoalescingEmbedder(recorded)
    held = _queued_behind_a_held_call(coalescer, recorded, (["held"], "query"))
    kinds: list[EmbedKind] = ["passage", "query"] * 6
    answers: dict[int, object] = {}

    def call(i: int) -> None:
        answers[i] = coalescer.embed([f"text {i}", f"more {i}"], kinds[i])

    threads = [threading.Thread(target=call, args=(i,)) for i in range(len(kinds))]
    for thread in threads:
        thread.start()
    until(lambda: queued(coalescer) == len(kinds))
    recorded.gate.set()
    for thread in [held, *threads]:
        thread.join(WAIT)
    for i, kind in enumerate(kinds):
        np.testing.assert_array_equal(answers[i], inner.embed([f"text {i}", f"more {i}"], kind))
    batches = recorded.calls[1:]
    assert [kind for kind, _ in batches] == ["passage", "query"]  # the oldest kind first
    for kind, texts in batches:
        assert {kinds[int(text.split()[1])] for text in texts} == {kind}


def test_a_batch_holds_at_most_max_batch_texts_and_a_big_call_goes_whole() -> None:
    recorded = Recorded(HashingEmbedder(32))
    coalescer = CoalescingEmbedder(recorded, max_batch=4)
    held = _queued_behind_a_held_call(coalescer, recorded, (["held"], "passage"))
    sizes = [3, 3, 1, 6]
    threads = [
        threading.Thread(target=coalescer.embed, args=([f"{n}-{j}" for j in range(n)], "passage"))
        for n in sizes
    ]
    for count, thread in enumerate(threads, 1):
        thread.start()
        until(lambda count=count: queued(coalescer) == count)  # in this order
    recorded.gate.set()
    for thread in [held, *threads]:
        thread.join(WAIT)
    # 3 fits; the next 3 does not, and ends the batch (the 1 behind it keeps its turn)
    assert [len(texts) for _, texts in recorded.calls] == [1, 3, 4, 6]


def test_a_failure_fails_every_caller_of_the_batch_and_no_other() -> None:
    recorded = Recorded(FailingPassages(32))
    coalescer = CoalescingEmbedder(recorded)
    held = _queued_behind_a_held_call(coalescer, recorded, (["held"], "query"))
    kinds: list[EmbedKind] = ["passage"] * 5 + ["query"]
    answers: dict[int, object] = {}

    def call(i: int) -> None:
        try:
            answers[i] = coalescer.embed([f"text {i}"], kinds[i])
        except engram.EngramError as exc:
            answers[i] = exc

    threads = [threading.Thread(target=call, args=(i,)) for i in range(len(kinds))]
    for thread in threads:
        thread.start()
    until(lambda: queued(coalescer) == len(kinds))
    recorded.gate.set()
    for thread in [held, *threads]:
        thread.join(WAIT)
    assert [kind for kind, _ in recorded.calls] == ["query", "passage", "query"]
    failures = [answers[i] for i in range(5)]
    assert all(isinstance(failure, engram.UpstreamFailure) for failure in failures)
    assert {str(failure) for failure in failures} == {"the embeddings provider answered HTTP 500"}
    assert isinstance(answers[5], np.ndarray)  # the query of the next batch is embedded
    with pytest.raises(engram.UpstreamFailure):  # a later call asks the provider again
        coalescer.embed(["again"], "passage")
    assert recorded.calls[-1] == ("passage", ("again",))


def test_closing_fails_the_waiting_calls_and_lets_the_running_batch_finish() -> None:
    recorded = Recorded(HashingEmbedder(32))
    coalescer = CoalescingEmbedder(recorded)
    answers: dict[str, object] = {}

    def call(name: str) -> None:
        try:
            answers[name] = coalescer.embed([name], "passage")
        except engram.Unavailable as exc:
            answers[name] = exc

    recorded.gate.clear()
    running = threading.Thread(target=call, args=("running",))
    running.start()
    assert recorded.entered.wait(WAIT)
    waiting = [threading.Thread(target=call, args=(f"w{i}",)) for i in range(3)]
    for thread in waiting:
        thread.start()
    until(lambda: queued(coalescer) == 3)
    coalescer.close()
    for thread in waiting:
        thread.join(WAIT)
        assert not thread.is_alive()  # answered while the model is still busy
    assert all(isinstance(answers[f"w{i}"], engram.Unavailable) for i in range(3))
    assert "shutting down" in str(answers["w0"])
    recorded.gate.set()
    running.join(WAIT)
    assert isinstance(answers["running"], np.ndarray)
    with pytest.raises(engram.Unavailable):
        coalescer.embed(["late"], "passage")
    assert [texts for _, texts in recorded.calls] == [("running",)]


def test_it_is_the_wrapped_model() -> None:
    coalescer = CoalescingEmbedder(HashingEmbedder(48))
    assert (coalescer.model, coalescer.dimension) == ("hashing-48", 48)
    assert coalescer.embed([], "query").shape == (0, 48)


def test_it_counts_tokens_as_the_embedder_it_wraps(local_embedder: LocalEmbedder) -> None:
    text = "東京 and antidisestablishmentarianism, counted."
    wrapped = CoalescingEmbedder(local_embedder)
    assert (wrapped.max_tokens, wrapped.count_tokens(text)) == (
        256,
        local_embedder.count_tokens(text),
    )
    plain = CoalescingEmbedder(HashingEmbedder(8))
    assert (plain.max_tokens, plain.count_tokens(text)) == (256, chunking.estimate_tokens(text))
