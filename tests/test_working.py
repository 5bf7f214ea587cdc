from __future__ import annotations

import json
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engram
from engram import Conflict, InvalidInput, NotFound, ResourceRef
from stores import ManualClock, Target

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.text(max_size=20)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def test_set_get_and_overwrite(mem: engram.Memory, ref: ResourceRef) -> None:
    first = mem.working.set(ref, "plan", {"tier": "pro"})
    assert first.version == 1
    assert mem.working.get(ref, "plan") == {"tier": "pro"}
    second = mem.working.set(ref, "plan", "basic")
    assert second.version == 2
    assert mem.working.get(ref, "plan") == "basic"


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=json_values)
def test_any_json_value_round_trips(mem: engram.Memory, value: object) -> None:
    ref = ResourceRef("roundtrip")
    mem.working.set(ref, "k", value)
    assert mem.working.get(ref, "k") == value


def test_missing_key_is_not_found(mem: engram.Memory, ref: ResourceRef) -> None:
    with pytest.raises(NotFound, match="'nope'"):
        mem.working.get(ref, "nope")


def test_delete_is_idempotent(mem: engram.Memory, ref: ResourceRef) -> None:
    mem.working.set(ref, "k", 1)
    assert mem.working.delete(ref, "k") is True
    assert mem.working.delete(ref, "k") is False
    with pytest.raises(NotFound):
        mem.working.get(ref, "k")


@pytest.mark.parametrize("key", ["\U00099999", "a\U00099999b", "\U0001f600"])
def test_a_key_beyond_the_basic_plane_is_deleted(
    mem: engram.Memory, ref: ResourceRef, key: str
) -> None:
    # SQLite's JSON reads the escaped U+99999 (\uda26\udd99), its own mark for a
    # character it cannot read, as nothing: a lookup sent that way found no key.
    mem.working.set(ref, key, 1)
    assert mem.working.delete(ref, key) is True
    with pytest.raises(NotFound):
        mem.working.get(ref, key)
    assert mem.working.list(ref).entries == []


def test_a_tag_beyond_the_basic_plane_comes_back_with_its_fact(mem: engram.Memory) -> None:
    ref = ResourceRef("tags")
    tag = "x\U00099999"
    fact = mem.remember(ref, "the tagged fact", tags=[tag])
    mem.forget(ref, fact.id)
    assert mem.restore(ref, fact.id).tags == (tag,)
    assert [h.fact.id for h in mem.recall(ref, "tagged fact", tags=[tag])] == [fact.id]


@pytest.mark.parametrize("backend", ["sqlite"])
def test_a_tag_in_the_trash_as_stores_wrote_it_before_comes_back(target: Target) -> None:
    # Tags were written with JSON escapes for characters beyond ASCII.
    tag = "x\U00099999"
    with engram.open(target, embedder=engram.HashingEmbedder(16)) as mem:
        ref = ResourceRef("tags")
        fact = mem.remember(ref, "the tagged fact", tags=[tag])
        mem.forget(ref, fact.id)
        with sqlite3.connect(str(target)) as raw:
            raw.execute("UPDATE fact_trash SET tags = ?", (json.dumps([tag]),))
        assert mem.restore(ref, fact.id).tags == (tag,)
        assert [h.fact.id for h in mem.recall(ref, "tagged fact", tags=[tag])] == [fact.id]


def test_value_limit_is_64_kib_encoded(mem: engram.Memory, ref: ResourceRef) -> None:
    exact = "x" * (64 * 1024 - 2)  # two quote characters make it exactly 64 KiB
    mem.working.set(ref, "big", exact)
    assert mem.working.get(ref, "big") == exact
    with pytest.raises(InvalidInput, match="65537 bytes"):
        mem.working.set(ref, "big", exact + "x")
    multibyte = "é" * (32 * 1024)  # 2 bytes each: 64 KiB + quotes
    with pytest.raises(InvalidInput, match="64 KiB"):
        mem.working.set(ref, "other", multibyte)
    assert mem.working.get(ref, "big") == exact  # the refused write changed nothing
    with pytest.raises(NotFound):
        mem.working.get(ref, "other")


@pytest.mark.parametrize("value", [float("nan"), {1, 2}, object(), b"bytes"])
def test_non_json_values_are_refused(mem: engram.Memory, ref: ResourceRef, value: object) -> None:
    with pytest.raises(InvalidInput, match="not JSON"):
        mem.working.set(ref, "k", value)


