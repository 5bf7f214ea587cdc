from __future__ import annotations

import pytest

import engram
from engram import InvalidInput, NotFound, Unprocessable
from stores import Target


def test_allow_list_and_stop(mem: engram.Memory) -> None:
    first = mem.sharing.allow("p1", "app:a", "app:b")
    again = mem.sharing.allow("p1", "app:a", "app:b")
    assert again.allowed_at == first.allowed_at  # allowing again keeps the first time
    mem.sharing.allow("p1", "app:c", "app:b")
    mem.sharing.allow("p2", "app:a", "app:b")  # another person's allowance
    assert [(s.source, s.reader) for s in mem.sharing.shares("p1", source="app:a")] == [
        ("app:a", "app:b")
    ]
    assert mem.sharing.sources_for("p1", "app:b") == ["app:a", "app:c"]
    mem.sharing.stop("p1", "app:a", "app:b")
    assert mem.sharing.sources_for("p1", "app:b") == ["app:c"]
    assert mem.sharing.sources_for("p2", "app:b") == ["app:a"]
    with pytest.raises(NotFound):
        mem.sharing.stop("p1", "app:a", "app:b")


def test_refusals(mem: engram.Memory) -> None:
    with pytest.raises(Unprocessable, match="its own reader"):
        mem.sharing.allow("p1", "app:a", "app:a")
    with pytest.raises(InvalidInput, match="app:<uid>"):
        mem.sharing.allow("p1", "a", "app:b")
    with pytest.raises(InvalidInput, match="not both"):
        mem.sharing.shares("p1", source="app:a", reader="app:b")


def test_allowances_persist(target: Target) -> None:
    with engram.open(target, embedder=None) as memory:
        memory.sharing.allow("p1", "app:a", "app:b")
    with engram.open(target, embedder=None) as memory:
        assert memory.sharing.sources_for("p1", "app:b") == ["app:a"]
