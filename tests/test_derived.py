"""Copies follow their source (core/derived.py): a conversation turn's words in its
session entry and in its neighbours' context go with the turn, on every erase path, and
come back exactly with a restore or a revert; a scope's deletion takes its sessions and
its graph; a hard document forget leaves no title in the ledger. On both backends, each
checked on every read path and in the store's raw bytes."""

from __future__ import annotations

import secrets

import pytest

import engram
from engram import ResourceRef, Turn
from engram.core import derived
from stores import Target
from traces import traces

REF = ResourceRef("user-42")


def _word() -> str:
    return "zq" + secrets.token_hex(6)


def _talk(mem: engram.Memory, words: list[str], width: int = 1) -> engram.Conversation:
    speakers = ["Ana", "Bo"]
    turns = [Turn(speakers[n % 2], f"said {w}") for n, w in enumerate(words)]
    return mem.remember_conversation(REF, turns, context_turns=width)


def _seen(mem: engram.Memory, word: str) -> list[str]:
    """The read paths that still give ``word``."""
    seen = []
    if mem.recall(REF, word, mode="text"):
        seen.append("recall")
    if any(word in (f.context or "") + f.content for f in mem.facts(REF).facts):
        seen.append("facts")
    if mem.episodic_recall(REF, query=word).entries:
        seen.append("episodes")
    tree = mem.episodic_tree(REF)
    entries = [e for node in tree for e in node.entries]
    if any(word in e.content for e in entries):
        seen.append("tree")
    if any(word in (t.fact.context or "") for t in mem.trash(REF).facts):
        seen.append("trash")
    return seen


def test_a_turn_deleted_for_good_leaves_its_neighbours_and_its_session(
    mem: engram.Memory, target: Target
) -> None:
    words = [_word() for _ in range(5)]
    talk = _talk(mem, words)
    assert "recall" in _seen(mem, words[2])  # its neighbours' context holds it
    assert mem.forget(REF, talk.facts[2].id, hard=True)
    assert _seen(mem, words[2]) == []
    for n in (1, 3):  # the neighbours keep the turns still there, at their width
        kept = mem.fact(REF, talk.facts[n].id).context
        assert kept == "\n".join(f"{s}: said {words[i]}" for s, i in _around(n))
    assert [e.content for e in mem.episodic_recall(REF).entries] == [
        f"said {w}" for i, w in enumerate(words) if i != 2
    ]
    mem.close()
    assert traces(target, words[2]) == []
    assert traces(target, words[1])  # the probe finds what is kept


def _around(n: int) -> list[tuple[str, int]]:
    return [("Ana" if i % 2 == 0 else "Bo", i) for i in (n - 1, n + 1) if i != 2]


@pytest.mark.parametrize("way", ["restore", "revert"])
def test_a_soft_forget_hides_the_turn_everywhere_and_gives_it_back_exactly(
    mem: engram.Memory, way: str
) -> None:
    words = [_word() for _ in range(6)]
    talk = _talk(mem, words, width=2)
    before = {f.id: mem.fact(REF, f.id).context for f in talk.facts}
    entries = mem.episodic_recall(REF).entries
    assert mem.forget(REF, talk.facts[2].id)
    assert _seen(mem, words[2]) == []
    assert mem.fact(REF, talk.facts[4].id).context == f"Bo: said {words[3]}\nBo: said {words[5]}"
    if way == "restore":
        mem.restore(REF, talk.facts[2].id)
    else:
        forget = mem.ledger(REF).entries[0]
        assert forget.op == "forget"
        mem.revert(REF, forget.seq)
    assert {f.id: mem.fact(REF, f.id).context for f in talk.facts} == before
    assert mem.episodic_recall(REF).entries == entries


def test_the_width_a_context_was_built_with_is_kept(mem: engram.Memory) -> None:
    words = [_word() for _ in range(7)]
    talk = _talk(mem, words, width=2)
    mem.forget(REF, talk.facts[3].id, hard=True)
    lines = {i: f"{'Ana' if i % 2 == 0 else 'Bo'}: said {w}" for i, w in enumerate(words)}
    del lines[3]
    for n in (1, 2, 4, 5):
        want = "\n".join(lines[i] for i in sorted(lines) if i != n and abs(i - n) <= 2)
        assert mem.fact(REF, talk.facts[n].id).context == want


def test_a_turn_in_the_trash_deleted_later_leaves_nothing(
    mem: engram.Memory, target: Target
) -> None:
    words = [_word() for _ in range(3)]
    talk = _talk(mem, words)
    mem.forget(REF, talk.facts[1].id)
    mem.forget(REF, talk.facts[0].id)  # a neighbour in the trash holds it too
    mem.delete_traces(REF, [talk.facts[1].id])
    mem.restore(REF, talk.facts[0].id)
    assert _seen(mem, words[1]) == []
    assert not any(e.changes and words[1] in str(e.changes) for e in mem.ledger(REF).entries)
    mem.close()
    assert traces(target, words[1]) == []


