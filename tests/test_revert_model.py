"""Revert against a plain model, on both backends: any interleaving of remember, correct,
forget, restore, working set and delete, and revert leaves the store as the model says
(a refused revert changes nothing), and reverting every entry newest first gives back
the first state: no live fact, no working key, and in the trash only facts the run made.

Each example works in a scope of its own on one store per backend. The number of
examples is ``ENGRAM_REVERT_EXAMPLES`` (30 by default; 500 for the acceptance run).
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

import engram
from engram import Conflict, NotFound, ResourceRef
from stores import Target

EXAMPLES = int(os.environ.get("ENGRAM_REVERT_EXAMPLES", "30"))
WORDS = ["apples", "pears", "the plan is pro", "due friday", "lisbon trip", "coffee"]
KEYS = ["plan", "mood", "step"]

Live = tuple[str, str]  # ("live" | "trash", content)


@dataclass
class Change:
    """What an entry did to one object: its state and token before, the token after."""

    before: Any  # a fact: None (absent) or (state, content); a key: None (unset) or value
    before_token: int | None
    after_token: int | None


@dataclass
class Model:
    facts: dict[str, Live] = field(default_factory=dict)
    working: dict[str, Any] = field(default_factory=dict)
    tokens: dict[tuple[str, str], int | None] = field(default_factory=dict)
    entries: dict[int, dict[tuple[str, str], Change]] = field(default_factory=dict)

    def live_holder(self, content: str) -> str | None:
        for fact_id, (state, text) in self.facts.items():
            if state == "live" and text == content:
                return fact_id
        return None

    def record(self, seq: int, obj: tuple[str, str], before: Any, after_token: int | None) -> None:
        change = Change(before, self.tokens.get(obj), after_token)
        self.entries[seq] = {obj: change}
        self.tokens[obj] = after_token

    def state(self, obj: tuple[str, str]) -> Any:
        kind, name = obj
        return self.facts.get(name) if kind == "fact" else self.working.get(name)

    def revert(self, seq: int) -> dict[tuple[str, str], Any] | None:
        """The objects' states after reverting ``seq``, or None when it is refused."""
        changes = self.entries[seq]
        if any(self.tokens.get(obj) != c.after_token for obj, c in changes.items()):
            return None
        result: dict[tuple[str, str], Any] = {}
        for obj, change in changes.items():
            kind, name = obj
            if kind == "working":
                result[obj] = change.before
                continue
            current = self.facts[name]
            target = change.before
            if target is None or target[0] == "trash":
                result[obj] = ("trash", current[1])
                continue
            content = target[1] if current[0] == "live" else current[1]
            holder = self.live_holder(content)
            if holder is not None and holder != name:
                return None  # the words are live again as another fact
            result[obj] = ("live", content)
        return result


