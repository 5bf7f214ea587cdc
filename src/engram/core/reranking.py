"""Hybrid recall's best candidates reordered by a reranker, when one is configured.

A reranker (:class:`engram.core.ports.Reranker`: a cross-encoder, or a remote rerank
endpoint) reads the question and a candidate together, which neither half of recall
does. It is optional and never required: a model must ship its weights inside a package
(nothing downloads at run time) and no cross-encoder that engram can depend on does, so
none is bundled and none was measured.

What it reads: the head of the fused list (after the signals and the strengths), the
best ``max(k, RERANK_DEPTH)`` candidates, each as full text reads it (its content, then
its context on the lines after). The head is reordered by the reranker's scores, best
first; the candidates behind it keep their fused order after the head. Only hybrid
recall reranks: ``mode="text"`` and ``mode="vector"`` ask for one half as it ranks.

``RERANK_DEPTH`` is 30 by choice, not fitted (there was nothing to fit it on): six times
the default ``top_k`` of 5, so the reranker can lift a fact the fusion placed well below
the cut, within the candidate pool of 50 each half brings, while one request stays at a
few dozen texts.

What a hit says: ``score`` stays the fused score (strength included), so it means the
same with and without a reranker; ``rerank_score`` is the reranker's score, which orders
the reranked hits, and None on the hits behind them. ``relevance`` is unchanged.

Recall asks the reranker after its read transaction has ended (candidates and rows are
read in one snapshot first), so no snapshot is held open across a network call. A
reranker that fails, or answers anything but one finite score per text, raises
UpstreamFailure: recall never falls back silently to the fused order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from engram.core.errors import UpstreamFailure
from engram.core.models import Fact, RecallHit
from engram.core.ports import Reranker
from engram.core.ranking import Fused

RERANK_DEPTH = 30

Ordered = list[tuple[Fused, float | None]]
"""Candidates in their final order, each with its reranker score (None: not reranked)."""


def depth(k: int) -> int:
    """How many of the best fused candidates the reranker reads for ``k`` hits."""
    return max(k, RERANK_DEPTH)


def text_of(fact: Fact) -> str:
    """What the reranker reads of a fact: its content, then its context (as full text)."""
    return fact.content if fact.context is None else f"{fact.content}\n{fact.context}"


def reorder(
    reranker: Reranker, query: str, fused: Sequence[Fused], facts: Mapping[str, Fact], k: int
) -> Ordered:
    """``fused``'s candidates that have a row in ``facts``: the first ``depth(k)`` ordered
    by the reranker's scores (best first; equal scores keep their fused order), each with
    its score, then the rest in their fused order, each with None.

    One call of the reranker; none when there is no candidate. Raises UpstreamFailure when
    it fails or its answer is not one finite score per text.
    """
    present = [f for f in fused if f.id in facts]
    head, tail = present[: depth(k)], present[depth(k) :]
    if not head:
        return []
    texts = [text_of(facts[f.id]) for f in head]
    scores = _checked(reranker.rerank(query, texts), len(texts), reranker.model)
    order = sorted(range(len(head)), key=lambda i: -scores[i])  # stable: ties keep fusion's
    return [(head[i], scores[i]) for i in order] + [(f, None) for f in tail]


def unranked(fused: Sequence[Fused]) -> Ordered:
    """``fused`` in its own order, none of it reranked."""
    return [(f, None) for f in fused]


def merged(hit: RecallHit) -> tuple[bool, float]:
    """The sort key that merges the hits of several recalls, best first: the reranked by
    their reranker score, then the others by fused score. A stable sort by it keeps each
    recall's own order."""
    if hit.rerank_score is None:
        return True, -hit.score
    return False, -hit.rerank_score


def _checked(scores: object, expected: int, model: str) -> list[float]:
    """``scores`` as floats when they are ``expected`` finite numbers; UpstreamFailure
    otherwise (a reranker is any object: its answer is checked, not trusted)."""
    if not isinstance(scores, Sequence) or isinstance(scores, str | bytes):
        raise UpstreamFailure(f"the reranker {model!r} returned no list of scores")
    if len(scores) != expected:
        raise UpstreamFailure(
            f"the reranker {model!r} returned {len(scores)} scores for {expected} texts"
        )
    if not all(_finite_number(s) for s in scores):
        raise UpstreamFailure(
            f"the reranker {model!r} returned a score that is not a finite number"
        )
    return [float(s) for s in scores]


def _finite_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