@pytest.mark.parametrize("key", ["", "x" * 257, "a\x00", "\udc80", 7])
def test_bad_keys_are_refused(mem: engram.Memory, ref: ResourceRef, key: object) -> None:
    with pytest.raises(InvalidInput):
        mem.working.set(ref, key, 1)  # type: ignore[arg-type]


def test_key_of_256_characters_is_accepted(mem: engram.Memory, ref: ResourceRef) -> None:
    mem.working.set(ref, "名" * 256, 1)
    assert mem.working.get(ref, "名" * 256) == 1


def test_list_pages_in_utf8_byte_order(mem: engram.Memory, ref: ResourceRef) -> None:
    keys = ["b", "a", "Z", "é", "z", "名", "🙂", "aa", "\uffff", "0"]
    for key in keys:
        mem.working.set(ref, key, key)
    expected = sorted(keys, key=lambda k: k.encode("utf-8"))
    seen: list[str] = []
    after = None
    while True:
        page = mem.working.list(ref, after=after, limit=3)
        seen.extend(entry.key for entry in page.entries)
        if page.next_after is None:
            break
        assert len(page.entries) == 3
        after = page.next_after
    assert seen == expected
    # UTF-8 byte order differs from code-point order only above the BMP; check it matters
    assert expected.index("🙂") > expected.index("\uffff")


def test_list_defaults_and_limits(mem: engram.Memory, ref: ResourceRef) -> None:
    for i in range(105):
        mem.working.set(ref, f"k{i:03d}", i)
    page = mem.working.list(ref)
    assert len(page.entries) == 100
    assert page.next_after == "k099"
    assert len(mem.working.list(ref, after=page.next_after).entries) == 5
    assert mem.working.list(ref, after="k104").next_after is None
    assert len(mem.working.list(ref, limit=1000).entries) == 105
    for bad in (0, 1001, -1, "10", True):
        with pytest.raises(InvalidInput, match="limit"):
            mem.working.list(ref, limit=bad)  # type: ignore[arg-type]


def test_compare_and_set(mem: engram.Memory, ref: ResourceRef) -> None:
    created = mem.working.set(ref, "n", 1, expected_version=0)
    with pytest.raises(Conflict, match="version 1, not 0"):
        mem.working.set(ref, "n", 2, expected_version=0)
    mem.working.set(ref, "n", 2, expected_version=created.version)
    with pytest.raises(Conflict):
        mem.working.set(ref, "n", 3, expected_version=created.version)
    assert mem.working.entry(ref, "n").value == 2
    assert mem.working.entry(ref, "n").version == 2


def test_ttl_hides_and_then_frees_the_key(
    target: Target, hashing: engram.HashingEmbedder, ref: ResourceRef, clock: ManualClock
) -> None:
    with engram.open(target, embedder=hashing, clock=clock) as mem:
        mem.working.set(ref, "short", 1, ttl=timedelta(seconds=1))
        mem.working.set(ref, "long", 1, ttl=timedelta(hours=1))
        clock.advance(timedelta(milliseconds=990))
        assert mem.working.get(ref, "short") == 1
        renewed = mem.working.set(ref, "short", 2, expected_version=1, ttl=timedelta(seconds=1))
        assert renewed.version == 2
        clock.advance(timedelta(seconds=1))
        with pytest.raises(NotFound):
            mem.working.get(ref, "short")
        assert [e.key for e in mem.working.list(ref).entries] == ["long"]
        entry = mem.working.set(ref, "short", 3, expected_version=0)  # expired counts as unset
        assert entry.version == 3  # versions keep growing across expiry
        with pytest.raises(InvalidInput, match="ttl"):
            mem.working.set(ref, "x", 1, ttl=timedelta(0))


