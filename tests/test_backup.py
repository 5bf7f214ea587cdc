"""Backups: consistent under concurrent writes, verified, all or nothing, rotated; restore."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

import engram
import stores
from engram import ResourceRef, StorageFailure
from engram.cli.main import main
from engram.storage import staging
from engram.storage.sqlite import backup as backups

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
    assert main(["backup", str(tmp_path / "b"), "--db", str(tmp_path / "none.db")]) == 7
    assert "error[storage_failure]" in capsys.readouterr().err
