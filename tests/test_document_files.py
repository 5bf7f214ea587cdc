"""Ingesting files and directories on both backends: what a walk takes and skips (hidden
files, other types, links leading outside the root), globs, limits refused before
anything is written, and a second walk over the same files writing nothing."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import engram
from engram import InvalidInput, NotFound, ResourceRef, TooLarge
from stores import Target

REF = ResourceRef("walker")


@pytest.fixture
def mem(target: Target) -> Iterator[engram.Memory]:
    with engram.open(target, embedder=engram.HashingEmbedder(32)) as memory:
        yield memory


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    (root / "guide").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "guide" / "a.md").write_text("# A\n\nAbout a.\n")
    (root / "guide" / "b.markdown").write_text("# B\n\nAbout b.\n")
    (root / "notes.txt").write_bytes("Café au lait, déjà vu, crème brûlée.".encode("latin-1"))
    (root / "picture.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (root / ".hidden.md").write_text("# Hidden\n")
    (root / ".git" / "HEAD.md").write_text("# Not me\n")
    outside = tmp_path / "secret.md"
    outside.write_text("# Secret\n\nOutside the root.\n")
    os.symlink(outside, root / "link.md")
    os.symlink(root / "guide" / "a.md", root / "inside-link.md")
    os.symlink(tmp_path, root / "loop")  # a link to a directory is never followed
    return root


def test_a_walk_takes_the_texts_inside_the_root(mem: engram.Memory, tree: Path) -> None:
    seen: list[engram.IngestReport] = []
    report = mem.ingest(REF, tree, progress=seen.append)
    by_name = {Path(r.source).name: r.status for r in report.reports}
    assert by_name == {
        "a.md": "created",
        "b.markdown": "created",
        "notes.txt": "created",
        "inside-link.md": "created",
    }
    assert list(report.reports) == seen
    words = " ".join(f.content for f in mem.facts(REF).facts)
    assert "Secret" not in words and "Hidden" not in words and "Not me" not in words
    assert "Café au lait" in words
    again = mem.ingest(REF, tree)
    assert again.count("unchanged") == 4 and again.count("created") == 0


def test_globs_choose_and_other_types_are_skipped(mem: engram.Memory, tree: Path) -> None:
    report = mem.ingest(REF, tree, include=["*"], exclude=["guide/*"])
    statuses = {Path(r.source).name: (r.status, r.reason) for r in report.reports}
    assert statuses["picture.png"] == ("skipped", "unsupported")
    assert "a.md" not in statuses and statuses["notes.txt"][0] == "created"


def test_a_single_file_of_another_type_is_refused(mem: engram.Memory, tree: Path) -> None:
    with pytest.raises(InvalidInput):
        mem.ingest(REF, tree / "picture.png")
    report = mem.ingest(REF, tree / "guide" / "a.md")
    assert [r.status for r in report.reports] == ["created"]


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"max_files": 2}, TooLarge),
        ({"max_bytes": 20}, TooLarge),
        ({"max_bytes": 600_000_000}, InvalidInput),
        ({"max_files": 0}, InvalidInput),
        ({"include": ["../*.md"]}, InvalidInput),
        ({"include": ["/etc/*"]}, InvalidInput),
        ({"include": "*.md"}, InvalidInput),
        ({"strategy": "words"}, InvalidInput),
        ({"chunk_tokens": 999}, InvalidInput),
    ],
)
def test_refusals_come_before_any_write(
    mem: engram.Memory, tree: Path, kwargs: dict[str, object], error: type
) -> None:
    with pytest.raises(error):
        mem.ingest(REF, tree, **kwargs)  # type: ignore[arg-type]
    assert mem.documents(REF) == [] and mem.ledger(REF).entries == []


def test_a_missing_path_is_not_found(mem: engram.Memory, tmp_path: Path) -> None:
    with pytest.raises(NotFound):
        mem.ingest(REF, tmp_path / "nothing-here")


def test_a_binary_file_in_a_directory_is_skipped_with_its_reason(
    mem: engram.Memory, tmp_path: Path
) -> None:
    (tmp_path / "good.txt").write_text("Plain words.")
    (tmp_path / "bad.txt").write_bytes(b"\x00\x01\x02\x03")
    report = mem.ingest(REF, tmp_path)
    statuses = {Path(r.source).name: r.status for r in report.reports}
    assert statuses == {"bad.txt": "skipped", "good.txt": "created"}
    with pytest.raises(engram.Unprocessable):
        mem.ingest(REF, tmp_path / "bad.txt")


@pytest.mark.timeout(120)  # a regression reads /dev/zero or waits on the pipe: fail, not hang
def test_what_is_not_a_regular_file_is_refused_never_read(
    mem: engram.Memory, tmp_path: Path
) -> None:
    pipe = tmp_path / "notes.md"
    os.mkfifo(pipe)  # no writer: opening it to read would wait for ever
    for path, kind in (("/dev/zero", "a character device"), (pipe, "a pipe (FIFO)")):
        for dry_run in (False, True):
            with pytest.raises(InvalidInput, match=rf"is {re.escape(kind)}, not a file"):
                mem.ingest(REF, path, dry_run=dry_run)
    assert mem.documents(REF) == []
    (tmp_path / "real.md").write_text("# Real\n\nWords on disk.\n")
    report = mem.ingest(REF, tmp_path)  # in a directory: passed over, the rest taken
    assert [(Path(r.source).name, r.status) for r in report.reports] == [("real.md", "created")]


def test_a_file_is_read_no_further_than_the_limit(tmp_path: Path) -> None:
    from engram.core.documents import files

    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * 1001)
    assert files.read(big, 1001) == b"x" * 1001
    with pytest.raises(TooLarge, match="more than max_bytes=1000"):
        files.read(big, 1000)
    # A /proc file says it holds 0 bytes and holds more: its words count, not its size.
    status = Path("/proc/self/status")
    assert status.stat().st_size == 0
    with pytest.raises(TooLarge):
        files.read(status, 16)
    with pytest.raises(InvalidInput, match="a character device"):
        files.read(Path("/dev/zero"), 16)


def test_a_file_that_grew_past_the_limit_since_the_walk_is_skipped_in_a_directory(
    mem: engram.Memory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engram.core.documents import files

    (tmp_path / "a.md").write_text("# A\n\nShort.\n")
    (tmp_path / "b.md").write_text("# B\n\nShort too.\n")
    found = files.find

    def then_grows(*args: object) -> list[files.Found]:
        listed = found(*args)  # type: ignore[arg-type]
        with (tmp_path / "b.md").open("a") as grown:  # after the limits were checked
            grown.write("more words " * 100)
        return listed

    monkeypatch.setattr(files, "find", then_grows)
    report = mem.ingest(REF, tmp_path, max_bytes=100)
    assert [(Path(r.source).name, r.status) for r in report.reports] == [
        ("a.md", "created"),
        ("b.md", "skipped"),
    ]
    assert "more than max_bytes=100" in (report.reports[1].reason or "")


def test_the_source_is_checked_before_the_embedder(target: Target, tmp_path: Path) -> None:
    (tmp_path / "ok.md").write_text("# Fine\n\nWords.\n")
    with engram.open(target, embedder=None) as bare:
        with pytest.raises(NotFound, match="nothing-here"):
            bare.ingest(REF, tmp_path / "nothing-here")
        with pytest.raises(InvalidInput, match="a character device"):
            bare.ingest(REF, "/dev/zero")
        for url, why in (("ftp://example.com/a.md", "only http and https"), ("http://", "host")):
            with pytest.raises(InvalidInput, match=why):
                bare.ingest(REF, url)
        with pytest.raises(engram.CapabilityMissing, match="needs an embedder"):
            bare.ingest(REF, tmp_path / "ok.md")  # a sound source: then the embedder
        assert bare.documents(REF) == []
