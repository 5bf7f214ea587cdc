"""The pruned vector search of large SQLite scopes returns exactly what a full product does."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

import engram
from engram import Note, ResourceRef
from engram.core.ports import EmbedKind
from engram.storage.sqlite.index import projection as projection_module
from engram.storage.sqlite.index.projection import Projection
from engram.storage.sqlite.store import SQLiteStore
from stores import all_facts

DIMENSION = 384
F32 = npt.NDArray[np.float32]


def concentrated(rng: np.random.Generator, rows: int, rank: int = 24) -> F32:
    """Unit vectors living mostly in a few directions, as sentence embeddings do."""
    directions = rng.standard_normal((rank, DIMENSION))
    weights = rng.standard_normal((rows, rank)) * np.linspace(3, 1, rank)
    noise = 0.15 * rng.standard_normal((rows, DIMENSION))
    matrix = weights @ directions + noise
    return (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)


def exact_top(matrix: F32, query: F32, mask: npt.NDArray[np.bool_] | None, k: int) -> set[int]:
    scores = matrix @ query
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    return {int(i) for i in np.argsort(-scores)[:k]}


def pruned_top(found: tuple[npt.NDArray[np.intp], F32], k: int) -> set[int]:
    rows, scores = found
    return {int(rows[i]) for i in np.argsort(-scores)[:k]}


@pytest.mark.parametrize("selectivity", [None, 0.5, 0.01, 0.002])
@pytest.mark.parametrize("first_pass", ["default", "only the results asked for"])
def test_pruned_search_is_exact(
    selectivity: float | None, first_pass: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if first_pass != "default":  # then the bound alone must find what the first pass missed
        monkeypatch.setattr(projection_module, "MIN_CANDIDATES", 1)
        monkeypatch.setattr(projection_module, "CANDIDATES_PER_RESULT", 1)
    rng = np.random.default_rng(7)
    matrix = concentrated(rng, 6_000)
    projection = Projection.fit(matrix)
    assert projection is not None
    mask = None if selectivity is None else rng.random(len(matrix)) < selectivity
    allowed = len(matrix) if mask is None else int(mask.sum())
    queries = concentrated(rng, 40)
    pruned = 0
    for query in queries:
        k = min(50, allowed)
        found = projection.search(matrix, len(matrix), query, mask, k)
        if found is None:
            continue
        pruned += 1
        assert len(found[0]) < len(matrix) // 4  # it scored far fewer rows than the scope
        assert pruned_top(found, k) == exact_top(matrix, query, mask, k)
    assert pruned >= 30  # the pruning path is the one under test


def test_rows_added_after_the_fit_are_searched_exactly() -> None:
    rng = np.random.default_rng(11)
    matrix = concentrated(rng, 5_000)
    projection = Projection.fit(matrix[:2_000])
    assert projection is not None
    projection.extend(matrix[2_000:])
    for query in concentrated(rng, 20):
        found = projection.search(matrix, len(matrix), query, None, 10)
        assert found is not None
        assert pruned_top(found, 10) == exact_top(matrix, query, None, 10)
    # A caller that saw fewer rows gets an answer over those rows only.
    found = projection.search(matrix, 3_000, matrix[4_500], None, 10)
    assert found is not None and int(found[0].max()) < 3_000


def test_vectors_that_do_not_concentrate_get_no_projection() -> None:
    rng = np.random.default_rng(3)
    spread = rng.standard_normal((5_000, DIMENSION)).astype(np.float32)
    assert Projection.fit(spread) is None


class LowRankEmbedder:
    """Deterministic, concentrated vectors per text (a stand-in for a sentence model)."""

    model = "low-rank-test"
    dimension = DIMENSION

    def __init__(self) -> None:
        self.directions = np.random.default_rng(5).standard_normal((24, DIMENSION))

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> F32:
        out = np.empty((len(texts), DIMENSION), np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
            rng = np.random.default_rng(seed)
            row = (rng.standard_normal(24) * np.linspace(3, 1, 24)) @ self.directions
            row += 0.15 * rng.standard_normal(DIMENSION)
            out[i] = row / np.linalg.norm(row)
        return out


def test_a_large_scope_recalls_exactly_through_the_store(db_path: Path) -> None:
    embedder = LowRankEmbedder()
    ref = ResourceRef("big")
    notes = [Note(f"fact number {i}", tags=("even",) if i % 2 == 0 else ()) for i in range(1_500)]
    with engram.open(db_path, embedder=embedder) as mem:
        store = mem._store
        assert isinstance(store, SQLiteStore)
        store.vectors.project_above = 500

        def check(query: str, **filters: object) -> None:
            allowed = [f for f in all_facts(mem, ref) if not filters or "even" in f.tags]
            matrix = embedder.embed([f.content for f in allowed], "passage")
            scores = matrix @ embedder.embed([query], "query")[0]
            want = [allowed[i].content for i in np.argsort(-scores)[:10]]
            hits = mem.recall(ref, query, top_k=10, mode="vector", **filters)  # type: ignore[arg-type]
            assert [h.fact.content for h in hits] == want

        mem.remember_many(ref, notes[:1_000])
        check("fact number 7")
        entry = store.vectors.held(ref.key)
        assert (
            entry is not None and entry.projection is not None
        )  # the pruned path is the one answering
        mem.remember_many(ref, notes[1_000:])  # appended after the fit
        check("fact number 1234")
        check("fact number 3", tags=["even"])
        for fact in all_facts(mem, ref)[:200]:
            mem.forget(ref, fact.id)
        check("fact number 1499")
        changed = mem.correct(ref, all_facts(mem, ref)[0].id, "fact number 99999")
        check("fact number 99999")
        assert mem.recall(ref, "fact number 99999", top_k=1, mode="vector")[0].fact == changed
        # Forgotten facts were masked and the corrected one read again, in place.
        assert store.vectors.held(ref.key) is entry
        assert entry.projection is not None
