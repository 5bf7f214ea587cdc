"""The erasure oracle: random stores and random erase operations, on both backends. After
each step, no read path returns a word that was forgotten (recall in every mode,
listings, working memory, the graph's search, neighbourhoods and traversals, the trash
for words deleted for good, episodic recall and the session tree, documents and the
provenance of their chunks, the ledger's before-states and the feedback about a fact for
words deleted for good, the export, the memory tools' and MCP's search, list and graph
search), and at each checkpoint no byte of a word deleted for good is in any file of the
SQLite store's folder or any row of any PostgreSQL table, nor, after each example's
``engram scrub``, in any file of the PostgreSQL database's relations, unless a fork's
child (a copy the caller asked for, independent of its parent) still holds it.

Reverts of any entry are drawn too: a revert may bring back or hide what was forgotten
softly (such words are then no longer checked until a later erase names them), and never
brings back a word deleted for good.

Every word is a unique random token, so a hit is never a coincidence. A word is ``live``,
``hidden`` (forgotten softly: read paths must not give it; the trash, the ledger and the
bytes still hold it, for a restore or a revert) or ``erased`` (deleted for good: nowhere).

``ENGRAM_ERASURE_EXAMPLES`` sets the number of examples (8 by default in the suite);
``ENGRAM_ERASURE_RANDOM=1`` draws new ones.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import uuid
from dataclasses import dataclass, field

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    MultipleResults,
    RuleBasedStateMachine,
    invariant,
    multiple,
    precondition,
    rule,
    run_state_machine_as_test,
)

import engram
from engram import Conflict, InvalidInput, NotFound, ResourceRef, Turn
from engram.backends import backend_for
from engram.mcp import catalogue
from stores import Target
from traces import in_files, traces

EXAMPLES = int(os.environ.get("ENGRAM_ERASURE_EXAMPLES", "8"))
RANDOM = os.environ.get("ENGRAM_ERASURE_RANDOM") == "1"
_counter = itertools.count()


def _word() -> str:
    """A token nothing else holds (lower case, so case-blind probes match it exactly)."""
    return f"zq{uuid.uuid4().hex[:10]}{next(_counter)}"


@dataclass
class Held:
    """What one fact (a note, a turn or a document) holds: its words."""

    fact_id: str | None
    words: list[str] = field(default_factory=list)


class ErasureMachine(RuleBasedStateMachine):
    memory: engram.Memory
    target: Target

    notes = Bundle("notes")
    turns = Bundle("turns")
    documents = Bundle("documents")

    def __init__(self) -> None:
        super().__init__()
        self.ref = ResourceRef(f"erasure-{uuid.uuid4().hex[:10]}")
        self.state: dict[str, str] = {}  # word -> live | hidden | erased
        self.holders: dict[str, list[str]] = {}  # fact id -> its words
        self.titles: dict[str, list[str]] = {}  # document id -> its title's words
        self.chunks: list[str] = []  # the facts documents' chunks were written to
        self.pinned: set[str] = set()  # words a fork's child may hold
        self.child: str | None = None  # the resource id of the fork's child, while it lives

    # -- writing ---------------------------------------------------------------------
    def _live(self, *words: str) -> None:
        for word in words:
            self.state[word] = "live"

    @rule(target=notes, named=st.booleans(), typed=st.booleans())
    def remember(self, named: bool, typed: bool) -> str:
        word, name = _word(), _word()
        text = f"note {word}" + (f" about {name.capitalize()} today" if named else "")
        fact = self.memory.remember(self.ref, text, type="note" if typed else None)
        held = [word, name] if named else [word]
        self._live(*held)
        self.holders[fact.id] = held
        return fact.id

    @rule(target=turns, count=st.integers(1, 4), width=st.integers(0, 2))
    def converse(self, count: int, width: int) -> MultipleResults[str]:
        words = [_word() for _ in range(count)]
        talk = self.memory.remember_conversation(
            self.ref,
            [Turn("Ana" if n % 2 else "Bo", f"said {w}") for n, w in enumerate(words)],
            context_turns=width,
        )
        self._live(*words)
        for fact, word in zip(talk.facts, words, strict=True):
            self.holders[fact.id] = [word]
        return multiple(*[f.id for f in talk.facts])

    @rule(target=documents)
    def ingest(self) -> str:
        title, body = _word(), _word()
        text = f"---\ntitle: {title}\n---\n# {title}\n\nthe body says {body}\n"
        report = self.memory.ingest_text(self.ref, text, name=f"{title}.md")
        assert report.document_id is not None
        self._live(title, body)
        self.titles[report.document_id] = [title, body]
        chunks = self.memory.document(self.ref, report.document_id).chunks
        self.chunks += [c.fact_id for c in chunks if c.fact_id is not None]
        return report.document_id

    @rule(target=turns, data=st.data())
    def converse_again(self, data: st.DataObject) -> MultipleResults[str]:
        """A conversation whose middle turn says what a stored turn says: its entry
        repeats that fact (and follows it)."""
        said = [f for f in self.memory.facts(self.ref, limit=1000).facts if f.source_ref]
        if not said:
            return multiple()
        repeated = data.draw(st.sampled_from(said))
        speaker, _, text = repeated.content.partition(": ")
        first, last = _word(), _word()
        talk = self.memory.remember_conversation(
            self.ref,
            [Turn("Ana", f"said {first}"), Turn(speaker, text), Turn("Bo", f"said {last}")],
            context_turns=1,
        )
        assert talk.facts[1].id == repeated.id
        self._live(first, last)
        self.holders[talk.facts[0].id] = [first]
        self.holders[talk.facts[2].id] = [last]
        return multiple(talk.facts[0].id, talk.facts[2].id)

    @rule(fact=st.one_of(notes, turns))
    def feedback(self, fact: str) -> None:
        word = _word()
        with contextlib.suppress(NotFound):  # the fact is gone
            self.memory.usage.record(self.ref, fact, "used", query=f"asked {word}")
            self._live(word)  # about the fact: it goes with the fact's deletion for good
            self.holders[fact] = [*self.holders.get(fact, []), word]

    @precondition(lambda self: self.child is None)
    @rule()
    def fork(self) -> None:
        child = f"child-{uuid.uuid4().hex[:8]}"
        with contextlib.suppress(Conflict):
            self.memory.fork(self.ref, child)
            self.child = child
            self.pinned |= {w for w, s in self.state.items() if s != "erased"}

    @precondition(lambda self: self.child is not None)
    @rule()
    def delete_child(self) -> None:
        assert self.child is not None
        self.memory.delete_scope(self.ref.child(self.child))
        self.child, self.pinned = None, set()

    @rule(data=st.data())
    def revert(self, data: st.DataObject) -> None:
        entries = self.memory.ledger(self.ref, limit=20).entries
        if not entries:
            return
        entry = data.draw(st.sampled_from(entries))
        with contextlib.suppress(Conflict, NotFound, InvalidInput):
            self.memory.revert(self.ref, entry.seq)
            for word, state in self.state.items():  # back, or hidden again: unknown
                if state == "hidden":
                    self.state[word] = "unknown"

    @rule()
    def assert_entity(self) -> None:
        name, summary = _word(), _word()
        self.memory.graph.upsert_entity(self.ref, name.capitalize(), summary=f"is {summary}")
        self._live(name, summary)
        self.asserted = [*getattr(self, "asserted", []), name, summary]
        self.names = [*getattr(self, "names", []), name]

    @rule(target=notes)
    def import_a_note(self) -> str:
        word = _word()
        line = json.dumps({"kind": "fact", "content": f"imported {word}"})
        self.memory.import_string(self.ref, line + "\n", format="jsonl")
        fact = self.memory.recall(self.ref, word, mode="text")[0].fact
        self._live(word)
        self.holders[fact.id] = [word]
        return fact.id

    @rule(set_it=st.booleans())
    def working_key(self, set_it: bool) -> None:
        if set_it:
            word = _word()
            self.memory.working.set(self.ref, "note", {"text": word})
            self._live(word)
            old, self.working = getattr(self, "working", None), word
        else:
            self.memory.working.delete(self.ref, "note")
            old, self.working = getattr(self, "working", None), None
        if old is not None:  # the ledger keeps the value before, for a revert
            self.state[old] = "hidden"

    @precondition(lambda self: getattr(self, "names", []))
    @rule(target=notes, data=st.data())
    def mention(self, data: st.DataObject) -> str:
        name = data.draw(st.sampled_from(self.names))
        word = _word()
        fact = self.memory.remember(self.ref, f"note {word} with {name.capitalize()} here")
        self._live(word)
        self.holders[fact.id] = [word]
        return fact.id

    @precondition(lambda self: len(getattr(self, "names", [])) > 1)
    @rule(data=st.data(), supported=st.one_of(st.none(), notes))
    def relate(self, data: st.DataObject, supported: str | None) -> None:
        source, target = data.draw(st.permutations(self.names))[:2]
        word = _word()
        with contextlib.suppress(NotFound):  # the supporting fact is gone
            self.memory.graph.upsert_relation(
                self.ref,
                source.capitalize(),
                target.capitalize(),
                "knows",
                facts=[supported] if supported else [],
                attributes={"note": word},
            )
            self._live(word)
            self.asserted = [*getattr(self, "asserted", []), word]

    @rule()
    def consolidate(self) -> None:
        self.memory.consolidate(self.ref)

    @rule()
    def compile_wiki(self) -> None:
        self.memory.wiki.compile(self.ref)

    # -- erasing ---------------------------------------------------------------------
    def _mark(self, fact_id: str, how: str) -> None:
        for word in self.holders.get(fact_id, []):
            if self.state.get(word) != "erased":
                self.state[word] = how

    @rule(fact=st.one_of(notes, turns), hard=st.booleans())
    def forget(self, fact: str, hard: bool) -> None:
        if self.memory.forget(self.ref, fact, hard=hard) or hard:
            self._mark(fact, "erased" if hard else "hidden")

    @rule(fact=st.one_of(notes, turns))
    def correct(self, fact: str) -> None:
        word = _word()
        with contextlib.suppress(NotFound):
            self.memory.correct(self.ref, fact, f"Bo: corrected {word}")
            self._mark(fact, "hidden")  # the ledger keeps the words before, for a revert
            self.holders[fact] = [*self.holders.get(fact, []), word]
            self._live(word)

    @rule(facts=st.lists(st.one_of(notes, turns), min_size=1, max_size=3))
    def delete_traces(self, facts: list[str]) -> None:
        self.memory.delete_traces(self.ref, facts)
        for fact in facts:
            self._mark(fact, "erased")

    @rule(fact=st.one_of(notes, turns))
    def restore(self, fact: str) -> None:
        with contextlib.suppress(NotFound, Conflict):
            self.memory.restore(self.ref, fact)
            for word in self.holders.get(fact, []):
                if self.state[word] == "hidden":
                    self.state[word] = "live"

    @rule(document=documents, hard=st.booleans())
    def forget_document(self, document: str, hard: bool) -> None:
        if self.memory.forget_document(self.ref, document, hard=hard):
            for word in self.titles[document]:
                if self.state[word] != "erased":
                    self.state[word] = "erased" if hard else "hidden"

    @rule(hard=st.booleans())
    def forget_all(self, hard: bool) -> None:
        count = self.memory.count(self.ref)
        self.memory.forget_all(self.ref, expected_count=count, hard=hard)
        erased = "erased" if hard else "hidden"
        for words in self.holders.values():
            for word in words:
                if self.state[word] in ("live", "unknown") or hard:
                    self.state[word] = erased
        for words in self.titles.values():  # a document's words are its chunks'
            if hard:
                for word in words:
                    self.state[word] = "erased"
            elif self.state[words[1]] in ("live", "unknown"):
                self.state[words[1]] = "hidden"
        if hard:
            for word in getattr(self, "asserted", []):
                self.state[word] = "erased"
            self.names = []

    @precondition(lambda self: self.state)
    @rule()
    def delete_scope(self) -> None:
        self.memory.delete_scope(self.ref)
        self.names = []  # the entities went with the scope
        for word in self.state:  # working memory stays (working.delete removes a key)
            if word != getattr(self, "working", None):
                self.state[word] = "erased"

    # -- what must hold --------------------------------------------------------------
    def _gone(self, how: set[str]) -> list[str]:
        return [w for w, s in self.state.items() if s in how]

    @invariant()
    def no_read_path_gives_a_forgotten_word(self) -> None:
        mem, ref = self.memory, self.ref
        gone, erased = self._gone({"hidden", "erased"}), self._gone({"erased"})
        if not gone:
            return
        facts = mem.facts(ref, limit=1000).facts
        listed = " ".join(f"{f.content} {f.context or ''}" for f in facts).lower()
        episodes = " ".join(e.content for e in mem.episodic_recall(ref, limit=1000).entries)
        tree = " ".join(e.content for n in _nodes(mem.episodic_tree(ref)) for e in n.entries)
        documents = json.dumps([[d.title, d.metadata] for d in mem.documents(ref)]).lower()
        exported = mem.export_string(ref).lower()
        served = {t.name: t for t in catalogue.agent(mem, ref)}  # as MCP serves them
        search = served["memory_search"]
        listing = served["memory_list"]({"limit": 100}).text.lower()
        walked = ""
        if self.state.get(next(iter(getattr(self, "names", [])), ""), "") == "live":
            for name in self.names:
                with contextlib.suppress(NotFound):  # a revert may have taken the entity
                    around = mem.graph.neighbourhood(ref, name.capitalize(), depth=2)
                    walked += str([around.entities, around.relations, around.facts]).lower()
                    walked += str(mem.graph.traverse(ref, name.capitalize(), depth=2)).lower()
        provenance = ""
        for chunk in self.chunks:
            with contextlib.suppress(NotFound):
                provenance += str(mem.provenance(ref, chunk)).lower()
        for word in gone:
            where = []
            for mode in ("text", "vector", "hybrid"):
                hits = mem.recall(ref, word, mode=mode, top_k=50)
                if any(word in f"{h.fact.content} {h.fact.context or ''}".lower() for h in hits):
                    where.append(f"recall {mode}")
            where += [
                name
                for name, text in (
                    ("facts", listed),
                    ("episodes", episodes),
                    ("tree", tree),
                    ("documents", documents),
                    ("provenance", provenance),
                    ("memory_list", listing),
                )
                if word in text.lower()
            ]
            entities = [h.entity for h in mem.graph.search(ref, word)]  # by meaning too
            if word in str(entities).lower():
                where.append("graph search")
            if word in walked:
                where.append("neighbourhood")
            if word in erased and word in exported:
                where.append("export")
            if word in search({"query": word, "topK": 50}).text.lower():
                where.append("memory_search tool")
            if word in served["graph_search"]({"query": word}).text.lower():
                where.append("graph_search tool")
            assert not where, f"{self.state[word]} word {word} still read through {where}"
        working = str(mem.working.list(ref, after=None, limit=100).entries).lower()
        for word in gone:
            assert word not in working, f"{self.state[word]} word {word} in working memory"
        if erased:
            trash = " ".join(
                f"{t.fact.content} {t.fact.context or ''}" for t in mem.trash(ref, limit=1000).facts
            ).lower()
            ledger = str(mem.ledger(ref, limit=1000).entries).lower()
            signals = ""
            for fact in self.holders:
                with contextlib.suppress(NotFound):
                    signals += str(mem.usage.signals(ref, fact)).lower()
            for word in erased:
                assert word not in trash, f"erased word {word} in the trash"
                assert word not in ledger, f"erased word {word} in the ledger"
                assert word not in signals, f"erased word {word} in a fact's feedback"

    @rule()
    def checkpoint(self) -> None:
        for word in self._gone({"erased"}):
            if word not in self.pinned:
                assert traces(self.target, word) == [], f"erased word {word} in the bytes"

    def teardown(self) -> None:
        """PostgreSQL keeps a deleted row's bytes in its files until they are written anew
        (storage/postgres/scrub.py): after ``engram scrub``, no file of the database holds
        an erased word."""
        erased = [w for w in self._gone({"erased"}) if w not in self.pinned]
        if isinstance(self.target, str) and erased:
            storage = self.memory.health().storage
            assert storage is not None and storage.scrub_due, "an erasure not recorded"
            backend_for(self.target).scrub(self.target)
            assert in_files(self.target, erased) == {}, "erased words in the files"


def _nodes(roots: list[engram.SessionNode]) -> list[engram.SessionNode]:
    found: list[engram.SessionNode] = []
    for root in roots:
        found += [root, *_nodes(root.children)]
    return found


def test_no_forgotten_word_is_read_and_no_erased_byte_stays(target: Target) -> None:
    with engram.open(target, embedder=engram.HashingEmbedder(32)) as memory:
        texts = getattr(memory._store, "texts", None)
        if texts is not None:  # SQLite: full text from memory, every word in a text base
            texts.index_above = 1
            texts.bases.above, texts.bases.term_rows = 1, 1
        ErasureMachine.memory, ErasureMachine.target = memory, target
        run_state_machine_as_test(
            ErasureMachine,
            settings=settings(
                max_examples=EXAMPLES,
                derandomize=not RANDOM,
                stateful_step_count=15,
                deadline=None,
                suppress_health_check=[HealthCheck.too_slow],
            ),
        )