def test_a_sweep_deletes_what_expired_and_a_revert_brings_it_back(
    target: Target, hashing: engram.HashingEmbedder, clock: ManualClock
) -> None:
    """Expired keys stay stored, unseen, until swept: a sweep deletes them (of one scope,
    or of the scopes under a prefix of their keys), one ledger entry a scope, and answers
    them with their values; a key written again is not swept."""
    ana, bo, cy = ResourceRef("ana"), ResourceRef("bo"), ResourceRef("cy")
    with engram.open(target, embedder=hashing, clock=clock) as mem:
        for ref in (ana, bo, cy):
            mem.working.set(ref, "short", {"of": ref.resource_id}, ttl=timedelta(seconds=1))
            mem.working.set(ref, "kept", 1)
        mem.working.set(ana, "renewed", 1, ttl=timedelta(seconds=1))
        clock.advance(timedelta(seconds=2))
        mem.working.set(ana, "renewed", 2, ttl=timedelta(hours=1))
        assert mem.health(ana).stale.working_keys == 1
        assert [(s.scope, s.key, s.value) for s in mem.working.sweep(cy)] == [
            (cy, "short", {"of": "cy"})
        ]
        swept = mem.working.sweep()
        assert sorted((s.scope.key, s.key) for s in swept) == sorted(
            [(ana.key, "short"), (bo.key, "short")]
        )
        assert mem.working.sweep() == [] and mem.health(ana).stale.working_keys == 0
        assert mem.working.get(ana, "renewed") == 2 and mem.working.get(bo, "kept") == 1
        entry = mem.ledger(bo).entries[0]
        assert (entry.op, [c.object_id for c in entry.changes]) == ("working.expire", ["short"])
        mem.revert(bo, entry.seq)  # back, as it was: expired, so still unseen
        assert mem.health(bo).stale.working_keys == 1


@pytest.mark.parametrize(
    ("ttl", "said"),
    [
        (timedelta(0), "got 0 seconds"),
        (timedelta(seconds=-5), "got -5 seconds"),
        (timedelta(milliseconds=-500), "got -0.5 seconds"),
        (timedelta(days=10**6, seconds=1), "got 86400000001 seconds"),
        (60, "ttl must be a datetime.timedelta, got int 60"),
    ],
)
def test_a_refused_ttl_is_said_in_seconds(mem: engram.Memory, ttl: object, said: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        mem.working.set(ResourceRef("r"), "x", 1, ttl=ttl)  # type: ignore[arg-type]
    assert said in caught.value.message, caught.value.message
    assert "datetime.timedelta(" not in caught.value.message and "days=" not in caught.value.message
    if isinstance(ttl, timedelta):
        assert "more than 0 seconds and at most 86400000000 seconds" in caught.value.message


def test_a_refused_age_is_said_in_seconds(tmp_path: Path) -> None:
    for name in ("max_age", "trash_retention", "ledger_retention"):
        with pytest.raises(InvalidInput) as caught:
            engram.open(tmp_path / "e.db", embedder=None, **{name: timedelta(seconds=-5)})
        assert caught.value.message == (
            f"{name} must be from 0 to 86400000000 seconds (a million days), got -5 seconds"
        )
    assert list(tmp_path.iterdir()) == []  # refused before the store opens


def test_scopes_are_apart(mem: engram.Memory) -> None:
    a = ResourceRef("corp", team_id="acme")
    b = ResourceRef("acme:corp")
    mem.working.set(a, "k", "team")
    mem.working.set(b, "k", "colon")
    assert mem.working.get(a, "k") == "team"
    assert mem.working.get(b, "k") == "colon"
    mem.working.delete(a, "k")
    assert mem.working.get(b, "k") == "colon"


def test_scopes_with_live_keys_are_named_by_the_start_of_their_key(
    target: Target, hashing: engram.HashingEmbedder, clock: ManualClock
) -> None:
    with engram.open(target, embedder=hashing, clock=clock) as mem:
        names = ["é/x", "é/x%", "é_y", "éa", "e", "a:b"]
        for name in names:
            mem.working.set(ResourceRef(name), "k", 1)
        mem.working.set(ResourceRef("é/gone"), "k", 1, ttl=timedelta(seconds=1))
        mem.working.set(ResourceRef("é", team_id="t"), "k", 1)
        mem.working.set(ResourceRef("é/deleted"), "k", 1)
        mem.working.delete(ResourceRef("é/deleted"), "k")
        clock.advance(timedelta(seconds=2))
        # multi-byte characters count as one; "_" and "%" match only themselves
        assert mem.working.scopes(ResourceRef("é/").key) == [
            ResourceRef("é/x"),
            ResourceRef("é/x%"),
        ]
        assert mem.working.scopes(ResourceRef("é_").key) == [ResourceRef("é_y")]
        assert [s.key for s in mem.working.scopes("r:")] == sorted(
            ResourceRef(n).key for n in names
        )
        assert mem.working.scopes() == [
            ResourceRef(n) for n in ["a:b", "e", "é/x", "é/x%", "é_y", "éa"]
        ] + [ResourceRef("é", team_id="t")]


def test_working_memory_works_without_an_embedder(target: Target, ref: ResourceRef) -> None:
    with engram.open(target, embedder=None) as memory:
        memory.working.set(ref, "k", [1, 2])
        assert memory.working.get(ref, "k") == [1, 2]
