from __future__ import annotations

from datetime import timedelta

import pytest

import engram
from engram import Conflict, InvalidInput, NotFound, ResourceRef, SourceRef
from stores import ManualClock, Target


def test_fork_copies_everything_without_embedding(
    mem: engram.Memory, hashing: engram.HashingEmbedder
) -> None:
    parent = ResourceRef("planner", team_id="acme")
    mem.working.set(parent, "goal", {"ship": "v2"})
    mem.working.set(parent, "step", 3)
    facts = mem.remember_many(parent, ["uses postgres", "deadline is friday"])
    verified = mem.remember(
        parent, "tests passed", source_ref=SourceRef("sb-9", 7), tags=["ci"], type="event"
    )
    calls = hashing.calls
    result = mem.fork(parent, "worker-1")
    assert hashing.calls == calls  # vectors copied, not recomputed
    assert result.ref == ResourceRef("worker-1", team_id="acme")
    assert (result.working_keys_copied, result.facts_copied) == (2, 3)
    child = result.ref
    assert mem.working.list(child).as_dict() == {"goal": {"ship": "v2"}, "step": 3}
    copies = {f.content: f for f in mem.facts(child).facts}
    assert set(copies) == {f.content for f in [*facts, verified]}
    copy = copies["tests passed"]
    assert copy.verified and copy.source_ref == SourceRef("sb-9", 7)
    assert copy.tags == ("ci",) and copy.type == "event"
    assert copy.created_at == verified.created_at and copy.id != verified.id
    hits = mem.recall(child, "tests passed", tags=["ci"])
    assert [h.fact.id for h in hits] == [copy.id]


def test_parent_and_child_are_independent(mem: engram.Memory) -> None:
    parent = ResourceRef("planner")
    mem.working.set(parent, "goal", "a")
    kept = mem.remember(parent, "shared history")
    child = mem.fork(parent, "worker").ref
    # the child diverges: nothing reaches the parent
    mem.working.set(child, "goal", "b")
    mem.working.set(child, "extra", 1)
    mem.remember(child, "child only")
    child_copy = mem.facts(child).facts[-1]
    mem.forget(child, child_copy.id)
    assert mem.working.get(parent, "goal") == "a"
    with pytest.raises(NotFound):
        mem.working.get(parent, "extra")
    assert [f.content for f in mem.facts(parent).facts] == ["shared history"]
    assert mem.recall(parent, "child only", mode="text") == []
    # and the parent's later changes never reach the child
    mem.working.set(parent, "goal", "c")
    mem.correct(parent, kept.id, "rewritten history")
    mem.remember(parent, "parent only")
    assert mem.working.get(child, "goal") == "b"
    assert {f.content for f in mem.facts(child).facts} == {"child only"}
    assert mem.recall(child, "parent only", mode="text") == []


def test_fork_refuses_itself_and_bad_ids(mem: engram.Memory) -> None:
    with pytest.raises(InvalidInput, match="another resource_id"):
        mem.fork(ResourceRef("same"), "same")
    with pytest.raises(InvalidInput, match="resource_id"):
        mem.fork(ResourceRef("p"), "")


def test_fork_of_an_empty_scope(mem: engram.Memory) -> None:
    result = mem.fork(ResourceRef("empty"), "child")
    assert (result.working_keys_copied, result.facts_copied) == (0, 0)


def _holdings(mem: engram.Memory, ref: ResourceRef) -> tuple[dict[str, object], set[str]]:
    return mem.working.list(ref).as_dict(), {f.content for f in mem.facts(ref).facts}


@pytest.mark.parametrize("occupied_by", ["key", "fact"])
def test_fork_refuses_a_child_that_already_holds_memory(
    mem: engram.Memory, occupied_by: str
) -> None:
    parent, other = ResourceRef("planner"), ResourceRef("someone-else")
    mem.working.set(parent, "goal", "parent's")
    mem.remember(parent, "parent fact")
    if occupied_by == "key":
        mem.working.set(other, "goal", "theirs")
    else:
        mem.remember(other, "their fact")
    before = _holdings(mem, other)
    with pytest.raises(Conflict, match="already holds memory"):
        mem.fork(parent, "someone-else")
    assert _holdings(mem, other) == before  # nothing copied, nothing overwritten


def test_an_expired_key_does_not_occupy_a_child(
    target: Target, hashing: engram.HashingEmbedder, clock: ManualClock
) -> None:
    parent, child = ResourceRef("planner"), ResourceRef("child")
    with engram.open(target, embedder=hashing, clock=clock) as mem:
        mem.working.set(parent, "goal", "parent's", ttl=timedelta(hours=1))
        mem.working.set(child, "gone", 1, ttl=timedelta(milliseconds=1))
        with pytest.raises(Conflict):
            mem.fork(parent, "child")
        clock.advance(timedelta(milliseconds=1))
        assert mem.fork(parent, "child").working_keys_copied == 1


def test_fork_into_existing_memory_when_asked_merges(mem: engram.Memory) -> None:
    parent, other = ResourceRef("planner"), ResourceRef("other")
    mem.working.set(parent, "goal", "parent's")
    mem.remember_many(parent, ["shared words", "parent fact"])
    mem.working.set(other, "goal", "theirs")
    mem.working.set(other, "own", 1)
    mem.remember_many(other, ["shared words", "their fact"])
    result = mem.fork(parent, "other", into_existing=True)
    assert (result.working_keys_copied, result.facts_copied) == (1, 1)
    assert _holdings(mem, other) == (
        {"goal": "parent's", "own": 1},
        {"shared words", "parent fact", "their fact"},
    )


def test_spawn_into_another_agents_resource_is_refused(mem: engram.Memory) -> None:
    victim = mem.agents.register("victim")
    mem.working.set(victim.ref, "plan", "mine")
    mem.remember(victim.ref, "victim fact")
    parent = mem.agents.register("parent")
    mem.working.set(parent.ref, "plan", "overwrite")
    before = _holdings(mem, victim.ref)
    with pytest.raises(Conflict, match="'victim' already holds memory"):
        mem.agents.spawn(parent.id, "child", resource_id="victim")
    assert _holdings(mem, victim.ref) == before
    assert [a.name for a in mem.agents.list().agents].count("child") == 0  # not registered
    child, fork = mem.agents.spawn(parent.id, "child", resource_id="victim", into_existing=True)
    assert fork.working_keys_copied == 1 and mem.working.get(child.ref, "plan") == "overwrite"