class RevertMachine(RuleBasedStateMachine):
    memory: engram.Memory

    facts = Bundle("facts")

    def __init__(self) -> None:
        super().__init__()
        self.ref = ResourceRef(f"r-{uuid.uuid4().hex[:12]}")
        self.model = Model()
        self.first_trash: set[str] = set()

    def _newest(self) -> int:
        return self.memory.ledger(self.ref, limit=1).entries[0].seq

    def _count(self) -> int:
        page = self.memory.ledger(self.ref, limit=1).entries
        return page[0].seq if page else 0

    @rule(target=facts, text=st.sampled_from(WORDS))
    def remember(self, text: str) -> str:
        before = self._count()
        fact = self.memory.remember(self.ref, text)
        holder = self.model.live_holder(text)
        if holder is not None:
            assert fact.id == holder and self._count() == before  # a duplicate: no entry
            return fact.id
        seq = self._newest()
        self.model.facts[fact.id] = ("live", text)
        self.model.record(seq, ("fact", fact.id), None, seq)
        return fact.id

    @rule(fact_id=facts, text=st.sampled_from(WORDS))
    def correct(self, fact_id: str, text: str) -> None:
        state = self.model.facts.get(fact_id)
        holder = self.model.live_holder(text)
        if state is None or state[0] != "live":
            with pytest.raises(NotFound):
                self.memory.correct(self.ref, fact_id, text)
            return
        if holder is not None and holder != fact_id:
            with pytest.raises(Conflict):
                self.memory.correct(self.ref, fact_id, text)
            return
        self.memory.correct(self.ref, fact_id, text)
        seq = self._newest()
        self.model.record(seq, ("fact", fact_id), state, seq)
        self.model.facts[fact_id] = ("live", text)

    @rule(fact_id=facts)
    def forget(self, fact_id: str) -> None:
        state = self.model.facts.get(fact_id)
        existed = self.memory.forget(self.ref, fact_id)
        assert existed == (state is not None and state[0] == "live")
        if existed:
            assert state is not None
            seq = self._newest()
            self.model.record(seq, ("fact", fact_id), state, seq)
            self.model.facts[fact_id] = ("trash", state[1])

    @rule(fact_id=facts)
    def restore(self, fact_id: str) -> None:
        state = self.model.facts.get(fact_id)
        if state is None or state[0] != "trash":
            with pytest.raises(NotFound):
                self.memory.restore(self.ref, fact_id)
            return
        if self.model.live_holder(state[1]) is not None:
            with pytest.raises(Conflict):
                self.memory.restore(self.ref, fact_id)
            return
        self.memory.restore(self.ref, fact_id)
        seq = self._newest()
        self.model.record(seq, ("fact", fact_id), state, seq)
        self.model.facts[fact_id] = ("live", state[1])

    @rule(key=st.sampled_from(KEYS), value=st.integers(0, 3))
    def working_set(self, key: str, value: int) -> None:
        self.memory.working.set(self.ref, key, value)
        seq = self._newest()
        self.model.record(seq, ("working", key), self.model.working.get(key), seq)
        self.model.working[key] = value

    @rule(key=st.sampled_from(KEYS))
    def working_delete(self, key: str) -> None:
        existed = self.memory.working.delete(self.ref, key)
        assert existed == (key in self.model.working)
        if existed:
            seq = self._newest()
            self.model.record(seq, ("working", key), self.model.working.pop(key), seq)

    @precondition(lambda self: bool(self.model.entries))
    @rule(data=st.data())
    def revert(self, data: st.DataObject) -> None:
        seq = data.draw(st.sampled_from(sorted(self.model.entries)))
        self._revert(seq)

    def _revert(self, seq: int) -> bool:
        expected = self.model.revert(seq)
        if expected is None:
            with pytest.raises(Conflict):
                self.memory.revert(self.ref, seq)
            return False
        made = self.memory.revert(self.ref, seq).seq
        for obj, after in expected.items():
            change = self.model.entries[seq][obj]
            kind, name = obj
            self.model.entries.setdefault(made, {})[obj] = Change(
                self.model.state(obj), self.model.tokens.get(obj), change.before_token
            )
            self.model.tokens[obj] = change.before_token
            if kind == "working":
                if after is None:
                    self.model.working.pop(name, None)
                else:
                    self.model.working[name] = after
            else:
                self.model.facts[name] = after
        return True

    @invariant()
    def store_is_the_model(self) -> None:
        listed = self.memory.facts(self.ref, limit=1000).facts
        live = {f.id: f.content for f in listed}
        assert live == {i: t for i, (s, t) in self.model.facts.items() if s == "live"}
        trashed = {t.fact.id for t in self.memory.trash(self.ref, limit=1000).facts}
        assert trashed == {i for i, (s, _) in self.model.facts.items() if s == "trash"}
        assert self.memory.working.list(self.ref).as_dict() == self.model.working

    def teardown(self) -> None:
        # Newest first, every entry of the run reverts, and the first state comes back.
        for seq in sorted(self.model.entries, reverse=True):
            assert self._revert(seq), f"entry {seq} could not be reverted newest first"
        self.store_is_the_model()
        assert self.memory.facts(self.ref).facts == []
        assert self.memory.working.list(self.ref).as_dict() == {}
        made = set(self.model.facts)
        assert {t.fact.id for t in self.memory.trash(self.ref, limit=1000).facts} <= made


def test_revert_follows_the_model_on_any_interleaving(target: Target) -> None:
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as memory:
        RevertMachine.memory = memory
        run_state_machine_as_test(
            RevertMachine,
            settings=settings(
                max_examples=EXAMPLES,
                stateful_step_count=20,
                deadline=None,
                suppress_health_check=[HealthCheck.too_slow],
            ),
        )
