"""The README's examples run as written (against a temporary store)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from engram.cli.main import main
from engram.settings import Settings

README = Path(__file__).parent.parent / "README.md"


def _cli_examples() -> list[list[str]]:
    """The commands of the section's first two blocks: the examples, then maintenance."""
    blocks = README.read_text().split("## The command line", 1)[1].split("```")[1:4:2]
    lines = [line for block in blocks for line in block.splitlines()]
    return [shlex.split(line)[1:] for line in lines if line.startswith("engram ")]


def test_the_readme_cli_examples_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    examples = _cli_examples()
    assert len(examples) >= 4
    # The input file an example names, in the working directory the test runs in.
    Path("turns.jsonl").write_text(
        '{"speaker": "Ana", "text": "been to Lisbon?", "at": "2024-05-01T10:00:00Z"}\n'
        '{"speaker": "Bo", "text": "Yes, twice!", "at": "2024-05-01T10:01:00Z"}\n'
    )
    for argv in examples:
        argv = [str(tmp_path / "e.db") if a == "./engram.db" else a for a in argv]
        assert main(argv) == 0, (argv, capsys.readouterr().err)


def test_every_route_the_readme_names_is_served(tmp_path: Path) -> None:
    from engram.api import create_app

    text = README.read_text()
    named = set(re.findall(r"`((?:GET|POST|PUT|PATCH|DELETE)(?:\|[A-Z]+)* /[^`?]*)", text))
    served = {
        (method.upper(), path)
        for path, item in create_app(Settings(db_path=str(tmp_path / "d.db"), embedder="none"))
        .openapi()["paths"]
        .items()
        for method in item
    }
    served_paths = {re.sub(r"\{[^}]+\}", "{}", path) for _, path in served}
    assert len(named) >= 15
    for entry in named:
        methods, _, path = entry.partition(" ")
        path = re.sub(r"\{[^}]+\}", "{}", path.rstrip("/").split(" ")[0])
        assert path in served_paths, entry
        for method in methods.split("|"):
            assert (method, path) in {(m, re.sub(r"\{[^}]+\}", "{}", p)) for m, p in served}, entry
