"""History over HTTP, in-process, on both backends: the trash and its restores, deletions
for good and their refusals, the ledger's pages, a fact's history, reverts (blocked,
scrubbed, unknown), an ended agent's history read-only, and who the ledger names as the
writer: the verified caller, through http, never a body."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from typing import Any

import jwt
import pytest
from fastapi.testclient import TestClient

import engram
from answers import error as _error
from answers import ok as _ok
from engram.api import create_app
from engram.core.scopes import PersonAppRef
from engram.settings import Settings
from stores import ManualClock, Target

SECRET = "history-secret-0123456789abcdef0123456"
SERVICE = "history-service-token"
ACTOR = "service:" + hashlib.sha256(SERVICE.encode()).hexdigest()[:8]


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def person(uid: str) -> dict[str, str]:
    claims = {"sub": uid, "exp": int(time.time()) + 3600}
    return bearer(jwt.encode(claims, SECRET, algorithm="HS256"))


@pytest.fixture
def served(target: Target, clock: ManualClock) -> Iterator[tuple[TestClient, engram.Memory]]:
    """The service with auth configured (a service token, people's HS256 JWTs), calling
    as the service by default, and the library on the same store."""
    memory = engram.open(target, embedder=engram.HashingEmbedder(64), clock=clock)
    settings = Settings(
        db_path=str(target),
        jwt_secret=SECRET,
        service_token_hashes=(hashlib.sha256(SERVICE.encode()).hexdigest(),),
    )
    app = create_app(settings, memory_store=memory)
    with TestClient(app, headers=bearer(SERVICE)) as test:
        yield test, memory


@pytest.fixture
def client(served: tuple[TestClient, engram.Memory]) -> TestClient:
    return served[0]


@pytest.fixture
def library(served: tuple[TestClient, engram.Memory]) -> engram.Memory:
    return served[1]


def _agent(client: TestClient, name: str = "planner") -> str:
    made = client.post("/agents", json={"name": name})
    assert made.status_code == 201, made.text
    agent: str = made.json()["id"]
    return agent


def _remember(client: TestClient, agent: str, content: str) -> str:
    fact_id: str = _ok(client.post(f"/agents/{agent}/facts", json={"content": content}), 201)["id"]
    return fact_id


def _state(client: TestClient, agent: str) -> tuple[Any, ...]:
    """Everything a refused write must leave as it was: ledger, facts, trash."""
    base = f"/agents/{agent}"
    return (
        _ok(client.get(f"{base}/ledger", params={"limit": 1000})),
        _ok(client.get(f"{base}/facts", params={"limit": 1000})),
        _ok(client.get(f"{base}/trash", params={"limit": 1000})),
    )


def _newest(client: TestClient, agent: str, object_id: str) -> int:
    """The number of the newest entry that changed ``object_id``."""
    page = _ok(client.get(f"/agents/{agent}/ledger", params={"objectId": object_id}))
    seq: int = page["entries"][0]["seq"]
    return seq


def test_a_soft_forget_goes_to_the_trash_and_a_restore_brings_it_back(
    client: TestClient,
) -> None:
    agent = _agent(client)
    base = f"/agents/{agent}"
    due = _remember(client, agent, "the invoice is due Friday")
    kept = _remember(client, agent, "the customer prefers email")
    created = _ok(client.get(f"{base}/facts/{due}"))["createdAt"]

    assert _ok(client.delete(f"{base}/facts/{due}")) == {
        "id": due,
        "forgotten": True,
        "hard": False,
    }
    trash = _ok(client.get(f"{base}/trash"))
    assert [t["id"] for t in trash["facts"]] == [due] and "nextBefore" not in trash
    trashed = trash["facts"][0]
    assert trashed["content"] == "the invoice is due Friday"
    assert trashed["purgeAt"] > trashed["deletedAt"]
    _error(client.get(f"{base}/facts/{due}"), 404, "not_found")
    assert [f["id"] for f in _ok(client.get(f"{base}/facts"))["facts"]] == [kept]
    recalled = _ok(client.get(f"{base}/facts", params={"query": "invoice Friday"}))["facts"]
    assert due not in [f["id"] for f in recalled]

    back = _ok(client.post(f"{base}/trash/{due}/restore"))
    assert (back["id"], back["content"], back["createdAt"]) == (
        due,
        "the invoice is due Friday",
        created,
    )
    assert _ok(client.get(f"{base}/facts/{due}"))["id"] == due
    assert _ok(client.get(f"{base}/trash"))["facts"] == []
    _error(client.post(f"{base}/trash/{due}/restore"), 404, "not_found")

    # The same words live again, as another fact: the trashed one cannot come back.
    client.delete(f"{base}/facts/{due}")
    again = _remember(client, agent, "the invoice is due Friday")
    assert again != due
    before = _state(client, agent)
    _error(client.post(f"{base}/trash/{due}/restore"), 409, "conflict")
    assert _state(client, agent) == before


def test_the_trash_pages_and_a_soft_forget_all_reverts_as_one(client: TestClient) -> None:
    agent = _agent(client)
    base = f"/agents/{agent}"
    made = [_remember(client, agent, f"fact number {i}") for i in range(5)]
    assert _ok(client.delete(f"{base}/facts", params={"count": 5})) == {"forgotten": 5}
    paged: list[str] = []
    params: dict[str, Any] = {"limit": 2}
    while True:
        page = _ok(client.get(f"{base}/trash", params=params))
        assert len(page["facts"]) <= 2
        paged += [t["id"] for t in page["facts"]]
        if "nextBefore" not in page:
            break
        params = {"limit": 2, "before": page["nextBefore"]}
    assert sorted(paged) == sorted(made) and len(paged) == 5
    _error(client.get(f"{base}/trash", params={"before": "garbage"}), 400, "invalid_input")
    _error(client.get(f"{base}/trash", params={"limit": "0"}), 400, "invalid_input")

    forget_all = _ok(client.get(f"{base}/ledger", params={"limit": 1}))["entries"][0]
    assert forget_all["op"] == "forget_all" and len(forget_all["changes"]) == 5
    undone = _ok(client.post(f"{base}/ledger/{forget_all['seq']}/revert"))
    assert {c["action"] for c in undone["changes"]} == {"restore"}
    assert sorted(f["id"] for f in _ok(client.get(f"{base}/facts"))["facts"]) == sorted(made)
    assert _ok(client.get(f"{base}/trash"))["facts"] == []


def test_an_agent_s_history_routes_touch_no_other_agent(client: TestClient) -> None:
    mine, theirs = _agent(client, "mine"), _agent(client, "theirs")
    base = f"/agents/{mine}"
    kept = _remember(client, theirs, "their secret")
    trashed = _remember(client, theirs, "their trashed secret")
    client.delete(f"/agents/{theirs}/facts/{trashed}")
    before = _state(client, theirs)
    nothing = {"facts": 0, "trashed": 0, "ledgerItemsScrubbed": 0}
    assert _ok(client.post(f"{base}/deletions", json={"factIds": [kept, trashed]})) == nothing
    assert _ok(client.delete(f"{base}/facts/{kept}", params={"hard": "true"}))["forgotten"] is False
    _error(client.post(f"{base}/trash/{trashed}/restore"), 404, "not_found")
    _error(client.get(f"{base}/facts/{kept}/history"), 404, "not_found")
    assert _ok(client.get(f"{base}/ledger", params={"objectId": kept}))["entries"] == []
    theirs_entry = _newest(client, theirs, kept)
    _error(client.post(f"{base}/ledger/{theirs_entry}/revert"), 404, "not_found")
    assert (
        _ok(client.post(f"{base}/deletions", json={"scope": True, "expectedCount": 0}))["facts"]
        == 0
    )
    assert _state(client, theirs) == before


def test_a_fact_s_history_is_its_scope_s_and_unknown_ids_are_not_found(
    client: TestClient,
) -> None:
    agent = _agent(client)
    base = f"/agents/{agent}"
    for unknown in ("f_nope", "f_" + "0" * 24):
        found = _error(client.get(f"{base}/facts/{unknown}/history"), 404, "not_found")
        assert unknown in found["message"]
    trashed = _remember(client, agent, "the gate code is 1234")
    _ok(client.delete(f"{base}/facts/{trashed}"))
    ops = [e["op"] for e in _ok(client.get(f"{base}/facts/{trashed}/history"))["entries"]]
    assert ops == ["forget", "remember"]
    erased = _remember(client, agent, "the safe code is 9876")
    _ok(client.delete(f"{base}/facts/{erased}", params={"hard": "true"}))
    kept = _ok(client.get(f"{base}/facts/{erased}/history"))["entries"]
    assert [e["op"] for e in kept] == ["delete", "remember"]  # what was done stays
    with pytest.raises(engram.NotFound, match="f_nope"):
        engram.Client(token=SERVICE, http=client).history(agent, "f_nope")


def test_a_hard_forget_deletes_for_good(client: TestClient) -> None:
    agent = _agent(client)
    base = f"/agents/{agent}"
    gone = _remember(client, agent, "the door code is 4711")
    assert _ok(client.delete(f"{base}/facts/{gone}", params={"hard": "true"})) == {
        "id": gone,
        "forgotten": True,
        "hard": True,
    }
    assert _ok(client.get(f"{base}/trash"))["facts"] == []
    _error(client.get(f"{base}/facts/{gone}"), 404, "not_found")
    _error(client.post(f"{base}/trash/{gone}/restore"), 404, "not_found")
    again = client.delete(f"{base}/facts/{gone}", params={"hard": "true"})
    assert _ok(again)["forgotten"] is False
    _error(client.delete(f"{base}/facts/{gone}", params={"hard": "1"}), 400, "invalid_input")

    # forget-all: softly to the trash, or for good with the trash's too
    for i in range(2):
        _remember(client, agent, f"fact number {i}")
    assert _ok(client.delete(f"{base}/facts", params={"count": 2})) == {"forgotten": 2}
    assert len(_ok(client.get(f"{base}/trash"))["facts"]) == 2
    _remember(client, agent, "one more fact")
    hard: dict[str, str | int] = {"count": 1, "hard": "true"}
    assert _ok(client.delete(f"{base}/facts", params=hard)) == {"forgotten": 1}
    assert _ok(client.get(f"{base}/trash"))["facts"] == []
    assert _ok(client.get(f"{base}/facts"))["facts"] == []


def test_deletions_by_ids_and_by_scope(client: TestClient, library: engram.Memory) -> None:
    agent = _agent(client)
    base = f"/agents/{agent}"
    live = _remember(client, agent, "the plan is to ship on Monday")
    client.patch(f"{base}/facts/{live}", json={"content": "the plan is to ship on Tuesday"})
    trashed = _remember(client, agent, "the password hint is blue")
    client.delete(f"{base}/facts/{trashed}")
    other = _remember(client, agent, "the office is in Lisbon")

    receipt = _ok(client.post(f"{base}/deletions", json={"factIds": [live, trashed, "f_nope"]}))
    assert (receipt["facts"], receipt["trashed"]) == (1, 1)
    assert receipt["ledgerItemsScrubbed"] >= 4  # add and correct, add and forget
    for gone in (live, trashed):
        _error(client.get(f"{base}/facts/{gone}"), 404, "not_found")
        history = _ok(client.get(f"{base}/facts/{gone}/history"))["entries"]
        assert history and all(e["scrubbed"] for e in history[1:])  # [0]: the deletion
        assert history[0]["op"] == "delete"
    assert _ok(client.get(f"{base}/trash"))["facts"] == []
    assert [f["id"] for f in _ok(client.get(f"{base}/facts"))["facts"]] == [other]

    # The whole scope, live and trashed, confirming the count.
    client.delete(f"{base}/facts/{_remember(client, agent, 'a trashed fact')}")
    before = _state(client, agent)
    stale = {"scope": True, "expectedCount": 1}
    assert (
        "nothing was forgotten"
        in _error(client.post(f"{base}/deletions", json=stale), 409, "conflict")["message"]
    )
    assert _state(client, agent) == before
    receipt = _ok(client.post(f"{base}/deletions", json={"scope": True, "expectedCount": 2}))
    assert (receipt["facts"], receipt["trashed"]) == (1, 1)
    assert _ok(client.get(f"{base}/facts"))["facts"] == []
    assert _ok(client.get(f"{base}/trash"))["facts"] == []

    # Only one second user's facts (written for them through the library).
    ref = library.agents.get(agent).ref
    theirs = library.acting(turn_user="user-2")
    mine = _remember(client, agent, "the agent's own note")
    theirs.remember(ref, "user two likes tea")
    client.delete(f"{base}/facts/{theirs.remember(ref, 'user two likes jazz').id}")
    for_them = {"scope": True, "expectedCount": 1, "turnUserId": "user-2"}
    _error(client.post(f"{base}/deletions", json=for_them), 409, "conflict")
    receipt = _ok(client.post(f"{base}/deletions", json={**for_them, "expectedCount": 2}))
    assert (receipt["facts"], receipt["trashed"]) == (1, 1)
    assert [f["id"] for f in _ok(client.get(f"{base}/facts"))["facts"]] == [mine]
    assert _ok(client.get(f"{base}/trash"))["facts"] == []


def test_a_deletion_is_one_of_two_bodies_and_a_refusal_names_what_its_own_lacks(
    client: TestClient,
) -> None:
    """The schema says exactly one of two closed bodies (so a generated client never
    sends ``expectedCount`` with ``factIds``), and a body is read as the one whose
    parameters it holds: what is missing or extra is named from that one."""
    body = client.get("/openapi.json").json()["paths"]["/agents/{agent_id}/deletions"]["post"]
    shapes = body["requestBody"]["content"]["application/json"]["schema"]["oneOf"]
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    closed = [schemas[s["$ref"].rsplit("/", 1)[1]] for s in shapes]
    assert [sorted(c["required"]) for c in closed] == [["factIds"], ["expectedCount", "scope"]]
    assert all(c["additionalProperties"] is False for c in closed)
    base = f"/agents/{_agent(client)}"
    said = {
        "expectedCount is required": {"scope": True},
        "factIds is required": {},
        "expectedCount is not one this route takes": {"factIds": ["f_1"], "expectedCount": 1},
    }
    for words, sent in said.items():
        assert (
            words
            in _error(client.post(f"{base}/deletions", json=sent), 400, "invalid_input")["message"]
        )


def test_bad_deletion_bodies_are_refused_and_change_nothing(client: TestClient) -> None:
    agent = _agent(client)
    base = f"/agents/{agent}"
    fact = _remember(client, agent, "the deploy runs nightly")
    client.delete(f"{base}/facts/{_remember(client, agent, 'a trashed fact')}")
    before = _state(client, agent)
    bodies: tuple[dict[str, Any], ...] = (
        {"factIds": [fact], "scope": True},
        {"factIds": [fact], "scope": True, "expectedCount": 2},
        {},
        {"scope": False},
        {"factIds": [f"f_{i}" for i in range(1001)]},
        {"factIds": []},
        {"factIds": [""]},
        {"scope": True},
        {"scope": True, "turnUserId": "user-2"},
        {"factIds": [fact], "expectedCount": 1},
        {"factIds": [fact], "turnUserId": "user-2"},
        {"scope": "true", "expectedCount": 2},
        {"scope": True, "expectedCount": -1},
        {"scope": True, "expectedCount": "2"},
        {"scope": 1, "expectedCount": 2},  # 1 is not true, as the schema's const says
        {"factIds": fact},
        {"factIds": [fact], "actor": "someone else"},
    )
    for body in bodies:
        _error(client.post(f"{base}/deletions", json=body), 400, "invalid_input")
    assert _state(client, agent) == before


def test_the_ledger_pages_and_filters(client: TestClient) -> None:
    agent = _agent(client)
    base = f"/agents/{agent}"
    facts = [_remember(client, agent, f"fact number {i}") for i in range(3)]
    client.put(f"{base}/memory/plan", json={"value": 1})
    client.patch(f"{base}/facts/{facts[0]}", json={"content": "fact number zero"})
    client.delete(f"{base}/facts/{facts[1]}")

    everything = _ok(client.get(f"{base}/ledger"))
    assert "nextBefore" not in everything
    seqs = [e["seq"] for e in everything["entries"]]
    assert seqs == sorted(seqs, reverse=True) and len(seqs) >= 6
    newest = everything["entries"][0]
    assert (newest["op"], newest["via"], newest["actor"]) == ("forget", "http", ACTOR)
    assert newest["changes"] == [{"kind": "fact", "objectId": facts[1], "action": "trash"}]
    assert (newest["reverts"], newest["revertedBy"], newest["scrubbed"]) == (None, None, False)

    paged: list[int] = []
    params: dict[str, Any] = {"limit": 2}
    while True:
        page = _ok(client.get(f"{base}/ledger", params=params))
        assert len(page["entries"]) <= 2
        paged += [e["seq"] for e in page["entries"]]
        if "nextBefore" not in page:
            break
        assert page["nextBefore"] == page["entries"][-1]["seq"]
        params = {"limit": 2, "before": page["nextBefore"]}
    assert paged == seqs

    of_first = _ok(client.get(f"{base}/ledger", params={"objectId": facts[0]}))["entries"]
    assert [e["op"] for e in of_first] == ["correct", "remember"]
    assert _ok(client.get(f"{base}/facts/{facts[0]}/history"))["entries"] == of_first
    of_key = _ok(client.get(f"{base}/ledger", params={"objectId": "plan"}))["entries"]
    assert [c["objectId"] for e in of_key for c in e["changes"]] == ["plan"]
    _error(client.get(f"{base}/facts/f_nope/history"), 404, "not_found")

    for bad in (
        {"limit": "0"},
        {"limit": "1001"},
        {"before": "0"},
        {"before": "x"},
        {"before": "-1"},
        {"objectId": "k" * 10_000},
        {"actor": ACTOR},
    ):
        _error(client.get(f"{base}/ledger", params=bad), 400, "invalid_input")
    _error(client.get("/agents/nobody/ledger"), 404, "not_found")


def test_an_entry_s_changes_are_paged_and_a_listing_counts_them(
    client: TestClient, library: engram.Memory
) -> None:
    agent = _agent(client)
    base = f"/agents/{agent}"
    ref = engram.ResourceRef("planner")
    made = library.remember_many(ref, [f"fact number {i}" for i in range(130)])
    [entry] = _ok(client.get(f"{base}/ledger", params={"limit": 1}))["entries"]
    assert entry["changeCount"] == 130 and len(entry["changes"]) == 100
    seq = entry["seq"]
    first = _ok(client.get(f"{base}/ledger/{seq}/changes", params={"limit": 120}))
    assert first["nextAfter"] == 120 and len(first["changes"]) == 120
    rest = _ok(client.get(f"{base}/ledger/{seq}/changes", params={"after": 120}))
    assert "nextAfter" not in rest
    ids = [c["objectId"] for c in first["changes"] + rest["changes"]]
    assert ids == sorted(f.id for f in made)
    assert first["changes"][0] == {"kind": "fact", "objectId": ids[0], "action": "add"}
    other = _agent(client, "other")
    _error(client.get(f"/agents/{other}/ledger/{seq}/changes"), 404, "not_found")
    for bad in ({"limit": "0"}, {"after": "-1"}, {"after": "x"}):
        _error(client.get(f"{base}/ledger/{seq}/changes", params=bad), 400, "invalid_input")


def test_revert_undoes_each_kind_of_write(client: TestClient) -> None:
    agent = _agent(client)
    base = f"/agents/{agent}"

    def revert(seq: int) -> dict[str, Any]:
        entry: dict[str, Any] = _ok(client.post(f"{base}/ledger/{seq}/revert"))
        assert (entry["op"], entry["reverts"], entry["actor"]) == ("revert", seq, ACTOR)
        return entry

    # an add: the fact goes to the trash
    added = _remember(client, agent, "the build is green")
    revert(_newest(client, agent, added))
    _error(client.get(f"{base}/facts/{added}"), 404, "not_found")
    assert [t["id"] for t in _ok(client.get(f"{base}/trash"))["facts"]] == [added]

    # a correct: the old words come back
    fixed = _remember(client, agent, "the meeting is at noon")
    client.patch(f"{base}/facts/{fixed}", json={"content": "the meeting is at one"})
    undone = revert(_newest(client, agent, fixed))
    assert undone["changes"] == [{"kind": "fact", "objectId": fixed, "action": "correct"}]
    assert _ok(client.get(f"{base}/facts/{fixed}"))["content"] == "the meeting is at noon"
    hits = _ok(client.get(f"{base}/facts", params={"query": "meeting noon", "topK": 1}))
    assert hits["facts"][0]["id"] == fixed

    # a soft forget: back from the trash
    forgotten = _remember(client, agent, "the release is on Friday")
    client.delete(f"{base}/facts/{forgotten}")
    forget = _newest(client, agent, forgotten)
    revert(forget)
    assert _ok(client.get(f"{base}/facts/{forgotten}"))["content"] == "the release is on Friday"
    reverted = _ok(client.get(f"{base}/ledger", params={"objectId": forgotten}))["entries"]
    assert reverted[1]["seq"] == forget and reverted[1]["revertedBy"] == reverted[0]["seq"]

    # a working key's set, then its delete
    client.put(f"{base}/memory/plan", json={"value": "first"})
    client.put(f"{base}/memory/plan", json={"value": "second"})
    revert(_newest(client, agent, "plan"))
    assert _ok(client.get(f"{base}/memory/plan"))["value"] == "first"
    assert client.delete(f"{base}/memory/plan").status_code == 204
    revert(_newest(client, agent, "plan"))
    assert _ok(client.get(f"{base}/memory/plan"))["value"] == "first"

    # reverting a revert redoes the write
    undo = revert(_newest(client, agent, "plan"))
    _error(client.get(f"{base}/memory/plan"), 404, "not_found")
    assert undo["changes"] == [{"kind": "working", "objectId": "plan", "action": "delete"}]


def test_a_blocked_revert_names_the_later_entries_and_changes_nothing(
    client: TestClient,
) -> None:
    agent = _agent(client)
    base = f"/agents/{agent}"
    fact = _remember(client, agent, "the invoice is due Friday")
    added = _newest(client, agent, fact)
    client.patch(f"{base}/facts/{fact}", json={"content": "the invoice is due Monday"})
    first = _newest(client, agent, fact)
    _remember(client, agent, "an unrelated fact")
    client.patch(f"{base}/facts/{fact}", json={"content": "the invoice is due Tuesday"})
    second = _newest(client, agent, fact)

    before = _state(client, agent)
    error = _error(client.post(f"{base}/ledger/{added}/revert"), 409, "revert_blocked")
    assert error["later"] == [first, second]
    assert error["hint"]
    error = _error(client.post(f"{base}/ledger/{first}/revert"), 409, "revert_blocked")
    assert error["later"] == [second]
    assert _state(client, agent) == before

    # newest first, each revert unblocks the one before
    _ok(client.post(f"{base}/ledger/{second}/revert"))
    _ok(client.post(f"{base}/ledger/{first}/revert"))
    assert _ok(client.get(f"{base}/facts/{fact}"))["content"] == "the invoice is due Friday"


def test_scrubbed_unknown_and_fixed_entries_are_not_reverted(client: TestClient) -> None:
    agent = _agent(client)
    base = f"/agents/{agent}"
    fact = _remember(client, agent, "the door code is 4711")
    client.patch(f"{base}/facts/{fact}", json={"content": "the door code is 1174"})
    corrected = _newest(client, agent, fact)
    _ok(client.post(f"{base}/deletions", json={"factIds": [fact]}))
    deletion = _newest(client, agent, fact)
    registered = _ok(client.get(f"{base}/ledger"))["entries"][-1]
    assert registered["op"] == "agent.register"

    before = _state(client, agent)
    message = _error(client.post(f"{base}/ledger/{corrected}/revert"), 409, "conflict")
    assert "erased" in message["message"]
    for fixed in (deletion, registered["seq"]):
        _error(client.post(f"{base}/ledger/{fixed}/revert"), 409, "conflict")
    _error(client.post(f"{base}/ledger/999999/revert"), 404, "not_found")
    for bad in ("0", "-1", "x", "1.5"):
        _error(client.post(f"{base}/ledger/{bad}/revert"), 400, "invalid_input")
    # another agent's entry is not this agent's
    other = _agent(client, "other")
    _error(client.post(f"/agents/{other}/ledger/{deletion}/revert"), 404, "not_found")
    assert _state(client, agent) == before


def test_an_ended_agent_s_history_is_read_only(client: TestClient) -> None:
    agent = _agent(client)
    base = f"/agents/{agent}"
    kept = _remember(client, agent, "kept after the end")
    trashed = _remember(client, agent, "trashed before the end")
    client.delete(f"{base}/facts/{trashed}")
    entry = _newest(client, agent, kept)
    assert _ok(client.post(f"{base}/end"))["status"] == "ended"
    before = _state(client, agent)
    writes: list[tuple[str, str, dict[str, Any]]] = [
        ("DELETE", f"{base}/facts/{kept}", {"params": {"hard": "true"}}),
        ("DELETE", f"{base}/facts", {"params": {"count": 1, "hard": "true"}}),
        ("POST", f"{base}/trash/{trashed}/restore", {}),
        ("POST", f"{base}/deletions", {"json": {"factIds": [kept]}}),
        ("POST", f"{base}/deletions", {"json": {"scope": True, "expectedCount": 2}}),
        ("POST", f"{base}/ledger/{entry}/revert", {}),
    ]
    for method, path, kwargs in writes:
        error = _error(client.request(method, path, **kwargs), 409, "conflict")
        assert "ended" in error["message"]
    assert _state(client, agent) == before
    assert [t["id"] for t in before[2]["facts"]] == [trashed]
    assert before[0]["entries"][0]["op"] == "agent.end"
    assert _ok(client.get(f"{base}/facts/{kept}/history"))["entries"][0]["seq"] == entry


def test_the_ledger_names_the_verified_service_and_the_request_id(client: TestClient) -> None:
    agent = _agent(client)
    base = f"/agents/{agent}"
    made = client.post(
        f"{base}/facts", json={"content": "written by the service"}, headers={"X-Request-Id": "r-1"}
    )
    fact = _ok(made, 201)["id"]
    entry = _ok(client.get(f"{base}/facts/{fact}/history"))["entries"][0]
    assert (entry["actor"], entry["via"], entry["requestId"]) == (ACTOR, "http", "r-1")
    assert entry["turnUser"] is None

    # nothing a caller says sets the writer: not a body's field, not a query's
    for body in ({"content": "x", "actor": "mallory"}, {"content": "x", "via": "cli"}):
        _error(client.post(f"{base}/facts", json=body), 400, "invalid_input")
    spoof = client.post(f"{base}/facts", json={"content": "y"}, params={"actor": "mallory"})
    _error(spoof, 400, "invalid_input")
    client.put(f"{base}/memory/plan", json={"value": 1}, headers={"X-Actor": "mallory"})
    client.delete(f"{base}/facts/{fact}", headers={"X-Request-Id": "x" * 129})
    entries = _ok(client.get(f"{base}/ledger"))["entries"]
    assert {e["actor"] for e in entries} == {ACTOR} and {e["via"] for e in entries} == {"http"}
    assert entries[0]["requestId"] is None  # over 128 characters: not recorded


def test_the_people_routes_name_the_person_and_forget_for_good(
    client: TestClient, library: engram.Memory
) -> None:
    p1 = person("p1")
    scope = PersonAppRef("p1", "app:a")
    made = client.post(
        "/api/v1/apps/app:a/memories",
        json={"memory": "likes green tea"},
        headers={**p1, "X-Request-Id": "req-7"},
    )
    kept = _ok(made, 201)["id"]
    entry = library.ledger(scope).entries[0]
    assert (entry.op, entry.actor, entry.via, entry.request_id) == (
        "remember",
        "p1",
        "http",
        "req-7",
    )

    assert client.delete(f"/api/v1/apps/memories/app:a/{kept}", headers=p1).status_code == 200
    assert library.trash(scope).facts == []
    assert library.ledger(scope).entries[0].actor == "p1"
    assert all(e.scrubbed for e in library.history(scope, kept)[1:])

    for words in ("likes black tea", "likes oolong"):
        _ok(client.post("/api/v1/apps/app:a/memories", json={"memory": words}, headers=p1), 201)
    everything: dict[str, str | int] = {"agent_id": "app:a", "count": 2}
    assert _ok(client.delete("/api/v1/memories", params=everything, headers=p1)) == {"forgotten": 2}
    assert library.trash(scope).facts == [] and library.count(scope) == 0
    assert {e.actor for e in library.ledger(scope).entries} == {"p1"}
