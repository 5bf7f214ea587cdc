"""Working values stored before values' depth was limited, deeper than the limit, never
make a read fail: the key answers 422 saying what to do, listings name it apart and
serve every other key, and overwriting or deleting it works (on both backends)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

import engram
import stores
from engram.api import create_app
from engram.core.limits import MAX_DEPTH
from stores import Target

# One level over the limit, 300 (what an older build stored) and 5,000 (beyond what
# Python's JSON decoder itself can read back).
DEPTHS = [MAX_DEPTH + 1, 300, 5_000]


def _plant(target: Target, scope_key: str, key: str, depth: int) -> None:
    """A value written as an older build would have, deeper than values may be now."""
    stores.rows(
        target,
        "UPDATE working SET value = ? WHERE scope = ? AND key = ?",
        ("[" * depth + "]" * depth, scope_key, key),
    )


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_too_deep_value_from_before_is_named_not_a_failure(target: Target, depth: int) -> None:
    with engram.open(target, embedder=None) as mem:
        agent = mem.agents.register("old")
        for key in ("a", "deep", "z"):
            mem.working.set(agent.ref, key, [key])
        _plant(target, agent.ref.key, "deep", depth)

        with pytest.raises(engram.Unprocessable, match=f"more than {MAX_DEPTH} levels"):
            mem.working.get(agent.ref, "deep")
        page = mem.working.list(agent.ref)
        assert page.as_dict() == {"a": ["a"], "z": ["z"]} and page.unreadable == ("deep",)

        with TestClient(create_app(memory_store=mem)) as client:
            answer = client.get(f"/agents/{agent.id}/memory/deep")
            assert answer.status_code == 422, answer.text
            assert answer.json()["error"]["hint"] == "overwrite or delete the key"
            listing = client.get(f"/agents/{agent.id}/memory")
            assert listing.status_code == 200, listing.text
            assert listing.json()["working"] == {"a": ["a"], "z": ["z"]}
            assert listing.json()["unreadable"] == ["deep"]
            assert "unreadable" not in client.get(f"/agents/{agent.id}/memory?limit=1").json()

            put = client.put(
                f"/agents/{agent.id}/memory/deep", json={"value": 1, "expectedVersion": 1}
            )
            assert put.status_code == 200, put.text  # compare-and-set still sees its version
            assert client.get(f"/agents/{agent.id}/memory/deep").json()["value"] == 1
            _plant(target, agent.ref.key, "deep", depth)
            assert client.delete(f"/agents/{agent.id}/memory/deep").status_code == 204
            assert "unreadable" not in client.get(f"/agents/{agent.id}/memory").json()


@pytest.mark.parametrize("depth", DEPTHS)
def test_a_too_deep_value_from_before_is_swept_once_expired(target: Target, depth: int) -> None:
    """A sweep deletes it like any expired key (its value answered as None: it cannot be
    read), and the scope's other expired keys go with it."""
    from datetime import timedelta

    from stores import ManualClock

    clock = ManualClock()
    with engram.open(target, embedder=None, clock=clock) as mem:
        ref = engram.ResourceRef("old")
        for key in ("deep", "plain"):
            mem.working.set(ref, key, [key], ttl=timedelta(seconds=1))
        _plant(target, ref.key, "deep", depth)
        clock.advance(timedelta(seconds=2))
        swept = mem.working.sweep(ref)
        assert sorted((s.key, s.value) for s in swept) == [("deep", None), ("plain", ["plain"])]
        assert mem.health(ref).stale.working_keys == 0
