"""A person's memories from mem0 come in without loss or silence, and go back out as
mem0's records: one user's ``get_all()`` as mem0 writes it (pretty-printed), holding what
mem0 itself accepts (a blank memory, one longer than a fact holds, one with a NUL, the
same words twice) and one record edited by hand into something mem0 never writes.

Every problem is named at the line where its record starts, by mem0's field, in the
file's order; a blank record is left out and said, never fatal; a long memory is kept
whole in consecutive facts; a NUL becomes U+FFFD and is said; the same words twice are
one fact whose metadata keeps the second record's id, metadata and times;
``on_error="skip"`` imports the rest (the command line writes the left-out records to a
rejects file); the mem0 export gives every record back."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import engram
from engram import BadRecords, ResourceRef
from engram.api import create_app
from engram.cli.main import main
from stores import Target

REF = ResourceRef("from-mem0")
LONG = " ".join(["Alice keeps a long diary of her rehab after the knee surgery."] * 46)
WORDS = [
    "Name is Alice",
    "Is a vegetarian",
    "Allergic to peanuts",
    "Lives in Lisbon",
    "Works as a nurse",
    "   ",
    "Likes jazz",
    LONG,
    "Has a dog named Rex",
    "Wrote a note\x00with a NUL in it",
    "Is a vegetarian",
    "Prefers tea over coffee",
    "Plays tennis on Sundays",
]
EDITED = 12  # its memory made null by hand: the one bad record


def _record(n: int, words: str) -> dict[str, Any]:
    """A record as mem0 2.2's ``get_all`` answers it."""
    return {
        "id": f"6f1c2d3e-0000-4000-8000-{n:012d}",
        "memory": words,
        "hash": f"{n:032x}",
        "metadata": {"source": "chat", "n": n} if n % 2 else None,
        "created_at": f"2026-11-{n + 1:02d}T09:12:44.123456-08:00",
        "updated_at": None if n % 3 else f"2026-11-{n + 2:02d}T10:00:00-08:00",
        "user_id": "alice",
    }


RECORDS = [_record(n, words) for n, words in enumerate(WORDS, 1)]
RECORDS[EDITED - 1]["memory"] = None
GET_ALL = json.dumps({"results": RECORDS}, indent=2)


def _line(n: int) -> int:
    """The line of GET_ALL where record ``n`` (1-based) starts: its opening brace."""
    lines = GET_ALL.splitlines()
    return next(i for i, line in enumerate(lines, 1) if RECORDS[n - 1]["id"] in line) - 1


def _open(target: Target) -> engram.Memory:
    return engram.open(target, embedder=engram.HashingEmbedder(64))


def test_every_problem_is_named_where_its_record_starts_and_nothing_is_written(
    target: Target,
) -> None:
    assert LONG and len(LONG) > 2000
    with _open(target) as mem, pytest.raises(BadRecords) as raised:
        mem.import_string(REF, GET_ALL, source="mem0")
    errors = [(e["line"], e["field"]) for e in raised.value.details["errors"]]  # type: ignore[union-attr]
    assert errors == [(_line(EDITED), "memory")]
    assert "memory must be a string, got NoneType" in raised.value.message
    assert raised.value.hint is not None and "skip" in raised.value.hint
    with _open(target) as mem:
        assert mem.facts(REF).facts == []


def test_skipping_imports_the_rest_and_says_what_was_left_out_or_changed(
    target: Target,
) -> None:
    with _open(target) as mem:
        done = mem.import_string(REF, GET_ALL, source="mem0", on_error="skip")
        # 13, less the blank, the edited and the repeated one; the long one in two facts
        assert done.facts_added == 11
        left = [(s.line, s.field, s.record) for s in done.skipped]
        assert left == [
            (_line(6), "memory", RECORDS[5]),
            (_line(EDITED), "memory", RECORDS[EDITED - 1]),
        ]
        assert "blank" in done.skipped[0].message
        assert [(line, field) for line, field, _ in done.changed] == [
            (_line(8), "memory"),
            (_line(10), "memory"),
            (_line(11), "memory"),
        ]
        facts = {f.content: f for f in mem.facts(REF).facts}
        assert all(len(f.content) <= 2000 for f in facts.values())
        assert "Wrote a note\ufffdwith a NUL in it" in facts
        vegetarian = facts["Is a vegetarian"]
        assert vegetarian.metadata["mem0_id"] == RECORDS[1]["id"]
        second = vegetarian.metadata["mem0_also"]
        assert second == [
            {
                "id": RECORDS[10]["id"],
                "user_id": "alice",
                "hash": RECORDS[10]["hash"],
                "metadata": {"source": "chat", "n": 11},
                "created_at": RECORDS[10]["created_at"],
            }
        ]


def test_a_jsonl_export_names_its_own_lines(target: Target) -> None:
    text = "\n".join(json.dumps(r) for r in RECORDS)
    with _open(target) as mem, pytest.raises(BadRecords) as raised:
        mem.import_string(REF, text, source="mem0")
    assert [e["line"] for e in raised.value.details["errors"]] == [EDITED]  # type: ignore[union-attr]


