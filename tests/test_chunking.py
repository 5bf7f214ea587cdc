"""Cutting documents into chunks: every chunk is its span of the text, fits the local
model's tokens and the fact limit, and a heading inside a code fence is never one."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.core.documents import chunking
from engram.core.errors import CapabilityMissing
from engram.core.limits import MAX_FACT_CHARS
from engram.embedders.local import LocalEmbedder

PIECES = st.sampled_from(
    [
        "# Title\n",
        "Setext\n===\n",
        "## Sub\n",
        "```\n# inside a fence\n```\n",
        "~~~\ncode\n~~~\n",
        "- item\n",
        "> quote\n",
        "\n",
        "\r\n",
        "---\ntitle: x\n---\n",
        "ünïcödé wörds, 東京 and emoji 🎉. ",
        "word " * 40,
        "x" * 300,
        "\t \u2028 ",
    ]
)
TEXTS = st.lists(st.one_of(PIECES, st.text(max_size=80)), max_size=30).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXTS, strategy=st.sampled_from(["markdown", "paragraph"]), size=st.integers(16, 254))
def test_every_chunk_is_its_span_and_fits(
    local_embedder: LocalEmbedder, text: str, strategy: str, size: int
) -> None:
    cut = chunking.cut(text, strategy, size, local_embedder.count_tokens)
    last = -1
    for chunk in cut.chunks:
        assert text[chunk.start : chunk.end] == chunk.words
        assert chunk.words == chunk.words.strip() and chunk.words
        assert chunk.start >= last  # in order, never overlapping
        last = chunk.end
        assert len(chunk.words) <= MAX_FACT_CHARS
        assert local_embedder.count_tokens(chunk.words) <= size


def test_a_heading_in_a_fence_is_not_one_and_setext_headings_are() -> None:
    text = "Top\n===\n\nintro\n\n```\n# no\n```\n\nSub\n---\n\nbody\n\n### Deep\n\nend\n"
    cut = chunking.cut(text, "markdown", 200, chunking.estimate_tokens)
    assert [c.heading for c in cut.chunks] == ["Top", "Top › Sub", "Top › Sub › Deep"]
    assert cut.title == "Top"


def test_front_matter_goes_to_metadata_not_to_chunks() -> None:
    text = "---\ntitle: Hello\nauthor: 'Ana'\n---\nBody words.\n"
    cut = chunking.cut(text, "markdown", 200, chunking.estimate_tokens)
    assert cut.front_matter == {"title": "Hello", "author": "Ana"}
    assert [c.words for c in cut.chunks] == ["Body words."] and cut.title == "Hello"


def test_without_the_extra_markdown_chunking_names_the_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "markdown_it", None)
    with pytest.raises(CapabilityMissing) as raised:
        chunking.cut("# a\n\nb", "markdown", 200, chunking.estimate_tokens)
    assert raised.value.hint == chunking.INSTALL


def test_the_estimate_exceeds_the_local_model_on_real_text(local_embedder: LocalEmbedder) -> None:
    root = Path(__file__).resolve().parent.parent
    paragraphs = [
        p
        for name in ("README.md", "DEVELOPERS.md", "BENCHMARKS.md")
        for p in (root / name).read_text().split("\n\n")
        if p.strip()
    ]
    paragraphs += [
        "東京は日本の首都です。",
        "Привет, как дела? Это текст.",
        "Crème brûlée, déjà vu.",
    ]
    counts = [(chunking.estimate_tokens(p), local_embedder.count_tokens(p)) for p in paragraphs]
    assert len(counts) > 250
    assert [(e, c) for e, c in counts if e < c and c >= 20] == []  # a chunk's size and up
    assert sum(e for e, _ in counts) > sum(c for _, c in counts)


# A vocabulary splits a word where letters and digits meet (a commit's name, an id, a
# file's name with a date in it: "a22de3b") and at an underscore as at any mark (code's
# names and settings': "__init__ __pycache__ snake_case_name" was 10 against 19).
# Counted as one word, each fell short.
SPLIT_WORDS = [
    "a22de3b",
    "443023c",
    "f_61ff7387bead51534547aa09",
    "scale-postgres-100k-2026-12-07b.json",
    "sha256:9f86d081884c7d659a2feaa0c55ad015",
    "v2b3c4d5e6",
    "__init__ __pycache__ snake_case_name",
    "ENGRAM_FUZZ_RANDOM=1 ENGRAM_FUZZ_EXAMPLES=40",
    "test_the_storage_seam_refuses_a_write_outside_a_ledger_entry",
    "def remember_many(self, ref, texts): return self._store.facts_by_id",
]


def test_the_estimate_exceeds_the_local_model_where_a_vocabulary_splits_a_word(
    local_embedder: LocalEmbedder,
) -> None:
    for words in SPLIT_WORDS:
        assert chunking.estimate_tokens(words) >= local_embedder.count_tokens(words), words
    line = "Measured at " + ", ".join(SPLIT_WORDS) + "."
    assert chunking.estimate_tokens(line) >= local_embedder.count_tokens(line)


def test_a_heading_goes_with_the_long_section_it_heads() -> None:
    text = "# Top\n\n## Long\n\n" + "word " * 200 + "\n\n## Next\n\nend"
    cut = chunking.cut(text, "markdown", 50, chunking.estimate_tokens)
    firsts = [c.words.split("\n")[0] for c in cut.chunks]
    assert "## Long" not in [c.words for c in cut.chunks]
    assert "## Long" in firsts and all(chunking.estimate_tokens(c.words) <= 50 for c in cut.chunks)
