"""Markdown and Obsidian folder exports, and their path safety as a property: with types
named from a hostile alphabet, and links planted beside the target, every file written
is a regular file inside the new folder with one link, no two names are one file on a
case-insensitive disk, every fact is written or its type listed as left out, and the
folder planted beside it is untouched.

``ENGRAM_EXPORT_EXAMPLES`` sets the examples (30 by default, fixed; with
``ENGRAM_EXPORT_RANDOM=1`` new ones are drawn)."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engram
from engram import Conflict, InvalidInput, Note, ResourceRef
from engram.core.paths import folded, unsafe

EXAMPLES = int(os.environ.get("ENGRAM_EXPORT_EXAMPLES", "30"))
RANDOM = os.environ.get("ENGRAM_EXPORT_RANDOM") == "1"
REF = ResourceRef("folder")
PIECES = [
    ".", "..", "/", "\\", "\x00", "\x07", ":", "CON", "con.md", "LPT1", "ß", "SS", "ss",
    "e\u0301", "\u00e9", "a" * 150, " ", "index", "Index", "WORKING", "up", "ok", "Ok",
]  # fmt: skip


def _tree(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(str(path.relative_to(root)).encode())
        if path.is_file() and not path.is_symlink():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _kinds() -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(PIECES), min_size=1, max_size=3).map("".join)


@settings(
    max_examples=EXAMPLES,
    derandomize=not RANDOM,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(st.tuples(_kinds(), st.booleans()), min_size=1, max_size=8), st.booleans())
def test_a_folder_export_writes_inside_itself_or_says_what_it_left_out(
    tmp_path_factory: Any, facts: list[tuple[str, bool]], obsidian: bool
) -> None:
    root = Path(tmp_path_factory.mktemp("export"))
    sentinel = root / "sentinel"
    sentinel.mkdir()
    (sentinel / "keep.md").write_text("mine")
    os.symlink(sentinel, root / "linked")  # links beside the target, to the sentinel
    os.link(sentinel / "keep.md", root / "hard.md")
    before = _tree(sentinel)
    with engram.open(root / "e.db", embedder=engram.HashingEmbedder(16)) as mem:
        stored = []
        for n, (kind, typed) in enumerate(facts):
            try:
                stored.append(mem.remember(REF, f"fact {n}", type=kind if typed else None))
            except InvalidInput:
                continue  # a type engram itself refuses never reaches a file name
        with pytest.raises(Conflict):
            mem.export(REF, root / "linked", format="markdown")  # a link in the way
        report = mem.export(REF, root / "out", format="obsidian" if obsidian else "markdown")
    out = root / "out"
    written = sorted(out.iterdir())
    assert len({folded(p.name) for p in written}) == len(written)
    text = ""
    for path in written:
        info = os.lstat(path)
        assert stat.S_ISREG(info.st_mode) and info.st_nlink == 1, path
        assert unsafe(path.name) is None and path.parent == out
        text += path.read_text(encoding="utf-8")
    left = " ".join(what for what, _ in report.left_out)
    for fact in stored:
        assert fact.id in text or repr(fact.type) in left, (fact.type, report.left_out)
    assert report.facts == sum(1 for f in stored if f.id in text)
    assert _tree(sentinel) == before and (sentinel / "keep.md").read_text() == "mine"
    assert not [p for p in root.iterdir() if p.name.endswith(".part")]


def test_names_engram_will_not_write() -> None:
    for name in (".", "..", "a/b", "a\\b", "a:b", "a\x00", "CON", "con.md", "Lpt9.x", "a.", "a "):
        assert unsafe(name) is not None, name
    assert unsafe("x" * 201) is not None and unsafe("ok name.md") is None
    assert folded("Straße.md") == folded("STRASSE.md")


def test_a_markdown_folder_holds_each_type_the_untyped_facts_and_working_keys(
    tmp_path: Path,
) -> None:
    with engram.open(tmp_path / "e.db", embedder=engram.HashingEmbedder(16)) as mem:
        mem.remember_many(
            REF, [Note("Ana swims", type="habit", tags=["sport"]), Note("a loose fact")]
        )
        mem.working.set(REF, "plan", {"tier": "pro"})
        report = mem.export(REF, tmp_path / "notes", format="obsidian")
        assert (report.facts, report.working, report.left_out) == (2, 1, ())
        with pytest.raises(Conflict):
            mem.export(REF, tmp_path / "notes", format="markdown")
    names = sorted(p.name for p in (tmp_path / "notes").iterdir())
    assert names == ["habit.md", "index.md", "working.md"]
    index = (tmp_path / "notes" / "index.md").read_text()
    assert "[[habit]]" in index and "a loose fact" in index
    assert "#sport" in (tmp_path / "notes" / "habit.md").read_text()
    assert '"tier": "pro"' in (tmp_path / "notes" / "working.md").read_text()


PLANTS = ("absent", "file", "symlink", "dangling", "hardlink", "directory", "fifo")
PAGES = ("index.md", "habit.md", "event.md", "working.md")


@settings(
    max_examples=EXAMPLES,
    derandomize=not RANDOM,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.fixed_dictionaries({page: st.sampled_from(PLANTS) for page in PAGES}), st.booleans())
def test_an_update_replaces_only_its_own_regular_files_and_lists_what_is_in_the_way(
    tmp_path_factory: Any, planted: dict[str, str], obsidian: bool
) -> None:
    root = Path(tmp_path_factory.mktemp("update"))
    sentinel = root / "sentinel"
    sentinel.mkdir()
    (sentinel / "keep.md").write_text("mine")
    out = root / "out"
    flavour = "obsidian" if obsidian else "markdown"
    with engram.open(root / "e.db", embedder=engram.HashingEmbedder(16)) as mem:
        mem.remember_many(REF, [Note("Ana swims", type="habit"), Note("a loose fact")])
        mem.export(REF, out, format=flavour)
        for page, plant in planted.items():
            path = out / page
            if plant != "file":
                path.unlink(missing_ok=True)
            if plant == "symlink":
                os.symlink(sentinel / "keep.md", path)
            elif plant == "dangling":
                os.symlink(root / "nowhere.md", path)
            elif plant == "hardlink":
                os.link(sentinel / "keep.md", path)
            elif plant == "directory":
                path.mkdir()
            elif plant == "fifo":
                os.mkfifo(path)
        (out / "my own note.md").write_text("the user's")
        before = _tree(sentinel)
        mem.remember_many(REF, [Note("Bo runs", type="event"), Note("Ana cycles", type="habit")])
        mem.working.set(REF, "plan", {"tier": "pro"})
        report = mem.export(REF, out, format=flavour, update=True)
    blocked = {p for p, plant in planted.items() if plant not in ("absent", "file")}
    assert {what for what, _ in report.left_out} == {f"page {p}" for p in blocked}
    assert _tree(sentinel) == before and (sentinel / "keep.md").read_text() == "mine"
    assert not (root / "nowhere.md").exists()
    assert (out / "my own note.md").read_text() == "the user's"
    for page in set(PAGES) - blocked:
        info = os.lstat(out / page)
        assert stat.S_ISREG(info.st_mode) and info.st_nlink == 1, page
    texts = {p: (out / p).read_text() for p in set(PAGES) - blocked}
    assert "Ana cycles" in texts.get("habit.md", "Ana cycles")
    assert "Bo runs" in texts.get("event.md", "Bo runs")
    assert '"tier"' in texts.get("working.md", '"tier"')
    shown = {"index.md": 1, "habit.md": 2, "event.md": 1, "working.md": 0}
    assert report.facts == sum(n for page, n in shown.items() if page not in blocked)
    assert not [p for p in out.iterdir() if p.name.endswith(".part")]


def test_an_update_is_of_a_folder_and_never_follows_a_linked_one(tmp_path: Path) -> None:
    with engram.open(tmp_path / "e.db", embedder=engram.HashingEmbedder(16)) as mem:
        mem.remember(REF, "a fact")
        fresh = mem.export(REF, tmp_path / "new", format="markdown", update=True)
        assert fresh.facts == 1 and (tmp_path / "new" / "index.md").is_file()
        (tmp_path / "real").mkdir()
        os.symlink(tmp_path / "real", tmp_path / "linked")
        with pytest.raises(Conflict, match="link"):
            mem.export(REF, tmp_path / "linked", format="markdown", update=True)
        assert list((tmp_path / "real").iterdir()) == []
        (tmp_path / "out.jsonl").write_text("mine")
        with pytest.raises(InvalidInput, match="update applies to a folder"):
            mem.export(REF, tmp_path / "out.jsonl", update=True)
        assert (tmp_path / "out.jsonl").read_text() == "mine"


def test_the_cli_exports_a_folder_and_updates_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from engram.cli.main import main

    db = str(tmp_path / "e.db")
    scope = ["--db", db, "--resource", "folder", "--embedder", "none"]
    with engram.open(db, embedder=engram.HashingEmbedder(16)) as mem:
        mem.remember(REF, "Ana swims", type="habit")
    out = str(tmp_path / "notes")
    assert main(["--json", "export", out, "--format", "markdown", *scope]) == 0
    assert main(["export", out, "--format", "markdown", *scope]) == 4  # exists: Conflict
    with engram.open(db, embedder=engram.HashingEmbedder(16)) as mem:
        mem.remember(REF, "Ana cycles", type="habit")
    capsys.readouterr()
    assert main(["--json", "export", out, "--format", "markdown", "--update", *scope]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["facts"], report["left_out"]) == (2, [])
    assert "Ana cycles" in (tmp_path / "notes" / "habit.md").read_text()
