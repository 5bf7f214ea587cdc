"""The README's examples run as written (against a temporary store)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from engram.cli.main import main
from engram.settings import Settings

README = Path(__file__).parent.parent / "README.md"


def _section(title: str) -> str:
    return README.read_text().split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def _blocks(text: str) -> list[tuple[str, str]]:
    """The fenced code blocks of ``text``, in order: (language, code)."""
    found, language, code = [], None, []
    for line in text.splitlines(keepends=True):
        if line.startswith("```"):
            if language is None:
                language, code = line[3:].strip(), []
            else:
                found.append((language, "".join(code)))
                language = None
        elif language is not None:
            code.append(line)
    return found


def _cli_examples() -> list[list[str]]:
    """The commands of the section's first two plain blocks: the examples, then
    maintenance."""
    plain = [code for language, code in _blocks(_section("The command line")) if not language]
    lines = [line for block in plain[:2] for line in block.splitlines()]
    return [shlex.split(line)[1:] for line in lines if line.startswith("engram ")]


def test_the_readme_cli_examples_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    examples = _cli_examples()
    assert len(examples) >= 4
    # The conversation an example reads, as the section shows its format.
    monkeypatch.chdir(tmp_path)
    turns = next(code for language, code in _blocks(_section("The command line")) if language)
    Path("turns.jsonl").write_text(turns)
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


def _tour() -> list[tuple[str, str]]:
    """The tour's code blocks, in order: (language, code)."""
    return _blocks(_section("A tour"))


def test_the_readme_tour_runs_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The tour, block by block, as a newcomer runs it: its shell against a running
    `engram serve` on a fresh `./engram.db` (the service's own port in place of 4600),
    with the installed `engram` on the PATH; its Python in the same folder."""
    import os
    import subprocess
    import sys

    from api.test_service_process import running

    blocks = _tour()
    assert [language for language, _ in blocks] == ["sh", "sh", "python"]
    monkeypatch.chdir(tmp_path)
    bin_dir = str(Path(sys.executable).parent)
    with running(tmp_path / "engram.db") as service:
        where = str(service.http.base_url).removeprefix("http://").rstrip("/")
        shell = "set -euo pipefail\n" + "".join(
            code.replace("localhost:4600", where) for language, code in blocks if language == "sh"
        )
        env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
        done = subprocess.run(
            ["bash", "-c", shell], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        assert "the customer prefers email" in done.stdout  # recalled over HTTP
        assert "renewal is due in March" in done.stdout  # recalled on the command line
        exec(compile(blocks[-1][1], "README.md (the tour)", "exec"), {})
    printed = capsys.readouterr().out
    assert "the customer prefers email" in printed and "{'ship': 'v2'}" in printed
