"""LangGraph's ``BaseStore`` kept in engram: :class:`EngramStore` (the ``[langgraph]`` extra).

**Namespaces.** A namespace is the scope ``ResourceRef(encode(namespace))``: each label
escapes ``%`` (as ``%25``) and ``/`` (as ``%2F``) and the labels are joined with ``/``,
so no two namespaces share a scope and a scope names its namespace back. Labels are
checked as upstream checks them (a label empty, holding ``.`` or NUL, a root label
``langgraph``: InvalidNamespaceError), and so is an encoded namespace over 256
characters, the limit of a scope's part. A prefix matches a namespace label by label:
``("a",)`` matches ``("a",)`` and ``("a", "b")``, never ``("ab",)``; ``()`` matches all.

**Items** are working-memory keys of their namespace's scope, each holding
``{"value": <the item's value>, "langgraph": {"facts": [<ids>], "created_at": <µs>}}``,
so versions, the ledger, exports and TTL carry them; a value is at most 64 KiB of JSON
once wrapped. ``created_at`` is written from the first replace on; until then the key's
own time is the item's creation too (both come from the memory's clock). A dict written
under such a scope by other means reads as an item created when it was last updated.
``ttl`` (minutes) sets the key's expiry at each put; a read does not extend it
(``refresh_on_read`` is not honoured: it would make every read a write, with a version
and a ledger entry).

**Search by meaning.** With ``index={"fields": [...]}`` (or ``index=[...]`` on a put),
the text at those fields (at most 2,000 characters each, a fact's limit) becomes facts of
type ``lg:item`` in the namespace's scope, and the item lists their ids; the store's own
embedder embeds them (``dims`` and ``embed`` of the config are not used). A search with
a query runs hybrid recall in each namespace under the prefix (at most 100, InvalidInput
beyond), scores each item by its best fact's relevance (one scale for every scope) and
merges the namespaces by it; items with no matching fact follow, unscored, as upstream.
Two items holding the same text share one fact (a scope keeps a text once); replacing or
deleting an item hard-forgets each of its facts that no other item of the namespace
lists. Searches and those releases read the namespace's items, so they cost as many
reads as the namespace holds items. Facts of an item that expired stay until forgotten.

**Filters** compare top-level fields as ``InMemoryStore`` does (plain equality, nested
dicts and lists, ``$eq $ne $gt $gte $lt $lte``), except that an ordering operator on a
missing or non-numeric value does not match where upstream raises TypeError.

Operations of a batch run in order, each on its own; ``abatch`` runs ``batch`` in a
worker thread. A search without a query lists items by namespace, then by key.
"""

from engram.integrations.langgraph.namespaces import decode, encode
from engram.integrations.langgraph.store import EngramStore

__all__ = ["EngramStore", "decode", "encode"]
