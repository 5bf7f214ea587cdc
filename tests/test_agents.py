from __future__ import annotations

from pathlib import Path

import pytest

import engram
from engram import InvalidInput, NotFound, ResourceRef
from stores import UNDO_CHANGE_LOG, Target, as_schema_18


def test_register_defaults_the_resource_to_the_name(mem: engram.Memory) -> None:
    planner = mem.agents.register("planner")
    assert planner.id.startswith("a_") and planner.ref == ResourceRef("planner")
    assert planner.status == "running" and planner.parent_id is None
    team = mem.agents.register("bot", resource_id="shared", team_id="acme")
    assert team.ref == ResourceRef("shared", team_id="acme")
    assert mem.agents.get(planner.id) == planner


def test_spawn_forks_memory_into_the_child(mem: engram.Memory) -> None:
    parent = mem.agents.register("planner", team_id="acme")
    mem.working.set(parent.ref, "goal", {"ship": "v2"})
    mem.remember(parent.ref, "uses postgres")
    child, fork = mem.agents.spawn(parent.id, "worker")
    assert child.ref == ResourceRef("worker", team_id="acme") and child.parent_id == parent.id
    assert (fork.working_keys_copied, fork.facts_copied) == (1, 1)
    assert mem.working.get(child.ref, "goal") == {"ship": "v2"}
    mem.working.set(child.ref, "goal", "diverged")
    assert mem.working.get(parent.ref, "goal") == {"ship": "v2"}


def test_a_child_with_the_parents_resource_shares_its_memory(mem: engram.Memory) -> None:
    parent = mem.agents.register("planner")
    mem.working.set(parent.ref, "k", 1)
    child, fork = mem.agents.spawn(parent.id, "helper", resource_id="planner")
    assert child.ref == parent.ref and fork.facts_copied == fork.working_keys_copied == 0
    mem.working.set(child.ref, "k", 2)
    assert mem.working.get(parent.ref, "k") == 2


def test_end_is_idempotent_and_agents_survive_reopening(target: Target) -> None:
    with engram.open(target, embedder=None) as memory:
        agent = memory.agents.register("planner")
        ended = memory.agents.end(agent.id)
        assert ended.status == "ended" and ended.ended_at is not None
        assert memory.agents.end(agent.id).ended_at == ended.ended_at
    with engram.open(target, embedder=None) as memory:
        assert memory.agents.get(agent.id) == ended


def test_unknown_and_invalid(mem: engram.Memory) -> None:
    with pytest.raises(NotFound, match="a_missing"):
        mem.agents.get("a_missing")
    with pytest.raises(NotFound):
        mem.agents.spawn("a_missing", "child")
    with pytest.raises(NotFound):
        mem.agents.end("a_missing")
    with pytest.raises(InvalidInput, match="name"):
        mem.agents.register("")
    with pytest.raises(InvalidInput, match="team_id"):
        mem.agents.register("x", team_id="")


def test_a_sqlite_store_from_before_agents_is_migrated(db_path: Path) -> None:
    from engram.storage.sqlite.driver import sqlite3

    with engram.open(db_path, embedder=None) as memory:
        memory.working.set(ResourceRef("old"), "k", "kept")
    conn = sqlite3.connect(db_path)
    conn.execute("DROP TABLE agents")
    conn.execute("DROP TABLE shares")  # and every later migration
    conn.execute("ALTER TABLE scope_state DROP COLUMN rewritten")
    as_schema_18(conn)
    conn.executescript(UNDO_CHANGE_LOG)
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    with engram.open(db_path, embedder=None) as memory:
        assert memory.working.get(ResourceRef("old"), "k") == "kept"
        assert memory.agents.get(memory.agents.register("new").id).name == "new"
