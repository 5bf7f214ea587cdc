from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

import engram
from engram import InvalidInput, Note, ResourceRef
from stores import Target


def _ages(memory: engram.Memory, ref: ResourceRef, days: list[int]) -> list[engram.Fact]:
    now = datetime.now(UTC)
    notes = [Note(f"fact aged {d} days", created_at=now - timedelta(days=d)) for d in days]
    return memory.remember_many(ref, notes)


def test_max_facts_drops_the_oldest_when_the_scope_next_remembers(
    target: Target, ref: ResourceRef
) -> None:
    embedder = engram.HashingEmbedder(64)
    with engram.open(target, embedder=embedder) as memory:
        _ages(memory, ref, [5, 4, 3, 2, 1])
        _ages(memory, ResourceRef("other"), [9, 8, 7])
    with engram.open(target, embedder=embedder, max_facts=3) as memory:
        assert memory.count(ref) == 5  # a scope over the cap is trimmed when it next remembers
        memory.remember(ref, "newest")
        assert [f.content for f in memory.facts(ref).facts] == [
            "newest",
            "fact aged 1 days",
            "fact aged 2 days",
        ]
        assert memory.count(ResourceRef("other")) == 3  # other scopes untouched
        recalled = {h.fact.content for h in memory.recall(ref, "aged 5", top_k=10)}
        assert "fact aged 5 days" not in recalled and "fact aged 1 days" in recalled


def test_max_age_applies_on_remember(target: Target, ref: ResourceRef) -> None:
    with engram.open(
        target, embedder=engram.HashingEmbedder(64), max_age=timedelta(days=30)
    ) as memory:
        _ages(memory, ref, [40, 31, 29, 1])
        assert sorted(f.content for f in memory.facts(ref).facts) == [
            "fact aged 1 days",
            "fact aged 29 days",
        ]


def test_compact_age_first_then_cap(mem: engram.Memory, ref: ResourceRef) -> None:
    facts = _ages(mem, ref, [50, 40, 20, 10, 5, 1])
    result = mem.compact(ref, max_facts=2, max_age=timedelta(days=30))
    assert sorted(result.expired) == sorted([facts[0].id, facts[1].id])
    assert sorted(result.over_cap) == sorted([facts[2].id, facts[3].id])
    assert result.removed == 4
    assert [f.content for f in mem.facts(ref).facts] == ["fact aged 1 days", "fact aged 5 days"]
    assert {h.fact.content for h in mem.recall(ref, "aged", top_k=10)} == {
        "fact aged 1 days",
        "fact aged 5 days",
    }
    assert mem.compact(ref, max_facts=2, max_age=timedelta(days=30)).removed == 0


def test_compact_with_no_caps_removes_nothing(mem: engram.Memory, ref: ResourceRef) -> None:
    _ages(mem, ref, [400, 1])
    assert mem.compact(ref).removed == 0
    assert mem.count(ref) == 2


def test_bad_caps_are_refused(target: Target, mem: engram.Memory, ref: ResourceRef) -> None:
    with pytest.raises(InvalidInput, match="max_facts"):
        mem.compact(ref, max_facts=-1)
    with pytest.raises(InvalidInput, match="max_age"):
        mem.compact(ref, max_age=timedelta(seconds=-1))
    with pytest.raises(InvalidInput, match="max_facts"):
        engram.open(target, embedder=None, max_facts="10")  # type: ignore[arg-type]
