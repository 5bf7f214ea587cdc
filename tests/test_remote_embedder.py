"""RemoteEmbedder against a real embeddings endpoint served on 127.0.0.1 by the test.

The endpoint computes its vectors with HashingEmbedder, records every request it gets,
and can be told to answer slowly, drip its answer, fail, or answer malformed.
"""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import engram
from embeddings_server import MODEL, Endpoint, Reply
from engram import (
    EmbedderMismatch,
    HashingEmbedder,
    InvalidInput,
    RemoteEmbedder,
    ResourceRef,
    UpstreamFailure,
)
from stores import Target

REF = ResourceRef("user-1")


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    served = Endpoint()
    yield served
    served.close()


def assert_nothing_stored(mem: engram.Memory) -> None:
    assert mem.count(REF) == 0
    assert mem.facts(REF).facts == []


TEXTS = [
    "the user upgraded to the pro plan",
    "favourite colour is green",
    "lives in a small coastal town",
    "prefers answers in french",
    "allergic to peanuts",
]


# -- the happy path through the library --------------------------------------------
def test_remember_many_is_one_request_and_recall_works(endpoint: Endpoint, target: Target) -> None:
    with engram.open(target, embedder=endpoint.embedder()) as mem:
        assert endpoint.inputs() == []  # an empty store needs nothing of the model yet
        facts = mem.remember_many(REF, TEXTS)
        assert endpoint.inputs() == [TEXTS]
        assert endpoint.requests[0].path == "/v1/embeddings"
        assert endpoint.requests[0].body["model"] == MODEL
        hits = mem.recall(REF, "which plan did the user upgraded to", mode="vector")
        assert hits[0].fact.id == facts[0].id
        assert mem.count(REF) == 5
        assert len(endpoint.requests) == 2  # the batch and the query: the width came along
    with engram.open(target, embedder=endpoint.embedder()):
        assert endpoint.inputs()[-1] == ["dimension probe"]  # a store with facts checks it


