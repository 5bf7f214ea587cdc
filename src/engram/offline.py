"""What engram's dependencies would do on the network or on disk of their own accord,
turned off before they load, and the order two of them must load in: nothing leaves the
machine, nothing is written outside the store, unless a caller asks (a remote endpoint,
a URL to ingest), and no process crashes.

- onnxruntime (the local model) sends usage telemetry from its Linux wheels too: from
  the moment it is imported it keeps a device id and a queue of events under
  ``~/.cache/Microsoft/DeveloperTools/.onnxruntime``, writes a ``.ses`` file in the
  temporary folder, and looks up and posts to ``mobile.events.data.microsoft.com`` from a
  native thread. ``ORT_DISABLE_TELEMETRY=1``, read at import, stops all of it;
  ``disable_telemetry_events()`` (see :func:`onnxruntime_quiet`) stops the events of a
  runtime someone else imported first.
- usearch (the vector graphs) and onnxruntime cannot share a process in one order:
  onnxruntime loaded after usearch's native library crashes the process while it loads
  (a segmentation fault, no message; usearch 2.26, onnxruntime 1.32). Where both are
  installed, onnxruntime is loaded, quietly, before usearch (:func:`before_usearch`),
  whatever the embedder: the process may load the local model later.
- huggingface_hub (a dependency of ``tokenizers``, and of transformer-based spaCy
  pipelines) sends telemetry with the requests it makes (``HF_HUB_DISABLE_TELEMETRY``),
  and a transformer pipeline may ask the Hub for its tokenizer while it loads
  (``HF_HUB_OFFLINE``, ``TRANSFORMERS_OFFLINE``). engram never asks the Hub for anything.

Each variable is set only when the user has not set it (a user who sets one has asked),
and only where engram is about to load the dependency. The telemetry switches turn off
nothing a program could use; the offline ones are set where engram loads a spaCy
pipeline, and by the ``engram`` command, which owns its process.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import Any

from engram.core.errors import CapabilityMissing

TELEMETRY = {"ORT_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
USEARCH_NATIVE = "usearch.compiled"  # usearch's native library, as Python names it


def no_telemetry() -> None:
    """Every dependency's telemetry off, unless the user chose otherwise."""
    for name, value in TELEMETRY.items():
        os.environ.setdefault(name, value)


def offline() -> None:
    """No telemetry, and no download from the Hugging Face Hub, unless the user chose
    otherwise."""
    no_telemetry()
    for name, value in OFFLINE.items():
        os.environ.setdefault(name, value)


def has_onnxruntime() -> bool:
    """Whether onnxruntime is installed (found without importing it)."""
    return importlib.util.find_spec("onnxruntime") is not None


def onnxruntime_quiet() -> Any:
    """``onnxruntime``, imported with its telemetry off (raises ImportError when it is
    not installed); CapabilityMissing where usearch's native library was loaded before
    it (by a program that imported usearch itself first), which would crash the process."""
    no_telemetry()
    if USEARCH_NATIVE in sys.modules and "onnxruntime" not in sys.modules and has_onnxruntime():
        raise CapabilityMissing(
            "the local embedding model cannot load in this process: usearch was imported "
            "before onnxruntime, and onnxruntime loaded after it crashes the process",
            hint="import onnxruntime before usearch, or open the store first",
        )
    import onnxruntime

    if os.environ.get("ORT_DISABLE_TELEMETRY") == "1":  # also when imported before us
        onnxruntime.disable_telemetry_events()
    return onnxruntime


def before_usearch() -> None:
    """Called before usearch is imported: onnxruntime loaded first where it is installed
    (with its telemetry off), unless usearch's native library is loaded already, when
    loading it would crash the process."""
    if USEARCH_NATIVE not in sys.modules and has_onnxruntime():
        onnxruntime_quiet()
