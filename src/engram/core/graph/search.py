"""Finding entities by what is asked: their names, aliases and summaries by full text, and
by meaning through the facts that mention them, the two lists fused as recall fuses facts.

The meaning half needs no vector of its own per entity: the question's nearest facts (the
vector half of a fact recall) lend each entity they mention their best cosine, so "who
paints?" finds the people the painting facts name, where a vector of the bare name
"Caroline" says nothing about her.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engram.core import feedback, query
from engram.core.graph.models import Entity
from engram.core.models import Filters
from engram.core.ports import Store, Tx, Vectors
from engram.core.ranking import Candidate, fuse
from engram.core.scopes import Scope

NAME_MATCHES = 1000  # entities whose words hold a query word, scored by BM25
FACT_POOL = 50  # the nearest facts whose mentions make the meaning half


@dataclass(frozen=True, slots=True)
class EntityHit:
    """An entity found, its fused score (orders one search's hits), and its 1-based
    rank in each half (None if absent)."""

    entity: Entity
    score: float
    text_rank: int | None
    vector_rank: int | None


def search(
    store: Store,
    tx: Tx,
    scope: Scope,
    question: str,
    vector: Vectors | None,
    *,
    top_k: int,
    types: Sequence[str],
) -> list[EntityHit]:
    terms = query.terms(question)
    texts = store.graph.named_like(tx, scope, terms, NAME_MATCHES)
    lexical = feedback.scores(terms, texts)
    semantic: list[Candidate] = []
    if vector is not None:
        nearest = store.candidates.vector(tx, scope, vector, Filters(), FACT_POOL)
        cosine = {c.id: c.score for c in nearest}
        best: dict[str, float] = {}
        for mention in store.graph.mentions(tx, scope, facts=list(cosine)):
            score = cosine[mention.fact_id]
            if score > best.get(mention.entity, float("-inf")):
                best[mention.entity] = score
        semantic = sorted(
            (Candidate(e, s) for e, s in best.items()), key=lambda c: (-c.score, c.id)
        )
    fused = fuse(lexical, semantic)
    found = store.graph.entities(tx, scope, [f.id for f in fused])
    hits = [
        EntityHit(found[f.id], f.score, f.text_rank, f.vector_rank)
        for f in fused
        if f.id in found and (not types or found[f.id].type in types)
    ]
    return hits[:top_k]
