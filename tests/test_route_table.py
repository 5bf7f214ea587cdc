"""docs/service.md lists every route the service publishes, as its schema describes it."""

from __future__ import annotations

from pathlib import Path

from engram.api.route_table import published, with_table

PAGE = Path(__file__).parent.parent / "docs" / "service.md"


def test_the_page_lists_every_route_as_the_schema_describes_it() -> None:
    schema = published()
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            assert operation.get("description"), f"{method.upper()} {path} says nothing of itself"
    text = PAGE.read_text()
    assert with_table(text, schema) == text, "run `make routes-table`"
