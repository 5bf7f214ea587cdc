"""Reranking hybrid recall: RemoteReranker against a real rerank endpoint served on
127.0.0.1 by the test, recall's order, what it sends, and every way the endpoint fails.

Vectors come from HashingEmbedder, so the fused order is exact; the endpoint scores by
whatever the test tells it to, so the reranked order is known too.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

import engram
from embeddings_server import Endpoint
from engram import HashingEmbedder, InvalidInput, RemoteReranker, ResourceRef, UpstreamFailure
from engram.cli.main import main
from engram.core import reranking
from engram.core.memory import Memory
from engram.core.models import Fact, RecallHit
from engram.core.ranking import Fused
from engram.opening import open_store
from rerank_server import MODEL, RerankEndpoint
from stores import Target, WatchedStore

REF = ResourceRef("user-1")
EMBEDDER = HashingEmbedder(16)


@pytest.fixture
def endpoint() -> Iterator[RerankEndpoint]:
    served = RerankEndpoint()
    yield served
    served.close()


def numbered(query: str, document: str) -> float:
    """Scores a document by the number it ends with: the order a test expects is known."""
    return float(document.split()[-1])


NOTES = [f"tea note {n}" for n in (4, 1, 6, 3, 5, 2)]


def _ids(hits: Sequence[RecallHit]) -> list[str]:
    return [h.fact.id for h in hits]


# -- recall's order -------------------------------------------------------------------
def test_hybrid_recall_follows_the_reranker(endpoint: RerankEndpoint, target: Target) -> None:
    endpoint.scorer = numbered
    with engram.open(target, embedder=EMBEDDER) as plain:
        plain.remember_many(REF, NOTES)
        fused = plain.recall(REF, "tea note", top_k=6)
    with engram.open(target, embedder=EMBEDDER, reranker=endpoint.reranker()) as mem:
        hits = mem.recall(REF, "tea note", top_k=6)
    assert [h.fact.content for h in hits] == [f"tea note {n}" for n in (6, 5, 4, 3, 2, 1)]
    assert _ids(hits) != _ids(fused)  # the reranker decided, not the fusion
    assert [h.rerank_score for h in hits] == [6.0, 5.0, 4.0, 3.0, 2.0, 1.0]
    before = {h.fact.id: h for h in fused}
    for hit in hits:  # the fused score, the ranks and the relevance are unchanged
        was = before[hit.fact.id]
        assert (hit.score, hit.text_rank, hit.vector_rank) == (
            was.score,
            was.text_rank,
            was.vector_rank,
        )
        assert hit.relevance == was.relevance
        assert was.rerank_score is None


def test_the_reranker_reads_the_best_fused_candidates_as_full_text_reads_them(
    endpoint: RerankEndpoint, target: Target
) -> None:
    notes = [engram.Note(f"tea note {n}", context=f"said on day {n}") for n in range(20)]
    notes += [engram.Note(f"tea note {n}") for n in range(20, 40)]
    with engram.open(target, embedder=EMBEDDER) as plain:
        plain.remember_many(REF, notes)
        fused = plain.recall(REF, "tea note", top_k=40)
    assert len(fused) == 40
    with engram.open(target, embedder=EMBEDDER, reranker=endpoint.reranker()) as mem:
        assert len(mem.recall(REF, "tea note", top_k=5)) == 5
        assert len(mem.recall(REF, "tea note", top_k=35)) == 35
    head = [
        h.fact.content if h.fact.context is None else f"{h.fact.content}\n{h.fact.context}"
        for h in fused
    ]
    # max(top_k, 30) candidates, in the fused order, content then context
    assert endpoint.documents() == [head[: reranking.RERANK_DEPTH], head[:35]]
    first = endpoint.requests[0]
    assert first.path == "/v1/rerank"
    assert {k: v for k, v in first.body.items() if k != "documents"} == {
        "model": MODEL,
        "query": "tea note",
        "top_n": 30,
    }


@pytest.mark.parametrize("mode", ["text", "vector"])
def test_only_hybrid_recall_reranks(endpoint: RerankEndpoint, target: Target, mode: Any) -> None:
    endpoint.scorer = numbered
    with engram.open(target, embedder=EMBEDDER) as plain:
        plain.remember_many(REF, NOTES)
        alone = plain.recall(REF, "tea note", top_k=6, mode=mode)
    with engram.open(target, embedder=EMBEDDER, reranker=endpoint.reranker()) as mem:
        hits = mem.recall(REF, "tea note", top_k=6, mode=mode)
    assert hits == alone
    assert endpoint.requests == []


def test_an_empty_scope_asks_the_reranker_nothing(endpoint: RerankEndpoint, target: Target) -> None:
    with engram.open(target, embedder=EMBEDDER, reranker=endpoint.reranker()) as mem:
        assert mem.recall(REF, "tea") == []
    assert endpoint.requests == []


def test_acting_keeps_the_reranker(endpoint: RerankEndpoint, target: Target) -> None:
    endpoint.scorer = numbered
    with engram.open(target, embedder=EMBEDDER, reranker=endpoint.reranker()) as mem:
        mem.remember_many(REF, NOTES)
        hits = mem.acting(actor="someone").recall(REF, "tea note", top_k=2)
    assert [h.fact.content for h in hits] == ["tea note 6", "tea note 5"]


class _Reranker:
    """A reranker in this process: it notes how many transactions are open when asked."""

    model = "in-process"

    def __init__(self, watched: WatchedStore) -> None:
        self.watched = watched
        self.open_when_asked: list[int] = []

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        self.open_when_asked.append(self.watched.open)
        return [float(len(text)) for text in texts]


def test_the_reranker_is_asked_after_the_read_transaction(target: Target) -> None:
    with engram.open(target, embedder=EMBEDDER) as plain:
        plain.remember_many(REF, ["tea", "tea and cake", "tea cake and scones"])
    watched = WatchedStore(open_store(target))
    reranker = _Reranker(watched)
    with Memory(watched, EMBEDDER, reranker=reranker) as mem:  # type: ignore[arg-type]
        hits = mem.recall(REF, "tea")
        assert watched.open == 0
    assert reranker.open_when_asked == [0]  # asked once, with no snapshot open
    assert [h.fact.content for h in hits] == ["tea cake and scones", "tea and cake", "tea"]


def test_the_command_line_reranks_with_the_environment(
    endpoint: RerankEndpoint,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    endpoint.scorer = numbered
    embeddings = Endpoint()
    try:
        monkeypatch.setenv("ENGRAM_DB_PATH", str(tmp_path / "cli.db"))
        monkeypatch.setenv("ENGRAM_EMBEDDINGS_URL", embeddings.url)
        monkeypatch.setenv("ENGRAM_EMBEDDINGS_MODEL", "test-embed")
        monkeypatch.setenv("ENGRAM_RERANK_URL", endpoint.url)
        monkeypatch.setenv("ENGRAM_RERANK_MODEL", MODEL)
        for note in NOTES[:3]:
            assert main(["remember", note, "--resource", "u"]) == 0
        assert endpoint.requests == []  # remembering never asks the reranker
        capsys.readouterr()
        assert main(["--json", "recall", "tea note", "--resource", "u"]) == 0
    finally:
        embeddings.close()
    hits = json.loads(capsys.readouterr().out)["hits"]
    assert [(h["fact"]["content"], h["rerank_score"]) for h in hits] == [
        ("tea note 6", 6.0),
        ("tea note 4", 4.0),
        ("tea note 1", 1.0),
    ]


# -- failures -------------------------------------------------------------------------
def test_a_failing_endpoint_fails_recall(endpoint: RerankEndpoint, target: Target) -> None:
    with engram.open(target, embedder=EMBEDDER) as plain:
        plain.remember_many(REF, NOTES)
    endpoint.reply = lambda body: (500, b'{"error": "boom"}')
    with engram.open(target, embedder=EMBEDDER, reranker=endpoint.reranker()) as mem:
        with pytest.raises(UpstreamFailure, match=r"rerank endpoint .* answered HTTP 500: "):
            mem.recall(REF, "tea note")
        assert len(mem.recall(REF, "tea note", mode="text")) == 5  # one half never asks it


def _results(*pairs: tuple[Any, Any]) -> bytes:
    return json.dumps({"results": [{"index": i, "relevance_score": s} for i, s in pairs]}).encode()


MALFORMED: dict[str, tuple[int, bytes, str]] = {
    "HTTP 500": (500, b'{"error": "overloaded"}', 'answered HTTP 500: {"error": "overloaded"}'),
    "not JSON": (200, b"<html>oops</html>", "answer is not JSON"),
    "no results": (200, b'{"data": []}', "no 'results' list"),
    "too few": (200, _results((0, 0.5)), "1 results for 2 documents"),
    "too many": (200, _results((0, 0.5), (1, 0.2), (1, 0.1)), "3 results for 2 documents"),
    "missing index": (
        200,
        b'{"results": [{"relevance_score": 0.5}, {"index": 1, "relevance_score": 0.2}]}',
        "'index' is not a document's position (0 to 1): None",
    ),
    "index out of range": (200, _results((0, 0.5), (2, 0.2)), "(0 to 1): 2"),
    "string index": (200, _results(("1", 0.5), (0, 0.2)), "(0 to 1): '1'"),
    "duplicate index": (200, _results((1, 0.5), (1, 0.2)), "index 1 more than once"),
    "NaN": (
        200,
        b'{"results": [{"index": 0, "relevance_score": NaN},'
        b' {"index": 1, "relevance_score": 0.2}]}',
        "not a finite number: nan",
    ),
    "infinite": (
        200,
        b'{"results": [{"index": 0, "relevance_score": 1e999},'
        b' {"index": 1, "relevance_score": 0.2}]}',
        "not a finite number: inf",
    ),
    "string score": (200, _results((0, "0.5"), (1, 0.2)), "not a finite number: '0.5'"),
    "true score": (200, _results((0, True), (1, 0.2)), "not a finite number: True"),
    "no score": (
        200,
        b'{"results": [{"index": 0}, {"index": 1, "relevance_score": 0.2}]}',
        "not a finite number: None",
    ),
    "not an object": (200, b'{"results": [0.5, 0.2]}', "result that is not an object"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_failing_or_garbled_answer_is_upstream_failure(
    endpoint: RerankEndpoint, case: str
) -> None:
    status, body, words = MALFORMED[case]
    endpoint.reply = lambda _: (status, body)
    with pytest.raises(UpstreamFailure, match=re.escape(words)):
        endpoint.reranker().rerank("tea", ["green tea", "black coffee"])


def test_results_in_any_order_are_read_by_index(endpoint: RerankEndpoint) -> None:
    endpoint.reply = lambda _: (200, _results((2, 0.1), (0, 0.9), (1, -3)))
    assert endpoint.reranker().rerank("q", ["a", "b", "c"]) == [0.9, -3.0, 0.1]


def test_nothing_to_rerank_makes_no_request(endpoint: RerankEndpoint) -> None:
    assert endpoint.reranker().rerank("tea", []) == []
    assert endpoint.requests == []


def test_a_slow_endpoint_fails_at_the_timeout(endpoint: RerankEndpoint) -> None:
    endpoint.delay = 60.0  # far past the timeout, however loaded the machine
    started = time.monotonic()
    with pytest.raises(UpstreamFailure, match="did not answer within 1 s; nothing was reranked"):
        endpoint.reranker(timeout=1.0).rerank("tea", ["green tea"])
    assert time.monotonic() - started < 10.0


def test_the_bearer_key_is_sent_only_when_given_and_never_shown(
    endpoint: RerankEndpoint,
) -> None:
    endpoint.reranker(api_key="rk-secret-123").rerank("tea", ["green tea"])
    endpoint.reranker().rerank("tea", ["green tea"])
    with_key, without = (seen.headers for seen in endpoint.requests)
    assert with_key["authorization"] == "Bearer rk-secret-123"
    assert "authorization" not in without

    def echo_the_key(body: dict[str, Any]) -> tuple[int, bytes]:
        return 401, f"bad key {endpoint.requests[-1].headers['authorization']}".encode()

    endpoint.reply = echo_the_key
    with pytest.raises(UpstreamFailure) as caught:
        endpoint.reranker(api_key="rk-secret-123").rerank("tea", ["green tea"])
    assert "HTTP 401" in str(caught.value) and "rk-secret-123" not in str(caught.value)


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"url": "ftp://host/v1/rerank"}, "url"),
        ({"url": 42}, "url"),
        ({"model": " "}, "model"),
        ({"timeout": 0}, "timeout"),
        ({"api_key": "two words"}, "api_key"),
    ],
)
def test_bad_settings_are_invalid_input(settings: dict[str, Any], named: str) -> None:
    arguments: dict[str, Any] = {"url": "http://127.0.0.1:9/v1/rerank", "model": MODEL}
    with pytest.raises(InvalidInput) as caught:
        RemoteReranker(**(arguments | settings))
    assert caught.value.message.startswith(named)


def test_open_refuses_what_is_no_reranker(target: Target) -> None:
    with pytest.raises(InvalidInput, match="reranker must be None or a Reranker"):
        engram.open(target, embedder=EMBEDDER, reranker="cohere")  # type: ignore[arg-type]


# -- the order itself, for any reranker ------------------------------------------------
class _Fixed:
    """A reranker that answers what it is given (perhaps wrong), and counts its calls."""

    model = "fixed"

    def __init__(self, scores: Callable[[Sequence[str]], list[Any]]) -> None:
        self.scores = scores
        self.asked: list[list[str]] = []

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        self.asked.append(list(texts))
        return self.scores(texts)


Candidates = tuple[list[Fused], dict[str, Fact]]


@pytest.fixture
def candidates(tmp_path: Path) -> Callable[[int], Candidates]:
    """``n`` stored facts as fused candidates, best first, and their rows by id."""

    def made(n: int) -> Candidates:
        with engram.open(tmp_path / f"scratch-{n}.db", embedder=EMBEDDER) as mem:
            facts = mem.remember_many(REF, [f"fact {i}" for i in range(n)])
        fused = [Fused(f.id, float(n - i), i + 1, None) for i, f in enumerate(facts)]
        return fused, {f.id: f for f in facts}

    return made


def test_the_candidates_behind_the_head_keep_their_fused_order(
    candidates: Callable[[int], Candidates],
) -> None:
    fused, facts = candidates(34)
    reranker = _Fixed(lambda texts: [float(i) for i in range(len(texts))])  # reversed
    ordered = reranking.reorder(reranker, "q", fused, facts, k=5)
    assert [f.id for f, _ in ordered] == [f.id for f in fused[29::-1]] + [f.id for f in fused[30:]]
    assert [score for _, score in ordered] == [float(i) for i in range(29, -1, -1)] + [None] * 4
    assert len(reranker.asked) == 1 and len(reranker.asked[0]) == 30


def test_equal_scores_keep_the_fused_order_and_rowless_candidates_are_left_out(
    candidates: Callable[[int], Candidates],
) -> None:
    fused, facts = candidates(4)
    del facts[fused[1].id]  # forgotten before the rows were read
    ordered = reranking.reorder(_Fixed(lambda texts: [1.0] * len(texts)), "q", fused, facts, 5)
    assert [f.id for f, _ in ordered] == [fused[0].id, fused[2].id, fused[3].id]


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (lambda texts: [1.0], "1 scores for 3 texts"),
        (lambda texts: [1.0, float("nan"), 2.0], "not a finite number"),
        (lambda texts: [1.0, "2", 3.0], "not a finite number"),
        (lambda texts: "123", "no list of scores"),
    ],
)
def test_a_reranker_answering_wrong_is_upstream_failure(
    candidates: Callable[[int], Candidates],
    answer: Callable[[Sequence[str]], list[Any]],
    words: str,
) -> None:
    fused, facts = candidates(3)
    with pytest.raises(UpstreamFailure, match=words):
        reranking.reorder(_Fixed(answer), "q", fused, facts, 5)


def test_merged_recalls_keep_each_recalls_order(candidates: Callable[[int], Candidates]) -> None:
    fact = next(iter(candidates(1)[1].values()))
    hits = [
        RecallHit(fact, 0.5, None, None, 0.0, 0.9),
        RecallHit(fact, 2.0, None, None, 0.0, 0.4),
        RecallHit(fact, 3.0, None, None, 0.0, None),
        RecallHit(fact, 1.0, None, None, 0.0, 0.7),
        RecallHit(fact, 4.0, None, None, 0.0, None),
    ]
    ordered = sorted(hits, key=reranking.merged)
    assert [(h.score, h.rerank_score) for h in ordered] == [
        (0.5, 0.9),
        (1.0, 0.7),
        (2.0, 0.4),
        (4.0, None),
        (3.0, None),
    ]
