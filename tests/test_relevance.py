"""A hit's relevance: one scale for every query, so "nothing relevant" can be told from a
hit; and min_score, which filters by it. On both backends, through every edge."""

from __future__ import annotations

from pathlib import Path

import pytest

import engram
from engram import InvalidInput, ResourceRef
from engram.core import relevance
from stores import Target

REF = ResourceRef("relevance")


def test_the_parts_of_relevance() -> None:
    assert relevance.stem("trams") == "tram" and relevance.stem("visited") == "visit"
    assert relevance.stem("cities") == "city" and relevance.stem("bus") == "bus"
    terms = ["lisbon", "trams"]
    assert relevance.lexical(terms, "Loved the tram in Lisbon") == 1.0
    assert relevance.lexical(terms, "Lisbon at night") == 0.5
    assert relevance.lexical([], "anything") == 0.0
    assert relevance.combined(0.0, None) == 0.0
    assert relevance.combined(1.0, 0.2) == 1.0
    assert relevance.combined(0.5, 0.5) == 0.75
    assert relevance.combined(0.0, -0.3) == 0.0  # a negative cosine counts as none
    assert relevance.of("what trams?", "Ana: the trams", "Bo: in Lisbon", None) == 1.0


def test_one_stored_fact_is_relevant_to_its_question_and_not_to_another(
    target: Target,
) -> None:
    with engram.open(target, embedder="local") as mem:
        mem.remember(REF, "Caroline adopted a rescue dog named Oscar last spring")
        asked = mem.recall(REF, "What pet did Caroline adopt?", top_k=1)[0]
        unrelated = mem.recall(REF, "Which city hosts the jazz festival?", top_k=1)[0]
        # The fused score cannot tell them apart: it orders one query's candidates.
        assert asked.score > 0 and unrelated.score > 0
        assert asked.relevance > 0.6 > unrelated.relevance
        assert mem.recall(REF, "Which city hosts the jazz festival?", min_score=0.6) == []
        kept = mem.recall(REF, "What pet did Caroline adopt?", min_score=0.6)
        assert [h.fact.id for h in kept] == [asked.fact.id]
        text_only = mem.recall(REF, "Caroline dog", mode="text", top_k=1)[0]
        assert text_only.relevance == 1.0  # every word of the query is in the fact


def test_a_hit_only_full_text_found_is_compared_by_its_own_vector(target: Target) -> None:
    """Its cosine is not the vector half's: its stored vector is read with its row."""
    embedder = engram.HashingEmbedder(64)
    asked = "zebra stripes"
    toward = embedder.embed([asked], "query")[0]
    # More words near the question by vector than the vector half's pool holds, none
    # of them its words: the fact holding "zebra" among many others is beyond the pool.
    # (The vector half reads up to 200 deep for one of its lists.)
    words = [f"w{i}" for i in range(5000)]
    cosines = embedder.embed(words, "passage") @ toward
    near = [words[i] for i in (-cosines).argsort()[:300]]
    with engram.open(target, embedder=embedder) as mem:
        mem.remember_many(REF, near)
        filler = " ".join(f"filler{i}" for i in range(120))
        zebra = mem.remember(REF, f"a zebra {filler}")
        hits = mem.recall(REF, asked, top_k=30)
        hit = next(h for h in hits if h.fact.id == zebra.id)
        assert hit.text_rank == 1 and hit.vector_rank is None  # full text's alone
        cosine = float(mem.vectors(REF, [zebra.id])[zebra.id] @ toward)
        assert 0 < cosine < 0.5
        assert hit.relevance == relevance.of(asked, hit.fact.content, None, cosine)
        assert hit.relevance > relevance.of(asked, hit.fact.content, None, None)


def test_min_score_filters_the_pool_before_top_k(target: Target) -> None:
    with engram.open(target, embedder=engram.HashingEmbedder(64)) as mem:
        mem.remember_many(REF, [f"plan number {i} for the trip" for i in range(30)])
        mem.remember(REF, "the Lisbon trams and the Porto trains")
        everything = mem.recall(REF, "Lisbon trams Porto trains", top_k=40)
        assert everything == sorted(everything, key=lambda h: -h.score)  # still by score
        relevant = mem.recall(REF, "Lisbon trams Porto trains", top_k=5, min_score=0.99)
        assert [h.fact.content for h in relevant] == ["the Lisbon trams and the Porto trains"]
        for bad in (-0.1, 1.5, float("nan"), "high", True):
            with pytest.raises(InvalidInput):
                mem.recall(REF, "x", min_score=bad)  # type: ignore[arg-type]


def test_relevance_and_min_score_at_every_edge(
    target: Target, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from fastapi.testclient import TestClient

    from engram.api.app import create_app
    from engram.cli.main import main
    from engram.settings import Settings

    memory = engram.open(target, embedder=engram.HashingEmbedder(64))
    with TestClient(create_app(Settings(db_path=str(target)), memory_store=memory)) as http:
        agent = http.post("/agents", json={"name": "r"}).json()["id"]
        http.post(f"/agents/{agent}/facts", json={"content": "the Lisbon trams"})
        http.post(f"/agents/{agent}/facts", json={"content": "a plan for Friday"})
        hits = http.get(f"/agents/{agent}/facts", params={"query": "Lisbon trams"}).json()
        assert hits["facts"][0]["relevance"] == 1.0
        kept = http.get(
            f"/agents/{agent}/facts", params={"query": "Lisbon trams", "minScore": "0.99"}
        ).json()
        assert [f["content"] for f in kept["facts"]] == ["the Lisbon trams"]
        bad = http.get(f"/agents/{agent}/facts", params={"query": "x", "minScore": "2"})
        assert bad.status_code == 400
        alone = http.get(f"/agents/{agent}/facts", params={"minScore": "0.5"})
        assert alone.status_code == 400  # a filter of recall, without a query
        client = engram.Client(http=http)
        assert [h["content"] for h in client.recall(agent, "Lisbon trams", min_score=0.99)] == [
            "the Lisbon trams"
        ]
    store = str(tmp_path / "cli.db")  # the command line's own store, with the local model
    where = ["--db", store, "--resource", "cli", "--embedder", "none"]
    assert main(["remember", "the Porto trains", "--db", store, "--resource", "cli"]) == 0
    capsys.readouterr()
    assert (
        main(["--json", "recall", "Porto trains", "--min-score", "0.99", "--mode", "text", *where])
        == 0
    )
    out = capsys.readouterr().out
    assert '"relevance": 1.0' in out
    assert main(["recall", "x", "--min-score", "1.5", *where]) == 2