def test_rows_are_ordered_by_index_and_normalised(endpoint: Endpoint) -> None:
    vectors = endpoint.embedder(dimension=16).embed(TEXTS, "passage")
    assert vectors.dtype == np.float32
    assert vectors.shape == (5, 16)
    np.testing.assert_allclose(vectors, HashingEmbedder(16).embed(TEXTS, "passage"), atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


def test_unnormalised_vectors_come_back_unit_length(endpoint: Endpoint) -> None:
    endpoint.reply = lambda body: (
        200,
        json.dumps({"data": [{"index": 0, "embedding": [3.0, 4.0]}]}).encode(),
    )
    vectors = endpoint.embedder().embed(["x"], "query")
    np.testing.assert_allclose(vectors, [[0.6, 0.8]], atol=1e-6)


def test_embed_nothing_makes_no_request(endpoint: Endpoint) -> None:
    assert endpoint.embedder(dimension=16).embed([], "passage").shape == (0, 16)
    assert endpoint.embedder().embed([], "query").shape[0] == 0
    assert endpoint.requests == []


def test_dimension_is_probed_once_across_threads(endpoint: Endpoint) -> None:
    endpoint.delay = 0.2
    embedder = endpoint.embedder()
    seen: list[int] = []
    threads = [threading.Thread(target=lambda: seen.append(embedder.dimension)) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == [16] * 6
    assert len(endpoint.requests) == 1
    assert embedder.model == MODEL


# -- headers and request shape ------------------------------------------------------
def test_bearer_key_is_sent_only_when_given(endpoint: Endpoint) -> None:
    endpoint.embedder(api_key="sk-test-123", dimension=16).embed(["a"], "passage")
    endpoint.embedder(dimension=16).embed(["b"], "passage")
    endpoint.embedder(api_key="", dimension=16).embed(["c"], "passage")
    with_key, without, empty = (seen.headers for seen in endpoint.requests)
    assert with_key["authorization"] == "Bearer sk-test-123"
    assert "authorization" not in without
    assert "authorization" not in empty


@pytest.mark.parametrize("asymmetric", [True, False])
def test_input_type_follows_kind_only_when_asymmetric(
    endpoint: Endpoint, target: Target, asymmetric: bool
) -> None:
    embedder = endpoint.embedder(asymmetric=asymmetric, dimension=16)
    with engram.open(target, embedder=embedder) as mem:
        mem.remember(REF, "likes tea")
        mem.recall(REF, "tea", mode="vector")
    passage, query = (seen.body for seen in endpoint.requests)
    if asymmetric:
        assert (passage["input_type"], query["input_type"]) == ("passage", "query")
    else:
        assert "input_type" not in passage
        assert "input_type" not in query


# -- time limits --------------------------------------------------------------------
# The upper bounds below leave seconds for a loaded machine: a deadline not kept overruns
# them by far more (the slow server answers after a minute, the drip lasts minutes).
def test_slow_server_times_out_and_stores_nothing(endpoint: Endpoint, target: Target) -> None:
    endpoint.delay = 60.0
    with engram.open(target, embedder=endpoint.embedder(timeout=1.0, dimension=16)) as mem:
        started = time.monotonic()
        with pytest.raises(UpstreamFailure, match="did not answer within 1 s"):
            mem.remember(REF, "upgraded to pro")
        elapsed = time.monotonic() - started
        assert 0.9 <= elapsed < 10.0
        assert_nothing_stored(mem)


def test_dripping_server_fails_at_the_deadline(endpoint: Endpoint, target: Target) -> None:
    endpoint.drip = 0.2  # every byte well within any read timeout; the body never ends
    with engram.open(target, embedder=endpoint.embedder(timeout=1.0, dimension=16)) as mem:
        started = time.monotonic()
        with pytest.raises(UpstreamFailure, match="did not answer within 1 s"):
            mem.remember_many(REF, TEXTS)
        elapsed = time.monotonic() - started
        assert 0.9 <= elapsed < 10.0
        assert_nothing_stored(mem)


def test_late_answer_that_stalls_fails_at_the_deadline(endpoint: Endpoint, target: Target) -> None:
    endpoint.delay = 2.8  # headers late, then one byte, then silence
    endpoint.stall = 60.0
    with engram.open(target, embedder=endpoint.embedder(timeout=4.0, dimension=16)) as mem:
        started = time.monotonic()
        with pytest.raises(UpstreamFailure, match="did not answer within 4 s"):
            mem.remember(REF, "upgraded to pro")
        # one timeout (4 s), not one per phase (the late headers plus a whole read timeout
        # again would be about 6.8 s); the margin between is for a loaded machine
        assert time.monotonic() - started < 6.0
        assert_nothing_stored(mem)


# -- failures -----------------------------------------------------------------------
@pytest.mark.parametrize("status", [500, 429, 401])
def test_error_status_is_upstream_failure_without_the_key(
    endpoint: Endpoint, target: Target, status: int
) -> None:
    def echo_the_key(body: dict[str, Any]) -> Reply:
        key = endpoint.requests[-1].headers["authorization"]
        return status, json.dumps({"error": f"nope, {status} for {key}"}).encode()

    endpoint.reply = echo_the_key
    embedder = endpoint.embedder(api_key="sk-secret-999", dimension=16)
    with engram.open(target, embedder=embedder) as mem:
        with pytest.raises(UpstreamFailure) as caught:
            mem.remember(REF, "upgraded to pro")
        assert_nothing_stored(mem)
    message = str(caught.value)
    assert f"HTTP {status}" in message
    assert "nope" in message  # an excerpt of the body
    assert "sk-secret-999" not in message
    assert caught.value.__cause__ is None or "sk-secret-999" not in str(caught.value.__cause__)


def test_unreachable_endpoint_is_upstream_failure() -> None:
    with socket.socket() as closed:  # bound, never listening: no other process can answer
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        embedder = RemoteEmbedder(f"http://127.0.0.1:{port}/v1/embeddings", MODEL, timeout=30)
        try:
            with pytest.raises(UpstreamFailure, match="failed: ConnectError"):
                embedder.embed(["a"], "passage")
        finally:
            embedder.close()


MALFORMED: dict[str, bytes] = {
    "not json": b"<html>oops</html>",
    "no data": b'{"object": "list"}',
    "too few rows": b'{"data": [{"index": 0, "embedding": [1.0, 0.0]}]}',
    "too many rows": json.dumps(
        {"data": [{"index": i, "embedding": [1.0, 0.0]} for i in range(3)]}
    ).encode(),
    "nan": b'{"data": [{"index": 0, "embedding": [NaN, 1.0]},'
    b' {"index": 1, "embedding": [1.0, 0.0]}]}',
    "ragged": b'{"data": [{"index": 0, "embedding": [1.0]},'
    b' {"index": 1, "embedding": [1.0, 0.0]}]}',
    "strings": b'{"data": [{"index": 0, "embedding": ["1", "0"]},'
    b' {"index": 1, "embedding": ["1", "0"]}]}',
    "repeated index": b'{"data": [{"index": 0, "embedding": [1.0, 0.0]},'
    b' {"index": 0, "embedding": [0.0, 1.0]}]}',
    "zero vector": b'{"data": [{"index": 0, "embedding": [0.0, 0.0]},'
    b' {"index": 1, "embedding": [1.0, 0.0]}]}',
}
EXPECTED_WORDS = {
    "not json": "not JSON",
    "no data": "no 'data'",
    "too few rows": "1 embeddings for 2",
    "too many rows": "3 embeddings for 2",
    "nan": "non-finite",
    "ragged": "different lengths",
    "strings": "non-numeric",
    "repeated index": "'index'",
    "zero vector": "all-zero",
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_answer_is_upstream_failure(endpoint: Endpoint, case: str) -> None:
    endpoint.reply = lambda body: (200, MALFORMED[case])
    with pytest.raises(UpstreamFailure, match=re.escape(EXPECTED_WORDS[case])):
        endpoint.embedder().embed(["one", "two"], "passage")


# -- dimensions ---------------------------------------------------------------------
def test_endpoint_now_wider_than_the_store_is_refused_at_open(
    endpoint: Endpoint, target: Target
) -> None:
    path = target
    with engram.open(path, embedder=endpoint.embedder()) as mem:
        mem.remember(REF, "upgraded to pro")
    endpoint.width = 32
    with pytest.raises(EmbedderMismatch) as caught:
        engram.open(path, embedder=endpoint.embedder())
    assert re.search(r"\b16\b", caught.value.message)
    assert re.search(r"\b32\b", caught.value.message)
    endpoint.width = 16
    with engram.open(path, embedder=endpoint.embedder()) as mem:  # still a 16-wide store
        assert [f.content for f in mem.facts(REF).facts] == ["upgraded to pro"]


def test_explicit_dimension_refuses_wider_vectors(endpoint: Endpoint, target: Target) -> None:
    endpoint.width = 32
    with engram.open(target, embedder=endpoint.embedder(dimension=16)) as mem:
        assert endpoint.requests == []  # an explicit dimension needs no probe
        with pytest.raises(EmbedderMismatch) as caught:
            mem.remember(REF, "upgraded to pro")
        assert_nothing_stored(mem)
    assert caught.value.message == (
        "the embeddings endpoint returned 32-dimensional vectors; expected 16"
    )


# -- settings -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"url": "ftp://host/v1/embeddings"}, "url"),
        ({"url": "http:///v1/embeddings"}, "url"),
        ({"url": "not a url"}, "url"),
        ({"url": 42}, "url"),
        ({"model": ""}, "model"),
        ({"model": "   "}, "model"),
        ({"timeout": 0}, "timeout"),
        ({"timeout": -1.5}, "timeout"),
        ({"timeout": float("nan")}, "timeout"),
        ({"timeout": True}, "timeout"),
        ({"dimension": 0}, "dimension"),
        ({"dimension": True}, "dimension"),
        ({"api_key": "two words"}, "api_key"),
    ],
)
def test_bad_settings_are_invalid_input(settings: dict[str, Any], named: str) -> None:
    arguments: dict[str, Any] = {"url": "http://127.0.0.1:9/v1/embeddings", "model": MODEL}
    arguments.update(settings)
    with pytest.raises(InvalidInput) as caught:
        RemoteEmbedder(**arguments)
    assert caught.value.message.startswith(named)
