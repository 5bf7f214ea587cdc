"""The embedders that run in-process from an installed package, by the name a user picks
(``engram.open(embedder=…)``, ``ENGRAM_EMBEDDER``, ``--embedder``).

Importing this module loads no model and no runtime: a name's module is imported when
it is chosen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, TypeAlias

if TYPE_CHECKING:
    from engram.core.ports import Embedder

PackagedName: TypeAlias = Literal["local", "e5"]
PACKAGED: tuple[PackagedName, ...] = ("local", "e5")
"""``local``: all-MiniLM-L6-v2 int8 (``engram-durable[local]``), the default;
``e5``: multilingual-e5-small q4 (``engram-durable[e5]``)."""


def load(name: PackagedName) -> Embedder:
    """The packaged embedder ``name``, loaded; raises CapabilityMissing (with the install
    command) when its package is absent."""
    if name == "e5":
        from engram.embedders.e5 import E5Embedder

        return E5Embedder()
    from engram.embedders.local import LocalEmbedder

    return LocalEmbedder()
