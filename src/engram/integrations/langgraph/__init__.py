"""LangGraph's ``BaseStore`` kept in engram: :class:`EngramStore` (the ``[langgraph]`` extra),
and :class:`AsyncEngramStore`, the same with LangGraph's async stores' sweeper.

**Namespaces.** A namespace is the scope ``ResourceRef(encode(namespace))``: each label
escapes ``%`` (as ``%25``) and ``/`` (as ``%2F``) and the labels are joined with ``/``,
so no two namespaces share a scope and a scope names its namespace back. Labels are
checked as upstream checks them (a label empty or holding ``.`` or NUL:
InvalidNamespaceError; a root label ``langgraph`` is refused by ``put`` and taken through
``batch``, as upstream's stores do), and so is an encoded namespace over 256 characters,
the limit of a scope's part. A namespace or prefix may be given as a list. A prefix
matches a namespace label by label: ``("a",)`` matches ``("a",)`` and ``("a", "b")``,
never ``("ab",)``; ``()`` matches all.

**Items** are working-memory keys of their namespace's scope, each holding
``{"value": <the item's value>, "langgraph": {"facts": [<ids>], "created_at": <µs>}}``,
so versions, the ledger, exports and TTL carry them; a value is at most 64 KiB of JSON
once wrapped. ``created_at`` is written from the first replace on; until then the key's
own time is the item's creation too (both come from the memory's clock). A dict written
under such a scope by other means reads as an item created when it was last updated.
``ttl`` (minutes) sets the key's expiry at each put. A read asked to refresh it (the
store's ``refresh_on_read``, true by default as upstream's, or a call's ``refresh_ttl``)
pushes the expiry back to the item's ttl from now, and changes nothing else of it: that
read writes the key again (a new version, a ledger entry), as upstream's SQL stores
update a row.

**Search by meaning.** With ``index={"fields": [...]}`` (``text_fields``, as upstream's
SQLite store spells it, too; or ``index=[...]`` on a put), the text at those fields (at
most 2,000 characters each, a fact's limit) becomes facts of type ``lg:item`` in the
namespace's scope, and the item lists their ids; the store's own embedder embeds them
(``dims`` and ``embed`` of the config are not used). A search with a query scores every
item under the prefix (at most 100 namespaces, InvalidInput beyond) that the filter
keeps as upstream's stores score it: its best indexed text's similarity to the query by
the index's ``distance_type``: ``cosine`` (the default: cosine similarity), the
``inner_product``, or ``l2`` (the Euclidean distance, negated, so the closest is first;
any other type is InvalidInput). Items with no indexed text follow, unscored, as
upstream. (Upstream's SQLite store scores ``inner_product`` by an L1 distance and ranks
``l2`` farthest first; this store follows the names.)
Two items holding the same text share one fact (a scope keeps a text once); replacing or
deleting an item hard-forgets each of its facts that no other item of the namespace
lists. Searches and those releases read the namespace's items, so they cost as many
reads as the namespace holds items. An item that expired is hidden at once and stays
stored, as upstream's, until ``sweep_ttl()`` (or the thread ``start_ttl_sweeper()``
starts, every ``sweep_interval_minutes``), a delete or a put of its namespace sweeps it:
then the facts only it listed are forgotten for good with it.

**Filters** compare fields as ``InMemoryStore`` does (plain equality, nested dicts and
lists, ``$eq $ne $gt $gte $lt $lte``), except that an ordering operator on a missing or
non-numeric value does not match where upstream raises TypeError; a key that names no
field of the value is read as a dotted path into nested ones (``"user.level"``), as
upstream's SQL stores read it.

Operations of a batch run in order, each on its own; ``abatch`` runs ``batch`` in a
worker thread. A search without a query lists items by namespace, then by key.
"""

from engram.integrations.langgraph.namespaces import decode, encode
from engram.integrations.langgraph.store import AsyncEngramStore, EngramStore

__all__ = ["AsyncEngramStore", "EngramStore", "decode", "encode"]
