"""The library refuses what it could store but not give back, or not store at all: values
nested past the depth limit, integers past what storage holds, times that do not exist in
UTC. Refused means InvalidInput and nothing written, on both backends."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

import engram
from engram.core import limits

REF = engram.ResourceRef("user-42")


def nested(depth: int) -> object:
    """A value of ``depth`` nested containers (a scalar is depth 0)."""
    value: object = "leaf"
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


def test_a_value_may_nest_64_levels_and_not_65(mem: engram.Memory) -> None:
    mem.working.set(REF, "deep", nested(limits.MAX_DEPTH))
    assert mem.working.get(REF, "deep") == nested(limits.MAX_DEPTH)
    for depth in (limits.MAX_DEPTH + 1, 300, 5000):
        with pytest.raises(engram.InvalidInput, match="64 levels"):
            mem.working.set(REF, "deeper", nested(depth))
    assert [e.key for e in mem.working.list(REF).entries] == ["deep"]


def test_a_cycle_is_refused_not_walked_forever(mem: engram.Memory) -> None:
    loop: list[object] = []
    loop.append(loop)
    with pytest.raises(engram.InvalidInput):
        mem.working.set(REF, "loop", loop)


def test_metadata_nests_no_deeper_than_values(mem: engram.Memory) -> None:
    fact = mem.remember(REF, "shallow", metadata={"m": nested(limits.MAX_DEPTH - 1)})
    assert fact.metadata == {"m": nested(limits.MAX_DEPTH - 1)}
    with pytest.raises(engram.InvalidInput, match="64 levels"):
        mem.remember(REF, "too deep", metadata={"m": nested(limits.MAX_DEPTH)})
    assert mem.count(REF) == 1


def test_integers_past_storage_are_invalid_input(mem: engram.Memory) -> None:
    with pytest.raises(engram.InvalidInput, match="entry_index"):
        mem.remember(REF, "sourced", source_ref=engram.SourceRef("sb", 2**70))
    with pytest.raises(engram.InvalidInput, match="expected_version"):
        mem.working.set(REF, "k", 1, expected_version=2**70)
    with pytest.raises(engram.InvalidInput, match="ttl"):
        mem.working.set(REF, "k", 1, ttl=timedelta(seconds=1e13))
    with pytest.raises(engram.InvalidInput, match="ttl"):
        mem.working.set(REF, "k", 1, ttl=timedelta(0))
    assert mem.count(REF) == 0 and mem.working.list(REF).entries == []
    kept = mem.remember(REF, "at the edge", source_ref=engram.SourceRef("sb", limits.MAX_COUNT))
    assert mem.fact(REF, kept.id).source_ref == engram.SourceRef("sb", limits.MAX_COUNT)
    assert mem.working.set(REF, "k", 1, ttl=limits.MAX_TTL).expires_at is not None


def test_times_must_exist_in_utc(mem: engram.Memory) -> None:
    ahead = timezone(timedelta(hours=1))
    with pytest.raises(engram.InvalidInput, match="years 1 to 9999"):
        mem.remember(REF, "too early", created_at=datetime(1, 1, 1, tzinfo=ahead))
    with pytest.raises(engram.InvalidInput, match="years 1 to 9999"):
        mem.recall(REF, "x", created_before=datetime(1, 1, 1, tzinfo=ahead))
    earliest = mem.remember(REF, "earliest", created_at=datetime(1, 1, 1, tzinfo=UTC))
    assert mem.facts(REF).facts == [earliest]
