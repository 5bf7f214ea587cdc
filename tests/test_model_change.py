"""The store records the model that wrote its vectors and refuses incomparable ones."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

import engram
import stores
from engram import Conflict, EmbedderMismatch, ResourceRef, opening
from engram.core.models import Filters
from engram.core.ports import EmbedKind, ModelRecord, Vectors
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


def _cut_short(target: Target, ref: ResourceRef, monkeypatch: pytest.MonkeyPatch) -> None:
    """Three facts of model one (64 dimensions); a re-embedding to model two (32) that
    fails after its first batch of two."""
    _fill(target, engram.HashingEmbedder(64, model="one"), ref)
    monkeypatch.setattr(opening, "REEMBED_BATCH", 2)  # three facts: two batches
    told: list[tuple[str, int, int]] = []
    with pytest.raises(engram.UpstreamFailure):
        engram.open(
            target,
            embedder=FailsLater(32, model="two", good=1),
            reembed=True,
            progress=lambda *said: told.append(said),
        )
    assert told == [("re-embedding", 0, 3), ("re-embedding", 2, 3)]


def test_a_reembedding_cut_short_leaves_the_store_refusing_both_models(
    target: Target, ref: ResourceRef, monkeypatch: pytest.MonkeyPatch
) -> None:
    _cut_short(target, ref, monkeypatch)
    assert [len(v) for v in stores.vectors(target)] == [32, 32, 64]  # one batch committed
    for embedder in (
        engram.HashingEmbedder(64, model="one"),
        engram.HashingEmbedder(32, model="two"),
    ):
        unfinished = f"'two-32{WORDS} \\(re-embedding unfinished\\)'"
        with pytest.raises(EmbedderMismatch, match=unfinished):
            engram.open(target, embedder=embedder)


def test_a_reembedding_cut_short_goes_on_after_its_last_batch(
    target: Target, ref: ResourceRef, monkeypatch: pytest.MonkeyPatch
) -> None:
    _cut_short(target, ref, monkeypatch)
    new = engram.HashingEmbedder(32, model="two")
    told: list[tuple[str, int, int]] = []
    with engram.open(
        target, embedder=new, reembed=True, progress=lambda *said: told.append(said)
    ) as memory:
        assert new.texts_embedded == 1  # the first batch's two facts kept what it gave them
        assert told == [("re-embedding", 0, 1), ("re-embedding", 1, 1)]  # what was left
        for text in ("alpha beta", "gamma delta", "epsilon"):
            assert memory.recall(ref, text, mode="vector", top_k=1)[0].fact.content == text
    expected = engram.HashingEmbedder(32).embed(["alpha beta", "gamma delta", "epsilon"], "passage")
    stored = stores.vectors(target)
    assert all(np.allclose(s, e, atol=1e-3) for s, e in zip(stored, expected, strict=True))
    # Finished, it leaves no place to go on from: a re-embedding marked unfinished with no
    # place of its own (as one from before such places were kept) embeds every fact.
    monkeypatch.setattr(opening, "REEMBED_BATCH", 256)
    fourth = engram.HashingEmbedder(16, model="four")
    store = open_store(target)
    try:
        unfinished = ModelRecord(f"{fourth.model}{SUFFIX}", 16).under_way()
        store.run(lambda tx: store.models.put(tx, unfinished))
    finally:
        store.close()
    with engram.open(target, embedder=fourth, reembed=True):
        assert fourth.texts_embedded == 3
    with engram.open(
        target, embedder=(third := engram.HashingEmbedder(16, model="three")), reembed=True
    ):
        assert third.texts_embedded == 3


def test_an_export_of_a_reembedding_cut_short_lends_its_vectors_to_no_import(
    target: Target, ref: ResourceRef, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Its vectors are of two models under one record: an import embeds its facts, or
    refuses with no embedder, the store cut short included (a fact written there below the
    re-embedding's place would have kept the old model's vector once it finished)."""
    _cut_short(target, ref, monkeypatch)
    exported = tmp_path / "cut.jsonl"
    with engram.open(target, embedder=None) as memory:
        memory.export(ref, exported)
        with pytest.raises(engram.CapabilityMissing, match="of a re-embedding cut short"):
            memory.import_file(ResourceRef("other"), exported)
        assert memory.count(ResourceRef("other")) == 0
    elsewhere = tmp_path / "elsewhere.db"
    with engram.open(elsewhere, embedder=None) as memory:
        with pytest.raises(engram.CapabilityMissing, match="of a re-embedding cut short"):
            memory.import_file(ref, exported)
        assert memory.count(ref) == 0
    new = engram.HashingEmbedder(32, model="two")
    with engram.open(elsewhere, embedder=new) as memory:
        report = memory.import_file(ref, exported)
        assert (report.facts_added, report.vectors_reused, report.vectors_embedded) == (3, 0, 3)
        assert memory.recall(ref, "epsilon", mode="vector", top_k=1)[0].fact.content == "epsilon"
        memory.export(ref, tmp_path / "finished.jsonl")
    # A file that names a re-embedding cut short beside its vectors (as one exported
    # before such exports left them out) lends them to no import either.
    head, *rest = (tmp_path / "finished.jsonl").read_text().splitlines(keepends=True)
    named = json.loads(head)
    named["model"]["name"] += ModelRecord.UNDER_WAY
    (tmp_path / "named.jsonl").write_text(json.dumps(named) + "\n" + "".join(rest))
    with (
        engram.open(tmp_path / "third.db", embedder=None) as memory,
        pytest.raises(engram.CapabilityMissing, match="of a re-embedding cut short"),
    ):
        memory.import_file(ref, tmp_path / "named.jsonl")


def test_a_reembedding_to_another_model_than_the_one_cut_short_starts_over(
    target: Target, ref: ResourceRef, monkeypatch: pytest.MonkeyPatch
) -> None:
    _cut_short(target, ref, monkeypatch)
    other = engram.HashingEmbedder(16, model="three")
    with engram.open(target, embedder=other, reembed=True) as memory:
        assert other.texts_embedded == 3
        assert memory.recall(ref, "epsilon", top_k=1)[0].fact.content == "epsilon"
    assert [len(v) for v in stores.vectors(target)] == [16, 16, 16]
