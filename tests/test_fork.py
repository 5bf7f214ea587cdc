from __future__ import annotations

import pytest

import engram
from engram import InvalidInput, NotFound, ResourceRef, SourceRef


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
