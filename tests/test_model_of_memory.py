"""Random interleavings of the library's writes, checked against a plain-Python model."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

import engram
import stores
from engram import Conflict, ResourceRef
from engram.storage.postgres.store import PostgresStore
from engram.storage.sqlite.store import SQLiteStore

BASE = [ResourceRef("a"), ResourceRef("b", team_id="t"), ResourceRef("t:b"), ResourceRef("c")]
WORDS = ["red", "green", "blue", "apple", "pear", "plum"]
texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join)
scopes = st.sampled_from(BASE)
keys = st.sampled_from(["k1", "k2", "k3"])


class MemoryModel(RuleBasedStateMachine):
    # Where each run's fresh store comes from; set per backend by the test below.
    fresh_store: stores.FreshStore

    def __init__(self) -> None:
        super().__init__()
        target, self.cleanup = type(self).fresh_store()
        self.mem = engram.open(target, embedder=engram.HashingEmbedder(16))
        # On SQLite, rank full text from memory (every term saved in the scope's text
        # base) and search vectors through the approximate index (both built in the
        # background as the steps run) from the first fact on, and keep a second store on
        # the file that always runs the FTS5 statement and exact search: every check
        # compares them. On PostgreSQL, the scopes' graphs (and recent graphs) likewise,
        # beside a store that searches exactly.
        self.plain: engram.Memory | None = None
        if isinstance(self.mem._store, PostgresStore):
            self.mem._store.search_approximately_from(1)
            self.plain = engram.open(target, embedder=engram.HashingEmbedder(16))
            assert isinstance(self.plain._store, PostgresStore)
            self.plain._store.search_approximately_from(1 << 62)
        if isinstance(self.mem._store, SQLiteStore):
            self.mem._store.texts.index_above = 1
            bases = self.mem._store.texts.bases
            assert bases is not None
            bases.above, bases.term_rows = 1, 1
            self.mem._store.index.approximate.above = 1
            self.plain = engram.open(target, embedder=engram.HashingEmbedder(16))
            assert isinstance(self.plain._store, SQLiteStore)
            self.plain._store.texts.index_above = 1 << 62
            self.plain._store.index.approximate.above = 1 << 62
        self.scopes = list(BASE)  # forks add their children
        self.facts: dict[ResourceRef, dict[str, str]] = {s: {} for s in BASE}  # id -> text
        self.strengths: dict[str, float] = {}  # id -> the strength it was first written with
        self.working: dict[ResourceRef, dict[str, int]] = {s: {} for s in BASE}

    def draw_fact(self, data: st.DataObject, scope: ResourceRef) -> str:
        """A fact of ``scope``, chosen by its text: ids are random in every run, so a
        choice among sorted ids would pick different facts when Hypothesis replays the
        same draws (it then reports the strategy as flaky)."""
        by_text = {text: fact_id for fact_id, text in self.facts[scope].items()}
        return by_text[data.draw(st.sampled_from(sorted(by_text)))]

    def teardown(self) -> None:
        self.mem.close()
        if self.plain is not None:
            self.plain.close()
        self.cleanup()

    @rule(scope=scopes, text=texts, strength=st.sampled_from([0.5, 1.0, 1.0, 2.0]))
    def remember(self, scope: ResourceRef, text: str, strength: float) -> None:
        fact = self.mem.remember(scope, text, strength=strength)
        same = [i for i, t in self.facts[scope].items() if t == text]
        assert same == [] or same == [fact.id]  # the same text returns the stored fact
        self.facts[scope][fact.id] = text
        self.strengths.setdefault(fact.id, strength)  # the stored fact keeps its own

    @precondition(lambda self: any(self.facts.values()))
    @rule(data=st.data())
    def forget(self, data: st.DataObject) -> None:
        scope = data.draw(st.sampled_from([s for s in self.scopes if self.facts[s]]))
        fact_id = self.draw_fact(data, scope)
        other = data.draw(st.sampled_from([s for s in self.scopes if s != scope]))
        assert self.mem.forget(other, fact_id) is False  # never reaches across scopes
        assert self.mem.forget(scope, fact_id) is True
        del self.facts[scope][fact_id]

    @precondition(lambda self: any(self.facts.values()))
    @rule(data=st.data(), text=texts)
    def correct(self, data: st.DataObject, text: str) -> None:
        scope = data.draw(st.sampled_from([s for s in self.scopes if self.facts[s]]))
        fact_id = self.draw_fact(data, scope)
        taken = [i for i, t in self.facts[scope].items() if t == text and i != fact_id]
        if taken:
            with pytest.raises(Conflict):
                self.mem.correct(scope, fact_id, text)
            return
        assert self.mem.correct(scope, fact_id, text).content == text
        self.facts[scope][fact_id] = text

    @rule(scope=scopes, short=st.booleans())
    def forget_all(self, scope: ResourceRef, short: bool) -> None:
        held = len(self.facts[scope])
        if short and held:
            with pytest.raises(Conflict):
                self.mem.forget_all(scope, expected_count=held - 1)
            return
        assert self.mem.forget_all(scope, expected_count=held) == held
        self.facts[scope] = {}

    @rule(parent=scopes, child=st.sampled_from(["x", "y"]), into_existing=st.booleans())
    def fork(self, parent: ResourceRef, child: str, into_existing: bool) -> None:
        ref = parent.child(child)
        if not into_existing and (self.facts.get(ref) or self.working.get(ref)):
            with pytest.raises(Conflict, match="already holds memory"):
                self.mem.fork(parent, child)
            return  # refused: nothing copied (the invariants check it)
        result = self.mem.fork(parent, child, into_existing=into_existing)
        if result.ref not in self.facts:
            self.facts[result.ref] = {}
            self.working[result.ref] = {}
            self.scopes.append(result.ref)
        have = set(self.facts[result.ref].values())
        assert result.facts_copied == len(set(self.facts[parent].values()) - have)
        texts_by_id = {f.content: f.id for f in self.mem.facts(result.ref, limit=1000).facts}
        strength = {t: self.strengths[i] for i, t in self.facts[parent].items()}
        strength.update({t: self.strengths[i] for i, t in self.facts[result.ref].items()})
        self.facts[result.ref] = {
            texts_by_id[t]: t for t in have | set(self.facts[parent].values())
        }
        for fact_id, text in self.facts[result.ref].items():  # a copy keeps its strength
            self.strengths[fact_id] = strength[text]
        self.working[result.ref].update(self.working[parent])

    @rule(scope=scopes, key=keys, value=st.integers(0, 9))
    def set_key(self, scope: ResourceRef, key: str, value: int) -> None:
        self.mem.working.set(scope, key, value)
        self.working[scope][key] = value

    @rule(scope=scopes, key=keys)
    def delete_key(self, scope: ResourceRef, key: str) -> None:
        assert self.mem.working.delete(scope, key) is (key in self.working[scope])
        self.working[scope].pop(key, None)

    @invariant()
    def stored_equals_model(self) -> None:
        for scope in self.scopes:
            listed = {f.id: f.content for f in self.mem.facts(scope, limit=1000).facts}
            assert listed == self.facts[scope]
            assert self.mem.count(scope) == len(self.facts[scope])
            assert self.mem.working.list(scope).as_dict() == self.working[scope]

    @invariant()
    def recall_stays_in_scope(self) -> None:
        for scope in self.scopes:
            for mode in ("text", "vector"):
                hits = self.mem.recall(scope, "red apple plum", top_k=100, mode=mode)
                assert {h.fact.id for h in hits} <= set(self.facts[scope])
                if mode == "vector":
                    assert len(hits) == len(self.facts[scope])

    @invariant()
    def a_strength_floor_keeps_the_facts_at_or_above_it(self) -> None:
        for scope in self.scopes:
            for floor in (0.5, 0.8, 1.0, 1.5):
                hits = self.mem.recall(scope, "red", top_k=100, mode="vector", min_strength=floor)
                strong = {i for i in self.facts[scope] if self.strengths[i] >= floor}
                assert {h.fact.id for h in hits} == strong, floor

    @invariant()
    def memory_ranks_as_the_statement(self) -> None:
        if self.plain is None:
            return
        for scope in self.scopes:
            for words in ("red apple plum", "pear", "green greens"):
                fast = self.mem.recall(scope, words, top_k=3, mode="text")
                slow = self.plain.recall(scope, words, top_k=3, mode="text")
                assert [(h.fact.id, h.score) for h in fast] == [(h.fact.id, h.score) for h in slow]
                near = self.mem.recall(scope, words, top_k=3, mode="vector")
                stores.same_hits(near, self.plain.recall(scope, words, top_k=3, mode="vector"))


def test_memory_matches_its_model(backend: str, request: pytest.FixtureRequest) -> None:
    fresh = stores.fresh_stores(backend, lambda: request.getfixturevalue("postgres_admin"))
    machine = type("MemoryModelOn" + backend.title(), (MemoryModel,), {"fresh_store": fresh})
    # PostgreSQL runs half the examples: the same model, at three times the cost a step.
    # ENGRAM_MODEL_EXAMPLES (16 by default) sets SQLite's, for a deeper run.
    examples = int(os.environ.get("ENGRAM_MODEL_EXAMPLES", "16"))
    examples = examples if backend == "sqlite" else max(1, examples // 2)
    run_state_machine_as_test(
        machine, settings=settings(max_examples=examples, stateful_step_count=25, deadline=None)
    )
