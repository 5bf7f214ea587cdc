"""How relevant a recalled fact is to its query, on one scale for every query.

A fused score only orders a query's own candidates: a scope's single fact scores the same
whatever is asked. Relevance instead looks at the query and the fact alone, so one
threshold means the same for every query and every scope:

- ``lexical``: the share of the query's content words (question and function words
  dropped, as the full-text half drops them) that the fact's words or context contain,
  after stripping common English endings;
- ``semantic``: the cosine similarity of the query's and the fact's vectors (unit length),
  below zero counted as zero;
- relevance: ``1 - (1 - lexical) * (1 - semantic)``, either signal raising it, neither
  alone reaching 1 unless it is complete (measured against the alternatives in
  BENCHMARKS.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from engram.core import query

_ENDINGS = ("ies", "ing", "ed", "es", "s")


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """``word`` lower-cased without a common English ending (``trams`` -> ``tram``,
    ``visited`` -> ``visit``), kept whole when short."""
    word = word.lower()
    for ending in _ENDINGS:
        if len(word) >= len(ending) + 3 and word.endswith(ending):
            return word[: -len(ending)] + ("y" if ending == "ies" else "")
    return word


def lexical(terms: Sequence[str], text: str) -> float:
    """The share of ``terms`` (a query's content words) found in ``text``."""
    if not terms:
        return 0.0
    words = {stem(w) for w in set(query.WORD.findall(text.lower()))}
    wanted = {stem(t) for t in terms}
    return len(wanted & words) / len(wanted)


def combined(lexical_share: float, cosine: float | None) -> float:
    """Relevance in [0, 1] from the lexical share and the cosine (None: no vectors)."""
    semantic = 0.0 if cosine is None else min(1.0, max(0.0, cosine))
    share = min(1.0, max(0.0, lexical_share))
    return round(1.0 - (1.0 - share) * (1.0 - semantic), 6)


def of(query_text: str, content: str, context: str | None, cosine: float | None) -> float:
    """The relevance of a fact (its words and context) to ``query_text``."""
    text = content if context is None else f"{content}\n{context}"
    return combined(lexical(query.terms(query_text), text), cosine)
