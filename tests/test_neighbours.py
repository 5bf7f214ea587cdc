"""Pairs of near vectors found through a graph built for the asking
(:mod:`engram.storage.neighbours`), what merge compares in a scope past its budget."""

from __future__ import annotations

import numpy as np

from engram.storage import neighbours


def _unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_near_pairs_are_each_vectors_nearest_over_the_cosine_and_none_under() -> None:
    rng = np.random.default_rng(7)
    base = _unit(rng.normal(size=(3000, 48)).astype(np.float32))
    near = _unit(base[:50] + 0.02 * rng.normal(size=(50, 48)).astype(np.float32))
    far = _unit(base[50:100] + 0.6 * rng.normal(size=(50, 48)).astype(np.float32))
    vectors = np.vstack([base, near, far])
    ids = [f"v{i:05d}" for i in range(len(vectors))]
    pages = [(ids[s : s + 700], vectors[s : s + 700]) for s in range(0, len(ids), 700)]

    found = neighbours.near_pairs(pages, 4, 0.95)

    assert found is not None
    cosine = {(a, b): float(vectors[int(a[1:])] @ vectors[int(b[1:])]) for a, b in found}
    planted = {(f"v{i:05d}", f"v{3000 + i:05d}") for i in range(50)}
    assert planted <= set(found)  # every near twin, the smaller id first
    assert all(c >= 0.95 - neighbours.SLACK for c in cosine.values())
    assert len(found) == len(set(found)) and all(a < b for a, b in found)
    assert not {(f"v{50 + i:05d}", f"v{3050 + i:05d}") for i in range(50)} & set(found)


def test_near_pairs_leave_out_a_row_of_another_dimension_and_need_two_rows() -> None:
    one = np.eye(4, dtype=np.float32)[:1]
    assert neighbours.near_pairs([(["a"], one)], 4, 0.9) == []
    assert neighbours.near_pairs([], 4, 0.9) == []
    twin = np.array([[1.0, 0.0, 0.0, 0.0], [0.999, 0.04, 0.0, 0.0]], dtype=np.float32)
    other = np.ones((1, 3), dtype=np.float32)
    found = neighbours.near_pairs([(["a", "b"], twin), (["c"], other)], 4, 0.9)
    assert found == [("a", "b")]
