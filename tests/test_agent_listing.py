"""Every registered agent can be found again (a lost id is not a lost handle), and a
person's allowances can be listed whole; on both backends."""

from __future__ import annotations

import pytest

import engram


def test_agents_page_in_id_order_with_a_cursor(mem: engram.Memory) -> None:
    made = [mem.agents.register(f"worker-{i % 3}") for i in range(7)]
    ended = mem.agents.end(made[0].id)
    ids = sorted(a.id for a in made)
    first = mem.agents.list(limit=3)
    assert [a.id for a in first.agents] == ids[:3] and first.next_after == ids[2]
    rest = mem.agents.list(after=first.next_after, limit=1000)
    assert [a.id for a in rest.agents] == ids[3:] and rest.next_after is None
    listed = {a.id: a for a in first.agents + rest.agents}
    assert listed[ended.id].status == "ended"
    named = mem.agents.list(name="worker-1")
    assert sorted(a.id for a in named.agents) == sorted(a.id for a in made if a.name == "worker-1")
    assert mem.agents.list(name="nobody").agents == []


def test_agents_page_refuses_bad_bounds(mem: engram.Memory) -> None:
    for bad in (0, 1001, True, "5"):
        with pytest.raises(engram.InvalidInput):
            mem.agents.list(limit=bad)  # type: ignore[arg-type]
    with pytest.raises(engram.InvalidInput):
        mem.agents.list(after="x" * 65)


def test_all_of_a_person_s_allowances(mem: engram.Memory) -> None:
    mem.sharing.allow("p1", "app:a", "app:b")
    mem.sharing.allow("p1", "app:c", "app:a")
    mem.sharing.allow("p2", "app:a", "app:c")
    pairs = {(s.source, s.reader) for s in mem.sharing.shares("p1")}
    assert pairs == {("app:a", "app:b"), ("app:c", "app:a")}
    assert [s.reader for s in mem.sharing.shares("p1", source="app:a")] == ["app:b"]
    with pytest.raises(engram.InvalidInput, match="not both"):
        mem.sharing.shares("p1", source="app:a", reader="app:b")
