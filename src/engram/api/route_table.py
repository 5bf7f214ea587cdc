"""docs/service.md's index of every route, written from the service's own OpenAPI schema
(``make routes-table``): a route added anywhere is listed, with the first sentence of
its help, and a test fails until that page says so.

    python -m engram.api.route_table --write docs/service.md
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import engram
from engram import generated
from engram.api.app import create_app

BEGIN, END = "<!-- routes:begin -->", "<!-- routes:end -->"
ORDER = ("get", "post", "put", "patch", "delete")


def published() -> dict[str, Any]:
    """The service's OpenAPI schema, from an app over a scratch store."""
    with (
        tempfile.TemporaryDirectory() as folder,
        engram.open(Path(folder) / "schema.db", embedder=None) as memory,
    ):
        schema: dict[str, Any] = create_app(memory_store=memory).openapi()
    return schema


def markdown_table(schema: dict[str, Any]) -> str:
    """One row per route, in the schema's order: method and path, and what it does."""
    lines = ["| route | what it does |", "| --- | --- |"]
    for path, item in schema["paths"].items():
        for method in sorted(item, key=ORDER.index):
            operation = item[method]
            text = (operation.get("description") or operation.get("summary") or "").strip()
            first = " ".join(text.split("\n\n")[0].split()).split(". ")[0].rstrip(".")
            cell = first.replace("|", "\\|")
            lines.append(f"| `{method.upper()} {path}` | {cell} |")
    return "\n".join(lines) + "\n"


def with_table(document: str, schema: dict[str, Any]) -> str:
    return generated.between(document, BEGIN, END, markdown_table(schema))


def _main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m engram.api.route_table")
    parser.add_argument("--write", metavar="FILE", type=Path, required=True)
    args = parser.parse_args(argv)
    args.write.write_text(with_table(args.write.read_text(), published()))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
