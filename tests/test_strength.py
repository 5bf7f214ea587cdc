"""A fact's strength: 0 to 10, 1.0 unless set. Recall keeps facts at least
``min_strength`` strong in both halves, and multiplies a fact's fused score by its
strength; while every strength is 1.0 the ranking is the fusion's, bit for bit."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

import engram
from engram import InvalidInput, Note, ResourceRef
from engram.api import create_app
from engram.cli.main import main
from engram.core import query, signals
from engram.core.models import Filters
from engram.core.ranking import fuse
from engram.settings import Settings
from stores import Target

WORDS = ["apple pie recipe", "apple cider vinegar", "pie crust tips", "green apple tart"]
BAD = (-0.1, 10.01, float("nan"), float("inf"), True, "1", None)


def test_a_fact_is_as_strong_as_remembered(mem: engram.Memory) -> None:
    ref = ResourceRef("s")
    plain = mem.remember(ref, "plain fact")
    strong = mem.remember(ref, "strong fact", strength=2.5)
    weak, top = mem.remember_many(
        ref, [Note("weak fact", strength=0), Note("top fact", strength=10)]
    )
    assert (plain.strength, strong.strength, weak.strength, top.strength) == (1.0, 2.5, 0.0, 10.0)
    assert mem.fact(ref, strong.id) == strong
    assert {f.id: f.strength for f in mem.facts(ref).facts} == {
        plain.id: 1.0,
        strong.id: 2.5,
        weak.id: 0.0,
        top.id: 10.0,
    }
    child = mem.fork(ref, "child").ref
    assert sorted(f.strength for f in mem.facts(child).facts) == [0.0, 1.0, 2.5, 10.0]
    for bad in BAD:
        with pytest.raises(InvalidInput, match="strength"):
            mem.remember(ref, "never stored", strength=bad)  # type: ignore[arg-type]
        with pytest.raises(InvalidInput, match="strength"):
            mem.remember_many(ref, [Note("ok"), Note("never stored", strength=bad)])  # type: ignore[arg-type]
    assert mem.count(ref) == 4


def test_min_strength_binds_both_halves(mem: engram.Memory) -> None:
    ref = ResourceRef("s")
    strengths = [0.5, 1.0, 2.0, 3.0]
    facts = mem.remember_many(
        ref, [Note(w, strength=s) for w, s in zip(WORDS, strengths, strict=True)]
    )
    for mode in ("hybrid", "text", "vector"):
        for floor, kept in ((None, 4), (1.0, 3), (2.5, 1), (10, 0)):
            hits = mem.recall(ref, "apple pie", top_k=10, mode=mode, min_strength=floor)  # type: ignore[arg-type]
            allowed = {f.id for f in facts if floor is None or f.strength >= floor}
            assert {h.fact.id for h in hits} <= allowed, (mode, floor)
            if mode != "text":  # full text finds only the facts holding a query word
                assert len(hits) == kept, (mode, floor)
            elif floor is None:
                assert len(hits) == 4  # every fact holds "apple" or "pie"
    for bad in BAD[:-1]:
        with pytest.raises(InvalidInput, match="min_strength"):
            mem.recall(ref, "apple", min_strength=bad)  # type: ignore[arg-type]


def _pair(mem: engram.Memory, resource: str, strength: float) -> dict[str, float]:
    ref = ResourceRef(resource)
    mem.remember_many(ref, [Note(WORDS[0]), Note(WORDS[1], strength=strength), Note(WORDS[2])])
    return {h.fact.content: h.score for h in mem.recall(ref, "apple pie recipe", top_k=3)}


def test_strength_multiplies_the_fused_score(mem: engram.Memory) -> None:
    neutral = _pair(mem, "neutral", 1.0)
    strong = _pair(mem, "strong", 3.0)
    weak = _pair(mem, "weak", 0.0)
    assert strong[WORDS[1]] == pytest.approx(neutral[WORDS[1]] * 3.0, rel=1e-12)
    assert weak[WORDS[1]] == 0.0
    for other in (WORDS[0], WORDS[2]):  # the others are scored as they were
        # (to float64's rounding: each scope's full-text scores are normalised apart)
        assert strong[other] == pytest.approx(neutral[other], rel=1e-12)
        assert weak[other] == pytest.approx(neutral[other], rel=1e-12)
    assert max(strong, key=strong.__getitem__) == WORDS[1]
    assert min(weak, key=weak.__getitem__) == WORDS[1]


def test_at_the_default_strength_the_ranking_is_the_fusion_s(mem: engram.Memory) -> None:
    ref = ResourceRef("s")
    mem.remember_many(ref, [f"{w} number {i}" for i in range(30) for w in WORDS])
    store, embedder = mem._store, mem.embedder
    assert embedder is not None
    for text in ("apple pie", "vinegar tips", "green tart recipe"):
        vector = embedder.embed([text], "query")[0]
        expected = store.run(
            lambda tx, text=text, vector=vector: _fusion(store, tx, ref, text, vector),
            write=False,
        )[:10]
        hits = mem.recall(ref, text, top_k=10)
        assert [(h.fact.id, h.score) for h in hits] == [(f.id, f.score) for f in expected]


def _fusion(store: Any, tx: Any, ref: ResourceRef, text: str, vector: Any) -> list[Any]:
    """Both halves and the lists over their candidates, fused, as recall does."""
    terms = query.terms(text)
    lexical = store.candidates.text(tx, ref, terms, Filters(), 50)
    semantic = store.candidates.vector(tx, ref, vector, Filters(), 50)
    traits = store.facts.traits(tx, ref, [c.id for c in [*lexical, *semantic]])
    return fuse(lexical, semantic, signals.lists(text, terms, lexical, traits))


@pytest.fixture
def client(target: Target) -> Iterator[TestClient]:
    memory = engram.open(target, embedder=engram.HashingEmbedder(64))
    with TestClient(create_app(Settings(db_path=str(target)), memory_store=memory)) as test:
        yield test


def test_strength_over_http(client: TestClient) -> None:
    agent = client.post("/agents", json={"name": "planner"}).json()["id"]
    base = f"/agents/{agent}/facts"
    made = client.post(base, json={"content": WORDS[0], "strength": 2})
    assert made.status_code == 201 and made.json()["strength"] == 2.0
    assert client.post(base, json={"content": WORDS[1]}).json()["strength"] == 1.0
    for bad in (-1, 10.5, "2", True, None):
        answer = client.post(base, json={"content": "never stored", "strength": bad})
        assert answer.status_code == 400, (bad, answer.text)
    assert len(client.get(base).json()["facts"]) == 2
    hits = client.get(base, params={"query": "apple", "minStrength": "1.5"}).json()["facts"]
    assert [h["content"] for h in hits] == [WORDS[0]]
    for bad in ("-1", "11", "nan", "inf", "strong"):
        answer = client.get(base, params={"query": "apple", "minStrength": bad})
        assert answer.status_code == 400, (bad, answer.text)
    answer = client.get(base, params={"minStrength": "1"})  # recall's, not the listing's
    assert answer.status_code == 400 and "query" in answer.json()["error"]["message"]


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 else err)


def test_strength_on_the_command_line(capsys: pytest.CaptureFixture[str], target: Target) -> None:
    scope = ["--db", str(target), "--resource", "user-42"]
    code, fact = _cli(capsys, "--json", "remember", WORDS[0], *scope, "--strength", "2.5")
    assert code == 0 and fact["strength"] == 2.5
    code, fact = _cli(capsys, "--json", "remember", WORDS[1], *scope)
    assert code == 0 and fact["strength"] == 1.0
    for bad in ("-1", "10.5", "nan", "1e1", "strong"):
        code, err = _cli(capsys, "remember", "never stored", *scope, "--strength", bad)
        assert code == 2 and "0 to 10" in err, (bad, err)
    code, found = _cli(capsys, "--json", "recall", "apple", *scope, "--min-strength", "2")
    assert code == 0 and [h["fact"]["content"] for h in found["hits"]] == [WORDS[0]]
    code, listed = _cli(capsys, "--json", "facts", *scope, "--embedder", "none")
    assert len(listed["facts"]) == 2
