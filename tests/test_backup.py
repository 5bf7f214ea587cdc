"""Backups: consistent under concurrent writes, verified, all or nothing, rotated; restore."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import engram
import stores
from engram import ResourceRef, StorageFailure
from engram.cli.main import main
from engram.storage import staging
from engram.storage.sqlite import backup as backups
from engram.storage.sqlite.driver import sqlite3
from engram.storage.sqlite.index import approximate, snapshots, vectorfiles

REF = ResourceRef("backed-up")


def _counts(path: Path) -> dict[str, int]:
    conn = sqlite3.connect(path)
    try:
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in backups.TABLES}
    finally:
        conn.close()


def test_a_backup_under_concurrent_writes_is_a_consistent_snapshot(
    db_path: Path, tmp_path: Path
) -> None:
    memory = engram.open(db_path, embedder=engram.HashingEmbedder(16))
    memory.remember_many(REF, [f"before {i}" for i in range(300)])
    with stores.writing_meanwhile(memory, REF):
        made = [backups.backup(db_path, tmp_path / "backups") for _ in range(3)]
    for backup_dir in made:
        manifest = json.loads((backup_dir / "manifest.json").read_text())
        copied = _counts(backup_dir / "engram.db")
        assert copied == manifest["counts"] and copied["facts"] >= 300
        assert copied["facts"] == copied["fact_vectors"]  # no half-written fact
    assert _counts(made[0] / "engram.db")["facts"] <= _counts(made[-1] / "engram.db")["facts"]
    memory.close()

    restored = tmp_path / "restored.db"
    assert backups.restore(made[-1], restored) is None
    with engram.open(restored, embedder=engram.HashingEmbedder(16)) as back:
        expected = json.loads((made[-1] / "manifest.json").read_text())["counts"]["facts"]
        assert back.count(REF) == expected
        assert back.recall(REF, "before 7", mode="text", top_k=1)[0].fact.content == "before 7"


def test_a_failure_part_way_leaves_nothing_that_looks_like_a_backup(
    db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with engram.open(db_path, embedder=None) as memory:
        memory.working.set(REF, "k", 1)
    dest = tmp_path / "backups"

    def broken(copy: Path, counts: dict[str, int]) -> dict[str, object]:
        raise StorageFailure("the copy is broken")

    monkeypatch.setattr(backups, "_verify", broken)
    with pytest.raises(StorageFailure, match="broken"):
        backups.backup(db_path, dest)
    assert list(dest.iterdir()) == []


def test_keep_rotates_the_oldest_away(db_path: Path, tmp_path: Path) -> None:
    engram.open(db_path, embedder=None).close()
    dest = tmp_path / "backups"
    made = [backups.backup(db_path, dest, keep=2) for _ in range(4)]
    assert staging.complete_backups(dest) == made[-2:]


def test_restore_keeps_the_store_it_replaces(db_path: Path, tmp_path: Path) -> None:
    with engram.open(db_path, embedder=None) as memory:
        memory.working.set(REF, "k", "old")
    made = backups.backup(db_path, tmp_path / "b")
    with engram.open(db_path, embedder=None) as memory:
        memory.working.set(REF, "k", "new")
    kept = backups.restore(made, db_path)
    assert kept is not None and kept.exists()
    with engram.open(db_path, embedder=None) as memory:
        assert memory.working.get(REF, "k") == "old"
    with engram.open(kept, embedder=None) as memory:
        assert memory.working.get(REF, "k") == "new"


EMBEDDER = engram.HashingEmbedder(64)
TEXTS = [f"note {i} about topic {i % 37} and word {i * 7 % 101}" for i in range(400)]


def _indexed(db_path: Path) -> engram.Memory:
    """A store whose scope of 400 facts searches a graph (from 200 facts here)."""
    return engram.open(db_path, embedder=EMBEDDER, vector_index_above=200)


def _with_graph(db_path: Path) -> tuple[list[engram.Fact], Path]:
    """The 400 facts remembered and their scope's graph built: the facts, and its file."""
    with _indexed(db_path) as memory:
        return memory.remember_many(REF, TEXTS), stores.graph_file(memory, REF, TEXTS[0])


def _in_backup(made: Path, file: Path) -> Path:
    return made / snapshots.FOLDER / file.name


def _searched(memory: engram.Memory, text: str) -> tuple[str, list[str]]:
    """The best fact by meaning, and the index files the search opened."""
    found = memory.recall(REF, text, top_k=1, mode="vector")[0].fact.id
    return found, list(memory._store.index.approximate._opened)  # type: ignore[attr-defined]


