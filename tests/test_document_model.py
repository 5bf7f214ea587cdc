"""Re-ingesting as a model: after any sequence of versions of two documents drawn from a
few shared paragraphs, the live facts are exactly the words the current chunks name, and
reverting every entry newest first leaves nothing live."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

import engram
from engram import ResourceRef

REF = ResourceRef("model")
PARAGRAPHS = [f"Paragraph {w} stands alone here." for w in ("one", "two", "three", "four")]
VERSIONS = st.lists(st.sampled_from(PARAGRAPHS), min_size=1, max_size=4).map("\n\n".join)
STEPS = st.lists(st.tuples(st.sampled_from(["a.txt", "b.txt"]), VERSIONS), min_size=1, max_size=6)


def _named(mem: engram.Memory) -> set[str]:
    words: set[str] = set()
    for doc in mem.documents(REF):
        full = mem.document(REF, doc.id)
        words |= {mem.fact(REF, c.fact_id or "").content for c in full.chunks}
    return words


@settings(max_examples=30, deadline=None)
@given(steps=STEPS)
def test_live_facts_are_what_the_chunks_name_and_reverts_undo_all(
    steps: list[tuple[str, str]],
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        mem = engram.open(Path(folder) / "m.db", embedder=engram.HashingEmbedder(16))
        with mem:
            for name, text in steps:
                mem.ingest_text(REF, text, name=name, media_type="text/plain", chunk_tokens=16)
                live = {f.content for f in mem.facts(REF).facts}
                assert live == _named(mem)
            for entry in mem.ledger(REF).entries:  # newest first
                mem.revert(REF, entry.seq)
                assert {f.content for f in mem.facts(REF).facts} == _named(mem)
            assert mem.count(REF) == 0 and mem.documents(REF) == []
