"""Random interleavings of remember, recall, correct, forget, allow and stop by random
principals, through the service, checked against a plain-Python model of who may see
what."""

from __future__ import annotations

import os
import time
from typing import Any

import jwt
import pytest
from fastapi.testclient import TestClient
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

import engram
import stores
from engram.api import create_app
from engram.settings import Settings

SECRET = "model-secret-0123456789abcdef0123456"
PERSONS = ["p1", "p2"]
APPS = ["app:a", "app:b", "app:c"]
WORDS = st.lists(st.sampled_from(["red", "blue", "green", "plum"]), min_size=1, max_size=3)


def _auth(person: str | None) -> dict[str, str]:
    if person is None:
        return {}
    signed = jwt.encode({"sub": person, "exp": int(time.time()) + 3600}, SECRET, algorithm="HS256")
    return {"Authorization": f"Bearer {signed}"}


class WhoSeesWhat(RuleBasedStateMachine):
    # Where each run's fresh store comes from; set per backend by the test below.
    fresh_store: stores.FreshStore

    def __init__(self) -> None:
        super().__init__()
        target, self.cleanup = type(self).fresh_store()
        self.memory = engram.open(target, embedder=engram.HashingEmbedder(16))
        settings = Settings(db_path=str(target), jwt_secret=SECRET)
        self.client = TestClient(create_app(settings, memory_store=self.memory))
        self.memories: dict[str, tuple[str, str, str]] = {}  # id -> (person, app, words)
        self.allowed: set[tuple[str, str, str]] = set()  # (person, source, reader)

    def teardown(self) -> None:
        self.client.close()
        self.memory.close()
        self.cleanup()

    @rule(person=st.sampled_from([*PERSONS, None]), app=st.sampled_from(APPS), words=WORDS)
    def remember(self, person: str | None, app: str, words: list[str]) -> None:
        text = " ".join(words)
        answer = self.client.post(
            f"/api/v1/apps/{app}/memories", json={"memory": text}, headers=_auth(person)
        )
        if person is None:
            assert answer.status_code == 401
            return
        assert answer.status_code == 201
        self.memories[answer.json()["id"]] = (person, app, text)

    @rule(
        person=st.sampled_from(PERSONS), source=st.sampled_from(APPS), reader=st.sampled_from(APPS)
    )
    def allow(self, person: str, source: str, reader: str) -> None:
        share = {"source": source, "reader": reader}
        answer = self.client.put("/api/v1/memory-shares", json=share, headers=_auth(person))
        if source == reader:
            assert answer.status_code == 422
            return
        assert answer.status_code == 200
        self.allowed.add((person, source, reader))

    @rule(
        person=st.sampled_from(PERSONS), source=st.sampled_from(APPS), reader=st.sampled_from(APPS)
    )
    def stop(self, person: str, source: str, reader: str) -> None:
        params = {"source": source, "reader": reader}
        answer = self.client.delete("/api/v1/memory-shares", params=params, headers=_auth(person))
        expected = 204 if (person, source, reader) in self.allowed else 404
        assert answer.status_code == expected
        self.allowed.discard((person, source, reader))

    @precondition(lambda self: bool(self.memories))
    @rule(data=st.data(), person=st.sampled_from(PERSONS), words=WORDS)
    def correct(self, data: st.DataObject, person: str, words: list[str]) -> None:
        memory_id = list(self.memories)[data.draw(st.integers(0, len(self.memories) - 1))]
        owner, app, _ = self.memories[memory_id]
        text = " ".join(words) + " fixed"
        answer = self.client.patch(
            f"/api/v1/apps/memories/{app}/{memory_id}", json={"memory": text}, headers=_auth(person)
        )
        taken = any(
            o == owner and a == app and t == text and i != memory_id
            for i, (o, a, t) in self.memories.items()
        )
        if owner != person:
            assert answer.status_code == 404
        elif taken:
            assert answer.status_code == 409
        else:
            assert answer.status_code == 200
            self.memories[memory_id] = (owner, app, text)

    @precondition(lambda self: bool(self.memories))
    @rule(data=st.data(), person=st.sampled_from(PERSONS))
    def forget(self, data: st.DataObject, person: str) -> None:
        memory_id = list(self.memories)[data.draw(st.integers(0, len(self.memories) - 1))]
        owner, app, _ = self.memories[memory_id]
        answer = self.client.delete(
            f"/api/v1/apps/memories/{app}/{memory_id}", headers=_auth(person)
        )
        assert answer.status_code == (200 if owner == person else 404)
        if owner == person:
            del self.memories[memory_id]

    @invariant()
    def every_read_matches_the_model(self) -> None:
        for person in PERSONS:
            for app in APPS:
                sources = {s for p, s, r in self.allowed if p == person and r == app}
                visible = {
                    i
                    for i, (o, a, _) in self.memories.items()
                    if o == person and (a == app or a in sources)
                }
                found = self._search(person, app)
                assert {m["id"] for m in found} <= visible
                own = {i for i in visible if self.memories[i][1] == app}
                assert own <= {m["id"] for m in found}  # everything of its own comes back
                for m in found:
                    source = self.memories[m["id"]][1]
                    assert m.get("rememberedBy") == (None if source == app else source)

    def _search(self, person: str, app: str) -> list[dict[str, Any]]:
        answer = self.client.get(
            f"/api/v1/apps/{app}/memories/search",
            params={"query": "red blue green plum fixed", "topK": 100},
            headers=_auth(person),
        )
        assert answer.status_code == 200
        found: list[dict[str, Any]] = answer.json()["memories"]
        return found


def test_who_sees_what(backend: str, request: pytest.FixtureRequest) -> None:
    fresh = stores.fresh_stores(backend, lambda: request.getfixturevalue("postgres_admin"))
    machine = type("WhoSeesWhatOn" + backend.title(), (WhoSeesWhat,), {"fresh_store": fresh})
    run_state_machine_as_test(
        machine,
        # ENGRAM_PEOPLE_EXAMPLES (4 by default) for a deeper run.
        settings=settings(
            max_examples=int(os.environ.get("ENGRAM_PEOPLE_EXAMPLES", "4")),
            stateful_step_count=15,
            deadline=None,
        ),
    )
