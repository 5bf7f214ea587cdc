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
    assert planted <= set(found)  # every near twin, in the order given (here the ids')
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


def test_vectors_with_the_same_int8_copy_are_all_pairs_however_few_are_asked() -> None:
    """Equal copies go in the graph once: every two of them are a pair, and each is a
    pair with the nearest of the copy they share (here one asked, where four equal
    vectors searched one by one could give no more than four of their six pairs)."""
    rng = np.random.default_rng(3)
    others = _unit(rng.normal(size=(500, 32)).astype(np.float32))
    same = np.repeat(others[:1], 4, axis=0) * np.array([[1.0], [2.0], [0.5], [1.0]])
    near = _unit(others[:1] + 0.01 * rng.normal(size=(1, 32)).astype(np.float32))
    vectors = np.vstack([same, near, others[1:]]).astype(np.float32)
    ids = [f"v{i:04d}" for i in range(len(vectors))]

    found = set(neighbours.near_pairs([(ids, vectors)], 1, 0.95) or [])

    assert {("v0000", "v0001"), ("v0000", "v0002"), ("v0000", "v0003")} <= found
    assert {("v0001", "v0002"), ("v0001", "v0003"), ("v0002", "v0003")} <= found
    assert {(f"v000{i}", "v0004") for i in range(4)} <= found  # the near one, to each