def test_a_correction_reaches_the_neighbours(mem: engram.Memory) -> None:
    words = [_word() for _ in range(3)]
    talk = _talk(mem, words)
    mem.correct(REF, talk.facts[1].id, "Bo: said something else")
    assert mem.fact(REF, talk.facts[0].id).context == "Bo: said something else"
    assert mem.recall(REF, words[1], mode="text") == []


def test_a_scope_deletion_takes_its_sessions_and_its_graph(
    mem: engram.Memory, target: Target
) -> None:
    words = [_word() for _ in range(3)]
    _talk(mem, words)
    asserted = _word()
    mem.graph.upsert_entity(REF, asserted.capitalize(), summary=f"about {asserted}")
    other = ResourceRef("someone-else")
    kept = _word()
    mem.remember_conversation(other, [Turn("Cy", f"said {kept}")])
    mem.delete_scope(REF)
    assert mem.episodic_recall(REF).entries == []
    assert mem.episodic_tree(REF) == []
    assert mem.graph.search(REF, asserted) == []
    assert mem.ledger(REF).entries[0].op == "delete_scope"
    assert mem.episodic_recall(other).entries  # another scope keeps its own
    mem.close()
    for word in (*words, asserted):
        assert traces(target, word) == [], word
    assert traces(target, kept)


def test_a_hard_document_forget_leaves_no_title_in_the_ledger(
    mem: engram.Memory, target: Target
) -> None:
    title = _word()
    doc = mem.ingest_text(REF, f"# {title}\n\nsome body text {_word()}", name="a.md")
    assert doc.document_id is not None
    assert mem.forget_document(REF, doc.document_id, hard=True)
    assert title not in str(mem.ledger(REF).entries)
    mem.close()
    assert traces(target, title) == []


