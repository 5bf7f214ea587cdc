"""Fusion of the full-text and vector candidate lists: reciprocal rank fusion.

Every backend returns candidates in its own order; ranking happens here, once, so
all backends rank identically.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

RRF_K = 60


@dataclass(frozen=True, slots=True)
class Fused:
    """A candidate id with its fused score and its 1-based rank in each list."""

    id: str
    score: float
    text_rank: int | None
    vector_rank: int | None


def fuse(text: Sequence[str], vector: Sequence[str], *, k: int = RRF_K) -> list[Fused]:
    """Reciprocal rank fusion: score = sum of 1 / (k + rank) over the lists an id is in.

    Ties break by the better single rank, then by the text rank, so the order is total
    and deterministic.
    """
    text_rank = {fid: rank for rank, fid in enumerate(text, start=1)}
    vector_rank = {fid: rank for rank, fid in enumerate(vector, start=1)}
    fused = []
    for fid in dict.fromkeys([*text, *vector]):
        t, v = text_rank.get(fid), vector_rank.get(fid)
        score = (1 / (k + t) if t else 0.0) + (1 / (k + v) if v else 0.0)
        fused.append(Fused(fid, score, t, v))
    fused.sort(
        key=lambda f: (
            -f.score,
            min(f.text_rank or 1 << 30, f.vector_rank or 1 << 30),
            f.text_rank or 1 << 30,
        )
    )
    return fused
