"""Pairs of near vectors among many, found through a graph built for the asking.

Consolidation's merge compares facts by their words, which costs the square of a scope
whose facts share most of their words (short facts of a few templates). It then asks
this instead: each fact's nearest facts by vector, which costs a graph's build and one
search a fact, whatever the words. Both backends answer it here, from the vectors they
read; the graph lives for the one question (a scope's own index, where it has one, is
searched for recall at a width this does not need).

The graph holds int8 copies and is searched approximately: a pair may be missed, and a
pair a little under the cosine asked may come. The caller checks each pair it is given
against the stored vectors.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np
import numpy.typing as npt

from engram import offline

# A node's links (half those of recall's graph) and the candidates explored adding and
# searching a vector: every pair at cosine 0.95 of a 100k template corpus found, in
# three runs of 68 (BENCHMARKS.md, "Merge past its budget").
CONNECTIVITY, EXPANSION_ADD, EXPANSION_SEARCH = 16, 64, 64
SLACK = 0.02  # int8 copies move a cosine of unit vectors by less than this
SEARCH_AT_ONCE = 10_000  # vectors searched in one call


def usearch_module() -> Any:
    """usearch's index module; None where it is not installed. onnxruntime is loaded
    before it (:func:`engram.offline.before_usearch`)."""
    offline.before_usearch()
    try:
        import usearch.index
    except ImportError:
        return None
    return usearch.index


def near_pairs(
    pages: Iterable[tuple[list[str], npt.NDArray[Any]]], count: int, at_least: float
) -> list[tuple[str, str]] | None:
    """Pairs of ids, each once and in the order ``pages`` gives them (not the ids'
    order), where one's vector is among the ``count`` nearest of the other's and their
    cosine is at least about ``at_least``.
    ``pages`` gives ids with their vectors (one row each, of one dimension; a row of
    another dimension is left out). None where usearch is not installed.

    Every vector is searched once all are in the graph (its int8 copy, read back from
    the graph): a pair has two chances, one from each of its vectors. Vectors whose int8
    copies are the same are all pairs, and only the first goes in the graph: a graph
    links a node to no two that are as near each other as to it, so two equal copies
    left a pair of nodes linked only to each other, which no search reached (13 of
    2,000 twins at 100k)."""
    usearch = usearch_module()
    if usearch is None:
        return None
    ids: list[str] = []
    graph: Any = None
    # An int8 copy's hash: the first key with that copy. Two copies sharing a hash (odds
    # of about 2^-64 a pair) would pair falsely, which the caller's check of the stored
    # vectors refuses, and the second would go unsearched.
    first_of: dict[int, int] = {}
    alike: dict[int, list[int]] = {}  # a key in the graph: the later keys of its copy
    placed: list[int] = []  # the keys in the graph
    for page_ids, matrix in pages:
        vectors = np.ascontiguousarray(matrix, dtype=np.float32)
        if graph is None:
            graph = usearch.Index(
                ndim=vectors.shape[1],
                metric="cos",
                dtype="i8",
                connectivity=CONNECTIVITY,
                expansion_add=EXPANSION_ADD,
                expansion_search=EXPANSION_SEARCH,
            )
        elif vectors.shape[1] != graph.ndim:
            continue
        start, fresh = len(ids), []
        ids.extend(page_ids)
        for row, copy in enumerate(_copies(vectors)):
            first = first_of.setdefault(hash(copy), start + row)
            if first == start + row:
                fresh.append(row)
            else:
                alike.setdefault(first, []).append(start + row)
        keys = np.asarray(fresh, dtype=np.uint64) + start
        graph.add(keys, vectors[fresh], threads=0)
        placed.extend(keys.tolist())
    found: set[tuple[int, int]] = set()
    for start in range(0, len(placed), SEARCH_AT_ONCE):
        own = np.asarray(placed[start : start + SEARCH_AT_ONCE], dtype=np.uint64)
        copies = np.asarray(graph.get(own, dtype=np.float32), dtype=np.float32)
        found.update(_near(graph.search(copies, count + 1, threads=0), own, at_least))
    pairs = _with_alike(found, alike)
    return [(ids[a], ids[b]) for a, b in sorted(pairs)]


def _copies(vectors: npt.NDArray[np.float32]) -> list[bytes]:
    """Each row's int8 copy as the graph makes it (unit length, times 127, truncated)."""
    lengths = np.linalg.norm(vectors, axis=1, keepdims=True)
    units = np.divide(vectors, lengths, out=np.zeros_like(vectors), where=lengths > 0)
    return [row.tobytes() for row in (units * 127).astype(np.int8)]


def _with_alike(found: set[tuple[int, int]], alike: dict[int, list[int]]) -> set[tuple[int, int]]:
    """The pairs found, each also for the keys whose copies equal its two; and every two
    keys of one copy."""
    pairs: set[tuple[int, int]] = set()
    for a, b in found:
        for x in (a, *alike.get(a, ())):
            pairs.update((min(x, y), max(x, y)) for y in (b, *alike.get(b, ())))
    for first, later in alike.items():
        same = (first, *later)
        pairs.update((x, y) for i, x in enumerate(same) for y in same[i + 1 :])
    return pairs


def _near(matches: Any, own: npt.NDArray[np.uint64], at_least: float) -> Iterator[tuple[int, int]]:
    """The pairs of ``own`` keys with their matches at ``at_least`` or more (less the
    slack), the smaller key first; a vector's match with itself (one more than asked)
    is not one."""
    # One vector's search answers its matches found, not a matrix of one row.
    others = np.atleast_2d(np.asarray(matches.keys, dtype=np.uint64))
    counts = getattr(matches, "counts", [others.shape[1]])
    # A row with fewer matches than asked is padded (key 0, distance NaN) past its count.
    real = np.arange(others.shape[1]) < np.asarray(counts)[:, None]
    distances = np.atleast_2d(np.asarray(matches.distances, dtype=np.float32))
    distances = np.where(real, distances, 2.0)
    mine = np.broadcast_to(own[:, None], others.shape)
    keep = real & (others != mine) & (1.0 - distances >= at_least - SLACK)
    low, high = np.minimum(mine[keep], others[keep]), np.maximum(mine[keep], others[keep])
    return zip(low.tolist(), high.tolist(), strict=True)