def test_a_restored_store_searches_the_graph_its_backup_holds_and_not_the_replaced_one_s(
    db_path: Path, tmp_path: Path
) -> None:
    """A backup holds the index files its snapshot names: restored, the scope searches
    that graph at once (a million facts' took 17 minutes to build again). They take new
    names, so the store it replaced, where a fact erased since the backup had its vector
    overwritten, is never searched; its files go with the copy kept of it."""
    facts, file = _with_graph(db_path)
    made = backups.backup(db_path, tmp_path / "b")
    manifest = json.loads((made / "manifest.json").read_text())
    assert manifest["vector_files"] == {file.name: staging.sha256(_in_backup(made, file))}
    assert _in_backup(made, file).read_bytes() == file.read_bytes()
    with _indexed(db_path) as memory:
        memory.forget(REF, facts[7].id, hard=True)  # its vector overwritten in the file
    replaced = file.read_bytes()
    kept = backups.restore(made, db_path)
    ((restored,),) = stores.rows(db_path, "SELECT file FROM vector_indexes")
    assert restored != file.name
    copy = Path(f"{db_path}-vectors", restored)
    assert copy.read_bytes() == _in_backup(made, file).read_bytes()
    assert sorted(p.name for p in copy.parent.glob("*.usearch")) == [restored]
    with _indexed(db_path) as memory:
        assert _searched(memory, TEXTS[7]) == (facts[7].id, [restored])  # not exact search
        assert memory._store.index.approximate.settle(timeout=120)  # type: ignore[attr-defined]
    assert stores.rows(db_path, "SELECT file FROM vector_indexes") == [(restored,)]  # not rebuilt
    # The copy kept of the replaced store searches its own graph, as it was.
    assert kept is not None
    assert Path(f"{kept}-vectors", file.name).read_bytes() == replaced
    with _indexed(kept) as memory:
        assert memory.count(REF) == 399
        assert _searched(memory, TEXTS[8]) == (facts[8].id, [file.name])


