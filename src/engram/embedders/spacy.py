"""A spaCy pipeline as the graph's name recogniser (``engram-durable[nlp]``): the ``spacy``
extractor reads facts with it (:mod:`engram.core.graph.ner`), never inline.

Give it a loaded ``spacy.Language`` (used as it is: ``spacy.blank("en")`` with an
``entity_ruler``, a trained pipeline, one loaded with components left out), or the name
of an installed pipeline package or a pipeline's directory, loaded with ``spacy.load``
on first use. Nothing is ever downloaded: ``spacy.load`` reads only what is installed,
engram never calls spaCy's download command, and a transformer pipeline's loading is
kept off the Hugging Face Hub (:mod:`engram.offline`). The official pipelines are not on PyPI:
install one from spaCy's own releases, or pass a pipeline loaded from a directory.

The name is checked when the recogniser is made, without importing spaCy (1.3 s here):
spaCy must be installed, and the name an installed package (``spacy.load``'s own test),
a directory that exists or ``blank:<lang>``; anything else is CapabilityMissing, with
the install hint. So the service and the command line, which make one from
``ENGRAM_SPACY_MODEL`` at start, fail early on a wrong name and pay the load only when
the extractor runs. A pipeline loaded by name keeps only what its entities need when
only trained ``ner`` components set them (its tagger, parser and lemmatizer are
disabled: half the time, and the same entities on the labelled turns, BENCHMARKS.md); one
with an ``entity_ruler`` or any other component setting entities keeps them all, since
its patterns may read any attribute.

Texts go through ``nlp.pipe`` in batches (``batch_size``, 64 unless told), one call at a
time (a lock: a pipeline is not promised to be safe across threads). Any failure of the
pipeline while reading is an UpstreamFailure naming the error's kind, never the texts.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engram import offline
from engram.core import installing
from engram.core.errors import CapabilityMissing, InvalidInput, UpstreamFailure
from engram.core.ports import Span

if TYPE_CHECKING:
    from spacy.language import Language

INSTALL = f"{installing.extra('nlp')}, then a spaCy pipeline package"
PIPELINE = (
    "install a pipeline package (the official ones are not on PyPI: pip install one from "
    "spaCy's own releases, github.com/explosion/spacy-models), or name a pipeline's "
    "directory; engram never downloads one"
)
ENTITY_RECOGNISERS = ("ner", "beam_ner")  # trained factories: they read only their tokens
MAX_BATCH = 10_000


class SpacyRecogniser:
    """Named entities by a spaCy pipeline: ``nlp`` a loaded ``spacy.Language``, or an
    installed pipeline's package name or directory (loaded on first use). Thread-safe.

    Raises CapabilityMissing, with the install hint, when spaCy is not installed or the
    name is no installed pipeline, and InvalidInput for an ``nlp`` of another kind or a
    ``batch_size`` outside 1 to 10,000.
    """

    def __init__(self, nlp: Language | str | os.PathLike[str], *, batch_size: int = 64) -> None:
        if type(batch_size) is not int or not 1 <= batch_size <= MAX_BATCH:
            raise InvalidInput(f"batch_size must be an integer from 1 to {MAX_BATCH}")
        self._batch_size = batch_size
        self._lock = threading.Lock()
        self._nlp: Any = None
        if isinstance(nlp, str | os.PathLike) and str(nlp).strip():
            self._name = os.fspath(nlp)
            _check_installed(self._name)
        elif callable(getattr(nlp, "pipe", None)):
            self._nlp = nlp
            self._name = _name_of(nlp)
        else:
            raise InvalidInput(
                "nlp must be a spaCy Language, or a pipeline's package name or directory, "
                f"got {type(nlp).__name__}"
            )

    @property
    def model(self) -> str:
        """The package name or directory given, or a loaded pipeline's
        ``{lang}_{name}-{version}``."""
        return self._name

    def recognise(self, texts: Sequence[str]) -> list[list[Span]]:
        """Each text's entities, ``(start, end, label)``, in order. Raises
        CapabilityMissing when the named pipeline cannot be loaded, UpstreamFailure when it
        fails reading."""
        if isinstance(texts, str) or not all(isinstance(t, str) for t in texts):
            raise InvalidInput("recognise takes a list of texts")
        with self._lock:
            nlp = self._pipeline()
            try:
                docs = list(nlp.pipe(texts, batch_size=self._batch_size))
            except Exception as exc:  # spaCy and its components raise many kinds
                raise UpstreamFailure(
                    f"the spaCy pipeline {self._name!r} failed reading ({type(exc).__name__})"
                ) from exc
        return [[(e.start_char, e.end_char, str(e.label_)) for e in doc.ents] for doc in docs]

    def _pipeline(self) -> Any:
        """The pipeline, loaded by name the first time (under the lock)."""
        if self._nlp is None:
            self._nlp = _load(self._name)
        return self._nlp


def _check_installed(name: str) -> None:
    """CapabilityMissing unless spaCy is installed and ``name`` is what ``spacy.load``
    can load without downloading: ``blank:<lang>``, an installed package, a directory."""
    if importlib.util.find_spec("spacy") is None:
        raise CapabilityMissing(
            "the spacy extractor needs spaCy, which is not installed", hint=INSTALL
        )
    if name.startswith("blank:") or Path(name).exists():
        return
    try:
        importlib.metadata.distribution(name)
    except (importlib.metadata.PackageNotFoundError, ValueError):
        raise CapabilityMissing(
            f"no spaCy pipeline {name!r} is installed here", hint=PIPELINE
        ) from None


def _load(name: str) -> Any:
    """``spacy.load(name)``, keeping only what its entities need (see the module)."""
    offline.offline()  # a transformer pipeline may ask the Hub for its tokenizer
    try:
        import spacy

        nlp = spacy.load(name)
    except ImportError as exc:
        raise CapabilityMissing(
            f"the spacy extractor needs spaCy, which cannot be imported ({exc.name})",
            hint=INSTALL,
        ) from exc
    except Exception as exc:  # E050 (not found), a bad config, a factory not installed
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CapabilityMissing(
            f"the spaCy pipeline {name!r} cannot be loaded: {reason}", hint=PIPELINE
        ) from exc
    _entities_only(nlp)
    return nlp


def _entities_only(nlp: Any) -> None:
    """Disables the components no entity needs, when only trained recognisers set
    entities: those they listen to (a shared ``tok2vec`` or ``transformer``) stay."""
    setters = [n for n in nlp.pipe_names if "doc.ents" in nlp.get_pipe_meta(n).assigns]
    if not setters or any(nlp.get_pipe_meta(n).factory not in ENTITY_RECOGNISERS for n in setters):
        return
    needed = set(setters)
    for name, pipe in nlp.pipeline:
        if needed & set(getattr(pipe, "listening_components", None) or ()):
            needed.add(name)
    for name in nlp.pipe_names:
        if name not in needed:
            nlp.disable_pipe(name)


def _name_of(nlp: Any) -> str:
    meta = getattr(nlp, "meta", None) or {}
    return f"{meta.get('lang', 'xx')}_{meta.get('name', 'pipeline')}-{meta.get('version', '0')}"
