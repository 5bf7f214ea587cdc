"""The store records the model that wrote its vectors and refuses incomparable ones."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import engram
from engram import EmbedderMismatch, ResourceRef


def _fill(db_path: Path, embedder: engram.HashingEmbedder, ref: ResourceRef) -> None:
    with engram.open(db_path, embedder=embedder) as memory:
        memory.remember_many(ref, ["alpha beta", "gamma delta", "epsilon"])


def _vectors(db_path: Path) -> list[bytes]:
    conn = sqlite3.connect(db_path)
    rows = [r[0] for r in conn.execute("SELECT vector FROM fact_vectors ORDER BY fact")]
    conn.close()
    return rows


def test_another_dimension_is_refused_before_anything_is_written(
    db_path: Path, ref: ResourceRef
) -> None:
    _fill(db_path, engram.HashingEmbedder(64), ref)
    before = _vectors(db_path)
    with pytest.raises(EmbedderMismatch, match=r"64 dimensions.*gives 32"):
        engram.open(db_path, embedder=engram.HashingEmbedder(32))
    assert _vectors(db_path) == before


def test_another_model_of_the_same_dimension_is_refused(db_path: Path, ref: ResourceRef) -> None:
    _fill(db_path, engram.HashingEmbedder(64, model="one"), ref)
    with pytest.raises(EmbedderMismatch, match=r"'one-64'.*'two-64'") as caught:
        engram.open(db_path, embedder=engram.HashingEmbedder(64, model="two"))
    assert caught.value.hint is not None and "reembed" in caught.value.hint


def test_reembed_replaces_every_vector(db_path: Path, ref: ResourceRef) -> None:
    _fill(db_path, engram.HashingEmbedder(64, model="one"), ref)
    new = engram.HashingEmbedder(32, model="two")
    with engram.open(db_path, embedder=new, reembed=True) as memory:
        assert new.texts_embedded == 3
        assert (
            memory.recall(ref, "gamma delta", mode="vector", top_k=1)[0].fact.content
            == "gamma delta"
        )
        memory.remember(ref, "zeta")
    assert {len(v) for v in _vectors(db_path)} == {32 * 4}
    with engram.open(db_path, embedder=engram.HashingEmbedder(32, model="two")):
        pass  # now the store belongs to the new model


def test_a_store_without_facts_takes_any_model(db_path: Path, ref: ResourceRef) -> None:
    with engram.open(db_path, embedder=engram.HashingEmbedder(64)) as memory:
        fact = memory.remember(ref, "temporary")
        memory.forget(ref, fact.id)
    with engram.open(db_path, embedder=engram.HashingEmbedder(16)) as memory:
        memory.remember(ref, "fresh start")


def test_a_racing_writer_with_another_model_writes_nothing(db_path: Path, ref: ResourceRef) -> None:
    first = engram.open(db_path, embedder=engram.HashingEmbedder(64, model="one"))
    second = engram.open(db_path, embedder=engram.HashingEmbedder(64, model="two"))
    try:
        first.remember(ref, "written by one")
        with pytest.raises(EmbedderMismatch):
            second.remember(ref, "written by two")
        assert [f.content for f in first.facts(ref).facts] == ["written by one"]
    finally:
        first.close()
        second.close()


def test_recall_with_another_dimension_is_refused_not_a_crash(
    db_path: Path, ref: ResourceRef
) -> None:
    early = engram.open(db_path, embedder=engram.HashingEmbedder(32))  # opened while empty
    writer = engram.open(db_path, embedder=engram.HashingEmbedder(16))
    try:
        writer.remember(ref, "sixteen dimensions")
        with pytest.raises(EmbedderMismatch, match="16 dimensions"):
            early.recall(ref, "sixteen", mode="vector")
        with pytest.raises(EmbedderMismatch):
            early.remember(ref, "thirty-two dimensions")
        assert writer.count(ref) == 1
    finally:
        early.close()
        writer.close()
