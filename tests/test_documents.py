"""Documents on both backends: each chunk a fact traced back to its span, re-ingest a
no-op for the same bytes, a changed document replaced whole (no stale chunk fact left
live, a revert brings the old version back), refusals that write nothing, and two
writers replacing one document never leaving a mix."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

import engram
import stores
from engram import InvalidInput, NotFound, ResourceRef, Unprocessable
from engram.core.ports import TokenCounter
from stores import Target

REF = ResourceRef("reader")
# Each paragraph is a chunk of its own at chunk_tokens=16: two never fit together.
ONE, TWO, THREE = (f"The {n} one differs from the rest." for n in ("first", "second", "third"))
GUIDE = """---
title: The guide
author: Ana
---
Intro: what this guide is for.

Install
=======

Run the installer. It takes a minute.

```python
# not a heading, a comment
print("hello")
```

## Configure

Set the port and the host.

# Use

Start it and open the page.
"""


@pytest.fixture
def mem(target: Target) -> Iterator[engram.Memory]:
    with engram.open(target, embedder=engram.HashingEmbedder(32)) as memory:
        yield memory


def live_chunk_facts(mem: engram.Memory, doc: engram.Document) -> list[engram.Fact]:
    return [mem.fact(REF, c.fact_id) for c in doc.chunks if c.fact_id is not None]


def test_markdown_is_cut_by_headings_and_each_chunk_is_a_fact(mem: engram.Memory) -> None:
    report = mem.ingest_text(REF, GUIDE, name="guide.md", chunk_tokens=64)
    assert report.status == "created" and report.chunks >= 4
    doc = mem.document(REF, report.document_id or "")
    assert doc.title == "The guide" and doc.metadata == {"title": "The guide", "author": "Ana"}
    headings = [c.heading for c in doc.chunks]
    assert "Install › Configure" in headings and "Use" in headings
    assert not any("not a heading" in h for h in headings)
    for chunk, fact in zip(doc.chunks, live_chunk_facts(mem, doc), strict=True):
        assert GUIDE[chunk.start : chunk.end] == fact.content
        assert fact.metadata["document"] == doc.id and fact.metadata["idx"] == chunk.idx
        assert fact.type == "document" and fact.context
    fence = next(f for f in live_chunk_facts(mem, doc) if "print" in f.content)
    assert "```python" in fence.content and fence.content.count("```") == 2


def test_the_same_bytes_again_write_nothing(mem: engram.Memory) -> None:
    first = mem.ingest_text(REF, GUIDE, name="guide.md")
    entries = mem.ledger(REF).entries
    again = mem.ingest_text(REF, GUIDE.encode(), name="guide.md")
    assert again.status == "unchanged" and again.document_id == first.document_id
    assert mem.ledger(REF).entries == entries


def test_a_changed_document_replaces_its_chunks_and_a_revert_brings_them_back(
    mem: engram.Memory,
) -> None:
    old = f"{ONE}\n\n{TWO}\n\n{THREE}"
    new = f"{ONE}\n\n{TWO.upper()}\n\n{THREE} Edited."
    created = mem.ingest_text(REF, old, name="n.txt", media_type="text/plain", chunk_tokens=16)
    before = mem.document(REF, created.document_id or "")
    replaced = mem.ingest_text(REF, new, name="n.txt", media_type="text/plain", chunk_tokens=16)
    assert replaced.status == "replaced" and replaced.document_id == created.document_id
    after = mem.document(REF, replaced.document_id or "")
    live = {f.content for f in mem.facts(REF).facts}
    assert live == {new[c.start : c.end] for c in after.chunks}  # nothing stale stays live
    assert mem.count(REF) == len(after.chunks)
    entry = mem.ledger(REF).entries[0]
    assert entry.op == "ingest"
    mem.revert(REF, entry.seq)
    assert mem.document(REF, created.document_id or "").chunks == before.chunks
    assert {f.content for f in mem.facts(REF).facts} == {
        old[c.start : c.end] for c in before.chunks
    }


def test_two_identical_chunks_share_one_fact(mem: engram.Memory) -> None:
    text = f"{ONE}\n\n{TWO}\n\n{ONE}"
    report = mem.ingest_text(REF, text, name="d.txt", media_type="text/plain", chunk_tokens=16)
    doc = mem.document(REF, report.document_id or "")
    assert len(doc.chunks) == 3 and doc.chunks[0].fact_id == doc.chunks[2].fact_id
    assert mem.count(REF) == 2


def test_a_fact_another_document_names_stays_live(mem: engram.Memory) -> None:
    def ingest(text: str, name: str) -> engram.IngestReport:
        return mem.ingest_text(REF, text, name=name, media_type="text/plain", chunk_tokens=16)

    ingest(f"{ONE}\n\n{TWO}", "a.txt")
    b = ingest(f"{ONE}\n\n{THREE}", "b.txt")
    ingest(TWO, "a.txt")  # a no longer names ONE; b still does
    assert {f.content for f in mem.facts(REF).facts} == {ONE, TWO, THREE}
    assert mem.forget_document(REF, b.document_id or "")
    assert {f.content for f in mem.facts(REF).facts} == {TWO}
    with pytest.raises(NotFound):
        mem.document(REF, b.document_id or "")
    assert [d.source for d in mem.documents(REF)] == ["a.txt"]
    mem.revert(REF, mem.ledger(REF).entries[0].seq)
    assert [d.source for d in mem.documents(REF)] == ["a.txt", "b.txt"]
    assert {f.content for f in mem.facts(REF).facts} == {ONE, TWO, THREE}


def test_latin_1_bytes_are_read_as_text(mem: engram.Memory) -> None:
    text = "Crème brûlée à la française, déjà vu, naïve façade, où est le café ?"
    report = mem.ingest_text(REF, text.encode("latin-1"), name="fr.txt", media_type="text/plain")
    doc = mem.document(REF, report.document_id or "")
    assert live_chunk_facts(mem, doc)[0].content == text


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"strategy": "sentences"}, InvalidInput),
        ({"chunk_tokens": 15}, InvalidInput),
        ({"chunk_tokens": 255}, InvalidInput),
        ({"chunk_tokens": True}, InvalidInput),
        ({"media_type": "application/pdf"}, InvalidInput),
        ({"name": ""}, InvalidInput),
        ({"data": b"\x00\x01\x02binary"}, Unprocessable),
    ],
)
def test_refusals_write_nothing(mem: engram.Memory, kwargs: dict[str, object], error: type) -> None:
    args: dict[str, object] = {"data": GUIDE, "name": "guide.md", **kwargs}
    with pytest.raises(error):
        mem.ingest_text(REF, **args)  # type: ignore[arg-type]
    assert mem.ledger(REF).entries == [] and mem.documents(REF) == [] and mem.count(REF) == 0


def test_two_writers_replacing_one_document_never_leave_a_mix(mem: engram.Memory) -> None:
    versions = ["\n\n".join(f"Version {v}, paragraph {p}." for p in range(6)) for v in ("A", "B")]
    mem.ingest_text(REF, "Start.", name="race.txt", media_type="text/plain")
    errors: list[BaseException] = []

    def ingest(text: str) -> None:
        try:
            for _ in range(3):
                mem.ingest_text(
                    REF, text, name="race.txt", media_type="text/plain", chunk_tokens=16
                )
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=ingest, args=(v,)) for v in versions]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    doc = mem.documents(REF)[0]
    full = mem.document(REF, doc.id)
    text = next(v for v in versions if reading_sha(v) == full.sha256)
    assert {f.content for f in mem.facts(REF).facts} == {text[c.start : c.end] for c in full.chunks}


def reading_sha(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode()).hexdigest()


def test_deleting_the_scope_deletes_its_documents(mem: engram.Memory) -> None:
    mem.ingest_text(REF, GUIDE, name="guide.md")
    mem.delete_scope(REF)
    assert mem.documents(REF) == [] and mem.count(REF) == 0


def test_with_the_local_model_no_chunk_exceeds_its_tokens(local_mem: engram.Memory) -> None:
    sections = [
        f"## Part {n}\n\n"
        + " ".join(f"Sentence {n}.{i} about antidisestablishmentarianism." for i in range(60))
        for n in range(4)
    ]
    text = "# Long\n\n" + "\n\n".join(sections)
    report = local_mem.ingest_text(REF, text, name="long.md", chunk_tokens=254)
    doc = local_mem.document(REF, report.document_id or "")
    embedder = local_mem.embedder
    assert isinstance(embedder, TokenCounter) and len(doc.chunks) > 4
    for chunk in doc.chunks:
        words = text[chunk.start : chunk.end]
        assert 0 < embedder.count_tokens(words) <= 254
        assert local_mem.fact(REF, chunk.fact_id or "").content == words
    hits = local_mem.recall(REF, "Sentence 2.30", top_k=3)
    assert hits and "Part 2" in (hits[0].fact.context or "") + hits[0].fact.content


def test_a_fact_trashed_between_embedding_and_writing_comes_back(mem: engram.Memory) -> None:
    """Another writer replaces the document after this ingest looked up the facts it
    reuses and before it writes: the reused fact it trashed is brought back, so no chunk
    names a fact in the trash."""

    def ingest(text: str) -> engram.IngestReport:
        return mem.ingest_text(REF, text, name="d.txt", media_type="text/plain", chunk_tokens=16)

    ingest(f"{ONE}\n\n{TWO}")
    documents = mem._documents._facts  # the fact writer the ingest prepares with
    prepare = documents.prepare
    raced: list[bool] = []

    def racing(ref: ResourceRef, notes: list[engram.Note]) -> object:
        batch = prepare(ref, notes)  # finds ONE's fact live, to reuse
        if not raced:
            raced.append(True)
            ingest(THREE)  # trashes ONE's and TWO's facts
        return batch

    documents.prepare = racing  # type: ignore[method-assign,assignment]
    report = ingest(f"{ONE}\n\n{THREE}")
    assert raced and report.status == "replaced"
    doc = mem.document(REF, report.document_id or "")
    live = {f.id: f.content for f in mem.facts(REF).facts}
    assert [live[c.fact_id or ""] for c in doc.chunks] == [ONE, THREE]
    assert set(live.values()) == {ONE, THREE}


def test_a_fact_deleted_for_good_meanwhile_is_embedded_again(mem: engram.Memory) -> None:
    mem.ingest_text(REF, ONE, name="a.txt", media_type="text/plain")
    documents = mem._documents._facts  # the fact writer the ingest prepares with
    prepare = documents.prepare
    calls: list[int] = []

    def racing(ref: ResourceRef, notes: list[engram.Note]) -> object:
        batch = prepare(ref, notes)
        if not calls:
            mem.delete_traces(REF, [f.id for f in mem.facts(REF).facts])
        calls.append(1)
        return batch

    documents.prepare = racing  # type: ignore[method-assign,assignment]
    report = mem.ingest_text(
        REF, f"{ONE}\n\n{TWO}", name="a.txt", media_type="text/plain", chunk_tokens=16
    )
    assert len(calls) == 2 and report.status == "replaced"
    doc = mem.document(REF, report.document_id or "")
    assert [mem.fact(REF, c.fact_id or "").content for c in doc.chunks] == [ONE, TWO]


def test_documents_page_by_source(mem: engram.Memory) -> None:
    for name in ("c.md", "a.md", "b.md"):
        mem.ingest_text(REF, f"# {name}\n\nWords of {name}.", name=name)
    assert [d.source for d in mem.documents(REF, limit=2)] == ["a.md", "b.md"]
    assert [d.source for d in mem.documents(REF, after="b.md")] == ["c.md"]
    with pytest.raises(InvalidInput):
        mem.documents(REF, after="\x00")
    with pytest.raises(InvalidInput):
        mem.documents(REF, limit=0)


def test_a_revert_never_puts_back_a_document_whose_name_another_holds_now(
    mem: engram.Memory, target: Target
) -> None:
    # Ingested, the ingest reverted, ingested again: redoing the first ingest (reverting
    # its revert) would give two documents one name. It failed as a storage error.
    mem.ingest_text(REF, "# Notes\n\nfirst words", name="notes.md")
    undo = mem.revert(REF, mem.ledger(REF).entries[0].seq)
    second = mem.ingest_text(REF, "# Notes\n\nsecond words", name="notes.md")
    before = stores.rows(
        target, "SELECT (SELECT count(*) FROM facts), (SELECT count(*) FROM ledger)"
    )
    with pytest.raises(engram.Conflict, match="holds now; nothing was changed"):
        mem.revert(REF, undo.seq)
    assert [d.id for d in mem.documents(REF)] == [second.document_id]
    assert (
        stores.rows(target, "SELECT (SELECT count(*) FROM facts), (SELECT count(*) FROM ledger)")
        == before
    )