def test_a_restore_that_fails_at_the_last_step_leaves_the_store_and_its_files_as_they_were(
    db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    facts, file = _with_graph(db_path)
    made = backups.backup(db_path, tmp_path / "b")
    held = file.read_bytes()

    def fails(staged: Path) -> list[Path]:
        assert len(list(staged.glob("*.usearch"))) == 1
        with vectorfiles.held(vectorfiles.lock_of(staged)) as idle:
            assert not idle, "a restore's files are staged without their folder's lock"
        raise StorageFailure("the disk went away")

    monkeypatch.setattr(snapshots, "install", fails)
    with pytest.raises(StorageFailure, match="the disk went away"):
        backups.restore(made, db_path)
    assert file.read_bytes() == held
    assert not any("before-restore" in p.name for p in db_path.parent.iterdir())
    assert sorted(p.name for p in file.parent.iterdir() if not p.name.endswith(".lock")) == [
        file.name
    ]
    assert _leftovers(db_path) == []
    with _indexed(db_path) as memory:
        assert _searched(memory, TEXTS[7]) == (facts[7].id, [file.name])


def test_a_forget_during_the_backup_waits_to_overwrite_until_the_files_are_copied(
    db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The files are copied under the folder's lock, taken before the snapshot begins: a
    forget that commits meanwhile is not in the snapshot, and overwrites its vector once
    the copy is made, so the backup holds the vector of every fact its rows hold."""
    facts, file = _with_graph(db_path)
    vector = stores.held_vector(file, db_path, facts[7].id)
    forgetting = _indexed(db_path)  # opened first: a store that opens sweeps, under the lock
    named = snapshots._named
    forgot: list[BaseException | None] = []

    def forget() -> None:
        try:
            forgetting.forget(REF, facts[7].id, hard=True)
            forgot.append(None)
        except BaseException as exc:  # reported by the test's thread
            forgot.append(exc)

    def in_the_snapshot(conn: Any) -> list[tuple[str, int]]:
        found = named(conn)  # the snapshot's first read
        with vectorfiles.held(file.parent / ".lock") as idle:
            assert not idle, "the index files are copied without the folder's lock"
        threading.Thread(target=forget).start()
        deadline = time.monotonic() + 120
        while stores.rows(db_path, "SELECT 1 FROM facts WHERE id = ?", (facts[7].id,)):
            assert time.monotonic() < deadline and not forgot, forgot
            time.sleep(0.01)
        return found

    monkeypatch.setattr(snapshots, "_named", in_the_snapshot)
    made = backups.backup(db_path, tmp_path / "b")
    deadline = time.monotonic() + 120
    while not forgot:  # its overwrite waited for the copy
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert forgot == [None]
    forgetting.close()
    assert vector not in file.read_bytes()  # overwritten in the store's file, after
    assert vector in _in_backup(made, file).read_bytes()  # as the snapshot has it
    restored = tmp_path / "restored.db"
    backups.restore(made, restored)
    with _indexed(restored) as memory:
        assert memory.recall(REF, TEXTS[7], top_k=1, mode="vector")[0].fact.id == facts[7].id


def test_a_backup_overwrites_in_its_copy_what_the_store_had_still_to_overwrite(
    db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A forget commits, then its process stops before overwriting the vector in the
    file (a store that opens does it): the backup's copy holds no byte of it."""
    facts, file = _with_graph(db_path)
    vector = stores.held_vector(file, db_path, facts[7].id)
    with monkeypatch.context() as undone, _indexed(db_path) as memory:
        undone.setattr(approximate, "scrub", lambda *args, **kwargs: None)
        memory.forget(REF, facts[7].id, hard=True)
    assert stores.rows(db_path, "SELECT count(*) FROM vector_scrubs") == [(1,)]
    assert vector in file.read_bytes()  # what is being tested
    made = backups.backup(db_path, tmp_path / "b")
    assert vector not in _in_backup(made, file).read_bytes()
    assert vector in file.read_bytes()  # the store is only read
    backups.restore(made, tmp_path / "restored.db")
    with _indexed(tmp_path / "restored.db") as memory:
        assert memory.count(REF) == 399
        assert memory.recall(REF, TEXTS[8], top_k=1, mode="vector")[0].fact.id == facts[8].id


@pytest.mark.parametrize("damage", ["changed", "missing"])
def test_restore_refuses_a_backup_whose_index_file_was_changed_or_lost(
    db_path: Path, tmp_path: Path, damage: str
) -> None:
    _, file = _with_graph(db_path)
    made = backups.backup(db_path, tmp_path / "b")
    copy = _in_backup(made, file)
    if damage == "missing":
        copy.unlink()
    else:
        data = bytearray(copy.read_bytes())
        data[-1] ^= 1
        copy.write_bytes(bytes(data))
    problem = (
        f"does not match its manifest: vectors/{file.name} was changed after"
        if damage == "changed"
        else f"is not a complete engram backup: it holds no vectors/{file.name}"
    )
    with pytest.raises(engram.InvalidInput, match=re.escape(problem)):
        backups.restore(made, db_path)
    elsewhere = tmp_path / "elsewhere.db"
    with pytest.raises(engram.InvalidInput, match=re.escape(problem)):
        backups.restore(made, elsewhere)
    assert not elsewhere.exists() and not Path(f"{elsewhere}-vectors").exists()
    assert stores.rows(db_path, "SELECT file FROM vector_indexes") == [(file.name,)]
    assert sorted(p.name for p in file.parent.iterdir() if not p.name.endswith(".lock")) == [
        file.name
    ]
    assert _leftovers(db_path) == []


def test_what_a_restore_cut_short_left_in_the_index_folder_goes_at_the_next_sweep(
    db_path: Path, tmp_path: Path
) -> None:
    """A restore copies the backup's files into a hidden folder of the store's index
    folder, holding its lock; killed, it leaves them. A store that opens deletes such a
    folder, unless a restore still holds it."""
    _, file = _with_graph(db_path)
    left = [file.parent / f"{vectorfiles.RESTORING}{name}" for name in ("dead", "alive")]
    for folder in left:
        folder.mkdir()
        (folder / file.name).write_bytes(file.read_bytes())
        vectorfiles.lock_of(folder).touch()
    with vectorfiles.held(vectorfiles.lock_of(left[1])) as taken:
        assert taken
        _indexed(db_path).close()
        assert not left[0].exists() and not vectorfiles.lock_of(left[0]).exists()
        assert (left[1] / file.name).exists()
    _indexed(db_path).close()
    assert sorted(p.name for p in file.parent.iterdir() if not p.name.endswith(".lock")) == [
        file.name
    ]


def test_a_backup_from_before_index_files_were_kept_restores_with_none(
    db_path: Path, tmp_path: Path
) -> None:
    """Its rows name the files of the store it was taken from: they are dropped, and the
    restored store builds its own."""
    facts, file = _with_graph(db_path)
    made = backups.backup(db_path, tmp_path / "b")
    manifest = json.loads((made / "manifest.json").read_text())
    del manifest["vector_files"]
    (made / "manifest.json").write_text(json.dumps(manifest))
    shutil.rmtree(made / snapshots.FOLDER)
    backups.restore(made, db_path)
    assert stores.rows(db_path, "SELECT file FROM vector_indexes") == []
    with _indexed(db_path) as memory:
        assert memory.recall(REF, TEXTS[7], top_k=1, mode="vector")[0].fact.id == facts[7].id
        assert not file.exists()


def test_restore_refuses_what_is_not_a_backup(db_path: Path, tmp_path: Path) -> None:
    with pytest.raises(engram.InvalidInput, match="not a complete engram backup"):
        backups.restore(tmp_path, db_path)


def test_the_cli_backs_up_and_restores(
    db_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with engram.open(db_path, embedder=None) as memory:
        memory.working.set(REF, "k", "v")
    assert main(["--json", "backup", str(tmp_path / "b"), "--db", str(db_path), "--keep", "1"]) == 0
    made = json.loads(capsys.readouterr().out)["backup"]
    target = tmp_path / "copy.db"
    assert main(["restore", made, "--db", str(target)]) == 0
    with engram.open(target, embedder=None) as memory:
        assert memory.working.get(REF, "k") == "v"
    assert main(["backup", str(tmp_path / "b"), "--db", str(tmp_path / "none.db")]) == 3
    assert "error[not_found]: no store at" in capsys.readouterr().err


KILLED_WRITER = """
import os, signal, sys
import engram
with engram.open(sys.argv[1], embedder=None) as memory:
    for i in range(21):
        memory.working.set(engram.ResourceRef("backed-up"), f"k{i}", i)
    os.kill(os.getpid(), signal.SIGKILL)  # an unclean stop: nothing checkpointed, nothing closed
"""

HOLDER = """
import sys
import engram
with engram.open(sys.argv[1], embedder=None) as memory:
    memory.working.set(engram.ResourceRef("backed-up"), "live", "yes")
    print("ready", flush=True)
    sys.stdin.read()  # holds the store open, as a running service does, until stdin closes
"""


def _made(db_path: Path, tmp_path: Path) -> Path:
    with engram.open(db_path, embedder=None) as memory:
        memory.working.set(REF, "k", "in the backup")
    return backups.backup(db_path, tmp_path / "b")


def _leftovers(db_path: Path) -> list[str]:
    return sorted(p.name for p in db_path.parent.iterdir() if p.name.startswith(".engram.db"))


def test_restore_keeps_what_the_log_held_after_an_unclean_stop(
    db_path: Path, tmp_path: Path
) -> None:
    made = _made(db_path, tmp_path)
    died = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(db_path)], timeout=120)
    assert died.returncode == -signal.SIGKILL
    wal = Path(f"{db_path}-wal")
    assert wal.stat().st_size > 0  # the 21 keys are in the log only: what is being tested
    kept = backups.restore(made, db_path)
    assert kept is not None
    with engram.open(kept, embedder=None) as memory:
        assert {f"k{i}": i for i in range(21)}.items() <= memory.working.list(REF).as_dict().items()
    with engram.open(db_path, embedder=None) as memory:  # no old log replayed into the new
        assert memory.working.list(REF).as_dict() == {"k": "in the backup"}
    assert stores.rows(db_path, "PRAGMA integrity_check") == [("ok",)]
    assert _leftovers(db_path) == []


def test_restore_refuses_while_another_process_has_the_store_open(
    db_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    made = _made(db_path, tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "ready\n"
        with pytest.raises(engram.Conflict, match=f"in use by pid {holder.pid}"):
            backups.restore(made, db_path)
        assert main(["restore", str(made), "--db", str(db_path)]) == 4
        assert "error[conflict]" in capsys.readouterr().err
        files = sorted(p.name for p in db_path.parent.iterdir())
        assert not any("before-restore" in name for name in files)
        assert _leftovers(db_path) == []
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=120)
    with engram.open(db_path, embedder=None) as memory:  # untouched, the holder's write too
        assert memory.working.get(REF, "live") == "yes"
    assert backups.restore(made, db_path) is not None  # once it is closed, restore goes on


def test_restore_refuses_a_backup_edited_with_its_counts_unchanged(
    db_path: Path, tmp_path: Path
) -> None:
    made = _made(db_path, tmp_path)
    with engram.open(db_path, embedder=None) as memory:
        memory.working.set(REF, "k", "current")
    edited = sqlite3.connect(made / "engram.db")
    edited.execute("UPDATE working SET value = '\"forged\"'")
    edited.commit()
    edited.close()
    assert _counts(made / "engram.db") == json.loads((made / "manifest.json").read_text())["counts"]
    with pytest.raises(engram.InvalidInput, match="changed after the backup was made"):
        backups.restore(made, db_path)
    with engram.open(db_path, embedder=None) as memory:
        assert memory.working.get(REF, "k") == "current"
    assert _leftovers(db_path) == []


@pytest.mark.parametrize(
    ("manifest", "problem"),
    [
        ("not json", "cannot be read"),
        ("[]", "no row count"),
        ('{"counts": "many", "sha256": "00"}', "no row count"),
        ("COUNTS_WITH_A_STRING", "counts.facts in manifest.json is not a count"),
        ("COUNTS_ONLY", "no sha256"),
        ("FILES_OUTSIDE", "names '../x.usearch', which is not a file name with its sha256"),
        ("FILES_A_LIST", "vector_files in manifest.json is not an object"),
        (None, "cannot be read"),
    ],
)
def test_restore_names_what_is_wrong_with_a_manifest(
    db_path: Path, tmp_path: Path, manifest: str | None, problem: str
) -> None:
    made = _made(db_path, tmp_path)
    written = json.loads((made / "manifest.json").read_text())
    if manifest is None:
        (made / "manifest.json").unlink()
    else:
        manifest = manifest.replace(
            "COUNTS_WITH_A_STRING",
            json.dumps({**written, "counts": {**written["counts"], "facts": "0"}}),
        ).replace("COUNTS_ONLY", json.dumps({"counts": written["counts"]}))
        manifest = manifest.replace(
            "FILES_OUTSIDE", json.dumps({**written, "vector_files": {"../x.usearch": "0" * 64}})
        ).replace("FILES_A_LIST", json.dumps({**written, "vector_files": []}))
        (made / "manifest.json").write_text(manifest)
    with pytest.raises(engram.InvalidInput, match=problem):
        backups.restore(made, db_path)
    assert main(["restore", str(made), "--db", str(db_path)]) == 2


def test_backup_and_restore_paths_answer_their_own_codes(
    db_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    made = _made(db_path, tmp_path)
    a_file = tmp_path / "a-file"
    a_file.write_text("not a directory")
    cases = [
        (["backup", str(a_file), "--db", str(db_path)], 2, "invalid_input"),
        (["backup", str(a_file / "below"), "--db", str(db_path)], 2, "invalid_input"),
        (["restore", str(tmp_path / "missing"), "--db", str(db_path)], 3, "not_found"),
        (["restore", str(made), "--db", str(tmp_path / "no-dir" / "x.db")], 3, "not_found"),
        (["restore", str(made), "--db", str(tmp_path)], 2, "invalid_input"),
        (["restore", str(tmp_path / "b"), "--db", str(db_path)], 2, "invalid_input"),
    ]
    for argv, code, name in cases:
        assert main(argv) == code, argv
        assert f"error[{name}]" in capsys.readouterr().err
    assert a_file.read_text() == "not a directory"


def test_an_unwritable_destination_is_a_storage_failure(
    db_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    made = _made(db_path, tmp_path)
    locked = tmp_path / "locked"
    with stores.unwritable(locked):
        assert main(["backup", str(locked), "--db", str(db_path)]) == 7
        assert "error[storage_failure]: cannot write a backup in" in capsys.readouterr().err
        assert main(["restore", str(made), "--db", str(locked / "x.db")]) == 7
        assert "error[storage_failure]: cannot copy" in capsys.readouterr().err
        assert list(locked.iterdir()) == []


def test_restore_refuses_to_put_a_store_beside_an_orphaned_log(
    db_path: Path, tmp_path: Path
) -> None:
    made = _made(db_path, tmp_path)
    target = tmp_path / "elsewhere.db"
    orphan = Path(f"{target}-wal")
    orphan.write_bytes(b"frames of a store that is gone")
    with pytest.raises(engram.Conflict, match="left beside a missing store"):
        backups.restore(made, target)
    assert not target.exists() and orphan.read_bytes() == b"frames of a store that is gone"
    orphan.unlink()
    assert backups.restore(made, target) is None
