"""The owner: a run with no session (the machine itself, a scheduled run) remembers and
reads as the configured owner, its own memories only, never through the owner's
allowances (spec 003). The library path here, the command line's in test_cli.py."""

from __future__ import annotations

import pytest

import engram
from engram.core.people import Acting, AppMemory, acting, tool_recall, tool_remember


@pytest.fixture
def apps(mem: engram.Memory) -> tuple[AppMemory, AppMemory]:
    """app:a and app:b, each remembering something green of the owner; the owner has
    allowed app:b to read what app:a remembers of them."""
    a, b = AppMemory(mem, "app:a"), AppMemory(mem, "app:b")
    a.remember(Acting.owner("ana"), "likes green tea")
    b.remember(Acting.owner("ana"), "likes green apples")
    mem.sharing.allow("ana", "app:a", "app:b")
    return a, b


def test_the_owner_without_a_session_reads_its_own_memories_only(
    apps: tuple[AppMemory, AppMemory],
) -> None:
    _, b = apps
    own = b.recall(Acting.owner("ana"), "green", top_k=10)
    assert [(h.hit.fact.content, h.remembered_by) for h in own] == [("likes green apples", None)]
    # the same person with a verified token reads what they allowed, marked
    verified = b.recall(Acting.verified("ana"), "green", top_k=10)
    assert [(h.hit.fact.content, h.remembered_by) for h in verified] == [
        ("likes green apples", None),
        ("likes green tea", "app:a"),
    ]
    assert [h.remembered_by for h in b.recall("ana", "green", top_k=10)] == [None, "app:a"]


def test_the_owner_writes_under_its_own_key(
    mem: engram.Memory, apps: tuple[AppMemory, AppMemory]
) -> None:
    a, _ = apps
    assert a.scope(Acting.owner("ana")) == engram.PersonAppRef("ana", "app:a")
    count, page = a.listing(Acting.owner("ana"))
    assert count == 1 and [f.content for f in page.facts] == ["likes green tea"]
    assert mem.count(engram.PersonAppRef("someone-else", "app:a")) == 0


def test_a_scheduled_run_acts_as_the_owner_without_allowances(
    apps: tuple[AppMemory, AppMemory],
) -> None:
    _, b = apps
    scheduled = acting(None, scheduled=True, owner="ana")
    assert scheduled == Acting("ana", allowances=False)
    assert tool_recall(b, scheduled, "green") == "- likes green apples"
    assert tool_remember(b, scheduled, "waters the plants on Sundays").startswith("Remembered")
    assert acting("p1", scheduled=False, owner="ana") == Acting("p1", allowances=True)
    assert acting(None, scheduled=False, owner="ana") is None  # a visitor not signed in
    assert acting(None, scheduled=True, owner="") is None  # nobody is never the owner


@pytest.mark.parametrize("owner", [None, "", "   "])
def test_no_configured_owner_is_refused_with_what_to_set(owner: str | None) -> None:
    with pytest.raises(engram.InvalidInput, match="no owner is configured") as caught:
        Acting.owner(owner)
    assert "ENGRAM_OWNER_UID" in (caught.value.hint or "")
