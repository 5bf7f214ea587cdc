"""The ``engram`` command line on both backends: in-process ``main`` and the real script."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import engram
import stores
from engram.cli.main import main
from engram.core.memory import Memory, Note
from stores import Target

Run = tuple[int, str, str]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> Run:
    """Runs one command in-process; returns its exit code, stdout and stderr."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    code, out, err = run(capsys, "--json", *argv)
    assert code == 0, err
    return json.loads(out)


@pytest.fixture
def db(target: Target) -> str:
    """The store on each backend, as ``--db`` takes it."""
    return str(target)


def scoped(db: str, *argv: str, resource: str = "user-42") -> list[str]:
    """``argv`` with the store, the scope and no embedder (for commands that never embed)."""
    return [*argv, "--db", db, "--resource", resource, "--embedder", "none"]


def engram_script() -> str:
    found = shutil.which("engram") or str(Path(sys.executable).parent / "engram")
    assert Path(found).exists(), "the engram console script is not installed"
    return found


# -- facts ----------------------------------------------------------------------------
def test_document_commands(capsys: pytest.CaptureFixture[str], db: str, tmp_path: Path) -> None:
    """The documents' listing, one document, and forgetting it, from their declarations."""
    notes = tmp_path / "trip.md"
    notes.write_text("# Trip\n\nAna flies to Porto in May.\n")
    user = ["--db", db, "--resource", "user-42", "--embedder", "local"]
    run_json(capsys, "ingest", str(notes), *user)
    listed = run_json(capsys, "documents", *scoped(db))["documents"]
    assert [d["source"] for d in listed] == [str(notes)]
    shown = run_json(capsys, "document", listed[0]["id"], *scoped(db))
    assert len(shown["chunks"]) == 1 and shown["chunks"][0]["fact_id"].startswith("f_")
    gone = run_json(capsys, "forget-document", listed[0]["id"], *scoped(db))
    assert gone == {"id": listed[0]["id"], "forgotten": True, "hard": False}
    assert run_json(capsys, "documents", *scoped(db))["documents"] == []
    assert run_json(capsys, "forget-document", listed[0]["id"], *scoped(db))["forgotten"] is False


def test_fact_provenance_and_merge_commands(capsys: pytest.CaptureFixture[str], db: str) -> None:
    """Commands built from the operations' declarations: one fact, where its words came
    from, and two facts folded into one."""
    user = ["--db", db, "--resource", "user-42", "--embedder", "local"]
    one = run_json(capsys, "remember", "Ana lives in Lisbon", *user)["id"]
    two = run_json(capsys, "remember", "Ana moved to Lisbon", *user, "--tag", "home")["id"]
    assert run_json(capsys, "fact", one, *scoped(db))["content"] == "Ana lives in Lisbon"
    assert run_json(capsys, "provenance", one, *scoped(db))["provenance"] == []
    merged = run_json(capsys, "merge", one, two, "--content", "Ana lives in Lisbon now", *user)
    assert merged["content"] == "Ana lives in Lisbon now" and merged["tags"] == ["home"]
    assert [f["id"] for f in run_json(capsys, "facts", *scoped(db))["facts"]] == [merged["id"]]
    code, _, err = run(capsys, "merge", one, *user, "--content", "alone")
    assert code == 2 and "FACT_IDS must hold 2 to 10 ids, got 1" in err, err
    code, _, err = run(capsys, "fact", "f\x00", *scoped(db))
    assert code == 2 and "fact id must not contain NUL" in err, err


def test_remember_recall_facts_round_trip(capsys: pytest.CaptureFixture[str], db: str) -> None:
    user = ["--db", db, "--resource", "user-42"]
    tagged = "--source sess-7:12 --type billing --tag plan --tag pro".split()
    fact = run_json(capsys, "remember", "upgraded to the Pro plan on the 3rd", *user, *tagged)
    assert fact["id"].startswith("f_")
    assert fact["verified"] is True
    assert fact["source_ref"] == {"sandbox_id": "sess-7", "entry_index": 12}
    assert fact["tags"] == ["plan", "pro"]
    run_json(capsys, "--db", db, "remember", "likes green tea", "--resource", "user-42")

    hits = run_json(capsys, "recall", "which subscription plan", *user, "--top-k", "1")["hits"]
    assert [h["fact"]["id"] for h in hits] == [fact["id"]]
    assert hits[0]["score"] > 0 and hits[0]["vector_rank"] == 1
    assert "text_rank" in hits[0]

    listed = run_json(capsys, "facts", *scoped(db))
    assert [f["content"] for f in listed["facts"]] == [
        "likes green tea",
        "upgraded to the Pro plan on the 3rd",
    ]
    assert [f["verified"] for f in listed["facts"]] == [False, True]
    assert listed["next_before"] is None


