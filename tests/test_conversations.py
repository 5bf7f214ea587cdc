"""Conversations as a first-class input: each turn a verified fact with its neighbours as
context, appended turns completing the context before them; on both backends, through
the library, HTTP, the client and the command line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import engram
from engram import Conflict, InvalidInput, NotFound, ResourceRef, Turn
from engram.api.app import create_app
from engram.cli.main import main
from engram.settings import Settings
from stores import Target

REF = ResourceRef("talker")
MAY = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)


@pytest.fixture
def mem(target: Target) -> Iterator[engram.Memory]:
    with engram.open(target, embedder=engram.HashingEmbedder(32)) as memory:
        yield memory


def test_each_turn_is_a_verified_fact_with_its_neighbours_as_context(mem: engram.Memory) -> None:
    done = mem.remember_conversation(
        REF,
        [
            Turn("Ana", "been to Lisbon?", MAY),
            Turn("Bo", "Yes, twice!", MAY),
            Turn("Ana", "loved the trams", MAY, {"mood": "warm"}),
        ],
        session_id="s_trip",
    )
    assert done.session_id == "s_trip" and done.entries == range(0, 3)
    first, second, third = done.facts
    assert [f.content for f in done.facts] == [
        "Ana: been to Lisbon?",
        "Bo: Yes, twice!",
        "Ana: loved the trams",
    ]
    assert second.context == "Ana: been to Lisbon?\nAna: loved the trams"
    assert first.context == "Bo: Yes, twice!" and third.context == "Bo: Yes, twice!"
    assert all(f.verified and f.created_at == MAY for f in done.facts)
    assert third.metadata == {"mood": "warm", "speaker": "Ana"}
    source = mem.source(second)
    assert source is not None and (source.role, source.content) == ("Bo", "Yes, twice!")
    # The point of the context: a turn is found by the words around it ("Yes, twice!"
    # never says Lisbon).
    hits = mem.recall(REF, "Lisbon", mode="text", top_k=3)
    assert {h.fact.id for h in hits} == {first.id, second.id}
    entries = mem.ledger(REF).entries
    assert [e.op for e in entries] == ["remember_conversation"]  # one entry, three items
    assert len(entries[0].changes) == 3


def test_later_turns_complete_the_context_before_them_and_revert_undoes_it(
    mem: engram.Memory,
) -> None:
    first = mem.remember_conversation(REF, [Turn("Ana", "been to Lisbon?")])
    assert first.facts[0].context is None  # nothing around it yet
    later = mem.remember_conversation(
        REF, [Turn("Bo", "Yes, twice!")], session_id=first.session_id, context_turns=1
    )
    assert later.entries == range(1, 2)
    assert mem.fact(REF, first.facts[0].id).context == "Bo: Yes, twice!"
    entry = mem.ledger(REF, limit=1).entries[0]
    assert sorted(c.action for c in entry.changes) == ["add", "context"]
    mem.revert(REF, entry.seq)
    assert mem.fact(REF, first.facts[0].id).context is None
    assert [f.id for f in mem.facts(REF).facts] == [first.facts[0].id]


def test_a_retry_with_the_expected_next_index_writes_nothing(mem: engram.Memory) -> None:
    turns = [Turn("Ana", "hello", MAY), Turn("Bo", "hi", MAY)]
    done = mem.remember_conversation(REF, turns, session_id="s_r", expected_next=0)
    entries = len(mem.ledger(REF).entries)
    again = mem.remember_conversation(REF, turns, session_id="s_r", expected_next=0)
    assert again.entries == done.entries and [f.id for f in again.facts] == [
        f.id for f in done.facts
    ]
    assert len(mem.ledger(REF).entries) == entries
    with pytest.raises(Conflict):
        mem.remember_conversation(REF, [Turn("Ana", "other")], session_id="s_r", expected_next=1)


def test_bad_turns_are_refused_and_nothing_is_written(mem: engram.Memory) -> None:
    mem.remember_conversation(ResourceRef("elsewhere"), [Turn("A", "b")], session_id="s_other")
    bad: list[tuple[object, dict[str, object]]] = [
        ([], {}),
        ("text", {}),
        ([Turn("", "hi")], {}),
        ([Turn("x" * 129, "hi")], {}),
        ([Turn("Ana", "")], {}),
        ([Turn("Ana", "x" * 2001)], {}),
        ([Turn("Ana", "hi", datetime(2024, 5, 1))], {}),  # naive
        ([Turn("Ana", "hi")] * 1001, {}),
        ([Turn("Ana", "hi")], {"context_turns": 6}),
        ([Turn("Ana", "hi")], {"session_id": ""}),
        (["not a turn"], {}),
    ]
    for turns, options in bad:
        with pytest.raises(InvalidInput):
            mem.remember_conversation(REF, turns, **options)  # type: ignore[arg-type]
    with pytest.raises(NotFound):
        mem.remember_conversation(REF, [Turn("Ana", "hi")], session_id="s_other")
    assert mem.count(REF) == 0 and mem.ledger(REF).entries == []
    assert mem.episodic_recall(REF).entries == []


def test_conversations_over_http_the_client_and_the_command_line(
    target: Target, capsys: pytest.CaptureFixture[str]
) -> None:
    memory = engram.open(target, embedder=engram.HashingEmbedder(32))
    with TestClient(create_app(Settings(db_path=str(target)), memory_store=memory)) as http:
        agent = http.post("/agents", json={"name": "talker"}).json()["id"]
        answer = http.post(
            f"/agents/{agent}/conversations",
            json={
                "sessionId": "s_http",
                "turns": [
                    {"speaker": "Ana", "text": "been to Lisbon?", "at": "2024-05-01T10:00:00Z"},
                    {"speaker": "Bo", "text": "Yes, twice!"},
                ],
            },
        )
        assert answer.status_code == 201, answer.text
        body = answer.json()
        assert (body["sessionId"], body["first"], body["count"]) == ("s_http", 0, 2)
        assert body["facts"][1]["context"] == "Ana: been to Lisbon?"
        refused = http.post(
            f"/agents/{agent}/conversations",
            json={"turns": [{"speaker": "Ana", "text": "hi", "who": "x"}]},
        )
        assert refused.status_code == 400
        client = engram.Client(http=http)
        more = client.remember_conversation(
            agent, [Turn("Ana", "when?"), {"speaker": "Bo", "text": "May"}], session_id="s_http"
        )
        assert (more["first"], more["count"]) == (2, 2)
        with pytest.raises(InvalidInput):
            client.remember_conversation(agent, [])


def test_the_command_line_reads_one_turn_a_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store, turns = str(tmp_path / "cli.db"), tmp_path / "turns.jsonl"
    turns.write_text(
        json.dumps({"speaker": "Ana", "text": "see you in Porto", "at": "2024-05-01T10:00:00Z"})
        + "\n\n"
        + json.dumps({"speaker": "Bo", "text": "Porto it is"})
        + "\n"
    )
    where = ["--db", store, "--resource", "talker"]
    code = main(["--json", "remember-conversation", str(turns), *where, "--session", "s_cli"])
    out, err = capsys.readouterr()
    assert code == 0, err
    done = json.loads(out)
    assert (done["session_id"], done["first"], done["count"]) == ("s_cli", 0, 2)
    assert done["facts"][0]["context"] == "Bo: Porto it is"
    turns.write_text('{"speaker": "Ana", "text": "fine"}\nnot json\n')
    code = main(["remember-conversation", str(turns), *where])
    assert code == 2 and "line 2" in capsys.readouterr().err
    with engram.open(store, embedder=None) as mem:
        assert mem.count(ResourceRef("talker")) == 2  # the refused file wrote nothing
