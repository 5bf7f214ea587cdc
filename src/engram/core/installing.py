"""How engram's optional parts are installed, said once for every hint that names one.

The distribution is ``engram-durable``: the name ``engram`` in the package index belongs
to an unrelated project, so ``pip install engram`` would install that instead. The
package it installs is imported as ``engram``. It is installed from a checkout (or a
wheel built from one), not from the index.
"""

from __future__ import annotations

DISTRIBUTION = "engram-durable"


def extra(name: str) -> str:
    """How the optional part ``name`` is installed: ``pip install '.[nlp]'`` in engram's
    checkout, the extra ``engram-durable[nlp]``."""
    return f"pip install '.[{name}]' in engram's checkout (the extra {DISTRIBUTION}[{name}])"
