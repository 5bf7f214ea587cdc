"""The wiki on both backends: facts folded into pages behind a watermark, the same facts
giving the same bytes, a batch written whole (pages and watermark in one entry) or not
at all, and the pages recalled as documents."""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

import pytest

import engram
from engram import InvalidInput, ResourceRef, UpstreamFailure
from engram.core import wiki as engram_wiki
from engram.core.ports import Vectors
from stores import Target

REF = ResourceRef("wiki")


class Failing(engram.HashingEmbedder):
    """The hashing embedder, failing while ``failing`` is set."""

    failing = False

    def embed(self, texts: Sequence[str], kind: str = "passage") -> Vectors:
        if self.failing:
            raise UpstreamFailure("the embedder is down")
        return super().embed(texts, kind)


def _pages(mem: engram.Memory) -> dict[str, str]:
    docs = [mem.document(REF, d.id) for d in mem.documents(REF)]
    return {d.source: d.sha256 for d in docs}


def test_facts_fold_into_their_pages_behind_a_watermark(mem: engram.Memory) -> None:
    mem.remember(REF, "Caroline adopted a dog named Rex", type="event")
    mem.remember(REF, "We visited Caroline in Lisbon", tags=["trip"])
    first = mem.wiki.compile(REF)
    assert first.facts == 2 and first.watermark is not None
    assert set(first.pages) == {
        "index.md",
        "types/event.md",
        *[p for p in first.pages if p.startswith(("entities/", "log/"))],
    }
    assert any(p.startswith("entities/Caroline-") for p in first.pages)
    before = _pages(mem)
    entries = len(mem.ledger(REF).entries)
    again = mem.wiki.compile(REF)
    assert (again.facts, again.pages, again.watermark) == (0, (), first.watermark)
    assert _pages(mem) == before and len(mem.ledger(REF).entries) == entries
    mem.remember(REF, "Rex chewed a shoe")
    third = mem.wiki.compile(REF)
    assert third.facts == 1 and "types/event.md" not in third.pages
    assert any(p.startswith("entities/Rex-") for p in third.pages)
    assert len(mem.ledger(REF).entries) == entries + 2  # the fact, then one compile
    hits = mem.recall(REF, "who adopted a dog", type="wiki", mode="text")
    assert hits and "Caroline adopted a dog named Rex" in hits[0].fact.content


def test_pages_are_the_same_bytes_for_the_same_facts(target: Target, tmp_path: object) -> None:
    words = ["Ana moved to Lyon", "Bo met Ana in Lyon", "Cy sings"]
    made = []
    for name in ("one", "two"):
        with engram.open(target, embedder=engram.HashingEmbedder(32)) as mem:
            ref = ResourceRef(name)
            for text in words:
                mem.remember(ref, text, type="note")
            mem.wiki.compile(ref, batch=2)
            docs = [mem.document(ref, d.id) for d in mem.documents(ref)]
            made.append(sorted(d.source for d in docs))
    assert made[0] == made[1]


def test_a_failed_batch_leaves_pages_and_watermark_as_they_were(target: Target) -> None:
    embedder = Failing(32)
    with engram.open(target, embedder=embedder) as mem:
        mem.remember(REF, "Caroline adopted a dog named Rex")
        first = mem.wiki.compile(REF)
        mem.remember(REF, "Caroline moved to Porto")
        before = _pages(mem)
        embedder.failing = True
        with pytest.raises(UpstreamFailure):
            mem.wiki.compile(REF)
        assert _pages(mem) == before
        embedder.failing = False
        done = mem.wiki.compile(REF)
        assert done.facts == 1 and done.watermark != first.watermark
        with pytest.raises(InvalidInput, match="batch"):
            mem.wiki.compile(REF, batch=0)


