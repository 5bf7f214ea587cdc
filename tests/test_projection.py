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
from engram.storage.sqlite.index import vectors as vectors_module
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


def numbered(count: int) -> list[Note]:
    return [Note(f"fact number {i}", tags=("even",) if i % 2 == 0 else ()) for i in range(count)]


def exact_answer(mem: engram.Memory, ref: ResourceRef, query: str, **filters: object) -> None:
    """The scope's vector recall is what a product over every fact's vector ranks first."""
    assert mem.embedder is not None
    allowed = [f for f in all_facts(mem, ref) if not filters or "even" in f.tags]
    matrix = mem.embedder.embed([f.content for f in allowed], "passage")
    scores = matrix @ mem.embedder.embed([query], "query")[0]
    want = [allowed[i].content for i in np.argsort(-scores)[:10]]
    hits = mem.recall(ref, query, top_k=10, mode="vector", **filters)  # type: ignore[arg-type]
    assert [h.fact.content for h in hits] == want


def test_a_large_scope_recalls_exactly_through_the_store(db_path: Path) -> None:
    embedder = LowRankEmbedder()
    ref = ResourceRef("big")
    notes = numbered(1_500)
    with engram.open(db_path, embedder=embedder) as mem:
        store = mem._store
        assert isinstance(store, SQLiteStore)
        store.vectors.project_above = 500

        def check(query: str, **filters: object) -> None:
            exact_answer(mem, ref, query, **filters)

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


def test_a_scope_past_the_copies_budget_is_searched_from_its_rows_and_never_copied(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scope whose copy alone would pass the budget (a large scope while its index file
    is built) is read a chunk at a time for each search: the same exact answers, filters,
    forgets and corrections followed, and no copy held; a scope within it is copied, a
    chunk at a time, and projected once read."""
    monkeypatch.setattr(vectors_module, "CHUNK_ROWS", 64)  # many chunks, a best across them
    ref = ResourceRef("big")
    with engram.open(db_path, embedder=LowRankEmbedder()) as mem:
        store = mem._store
        assert isinstance(store, SQLiteStore)
        store.vectors.project_above = 500
        mem.remember_many(ref, numbered(600))
        exact_answer(mem, ref, "fact number 7")
        copy = store.vectors.held(ref.key)
        assert copy is not None and copy.count == 600 and copy.projection is not None
        store.vectors.budget_bytes = vectors_module.copy_bytes(399, DIMENSION, 500)
        for query in ("fact number 7", "fact number 421", "fact number 599"):
            exact_answer(mem, ref, query)
        assert store.vectors.held(ref.key) is None  # let go, and never read again
        exact_answer(mem, ref, "fact number 3", tags=["even"])
        for fact in all_facts(mem, ref)[:150]:
            mem.forget(ref, fact.id)
        exact_answer(mem, ref, "fact number 100")
        changed = mem.correct(ref, all_facts(mem, ref)[0].id, "fact number 99999")
        exact_answer(mem, ref, "fact number 99999")
        assert mem.recall(ref, "fact number 99999", top_k=1, mode="vector")[0].fact == changed
        assert store.vectors.held(ref.key) is None
        wrong = np.ones(8, np.float32)
        with pytest.raises(engram.EmbedderMismatch, match="384 dimensions"):
            store.db.run(
                lambda tx: store.vectors.search(tx.conn, ref.key, wrong, None, 5, 450), write=False
            )