def test_remember_prints_one_concise_line(capsys: pytest.CaptureFixture[str], db: str) -> None:
    code, out, _ = run(
        capsys,
        "remember",
        "prefers dark mode",
        "--db",
        db,
        "--resource",
        "user-42",
        "--source",
        "s1:0",
    )
    assert code == 0
    fact_id, flag, content = out.strip().split("  ")
    assert fact_id.startswith("f_") and flag == "[verified]" and content == "prefers dark mode"


def test_remember_reads_metadata_as_json(capsys: pytest.CaptureFixture[str], db: str) -> None:
    argv = ["remember", "likes tea", "--db", db, "--resource", "user-42"]
    made = run_json(capsys, *argv, "--metadata", '{"source": "chat", "turn": 3}')
    assert made["metadata"] == {"source": "chat", "turn": 3}
    code, _, err = run(capsys, *argv, "--metadata", '["chat"]')
    assert code == 2 and "expected a JSON object" in err, err


def test_remember_from_stdin_is_one_batch(
    capsys: pytest.CaptureFixture[str], db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []
    original = Memory.remember_many

    def counting(self: Memory, ref: engram.ResourceRef, notes: Sequence[Note | str]) -> Any:
        calls.append(len(notes))
        return original(self, ref, notes)

    monkeypatch.setattr(Memory, "remember_many", counting)
    monkeypatch.setattr(sys, "stdin", io.StringIO("likes tea\n\n   \n  prefers dark mode \n"))
    remembered = run_json(
        capsys, "remember", "-", "--db", db, "--resource", "user-42", "--type", "pref"
    )["facts"]
    assert calls == [2]
    assert [f["content"] for f in remembered] == ["likes tea", "prefers dark mode"]
    assert {f["type"] for f in remembered} == {"pref"}
    assert len(run_json(capsys, "facts", *scoped(db))["facts"]) == 2


def test_remember_from_empty_stdin_is_refused(
    capsys: pytest.CaptureFixture[str], db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n  \n"))
    code, _, err = run(capsys, "remember", "-", "--db", db, "--resource", "user-42")
    assert code == 2
    assert err.startswith("error[invalid_input]: no facts on stdin")


def test_a_turn_nested_too_deeply_to_read_is_refused_by_its_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    turns = tmp_path / "turns.jsonl"
    turns.write_text('{"speaker": "Ana", "text": "fine"}\n' + "[" * 100_000 + "]" * 100_000)
    code, _, err = run(capsys, "remember-conversation", str(turns), *scoped(str(tmp_path / "s.db")))
    assert code == 2
    assert err.startswith("error[invalid_input]: line 2 nests too deeply to be read")


def test_facts_pages_with_the_printed_cursor(capsys: pytest.CaptureFixture[str], db: str) -> None:
    for text in ("first fact", "second fact", "third fact"):
        run_json(capsys, "remember", text, "--db", db, "--resource", "user-42")
    code, out, _ = run(capsys, "facts", "--limit", "2", *scoped(db))
    assert code == 0
    lines = out.strip().splitlines()
    assert [line.split("  ")[-1] for line in lines[:2]] == ["third fact", "second fact"]
    cursor = lines[2].removeprefix("more follow: --before ")
    assert cursor != lines[2]
    page = run_json(capsys, "facts", "--limit", "2", "--before", cursor, *scoped(db))
    assert [f["content"] for f in page["facts"]] == ["first fact"]
    assert page["next_before"] is None


def test_correct_and_forget(capsys: pytest.CaptureFixture[str], db: str) -> None:
    fact = run_json(capsys, "remember", "lives in Lyon", "--db", db, "--resource", "user-42")
    fixed = run_json(
        capsys,
        "correct",
        fact["id"],
        "lives in Paris",
        "--by",
        "support",
        "--db",
        db,
        "--resource",
        "user-42",
    )
    assert (fixed["id"], fixed["content"], fixed["corrected_by"]) == (
        fact["id"],
        "lives in Paris",
        "support",
    )
    assert fixed["corrected_at"] is not None
    assert run_json(capsys, "forget", fact["id"], *scoped(db))["forgotten"] is True
    assert run_json(capsys, "forget", fact["id"], *scoped(db))["forgotten"] is False
    assert run_json(capsys, "facts", *scoped(db))["facts"] == []


def test_forget_all_conflict_forgets_nothing(capsys: pytest.CaptureFixture[str], db: str) -> None:
    for text in ("likes tea", "likes coffee"):
        run_json(capsys, "remember", text, "--db", db, "--resource", "user-42")
    code, out, err = run(capsys, "--json", "forget-all", "--expected-count", "1", *scoped(db))
    assert code == 4
    assert err.startswith("error[conflict]: ")
    assert json.loads(out)["error"]["code"] == "conflict"
    assert len(run_json(capsys, "facts", *scoped(db))["facts"]) == 2
    forgotten = run_json(capsys, "forget-all", "--expected-count", "2", *scoped(db))
    assert forgotten == {"forgotten": 2, "hard": False}
    assert run_json(capsys, "facts", *scoped(db))["facts"] == []


def test_recall_without_an_embedder_is_capability_missing(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    run_json(capsys, "working", "set", "plan", "1", *scoped(db))  # a store to read
    code, out, err = run(capsys, "--json", "recall", "anything", *scoped(db))
    assert code == 5
    assert err.startswith("error[capability_missing]: ")
    assert json.loads(out)["error"]["code"] == "capability_missing"
    code, out, _ = run(capsys, "--json", "recall", "anything", "--mode", "text", *scoped(db))
    assert (code, json.loads(out)) == (0, {"hits": []})


# -- working memory -------------------------------------------------------------------
def test_working_set_get_list_delete(capsys: pytest.CaptureFixture[str], db: str) -> None:
    entry = run_json(capsys, "working", "set", "plan", '{"step": 1}', *scoped(db))
    assert (entry["key"], entry["value"], entry["version"]) == ("plan", {"step": 1}, 1)
    code, out, _ = run(
        capsys, "working", "set", "plan", '{"step": 2}', "--expected-version", "1", *scoped(db)
    )
    assert (code, out.strip()) == (0, "set plan (version 2)")
    run_json(capsys, "working", "set", "mood", '"calm"', "--ttl-seconds", "60", *scoped(db))

    code, out, _ = run(capsys, "working", "get", "plan", *scoped(db))
    assert (code, json.loads(out)) == (0, {"step": 2})
    listed = run_json(capsys, "working", "list", *scoped(db))
    assert [(e["key"], e["value"]) for e in listed["entries"]] == [
        ("mood", "calm"),
        ("plan", {"step": 2}),
    ]
    assert listed["entries"][0]["expires_at"] is not None
    page = run_json(capsys, "working", "list", "--limit", "1", *scoped(db))
    assert page["next_after"] == "mood"
    after = run_json(capsys, "working", "list", "--after", "mood", *scoped(db))
    assert [e["key"] for e in after["entries"]] == ["plan"]

    assert run_json(capsys, "working", "delete", "plan", *scoped(db))["deleted"] is True
    assert run_json(capsys, "working", "delete", "plan", *scoped(db))["deleted"] is False


def test_working_set_refuses_a_value_that_is_not_json(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    code, out, err = run(capsys, "--json", "working", "set", "plan", "not json", *scoped(db))
    assert code == 2
    assert err.startswith("error[invalid_input]: the value is not valid JSON")
    assert json.loads(out)["error"]["code"] == "invalid_input"
    assert run_json(capsys, "working", "list", *scoped(db))["entries"] == []


def test_working_get_of_a_missing_key_is_not_found(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    run_json(capsys, "working", "set", "plan", "1", *scoped(db))  # a store to read
    code, out, err = run(capsys, "working", "get", "nope", *scoped(db))
    assert (code, out) == (3, "")
    assert err.startswith("error[not_found]: ") and "'nope'" in err


def test_working_set_with_a_stale_version_is_a_conflict(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    run_json(capsys, "working", "set", "plan", "1", *scoped(db))
    code, _, err = run(
        capsys, "working", "set", "plan", "2", "--expected-version", "0", *scoped(db)
    )
    assert code == 4 and err.startswith("error[conflict]: ")
    assert run_json(capsys, "working", "get", "plan", *scoped(db))["value"] == 1


# -- scopes ---------------------------------------------------------------------------
def test_fork_copies_facts_and_working_memory(capsys: pytest.CaptureFixture[str], db: str) -> None:
    run_json(capsys, "remember", "likes tea", "--db", db, "--resource", "parent", "--team", "t1")
    run_json(
        capsys, "working", "set", "plan", "[1, 2]", *scoped(db, "--team", "t1", resource="parent")
    )
    forked = run_json(capsys, "fork", "child", *scoped(db, "--team", "t1", resource="parent"))
    assert forked == {
        "scope": {"resource_id": "child", "team_id": "t1"},
        "facts_copied": 1,
        "working_keys_copied": 1,
    }
    child = scoped(db, "--team", "t1", resource="child")
    assert [f["content"] for f in run_json(capsys, "facts", *child)["facts"]] == ["likes tea"]
    assert run_json(capsys, "working", "get", "plan", *child)["value"] == [1, 2]
    assert run_json(capsys, "facts", *scoped(db, resource="child"))["facts"] == []
    parent = scoped(db, "--team", "t1", resource="parent")
    run_json(capsys, "working", "set", "plan", "3", *parent)
    code, _, err = run(capsys, "fork", "child", *parent)  # the child holds memory now
    assert code == 4 and err.startswith("error[conflict]: resource 'child' already holds")
    assert run_json(capsys, "working", "get", "plan", *child)["value"] == [1, 2]
    run_json(capsys, "fork", "child", "--into-existing", *parent)
    assert run_json(capsys, "working", "get", "plan", *child)["value"] == 3


def test_compact_removes_the_oldest_beyond_the_cap(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    ids = [
        run_json(capsys, "remember", text, "--db", db, "--resource", "user-42")["id"]
        for text in ("oldest fact", "middle fact", "newest fact")
    ]
    result = run_json(capsys, "compact", "--max-facts", "1", *scoped(db))
    assert (sorted(result["over_cap"]), result["expired"], result["removed"]) == (
        sorted(ids[:2]),
        [],
        2,
    )
    assert [f["id"] for f in run_json(capsys, "facts", *scoped(db))["facts"]] == [ids[2]]
    code, out, _ = run(capsys, "compact", "--max-age-seconds", "0", *scoped(db))
    assert (code, out.strip()) == (0, "removed 0 facts (0 past the max age, 0 over the max count)")


# -- options, errors, status ----------------------------------------------------------
def test_global_options_work_before_and_after_the_subcommand(
    capsys: pytest.CaptureFixture[str], db: str, tmp_path: Path
) -> None:
    before = ["--db", db, "--resource", "a", "--embedder", "none"]
    run_json(capsys, *before, "working", "set", "k", '"before"')
    assert run_json(capsys, "working", "get", "k", *scoped(db, resource="a"))["value"] == "before"
    other = str(tmp_path / "other.db")
    after = ["--db", other, "--embedder", "none"]
    run_json(capsys, "--db", db, "--resource", "a", "working", "set", "k", '"after"', *after)
    assert run_json(capsys, "working", "get", "k", *scoped(other, resource="a"))["value"] == "after"
    assert run_json(capsys, "working", "get", "k", *scoped(db, resource="a"))["value"] == "before"


def test_db_defaults_to_the_environment(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "from-env.db"
    monkeypatch.setenv("ENGRAM_DB_PATH", str(target))
    monkeypatch.setenv("ENGRAM_EMBEDDER", "none")
    status = run_json(capsys, "status")
    assert status == {"path": str(target), "embedder": None}
    assert target.exists()


def test_argument_errors_exit_2(capsys: pytest.CaptureFixture[str], db: str) -> None:
    code, out, err = run(capsys, "--json", "recall", "x", "--top-k", "many", *scoped(db))
    assert code == 2 and err.startswith("error[invalid_input]: argument --top-k")
    assert json.loads(out)["error"]["code"] == "invalid_input"
    code, _, err = run(capsys, "facts", "--db", db, "--embedder", "none")
    assert code == 2 and "needs --resource" in err
    code, _, err = run(
        capsys, "remember", "x", "--source", "no-index", "--db", db, "--resource", "r"
    )
    assert code == 2 and "SANDBOX_ID:ENTRY_INDEX" in err
    assert run(capsys, "--db", db)[0] == 2
    assert not Path(db).exists()


def test_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "working", "set", "--help")
    assert code == 0 and "JSON_VALUE" in out and "--expected-version" in out


def test_a_store_in_a_missing_directory_is_a_storage_failure(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "missing" / "engram.db"
    code, out, err = run(capsys, "--json", "working", "set", "plan", "1", *scoped(str(bad)))
    assert code == 7
    assert err.startswith("error[storage_failure]: ") and str(bad) in err
    assert json.loads(out)["error"]["code"] == "storage_failure"


def test_unexpected_errors_are_internal_without_a_traceback(
    capsys: pytest.CaptureFixture[str], db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> engram.Memory:
        raise RuntimeError("secret detail")

    monkeypatch.setattr(engram, "open", broken)
    monkeypatch.delenv("ENGRAM_DEBUG", raising=False)
    code, out, err = run(capsys, "working", "set", "plan", "1", *scoped(db))
    assert (code, out, err) == (70, "", "error[internal]: internal error\n")
    monkeypatch.setenv("ENGRAM_DEBUG", "1")
    code, _, err = run(capsys, "working", "set", "plan", "1", *scoped(db))
    assert code == 70 and "Traceback" in err and "secret detail" in err


def test_status_shows_the_store_the_model_and_examples(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    code, out, _ = run(capsys, "--db", db, "status")
    assert code == 0
    assert f"engram store: {db}" in out
    assert "all-MiniLM-L6-v2 (384 dimensions)" in out
    assert f"engram --db {db} remember" in out
    assert stores.is_postgres(db) or Path(db).exists()
    assert run_json(capsys, "status", "--db", db, "--embedder", "none")["embedder"] is None


# -- the installed script -------------------------------------------------------------
def test_the_console_script(tmp_path: Path) -> None:
    db = str(tmp_path.resolve() / "engram.db")
    env = {**os.environ, "ENGRAM_EMBEDDER": "none"}
    env.pop("ENGRAM_DB_PATH", None)

    def script(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [engram_script(), *argv],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=60,
            check=False,
        )

    done = script("--db", "./engram.db", "status")
    assert done.returncode == 0, done.stderr
    assert f"engram store: {db}" in done.stdout and "embedder: none" in done.stdout
    done = script(
        "--db", db, "--json", "working", "set", "plan", '{"step": 3}', "--resource", "user-42"
    )
    assert done.returncode == 0 and json.loads(done.stdout)["version"] == 1
    done = script("working", "get", "plan", "--db", db, "--resource", "user-42")
    assert (done.returncode, json.loads(done.stdout)) == (0, {"step": 3})
    done = script("working", "get", "gone", "--db", db, "--resource", "user-42")
    assert done.returncode == 3 and done.stderr.startswith("error[not_found]: ")
    assert "Traceback" not in done.stderr


def test_remember_with_context(capsys: pytest.CaptureFixture[str], db: str) -> None:
    scoped = ("--db", db, "--resource", "user-42", "--embedder", "local")
    fact = run_json(capsys, "remember", "Yes, twice!", "--context", "Been to Lisbon?", *scoped)
    assert fact["context"] == "Been to Lisbon?"
    hits = run_json(capsys, "recall", "Lisbon", "--mode", "text", *scoped)
    assert [h["fact"]["id"] for h in hits["hits"]] == [fact["id"]]


# -- numbers --------------------------------------------------------------------------
HUGE = str(2**70)
MANY_DIGITS = "9" * 5000


@pytest.mark.parametrize(
    "argv",
    [
        ["working", "set", "k", "1", "--ttl-seconds", "1e13"],
        ["working", "set", "k", "1", "--ttl-seconds", "nan"],
        ["working", "set", "k", "1", "--ttl-seconds", "inf"],
        ["working", "set", "k", "1", "--ttl-seconds", "-1"],
        ["working", "set", "k", "1", "--ttl-seconds", "0"],
        ["working", "set", "k", "1", "--ttl-seconds", "0.0000001"],  # under a microsecond
        ["working", "set", "k", "1", "--ttl-seconds", "¹"],
        ["working", "set", "k", "1", "--expected-version", HUGE],
        ["working", "set", "k", "1", "--expected-version", "¹"],
        ["working", "set", "k", "1", "--expected-version", "①"],
        ["working", "set", "k", "1", "--expected-version", MANY_DIGITS],
        ["working", "set", "k", "1", "--expected-version", "-1"],
        ["working", "list", "--limit", "0"],
        ["working", "list", "--limit", "1001"],
        ["facts", "--limit", MANY_DIGITS],
        ["recall", "x", "--top-k", "101"],
        ["recall", "x", "--top-k", "٣"],
        ["remember", "x", "--strength", "٣"],  # float() reads it as 3.0
        ["recall", "x", "--min-strength", "\uff13"],  # a full-width 3
        ["recall", "x", "--min-score", "٠.٥"],
        ["forget-all", "--expected-count", HUGE],
        ["compact", "--max-facts", HUGE],
        ["compact", "--max-age-seconds", "1e300"],
        ["remember", "x", "--source", f"s:{HUGE}"],
        ["remember", "x", "--source", "s:¹"],
        ["app", "app:a", "list", "--limit", "0"],
        ["app", "app:a", "forget-all", "--count", HUGE],
        ["serve", "--port", "65536"],
        ["backup", "out", "--keep", "0"],
        ["token", "--person", "ana", "--ttl", "1e13"],
    ],
)
def test_numbers_out_of_range_exit_2_before_anything_opens(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str]
) -> None:
    db = tmp_path / "e.db"
    code, out, err = run(capsys, "--json", *argv, "--db", str(db), "--resource", "r")
    assert code == 2, err
    assert err.startswith("error[invalid_input]: argument ") and "Traceback" not in err
    assert json.loads(out)["error"]["code"] == "invalid_input"
    assert not db.exists()


def test_the_largest_numbers_accepted_are_handled(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
    most = str(1 << 53)
    entry = run_json(
        capsys, "working", "set", "k", "1", "--ttl-seconds", str(86_400 * 10**6), *scoped(db)
    )
    assert entry["expires_at"] is not None
    code, _, err = run(capsys, "working", "set", "k", "2", "--expected-version", most, *scoped(db))
    assert code == 4 and err.startswith("error[conflict]: ")
    code, _, err = run(capsys, "forget-all", "--expected-count", most, *scoped(db))
    assert code == 0, err
    assert run_json(capsys, "compact", "--max-facts", most, *scoped(db))["removed"] == 0


# -- what an application remembers of the owner ---------------------------------------
def test_app_commands_act_as_the_owner_its_own_memories_only(
    capsys: pytest.CaptureFixture[str], db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENGRAM_OWNER_UID", "ana")
    local = ["--db", db, "--embedder", "local"]
    tea = run_json(capsys, "app", "app:a", "remember", "likes green tea", *local)
    apples = run_json(capsys, "app", "b", "remember", "likes green apples", *local)
    assert tea["scope"] == {"person": "ana", "app": "app:a"}
    assert apples["scope"] == {"person": "ana", "app": "app:b"}
    with engram.open(db, embedder=None) as memory:
        memory.sharing.allow("ana", "app:a", "app:b")  # ana allowed it, with her token

    hits = run_json(capsys, "app", "app:b", "recall", "green", "--top-k", "10", *local)["hits"]
    assert [h["fact"]["content"] for h in hits] == ["likes green apples"]
    listed = run_json(capsys, "app", "app:b", "list", "--db", db)
    assert (listed["app"], listed["count"]) == ("app:b", 1)
    assert [f["id"] for f in listed["facts"]] == [apples["id"]]

    fixed = run_json(capsys, "app", "app:b", "correct", apples["id"], "likes red apples", *local)
    assert (fixed["content"], fixed["corrected_by"]) == ("likes red apples", "ana")
    code, _, err = run(capsys, "app", "app:b", "forget", tea["id"], "--db", db)
    assert code == 3 and err.startswith("error[not_found]: ")  # app:a's, not app:b's
    code, _, _ = run(capsys, "app", "app:a", "forget-all", "--count", "0", "--db", db)
    assert code == 4
    assert run_json(capsys, "app", "app:a", "forget-all", "--count", "1", "--db", db) == {
        "forgotten": 1,
        "hard": True,
    }
    with engram.open(db, embedder=None) as memory:
        assert memory.count(engram.PersonAppRef("ana", "app:a")) == 0
        assert memory.count(engram.PersonAppRef("ana", "app:b")) == 1


def test_app_commands_need_an_owner(
    capsys: pytest.CaptureFixture[str], db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ENGRAM_OWNER_UID", raising=False)
    code, _, err = run(capsys, "app", "app:a", "list", "--db", db)
    assert code == 2
    assert err.startswith("error[invalid_input]: no owner is configured")
    assert "ENGRAM_OWNER_UID" in err


# -- tokens ---------------------------------------------------------------------------
def test_token_mints_what_the_service_verifies(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from engram.api.identity import Verifier
    from engram.settings import Settings

    monkeypatch.setenv("ENGRAM_JWT_SECRET", "token-secret-0123456789abcdef0123456789")
    monkeypatch.setenv("ENGRAM_JWT_ISSUER", "https://id.example")
    monkeypatch.setenv("ENGRAM_JWT_AUDIENCE", "engram")
    code, out, _ = run(capsys, "token", "--person", "ana", "--ttl", "60")
    assert code == 0
    code, out_json, err = run(capsys, "--json", "token", "--service")
    assert code == 0 and "ENGRAM_SERVICE_TOKENS=" in err
    minted = json.loads(out_json)
    monkeypatch.setenv("ENGRAM_SERVICE_TOKENS", minted["sha256"])
    verifier = Verifier(Settings.from_env(os.environ))
    assert verifier.person(f"Bearer {out.strip()}") == "ana"
    verifier.service(f"Bearer {minted['token']}")  # accepted: no error
    with pytest.raises(engram.Forbidden):
        verifier.service(f"Bearer {out.strip()}")


def test_token_needs_the_secret(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ENGRAM_JWT_SECRET", raising=False)
    code, out, err = run(capsys, "token", "--person", "ana")
    assert (code, out) == (2, "")
    assert err.startswith("error[invalid_input]: minting a person's token needs ENGRAM_JWT_SECRET")


# -- start-up cost --------------------------------------------------------------------
def _probed(probe: str) -> Any:
    """What ``probe`` printed last on stderr as JSON, run in a fresh interpreter (so that
    only what it imports is loaded), which must succeed."""
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stderr.strip().splitlines()[-1])


def test_help_and_argument_errors_load_neither_numpy_nor_a_model() -> None:
    probe = """
import json, sys
from engram.cli.main import main
codes = [main(["--help"]), main(["working", "set", "--help"]), main(["app", "x", "list", "--help"]),
         main(["facts", "--limit", "0", "--resource", "r"])]
heavy = ("numpy", "onnxruntime", "tokenizers", "httpx", "fastapi", "sqlite3", "psycopg")
print(json.dumps({"codes": codes, "loaded": [m for m in heavy if m in sys.modules]}),
      file=sys.stderr)
"""
    assert _probed(probe) == {"codes": [0, 0, 0, 2], "loaded": []}


# The rules that read names: their lists and patterns, 0.15 to 0.3 s to load.
RULES = (
    "engram.core.graph.extraction",
    "engram.core.graph.entity_types",
    "engram.core.graph.relations",
)


def test_reading_commands_load_none_of_the_rules_and_a_write_loads_them(tmp_path: Path) -> None:
    """The rules that read names (their lists and patterns, 0.15 to 0.3 s to load) load
    where a fact is first read, not in a process that only lists, counts or checks."""
    db = str(tmp_path / "engram.db")
    probe = f"""
import json, sys
from engram.cli.main import main
scope = ["--db", {db!r}, "--resource", "r"]
rules = {RULES!r}
codes = [main([*scope, "working", "set", "plan", "[1]"]), main([*scope, "facts"]),
         main([*scope, "ledger"]), main([*scope, "health"]), main([*scope, "trash"])]
before = [m for m in rules if m in sys.modules]
codes.append(main([*scope, "remember", "Ana Reis moved to Porto"]))
after = [m for m in rules if m in sys.modules]
print(json.dumps({{"codes": codes, "before": before, "after": after}}), file=sys.stderr)
"""
    assert _probed(probe) == {"codes": [0] * 6, "before": [], "after": list(RULES)}


def test_the_service_loads_the_rules_as_it_starts_where_it_reads_names(tmp_path: Path) -> None:
    """Its first write would otherwise wait for them (169.1 ms against 16.5 measured); a
    store that reads no names (``extractor="off"``) never needs them."""
    probe = f"""
import json, sys
from fastapi.testclient import TestClient
from engram.api import create_app
from engram.settings import Settings
rules = {RULES!r}
loaded = {{}}
for extractor in ("off", "rules"):
    settings = Settings(db_path={str(tmp_path / "engram.db")!r}, embedder="none",
                        extractor=extractor)
    with TestClient(create_app(settings)) as client:
        assert client.get("/healthz").status_code == 200
        loaded[extractor] = [m for m in rules if m in sys.modules]
print(json.dumps(loaded), file=sys.stderr)
"""
    assert _probed(probe) == {"off": [], "rules": list(RULES)}


def test_working_memory_and_listing_commands_load_neither_numpy_nor_a_model(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "engram.db")
    probe = f"""
import json, sys
from engram.cli.main import main
scope = ["--db", {db!r}, "--resource", "r"]
codes = [main([*scope, "working", "set", "plan", "[1]"]), main([*scope, "working", "get", "plan"]),
         main([*scope, "working", "list"]), main([*scope, "working", "delete", "plan"]),
         main([*scope, "facts"])]
heavy = ("numpy", "onnxruntime", "tokenizers")
print(json.dumps({{"codes": codes, "loaded": [m for m in heavy if m in sys.modules]}}),
      file=sys.stderr)
"""
    assert _probed(probe) == {"codes": [0, 0, 0, 0, 0], "loaded": []}


def test_what_a_command_prints_for_people_imports_no_wire_shapes(tmp_path: Path) -> None:
    """The service's wire shapes, and pydantic with them, were 0.25 of the 0.65 s a command
    took to start; they make the data ``--json`` prints, and only that imports them."""
    db = str(tmp_path / "engram.db")
    probe = f"""
import json, os, sys
from engram.cli.main import main
os.environ["ENGRAM_OWNER_UID"] = "ana"
scope = ["--db", {db!r}, "--embedder", "none", "--resource", "r"]
commands = [["working", "set", "plan", "[1]"], ["working", "list"], ["facts"], ["trash"],
            ["ledger"], ["health"], ["episodes"], ["session", "start", "--name", "s"],
            ["graph", "entity", "add", "Ana"], ["graph", "relations"],
            ["graph", "entity", "search", "Ana", "--mode", "text"]]
codes = [main([*scope, *c]) for c in commands]
codes.append(main(["--db", {db!r}, "--embedder", "none", "app", "app:notes", "list"]))
shapes = ("engram.wire", "pydantic")
people = [m for m in shapes if m in sys.modules]
codes.append(main([*scope, "--json", "trash"]))
print(json.dumps({{"codes": codes, "people": people,
                  "json": [m for m in shapes if m in sys.modules]}}), file=sys.stderr)
"""
    found = _probed(probe)
    assert found == {"codes": [0] * 13, "people": [], "json": ["engram.wire", "pydantic"]}


# Each command that only reads, with what it needs besides the store and the scope.
READING = {
    "recall": ["recall", "tea"],
    "facts": ["facts"],
    "trash": ["trash"],
    "ledger": ["ledger"],
    "episodes": ["episodes"],
    "working get": ["working", "get", "plan"],
    "working list": ["working", "list"],
    "app recall": ["app", "app:notes", "recall", "tea"],
    "app list": ["app", "app:notes", "list"],
    "health": ["health"],
    "export": ["export", "out.jsonl"],
    "graph relations": ["graph", "relations"],
    "graph entity show": ["graph", "entity", "show", "Ana"],
    "graph entity search": ["graph", "entity", "search", "Ana", "--mode", "text"],
    "graph neighbours": ["graph", "neighbours", "Ana"],
    "graph traverse": ["graph", "traverse", "Ana"],
    "feedback show": ["feedback", "show", "f_nope"],
    "consolidate --dry-run": ["consolidate", "--dry-run"],
    "import --dry-run": ["import", "in.jsonl", "--dry-run"],
}


@pytest.mark.parametrize("command", sorted(READING))
def test_a_command_that_only_reads_refuses_a_missing_store_and_creates_none(
    command: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from engram.cli.main import READING as DECLARED

    assert command.removesuffix(" --dry-run") in DECLARED | {"consolidate", "import"}
    monkeypatch.setenv("ENGRAM_OWNER_UID", "ana")
    Path("in.jsonl").write_text("")
    missing = tmp_path / "missing.db"
    argv = READING[command]
    if argv[0] == "app":  # the owner's, never a resource's
        argv = [*argv, "--db", str(missing), "--embedder", "none"]
    else:
        argv = scoped(str(missing), *argv)
    code, _, err = run(capsys, *argv)
    assert code == 3, err
    assert f"error[not_found]: no store at {missing}" in err and "only reads" in err
    assert not missing.exists() and sorted(tmp_path.iterdir()) == []


def test_a_database_without_a_store_is_not_made_one_by_a_report(
    postgres_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "--db", postgres_url, "health")
    assert code == 3 and "error[not_found]: no store at postgresql://" in err, err
    assert stores.rows(postgres_url, "SELECT to_regclass('engram_schema') IS NULL") == [(True,)]
    assert run(capsys, "--db", postgres_url, "migrate")[0] == 0  # made one, on purpose
    assert run(capsys, "--db", postgres_url, "health")[0] == 0


def test_reembed_refuses_a_missing_store_and_creates_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.db"
    code, _, err = run(capsys, "--db", str(missing), "--embedder", "local", "reembed")
    assert code == 3 and f"no store at {missing}" in err, err
    assert sorted(tmp_path.iterdir()) == []


@pytest.mark.timeout(120)  # a regression reads /dev/zero for ever: fail, not hang
def test_what_is_not_a_regular_file_or_has_no_end_is_refused(
    capsys: pytest.CaptureFixture[str], db: str, tmp_path: Path
) -> None:
    pipe = tmp_path / "turns.jsonl"
    os.mkfifo(pipe)  # no writer: opening it to read would wait for ever
    for argv, kind in (
        (["ingest", "/dev/zero"], "a character device"),
        (["ingest", str(pipe)], "a pipe (FIFO)"),
        (["remember-conversation", "/dev/zero"], "a character device"),
        (["remember-conversation", str(pipe)], "a pipe (FIFO)"),
        (["import", "/dev/zero"], "a character device"),
        (["import", str(pipe)], "a pipe (FIFO)"),
        (["import", str(tmp_path)], "a directory"),
    ):
        code, _, err = run(capsys, *argv, "--db", db, "--resource", "user-42")
        assert code == 2 and f"is {kind}, not a" in err, (argv, err)
    with open("/dev/zero", "rb") as endless:  # stdin without end stops at the limit
        done = subprocess.run(
            [engram_script(), "remember", "-", "--db", db, "--resource", "user-42"],
            stdin=endless,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 2 and "error[too_large]" in done.stderr, done.stderr
    assert run_json(capsys, "facts", *scoped(db))["facts"] == []
