"""The store records the model that wrote its vectors and refuses incomparable ones."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

import engram
import stores
from engram import Conflict, EmbedderMismatch, ResourceRef, opening
from engram.core.models import Filters
from engram.core.ports import EmbedKind, Vectors
from engram.core.spoken import SUFFIX
from engram.opening import open_store, reconcile_model
from engram.storage.sqlite.store import SQLiteStore
from stores import Target

WORDS = re.escape(SUFFIX)  # the model record of a store whose vectors read turns' words


def _fill(target: Target, embedder: engram.HashingEmbedder, ref: ResourceRef) -> None:
    with engram.open(target, embedder=embedder) as memory:
        memory.remember_many(ref, ["alpha beta", "gamma delta", "epsilon"])


def _vectors(target: Target) -> list[bytes]:
    return [v.tobytes() for v in stores.vectors(target)]


def test_another_dimension_is_refused_before_anything_is_written(
    target: Target, ref: ResourceRef
) -> None:
    _fill(target, engram.HashingEmbedder(64), ref)
    before = _vectors(target)
    with pytest.raises(EmbedderMismatch, match=r"64 dimensions.*gives 32"):
        engram.open(target, embedder=engram.HashingEmbedder(32))
    assert _vectors(target) == before


def test_another_model_of_the_same_dimension_is_refused(target: Target, ref: ResourceRef) -> None:
    _fill(target, engram.HashingEmbedder(64, model="one"), ref)
    with pytest.raises(EmbedderMismatch, match=f"'one-64{WORDS}'.*'two-64{WORDS}'") as caught:
        engram.open(target, embedder=engram.HashingEmbedder(64, model="two"))
    assert caught.value.hint is not None and "reembed" in caught.value.hint


def test_reembed_replaces_every_vector(target: Target, ref: ResourceRef) -> None:
    _fill(target, engram.HashingEmbedder(64, model="one"), ref)
    new = engram.HashingEmbedder(32, model="two")
    with engram.open(target, embedder=new, reembed=True) as memory:
        assert new.texts_embedded == 3
        assert (
            memory.recall(ref, "gamma delta", mode="vector", top_k=1)[0].fact.content
            == "gamma delta"
        )
        memory.remember(ref, "zeta")
    assert {len(v) for v in _vectors(target)} == {32 * 4}
    with engram.open(target, embedder=engram.HashingEmbedder(32, model="two")):
        pass  # now the store belongs to the new model


def test_a_store_without_facts_takes_any_model(target: Target, ref: ResourceRef) -> None:
    with engram.open(target, embedder=engram.HashingEmbedder(64)) as memory:
        fact = memory.remember(ref, "temporary")
        memory.forget(ref, fact.id)
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as memory:
        memory.remember(ref, "fresh start")


def test_a_racing_writer_with_another_model_writes_nothing(
    target: Target, ref: ResourceRef
) -> None:
    first = engram.open(target, embedder=engram.HashingEmbedder(64, model="one"))
    second = engram.open(target, embedder=engram.HashingEmbedder(64, model="two"))
    try:
        first.remember(ref, "written by one")
        with pytest.raises(EmbedderMismatch):
            second.remember(ref, "written by two")
        assert [f.content for f in first.facts(ref).facts] == ["written by one"]
    finally:
        first.close()
        second.close()


def test_recall_with_another_dimension_is_refused_not_a_crash(
    target: Target, ref: ResourceRef
) -> None:
    early = engram.open(target, embedder=engram.HashingEmbedder(32))  # opened while empty
    writer = engram.open(target, embedder=engram.HashingEmbedder(16))
    try:
        writer.remember(ref, "sixteen dimensions")
        with pytest.raises(EmbedderMismatch, match="16 dimensions"):
            early.recall(ref, "sixteen", mode="vector")
        # the halves at once, the model's record read beside them: its error says why
        with pytest.raises(EmbedderMismatch, match=r"16 dimensions.*nothing was recalled"):
            early.recall(ref, "sixteen", mode="hybrid")
        with pytest.raises(EmbedderMismatch):
            early.remember(ref, "thirty-two dimensions")
        assert writer.count(ref) == 1
    finally:
        early.close()
        writer.close()


class Reversed(engram.HashingEmbedder):
    """Other vectors of the same dimension: each hashing vector read backwards."""

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> Vectors:
        return np.ascontiguousarray(super().embed(texts, kind)[:, ::-1])


def test_a_store_open_during_a_reembedding_reads_the_new_vectors(
    db_path: Path, ref: ResourceRef
) -> None:
    # The re-embedding leaves every content hash as it was, so only the scope's
    # The change log (every replaced vector is in it) tells another store's in-memory
    # vectors to reload.
    old, new = engram.HashingEmbedder(64, model="one"), Reversed(64, model="two")
    with engram.open(db_path, embedder=old) as before:
        before.remember_many(ref, ["alpha beta", "gamma delta", "epsilon"])
        store = before._store
        assert isinstance(store, SQLiteStore)
        query = new.embed(["gamma"], "query")[0]
        stale = stores.vector_candidates(store, ref, query, Filters(), 3)
        # engram.open refuses to re-embed while another connection has the file open (the
        # test below); a re-embedding that began before this store opened does this:
        after = open_store(db_path)
        try:
            reconcile_model(after, new, reembed=True)
            fresh = stores.vector_candidates(after, ref, query, Filters(), 3)
        finally:
            after.close()
        assert [c.score for c in stale] != [c.score for c in fresh]
        assert stores.vector_candidates(store, ref, query, Filters(), 3) == fresh
        with pytest.raises(EmbedderMismatch, match="nothing was recalled"):
            before.recall(ref, "gamma")  # its own model's query against the new vectors


def test_reembedding_refuses_while_the_store_is_open_elsewhere(
    db_path: Path, ref: ResourceRef
) -> None:
    _fill(db_path, engram.HashingEmbedder(64, model="one"), ref)
    before = _vectors(db_path)
    with engram.open(db_path, embedder=engram.HashingEmbedder(64, model="one")) as serving:
        with pytest.raises(Conflict, match="in use by another connection of this process"):
            engram.open(db_path, embedder=engram.HashingEmbedder(64, model="two"), reembed=True)
        assert _vectors(db_path) == before
        assert serving.recall(ref, "gamma delta", top_k=1)[0].fact.content == "gamma delta"
    # Nothing to re-embed needs no one's absence: the same model opens beside others.
    with engram.open(db_path, embedder=engram.HashingEmbedder(64, model="one")):
        engram.open(db_path, embedder=engram.HashingEmbedder(64, model="one"), reembed=True).close()


class FailsLater(engram.HashingEmbedder):
    """Embeds its first ``good`` calls, then fails, as a remote model going away would."""

    def __init__(self, dimension: int, *, model: str, good: int) -> None:
        super().__init__(dimension, model=model)
        self.good = good

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> Vectors:
        if self.good == 0:
            raise engram.UpstreamFailure("the embeddings endpoint went away")
        self.good -= 1
        return super().embed(texts, kind)


def test_a_reembedding_cut_short_leaves_the_store_refusing_both_models(
    target: Target, ref: ResourceRef, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = engram.HashingEmbedder(64, model="one")
    _fill(target, old, ref)
    monkeypatch.setattr(opening, "REEMBED_BATCH", 2)  # three facts: two batches
    with pytest.raises(engram.UpstreamFailure):
        engram.open(target, embedder=FailsLater(64, model="two", good=1), reembed=True)
    for model in ("one", "two"):  # half its vectors are one's, half two's: neither may read
        unfinished = f"'two-64{WORDS} \\(re-embedding unfinished\\)'"
        with pytest.raises(EmbedderMismatch, match=unfinished):
            engram.open(target, embedder=engram.HashingEmbedder(64, model=model))
    new = engram.HashingEmbedder(64, model="two")
    with engram.open(target, embedder=new, reembed=True) as memory:
        assert new.texts_embedded == 3
        assert memory.recall(ref, "epsilon", top_k=1)[0].fact.content == "epsilon"
