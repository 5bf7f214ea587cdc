"""A scope's graph as stored, read for the rebuild properties (``test_graph_rebuild.py``
and ``test_llm_graph_rebuild.py``): its entities, mentions, and the groundings the rules
made (a model's are the llm property's to check on their own)."""

from __future__ import annotations

from typing import Any

import engram
from engram import ResourceRef
from engram.storage.sql.tx import sql


def rows(memory: engram.Memory, text: str, params: tuple[Any, ...] = ()) -> list[Any]:
    """``text`` read through the store's own connection (one snapshot)."""
    store = memory._store
    return list(store.run(lambda tx: sql(tx).rows(text, params), write=False))


def stored(memory: engram.Memory, ref: ResourceRef) -> dict[str, Any]:
    key = ref.key
    entities = rows(memory, "SELECT id, norm, origin FROM entities WHERE scope = ?", (key,))
    mentions = rows(
        memory, 'SELECT fact_id, start, "end", entity FROM mentions WHERE scope = ?', (key,)
    )
    groundings = rows(
        memory,
        "SELECT g.fact_id, g.entity FROM groundings g JOIN entities e ON e.id = g.entity "
        "WHERE e.scope = ? AND g.extractor = 'rules'",
        (key,),
    )
    return {
        "entities": sorted((str(i), str(n), str(o)) for i, n, o in entities),
        "mentions": sorted((str(f), int(s), int(e), str(n)) for f, s, e, n in mentions),
        "groundings": sorted((str(f), str(e)) for f, e in groundings),
    }
