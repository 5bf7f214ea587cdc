"""The isolation matrix: persons P1, P2 and the owner, an anonymous visitor and a forged
claim, applications A, B and C, allowances toggled; every route. No read returns another
person's memory, or another application's without an allowance in force at that moment,
and no write lands outside the caller's own key."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from typing import Any

import jwt
import pytest
from fastapi.testclient import TestClient

import engram
import stores
from engram.api import create_app
from engram.settings import Settings
from stores import Target

SECRET = "isolation-secret-0123456789abcdef0123"
PERSONS = ["p1", "p2", "owner"]
APPS = ["app:a", "app:b", "app:c"]


def token(sub: str, secret: str = SECRET) -> dict[str, str]:
    signed = jwt.encode({"sub": sub, "exp": int(time.time()) + 3600}, secret, algorithm="HS256")
    return {"Authorization": f"Bearer {signed}"}


def unsigned() -> list[dict[str, str]]:
    """Callers with no verified identity. Minted at use: a forged token minted at import
    could expire first, and be refused for that instead of for its signature."""
    return [
        {},  # anonymous
        {"X-User": "p1", "X-Person": "p1"},  # a claim a caller makes of itself
        token("p1", secret="forged-secret-forged-secret-forged-99"),  # a forged token
    ]


@pytest.fixture
def client(target: Target) -> Iterator[TestClient]:
    settings = Settings(db_path=str(target), jwt_secret=SECRET, owner_uid="owner")
    memory = engram.open(target, embedder=engram.HashingEmbedder(32))
    with TestClient(create_app(settings, memory_store=memory)) as test_client:
        yield test_client


def _seed(client: TestClient) -> dict[tuple[str, str], str]:
    ids = {}
    for person, app in itertools.product(PERSONS, APPS):
        words = f"secret word of {person} in {app}"
        claimed = client.post(  # a body naming a person is refused whole, storing nothing
            f"/api/v1/apps/{app}/memories",
            json={"memory": words, "person": "p1"},
            headers=token(person),
        )
        assert claimed.status_code == 400, claimed.text
        made = client.post(
            f"/api/v1/apps/{app}/memories", json={"memory": words}, headers=token(person)
        )
        assert made.status_code == 201, made.text
        ids[(person, app)] = made.json()["id"]
    return ids


def _owners(ids: dict[tuple[str, str], str]) -> dict[str, tuple[str, str]]:
    return {memory_id: key for key, memory_id in ids.items()}


def test_reads_follow_person_application_and_allowances(client: TestClient) -> None:
    ids = _seed(client)
    owner_of = _owners(ids)
    allowances = [(s, r) for s, r in itertools.permutations(APPS, 2)]
    for enabled in ([], [("app:a", "app:b")], [("app:a", "app:b"), ("app:c", "app:b")]):
        for person in PERSONS:
            for source, reader in allowances:
                client.delete(
                    "/api/v1/memory-shares",
                    params={"source": source, "reader": reader},
                    headers=token(person),
                )
            if person == "p1":  # only p1 allows; p2 and the owner allow nothing
                for source, reader in enabled:
                    shared = {"source": source, "reader": reader}
                    assert client.put(
                        "/api/v1/memory-shares", json=shared, headers=token(person)
                    ).is_success
        for person, app in itertools.product(PERSONS, APPS):
            allowed = {s for s, r in enabled if r == app} if person == "p1" else set()
            found = client.get(
                f"/api/v1/apps/{app}/memories/search",
                params={"query": "secret word", "topK": 100},
                headers=token(person),
            ).json()["memories"]
            seen = {owner_of[m["id"]] for m in found}
            assert seen == {(person, app)} | {(person, s) for s in allowed}
            for m in found:
                assert m.get("rememberedBy") == (
                    None if owner_of[m["id"]][1] == app else owner_of[m["id"]][1]
                )
            listed = client.get(f"/api/v1/apps/memories/{app}", headers=token(person)).json()
            assert {owner_of[m["id"]] for m in listed["memories"]} == {(person, app)}
            assert listed["count"] == 1


def test_nobody_touches_what_is_not_theirs(client: TestClient, target: Target) -> None:
    ids = _seed(client)
    for person, (owner, app) in itertools.product(PERSONS, ids):
        memory_id = ids[(owner, app)]
        if owner == person:
            continue
        for path_app in APPS:
            base = f"/api/v1/apps/memories/{path_app}/{memory_id}"
            assert (
                client.patch(base, json={"memory": "taken"}, headers=token(person)).status_code
                == 404
            )
            assert client.delete(base, headers=token(person)).status_code == 404
        assert (
            client.patch(
                f"/api/v1/memories/{memory_id}", json={"memory": "x"}, headers=token(person)
            ).status_code
            == 404
        )
        assert (
            client.delete(f"/api/v1/memories/{memory_id}", headers=token(person)).status_code == 404
        )
    # and the right application is part of the key too
    p1_a = ids[("p1", "app:a")]
    assert (
        client.delete(f"/api/v1/apps/memories/app:b/{p1_a}", headers=token("p1")).status_code == 404
    )
    assert _scopes(target) == {(p, a): 1 for p, a in itertools.product(PERSONS, APPS)}


def test_callers_who_are_not_signed_in_read_and_write_nothing(
    client: TestClient, target: Target
) -> None:
    ids = _seed(client)
    some_id = ids[("p1", "app:a")]
    for headers in unsigned():
        answers = [
            client.post(
                "/api/v1/apps/app:a/memories", json={"memory": "intruder"}, headers=headers
            ),
            client.get(
                "/api/v1/apps/app:a/memories/search", params={"query": "secret"}, headers=headers
            ),
            client.get("/api/v1/apps/memories/app:a", headers=headers),
            client.patch(
                f"/api/v1/apps/memories/app:a/{some_id}", json={"memory": "x"}, headers=headers
            ),
            client.delete(f"/api/v1/apps/memories/app:a/{some_id}", headers=headers),
            client.delete("/api/v1/apps/memories/app:a", params={"count": 9}, headers=headers),
            client.get("/api/v1/memories", params={"agent_id": "app:a"}, headers=headers),
            client.get("/api/v1/memory-shares", params={"source": "app:a"}, headers=headers),
            client.put(
                "/api/v1/memory-shares",
                json={"source": "app:a", "reader": "app:b"},
                headers=headers,
            ),
        ]
        assert {a.status_code for a in answers} == {401}
    assert _scopes(target) == {(p, a): 1 for p, a in itertools.product(PERSONS, APPS)}


def test_stopping_takes_effect_on_the_very_next_read(client: TestClient) -> None:
    _seed(client)
    share = {"source": "app:a", "reader": "app:b"}
    search = {"query": "secret word", "topK": 100}
    client.put("/api/v1/memory-shares", json=share, headers=token("p1"))
    found = client.get("/api/v1/apps/app:b/memories/search", params=search, headers=token("p1"))
    assert any(m.get("rememberedBy") == "app:a" for m in found.json()["memories"])
    assert (
        client.delete("/api/v1/memory-shares", params=share, headers=token("p1")).status_code == 204
    )
    found = client.get("/api/v1/apps/app:b/memories/search", params=search, headers=token("p1"))
    assert not any(m.get("rememberedBy") for m in found.json()["memories"])
    assert (
        client.delete("/api/v1/memory-shares", params=share, headers=token("p1")).status_code == 404
    )
    assert (
        client.put(
            "/api/v1/memory-shares",
            json={"source": "app:a", "reader": "app:a"},
            headers=token("p1"),
        ).status_code
        == 422
    )


def test_forget_all_confirms_the_count_and_stays_in_its_key(
    client: TestClient, target: Target
) -> None:
    _seed(client)
    client.post("/api/v1/apps/app:a/memories", json={"memory": "second of p1"}, headers=token("p1"))
    refused = client.delete("/api/v1/apps/memories/app:a", params={"count": 1}, headers=token("p1"))
    assert refused.status_code == 409
    done = client.delete("/api/v1/apps/memories/app:a", params={"count": 2}, headers=token("p1"))
    assert done.json() == {"forgotten": 2}
    expected = {(p, a): 1 for p, a in itertools.product(PERSONS, APPS) if (p, a) != ("p1", "app:a")}
    assert _scopes(target) == expected


def test_correct_keeps_when_it_was_learned_and_refuses_bad_words(client: TestClient) -> None:
    ids = _seed(client)
    memory_id = ids[("p2", "app:c")]
    path = f"/api/v1/apps/memories/app:c/{memory_id}"
    for words in ("", "   ", "x" * 2001):
        assert client.patch(path, json={"memory": words}, headers=token("p2")).status_code == 422
    fixed = client.patch(path, json={"memory": "corrected words"}, headers=token("p2")).json()
    assert fixed["corrected"] is True and fixed["memory"]["corrected_by"] == "p2"
    assert fixed["memory"]["created_at"] != fixed["memory"]["corrected_at"]


def _scopes(target: Target) -> dict[tuple[str, str], int]:
    rows = stores.rows(target, "SELECT scope, count(*) FROM facts GROUP BY scope")
    out: dict[tuple[str, str], int] = {}
    for key, count in rows:
        ref: Any = engram.core.scopes.parse_key(key)
        out[(ref.person, ref.app)] = count
    return out


def test_people_routes_enforce_their_limits(client: TestClient) -> None:
    _seed(client)
    listing = "/api/v1/apps/memories/app:a"
    assert client.get(listing, params={"limit": 1000}, headers=token("p1")).status_code == 200
    for bad in ("0", "1001", "ten"):
        answer = client.get(listing, params={"limit": bad}, headers=token("p1"))
        assert answer.status_code == 400 and "limit" in answer.json()["error"]["message"]
    search = "/api/v1/apps/app:a/memories/search"
    for bad in ("0", "101"):
        answer = client.get(search, params={"query": "x", "topK": bad}, headers=token("p1"))
        assert answer.status_code == 400 and "topK" in answer.json()["error"]["message"]
    for params in ({}, {"count": "-1"}, {"count": "1" * 20}):
        answer = client.delete(listing, params=params, headers=token("p1"))
        assert answer.status_code == 400 and "count" in answer.json()["error"]["message"]
    assert client.get(listing, headers=token("p1")).json()["count"] == 1  # nothing forgotten