@pytest.fixture(params=["asked", "read"], ids=["pages-asked", "pages-read"])
def pages(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """How a write finds the wiki's pages listing the facts it made leave: a statement
    for a few, or the pages read once and the ids they list indexed (for more than
    ``derived.LISTED`` at once; here for every write)."""
    if request.param == "read":
        monkeypatch.setattr(derived, "LISTED", 0)


@pytest.mark.parametrize("hard", [False, True], ids=["soft", "hard"])
def test_the_wiki_lets_go_of_a_forgotten_fact_at_once_and_compiles_without_it(
    mem: engram.Memory, target: Target, hard: bool, pages: None
) -> None:
    gone, kept = _word(), _word()
    fact = mem.remember(REF, f"Ana Lima likes {gone}", type="note")
    mem.remember(REF, f"Bruno Costa likes {kept}", type="note")
    mem.wiki.compile(REF)
    holders = {h.fact.id for h in mem.recall(REF, gone, mode="text")}
    assert len(holders) > 1  # the fact and the pages listing it
    mem.forget(REF, fact.id, hard=hard)
    assert mem.recall(REF, gone, mode="text") == []  # before any compile
    if not hard:  # a revert gives the fact back, and the next compile its pages
        mem.revert(REF, mem.ledger(REF).entries[0].seq)
        assert {h.fact.id for h in mem.recall(REF, gone, mode="text")} == {fact.id}
        mem.wiki.compile(REF)
        assert len(mem.recall(REF, gone, mode="text")) == len(holders)
        mem.forget(REF, fact.id)
    report = mem.wiki.compile(REF)
    assert "index.md" in report.pages
    assert mem.recall(REF, gone, mode="text") == []
    assert {h.fact.type for h in mem.recall(REF, kept, mode="text")} == {"note", "wiki"}
    if hard:
        mem.close()
        assert traces(target, gone) == []


@pytest.mark.parametrize("hard", [False, True], ids=["soft", "hard"])
def test_a_document_chunk_leaves_the_context_of_the_chunks_beside_it(
    mem: engram.Memory, target: Target, hard: bool
) -> None:
    words = [_word() for _ in range(3)]
    text = "# Notes\n\n" + "\n\n".join(f"Paragraph {w} " + "filler " * 20 for w in words)
    report = mem.ingest_text(REF, text, name="notes.md", chunk_tokens=64)
    assert report.chunks == 3 and report.document_id is not None
    chunks = [p for p in mem.document(REF, report.document_id).chunks]
    before = {c.fact_id: mem.fact(REF, str(c.fact_id)).context for c in chunks}
    middle = str(chunks[1].fact_id)
    assert len(mem.recall(REF, words[1], mode="text")) == 3  # its neighbours' context too
    mem.forget(REF, middle, hard=hard)
    assert mem.recall(REF, words[1], mode="text") == []
    if hard:
        assert mem.document(REF, report.document_id).chunks[1].fact_id is None
        mem.close()
        assert traces(target, words[1]) == []
        return
    mem.restore(REF, middle)
    assert {c.fact_id: mem.fact(REF, str(c.fact_id)).context for c in chunks} == before


def test_no_wiki_page_waits_in_the_trash_to_hold_a_name_deleted_later(
    mem: engram.Memory, target: Target, pages: None
) -> None:
    # The index page names the entity pages (their slugs hold the entity's name). It
    # went with a document's pages; had it gone to the trash, it would hold the name
    # after the fact giving it went for good (it does not list that fact).
    name = _word()
    fact = mem.remember(REF, f"note {_word()} about {name.capitalize()} today")
    report = mem.ingest_text(REF, f"# Title {_word()}\n\nbody {_word()}", name="doc.md")
    assert report.document_id is not None
    mem.wiki.compile(REF)
    assert name in str([h.fact for h in mem.recall(REF, name, mode="text")]).lower()
    mem.forget_document(REF, report.document_id)
    assert all(t.fact.type != "wiki" for t in mem.trash(REF).facts)
    mem.delete_traces(REF, [fact.id])
    assert name not in str(mem.trash(REF).facts).lower()
    mem.close()
    assert traces(target, name) == []


def test_a_fact_back_from_the_trash_is_on_the_wiki_after_the_next_compile(
    mem: engram.Memory, pages: None
) -> None:
    # The compile between the forget and the restore moved the watermark past the fact:
    # only its coming back tells the next compile to fold it again.
    back = _word()
    fact = mem.remember(REF, f"Ana Lima likes {back}", type="note")
    mem.remember(REF, f"Bruno Costa likes {_word()}", type="note")
    mem.wiki.compile(REF)
    mem.forget(REF, fact.id)
    mem.wiki.compile(REF)
    assert mem.recall(REF, back, mode="text") == []
    mem.restore(REF, fact.id)
    mem.wiki.compile(REF)
    assert {h.fact.type for h in mem.recall(REF, back, mode="text")} == {"note", "wiki"}


@pytest.mark.parametrize("hard", [False, True], ids=["soft", "hard"])
def test_a_turn_repeating_stored_words_follows_the_fact_holding_them(
    mem: engram.Memory, target: Target, hard: bool
) -> None:
    # The second conversation's middle turn says what a fact already holds: no fact of
    # its own, so its entry and its neighbours' context follow that fact.
    said = _word()
    fact = mem.remember(REF, f"Bo: {said}")
    first, last = _word(), _word()
    turns = [Turn("Ana", first), Turn("Bo", said), Turn("Ana", last)]
    talk = mem.remember_conversation(REF, turns, context_turns=1)
    assert talk.facts[1].id == fact.id
    before = {f.id: mem.fact(REF, f.id).context for f in talk.facts}
    entries = mem.episodic_recall(REF).entries
    assert "episodes" in _seen(mem, said)
    mem.forget(REF, fact.id, hard=hard)
    assert _seen(mem, said) == []
    for n in (0, 2):  # the turn beside each was the only one within its width
        assert mem.fact(REF, talk.facts[n].id).context is None
    if hard:
        assert [e.content for e in mem.episodic_recall(REF).entries] == [first, last]
        mem.close()
        assert traces(target, said) == []
        return
    mem.restore(REF, fact.id)
    assert {f.id: mem.fact(REF, f.id).context for f in talk.facts} == before
    assert mem.episodic_recall(REF).entries == entries


def test_a_forget_is_reverted_after_the_wiki_was_compiled_again(
    mem: engram.Memory, pages: None
) -> None:
    # The pages the forget took were written again by the compile after it: putting the
    # old ones back would give two pages one name (it failed as a storage error).
    word = _word()
    fact = mem.remember(REF, f"Ana Lima likes {word}", type="note")
    mem.remember(REF, f"Bruno Costa likes {_word()}", type="note")
    mem.wiki.compile(REF)
    mem.forget(REF, fact.id)
    forget = mem.ledger(REF).entries[0]
    mem.wiki.compile(REF)
    mem.revert(REF, forget.seq)
    assert {h.fact.id for h in mem.recall(REF, word, mode="text")} == {fact.id}
    mem.wiki.compile(REF)
    assert {h.fact.type for h in mem.recall(REF, word, mode="text")} == {"note", "wiki"}
    sources = [d.source for d in mem.documents(REF)]
    assert len(sources) == len(set(sources)) and "wiki:index.md" in sources


def test_many_facts_leaving_at_once_take_exactly_the_pages_listing_them(
    mem: engram.Memory, target: Target
) -> None:
    # More than LISTED facts leave in one write: the pages are read once and the ids
    # they list indexed. The pages listing them go, the page listing only the fact that
    # stays does not.
    gone = [_word() for _ in range(derived.LISTED + 20)]
    kept = _word()
    facts = mem.remember_many(REF, [f"Ana Lima likes {w}" for w in gone])
    mem.remember(REF, f"Bruno Costa likes {kept}")
    mem.wiki.compile(REF)
    assert _holders(mem, gone[-1]) == {"the fact", "a page"}
    mem.delete_traces(REF, [f.id for f in facts])
    for word in (gone[0], gone[-1]):
        assert mem.recall(REF, word, mode="text") == []
    assert _holders(mem, kept) == {"the fact", "a page"}
    mem.close()
    assert traces(target, gone[0]) == [] and traces(target, gone[-1]) == []


def _holders(mem: engram.Memory, word: str) -> set[str]:
    return {
        "a page" if h.fact.type == "wiki" else "the fact"
        for h in mem.recall(REF, word, mode="text")
    }
