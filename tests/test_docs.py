"""The README's examples run as written (against a temporary store)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from engram import settings as settings_module
from engram.cli.main import main
from engram.settings import Settings

README = Path(__file__).parent.parent / "README.md"


def _cli_examples() -> list[list[str]]:
    block = README.read_text().split("## The command line", 1)[1].split("```")[1]
    return [shlex.split(line)[1:] for line in block.splitlines() if line.startswith("engram ")]


def test_the_readme_cli_examples_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    examples = _cli_examples()
    assert len(examples) >= 4
    for argv in examples:
        argv = [str(tmp_path / "e.db") if a == "./engram.db" else a for a in argv]
        assert main(argv) == 0, (argv, capsys.readouterr().err)


def test_the_readme_lists_every_setting() -> None:
    documented = set(re.findall(r"`(ENGRAM_[A-Z_]+)`", README.read_text()))
    source = Path(settings_module.__file__).read_text()
    read = set(re.findall(r'"(ENGRAM_[A-Z_]+)"', source))
    assert read and read <= documented
    assert Settings.from_env({}) == Settings()
