"""The documentation runs as written: README.md and every page of docs/, each block in
order, on a fresh store (the runner, and what it replaces, in ``docs_runner``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import postgres_server
from docs_runner import PAGES, ROOT, Failed, blocks, problems, run_page
from engram.settings import Settings


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_block_says_what_it_is(page: Path) -> None:
    assert problems(page) == []


# What a page's readers are promised to see, beside every block running.
PROMISED = {
    # The tour's fact recalled over HTTP and from Python, on the command line, the key.
    "README.md": ["the customer prefers email", "renewal is due in March", "{'ship': 'v2'}"],
}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_the_page_runs_as_written(
    page: Path, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    made: list[str] = []

    def database() -> str:
        admin = request.getfixturevalue("postgres_admin")
        made.append(postgres_server.create_database(admin))
        request.addfinalizer(lambda: postgres_server.drop_database(admin, made[0]))
        return made[0]

    printed = run_page(page, tmp_path, database)
    for promised in PROMISED.get(page.name, []):
        assert promised in printed, (page.name, promised)


def test_the_readme_links_every_page() -> None:
    readme = (ROOT / "README.md").read_text()
    linked = set(re.findall(r"\]\((docs/[^)#]+\.md)\)", readme))
    assert linked == {f"docs/{page.name}" for page in PAGES[1:]}
    for page in PAGES:  # and every link between the pages lands on a page
        for target in re.findall(r"\]\(([^):#]+\.md)(?:#[^)]*)?\)", page.read_text()):
            assert (page.parent / target).is_file(), (page.name, target)


def test_a_failing_block_fails_the_page_at_its_line(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# p\n\n```sh\ntrue\n```\n\n```python\nx = 1\nprint(y)\n```\n")
    (tmp_path / "run").mkdir()
    with pytest.raises(Failed, match=r"page\.md:8:[\s\S]*line 9[\s\S]*NameError: name 'y'"):
        run_page(page, tmp_path / "run")
    page.write_text("# p\n\n```sh\nfalse\n```\n")
    (tmp_path / "again").mkdir()
    with pytest.raises(Failed, match=r"page\.md:4: the shell stopped"):
        run_page(page, tmp_path / "again")


def test_names_and_files_last_from_block_to_block(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```text notes.txt\nhello\n```\n"
        "```sh\nexport WORD=$(cat notes.txt)\nlocal_only=1\n```\n"
        '```sh\necho "$WORD $local_only"\n```\n'
        "```python\nimport os\nword = os.environ['WORD']\n```\n"
        "```python\nprint(word * 2)\n```\n"
    )
    (tmp_path / "run").mkdir()
    assert run_page(page, tmp_path / "run") == "hello 1\nhellohello\n"


def test_a_block_without_a_language_is_refused(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("```\nengram facts\n```\n```sh install\nrm -rf /\n```\n```toml\nx=1\n```\n")
    assert problems(page) == [
        "page.md:1: a block without a language",
        "page.md:4: 'rm -rf /' is not a set-up command",
        "page.md:7: 'toml' is neither run nor shown",
    ]
    assert [b.language for b in blocks(page.read_text())] == ["", "sh", "toml"]


def _routes_named() -> Iterator[tuple[Path, str]]:
    for page in PAGES:
        for entry in re.findall(
            r"`((?:GET|POST|PUT|PATCH|DELETE)(?:\|[A-Z]+)* /[^`?]*)", page.read_text()
        ):
            yield page, entry


def test_every_route_the_pages_name_is_served(tmp_path: Path) -> None:
    from engram.api import create_app

    schema = create_app(Settings(db_path=str(tmp_path / "d.db"), embedder="none")).openapi()
    served = {
        (method.upper(), re.sub(r"\{[^}]+\}", "{}", path))
        for path, item in schema["paths"].items()
        for method in item
    }
    named = list(_routes_named())
    assert len(named) >= 15
    for page, entry in named:
        methods, _, path = entry.partition(" ")
        path = re.sub(r"\{[^}]+\}", "{}", path.rstrip("/").split(" ")[0])
        for method in methods.split("|"):
            assert (method, path) in served, (page.name, entry)


def test_the_readme_says_what_every_extra_adds() -> None:
    import tomllib

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = set(declared["optional-dependencies"])
    readme = (ROOT / "README.md").read_text()
    table = readme.split("| extra | adds | for |", 1)[1].split("\n\n", 1)[0]
    assert set(re.findall(r"^\| `([a-z0-9]+)` \|", table, re.M)) == extras
