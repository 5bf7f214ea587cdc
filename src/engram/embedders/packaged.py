"""The embedders that run in-process from an installed package, by the name a user picks
(``engram.open(embedder=…)``, ``ENGRAM_EMBEDDER``, ``--embedder``).

Importing this module loads no model and no runtime: a name's module is imported when
it is chosen. A model is loaded once per process: every store opened with its name shares
it (its weights are read-only and each embedder is safe across threads), so a second
store, a command run in-process or a service's maintenance step costs no second load
(0.36 to 0.58 s and the model's memory for MiniLM, measured).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Literal, TypeAlias

if TYPE_CHECKING:
    from engram.core.ports import Embedder

PackagedName: TypeAlias = Literal["local", "e5"]
PACKAGED: tuple[PackagedName, ...] = ("local", "e5")
"""``local``: all-MiniLM-L6-v2 int8 (``engram-durable[local]``), the default;
``e5``: multilingual-e5-small q4 (``engram-durable[e5]``)."""


_loaded: dict[PackagedName, Embedder] = {}
_loading = threading.Lock()


def load(name: PackagedName) -> Embedder:
    """The packaged embedder ``name``, loaded on its first use in the process and shared
    after; raises CapabilityMissing (with the install command) when its package is
    absent, and StorageFailure when its model file is not the one measured (a failure
    is not kept: the next call tries again)."""
    with _loading:
        if name not in _loaded:
            _loaded[name] = _load(name)
        return _loaded[name]


def _load(name: PackagedName) -> Embedder:
    if name == "e5":
        from engram.embedders.e5 import E5Embedder

        return E5Embedder()
    from engram.embedders.local import LocalEmbedder

    return LocalEmbedder()