def test_an_attached_folder_mirrors_the_pages_and_a_failed_write_keeps_the_watermark(
    tmp_path: Path,
) -> None:
    with engram.open(tmp_path / "e.db", embedder=engram.HashingEmbedder(16)) as mem:
        mem.remember(REF, "Caroline adopted a dog named Rex", type="event")
        mem.remember(REF, "the CON page", type="CON")  # a device name: no file of it
        wiki = tmp_path / "wiki"
        mem.wiki.attach(REF, wiki)
        (tmp_path / "outside.md").write_text("mine")
        first = mem.wiki.compile(REF)
        assert first.left_out == (("types/CON.md", "its name is a device name on Windows"),)
        documents = {d.source: mem.document(REF, d.id) for d in mem.documents(REF)}
        files = {str(p.relative_to(wiki)) for p in wiki.rglob("*.md")}
        assert files == {s.removeprefix("wiki:") for s in documents} - {"types/CON.md"}
        index = (wiki / "index.md").read_text()
        assert "watermark" in index and "types/event.md" in index
        # A link planted where a page goes is left, and never written through.
        day = next(p for p in files if p.startswith("log/"))
        (wiki / day).unlink()
        os.symlink(tmp_path / "outside.md", wiki / day)
        mem.remember(REF, "Rex chewed a shoe")
        second = mem.wiki.compile(REF)
        assert (day, "a link is in the way; left as it is") in second.left_out
        assert (tmp_path / "outside.md").read_text() == "mine"
        assert any("Rex chewed" in p.read_text() for p in wiki.rglob("*.md") if not p.is_symlink())
        # The folder gone (a file in its place): the batch fails, the watermark stays.
        mem.remember(REF, "Rex found the ball")
        shutil.rmtree(wiki)
        wiki.write_text("not a folder")
        with pytest.raises(engram.Conflict):
            mem.wiki.compile(REF)
        wiki.unlink()
        third = mem.wiki.compile(REF)
        assert third.facts == 1 and third.watermark != second.watermark
        assert any("Rex found the ball" in p.read_text() for p in wiki.rglob("*.md"))
        with pytest.raises(InvalidInput, match="not a folder"):
            mem.wiki.attach(REF, tmp_path / "outside.md")
        mem.wiki.attach(REF, None)
        mem.remember(REF, "Rex sleeps")
        shutil.rmtree(wiki)
        assert mem.wiki.compile(REF).facts == 1 and not wiki.exists()


@pytest.mark.parametrize("hard", [False, True], ids=["soft", "hard"])
def test_the_folder_lets_go_of_a_forgotten_fact_at_the_next_compile(
    tmp_path: Path, hard: bool
) -> None:
    with engram.open(tmp_path / "e.db", embedder=engram.HashingEmbedder(16)) as mem:
        gone = "zq" + "a1b2c3d4"
        fact = mem.remember(REF, f"Ana Lima likes {gone}", type="secret")
        mem.remember(REF, "Bruno Costa likes tea", type="note")
        wiki = tmp_path / "wiki"
        mem.wiki.attach(REF, wiki)
        mem.wiki.compile(REF)
        mine = wiki / "entities" / "mine.md"  # a file the wiki never listed stays
        mine.write_text("my own page")
        holding = {
            p.relative_to(wiki).as_posix() for p in wiki.rglob("*.md") if gone in p.read_text()
        }
        assert "types/secret.md" in holding and any(p.startswith("entities/") for p in holding)
        mem.forget(REF, fact.id, hard=hard)
        report = mem.wiki.compile(REF)
        files = {p.relative_to(wiki).as_posix(): p.read_text() for p in wiki.rglob("*.md")}
        assert not [name for name, text in files.items() if gone in text]
        assert "types/secret.md" not in files and not any("Lima" in name for name in files)
        assert files["entities/mine.md"] == "my own page" and report.left_out == ()
        assert "types/note.md" in files and "Bruno Costa likes tea" in files["types/note.md"]


@pytest.mark.timeout(60)  # a regression waits on the pipe for ever: fail, not hang
def test_a_pipe_where_the_folder_s_index_goes_is_never_waited_on(tmp_path: Path) -> None:
    with engram.open(tmp_path / "e.db", embedder=engram.HashingEmbedder(16)) as mem:
        mem.remember(REF, "Caroline adopted a dog named Rex")
        wiki = tmp_path / "wiki"
        wiki.mkdir()
        os.mkfifo(wiki / "index.md")  # no writer: opening it to read would wait
        mem.wiki.attach(REF, wiki)
        report = mem.wiki.compile(REF)
        assert ("index.md", "a special file is in the way; left as it is") in report.left_out


def test_a_page_lists_its_newest_facts_and_counts_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entity's and a type's page list their newest PAGE_FACTS facts, newest first, a
    day's its latest in order, each saying how many older ones it leaves out; the index
    counts them all. Compiled in batches of three, the pages are the same."""
    monkeypatch.setattr(engram_wiki, "PAGE_FACTS", 5)
    for batch in (500, 3):
        folder = tmp_path / f"wiki-{batch}"
        with engram.open(tmp_path / f"{batch}.db", embedder=engram.HashingEmbedder(16)) as mem:
            for i in range(8):
                mem.remember(REF, f"Caroline walked the dog on lap {i}", type="event")
            mem.wiki.attach(REF, folder)
            assert mem.wiki.compile(REF, batch=batch).facts == 8
        entity = next(folder.glob("entities/Caroline-*.md")).read_text().splitlines()
        laps = [f"lap {i} " for i in range(7, 2, -1)]
        assert [next(n for n in laps if n in line) for line in entity[2:7]] == laps
        assert entity[7] == "(3 older facts not listed)"
        kind = (folder / "types/event.md").read_text().splitlines()
        assert kind[2:] == entity[2:8]
        day = next(folder.glob("log/*.md")).read_text().splitlines()
        assert day[2] == "(3 older facts not listed)"
        assert day[3:] == list(reversed(entity[2:7]))
        index = (folder / "index.md").read_text()
        assert "types/event.md (8)" in index and "entities/Caroline-" in index