def test_a_record_without_words_or_of_another_shape_is_named_for_what_it_is(
    target: Target,
) -> None:
    given = [{"id": "a", "memory": 7}, {"id": "b"}, "words", {"id": "c", "categories": [1] * 40}]
    with _open(target) as mem, pytest.raises(BadRecords) as raised:
        mem.import_string(REF, json.dumps(given), source="mem0")
    said = [(e["field"], e["message"]) for e in raised.value.details["errors"]]  # type: ignore[union-attr]
    assert said == [
        ("memory", "memory must be a string, got int"),
        ("memory", "missing: a record has memory, text or content"),
        ("record", "not a JSON object"),
        ("memory", "missing: a record has memory, text or content"),
    ]


def test_the_command_line_lists_every_bad_record_and_writes_the_rejects(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "alice.json"
    source.write_text(GET_ALL)
    argv = ["import", str(source), "--from", "mem0", "--db", str(tmp_path / "cli.db")]
    assert main([*argv, "--resource", "alice"]) != 0
    err = capsys.readouterr().err
    assert f"line {_line(EDITED)}, memory: memory must be a string, got NoneType" in err
    assert main([*argv, "--resource", "alice", "--skip-invalid", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["facts_added"] == 11 and report["rejects"] == f"{source}.rejects.jsonl"
    rejected = [json.loads(line) for line in Path(report["rejects"]).read_text().splitlines()]
    assert [(r["line"], r["field"], r["record"]) for r in rejected] == [
        (_line(6), "memory", RECORDS[5]),
        (_line(EDITED), "memory", RECORDS[EDITED - 1]),
    ]
    # the rejects file is never overwritten: refused before anything is imported
    assert main([*argv, "--resource", "again", "--skip-invalid"]) != 0
    assert "exists" in capsys.readouterr().err
    assert main([*argv, "--resource", "again", "--rejects", "x"]) == 2


def test_the_service_skips_when_asked(target: Target) -> None:
    with TestClient(create_app(memory_store=_open(target))) as http:
        agent = http.post("/agents", json={"name": "alice"}).json()["id"]
        path = f"/agents/{agent}/imports"
        refused = http.post(path, content=GET_ALL, params={"source": "mem0"})
        assert refused.status_code == 422
        assert [e["line"] for e in refused.json()["error"]["errors"]] == [_line(EDITED)]
        came = http.post(path, content=GET_ALL, params={"source": "mem0", "onError": "skip"})
        assert came.status_code == 200, came.text
        body = came.json()
        assert body["factsAdded"] == 11
        assert [s["line"] for s in body["skipped"]] == [_line(6), _line(EDITED)]
        assert [c["line"] for c in body["changed"]] == [_line(8), _line(10), _line(11)]
        client = engram.Client(http=http)
        again = client.import_string(agent, GET_ALL, source="mem0", on_error="skip")
        assert again["factsAdded"] == 0 and again["factsExisting"] == 11
        out = json.loads(client.export_string(agent, format="mem0"))["results"]
        assert len(out) == 11


def test_every_record_goes_back_out_as_mem0_wrote_it(target: Target) -> None:
    """The mem0 export: each record that came in, with its id, words (a long memory whole
    again), metadata, hash and the fields mem0 keeps, the same instants; the record of the
    same words on its own, as it came."""
    with _open(target) as mem:
        mem.import_string(REF, GET_ALL, source="mem0", on_error="skip")
        out = json.loads(mem.export_string(REF, format="mem0"))["results"]
    came = [r for n, r in enumerate(RECORDS, 1) if n not in (6, EDITED)]
    assert sorted(r["id"] for r in out) == sorted(r["id"] for r in came)
    by_id = {r["id"]: r for r in out}
    for record in came:
        back = by_id[record["id"]]
        words = record["memory"].replace("\x00", "\ufffd")
        assert back["memory"] == words, record["id"]
        for name in ("hash", "user_id", "metadata"):
            assert back.get(name) == record[name], (record["id"], name)
        assert datetime.fromisoformat(back["created_at"]) == datetime.fromisoformat(
            record["created_at"]
        )


REAL = Path(__file__).parent / "fixtures" / "mem0-get_all.json"


def test_what_mem0_itself_answered_comes_in_and_goes_back_out_equal(target: Target) -> None:
    """``fixtures/mem0-get_all.json`` is mem0 2.2.1's own ``get_all()`` of one user (written
    by ``fixtures/make_mem0_get_all.py``): thirteen records, one blank, one of 2,880
    characters, one holding a NUL, two of the same words. Imported as it is, the blank is
    left out and said; the mem0 export then gives back every other record equal to the
    one mem0 wrote, key for key, the NUL as U+FFFD."""
    text = REAL.read_text()
    records = json.loads(text)["results"]
    assert len(records) == 13 and max(len(r["memory"]) for r in records) == 2880
    with _open(target) as mem:
        report = mem.import_string(REF, text, source="mem0")
        out = json.loads(mem.export_string(REF, format="mem0"))["results"]
    blank = [r for r in records if not r["memory"].strip()]
    assert [s.record for s in report.skipped] == blank and len(blank) == 1
    assert len(report.changed) == 3  # the NUL, the long memory, the words twice
    came = [{**r, "memory": r["memory"].replace("\x00", "\ufffd")} for r in records]
    assert sorted(out, key=lambda r: r["id"]) == sorted(
        (r for r in came if r["memory"].strip()), key=lambda r: r["id"]
    )
