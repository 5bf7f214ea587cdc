"""The knowledge graph: entities, relations with their times, and the facts that mention
and support them (:mod:`engram.core.graph.models`), kept by
:mod:`engram.core.graph.assertions` (what callers assert) and
:mod:`engram.core.graph.indexing` (what facts' words give)."""
