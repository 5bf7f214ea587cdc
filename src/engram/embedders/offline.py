"""What engram's dependencies would do on the network or on disk of their own accord,
turned off before they load: nothing leaves the machine, and nothing is written outside
the store, unless a caller asks (a remote endpoint, a URL to ingest).

- onnxruntime (the local model) sends usage telemetry from its Linux wheels too: from
  the moment it is imported it keeps a device id and a queue of events under
  ``~/.cache/Microsoft/DeveloperTools/.onnxruntime``, writes a ``.ses`` file in the
  temporary folder, and looks up and posts to ``mobile.events.data.microsoft.com`` from a
  native thread. ``ORT_DISABLE_TELEMETRY=1``, read at import, stops all of it;
  ``disable_telemetry_events()`` (see :func:`onnxruntime_quiet`) stops the events of a
  runtime someone else imported first.
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

import os
from typing import Any

TELEMETRY = {"ORT_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


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


def onnxruntime_quiet() -> Any:
    """``onnxruntime``, imported with its telemetry off (raises ImportError when it is
    not installed)."""
    no_telemetry()
    import onnxruntime

    if os.environ.get("ORT_DISABLE_TELEMETRY") == "1":  # also when imported before us
        onnxruntime.disable_telemetry_events()
    return onnxruntime
