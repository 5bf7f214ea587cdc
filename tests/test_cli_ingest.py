"""``engram ingest PATH``: a directory's texts in, one line a file (or JSON), a progress
bar on a terminal's stderr and never with --json."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from engram.cli.main import main
from stores import Target


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text("# Alpha\n\nThe first file.\n")
    (root / "b.txt").write_text("The second file.\n")
    (root / "c.png").write_bytes(b"\x89PNG")
    return root


def test_ingest_reports_each_file_and_again_writes_nothing(
    capsys: pytest.CaptureFixture[str], target: Target, folder: Path
) -> None:
    user = ["--db", str(target), "--resource", "user-42"]
    assert main(["--json", "ingest", str(folder), *user]) == 0
    out, err = capsys.readouterr()
    reports = json.loads(out)["documents"]
    assert [(Path(r["source"]).name, r["status"]) for r in reports] == [
        ("a.md", "created"),
        ("b.txt", "created"),
    ]
    assert err == ""
    assert main(["ingest", str(folder), *user]) == 0
    out, _ = capsys.readouterr()
    assert out.splitlines()[-1] == "0 created, 0 replaced, 2 unchanged, 0 skipped"


def test_a_terminal_sees_a_bar_unless_json(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    target: Target,
    folder: Path,
) -> None:
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    user = ["--db", str(target), "--resource", "user-42"]
    assert main(["ingest", str(folder), *user]) == 0
    assert "file" in capsys.readouterr().err
    (folder / "d.md").write_text("# Delta\n")
    assert main(["--json", "ingest", str(folder), *user]) == 0
    assert capsys.readouterr().err == ""


def test_a_missing_path_is_an_error(capsys: pytest.CaptureFixture[str], target: Target) -> None:
    code = main(["ingest", "/no/such/place", "--db", str(target), "--resource", "user-42"])
    assert code == 3 and "not_found" in capsys.readouterr().err


def test_a_bad_path_is_named_before_a_missing_embedder(
    capsys: pytest.CaptureFixture[str], target: Target
) -> None:
    argv = ["--db", str(target), "--resource", "user-42", "--embedder", "none"]
    assert main(["ingest", "/no/such/place", *argv]) == 3
    assert "error[not_found]: no file or directory at '/no/such/place'" in capsys.readouterr().err
