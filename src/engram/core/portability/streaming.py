"""A JSONL export read in batches while the import writes them, so an import holds a
batch, not the file.

:class:`Reader` parses and checks the file a line at a time (:mod:`records`) and hands
over each ``batch`` of facts. Once a record is bad (a vector of another width than the
model's is one) it hands over nothing more and reads on, to list every bad record; a
fact with no vector stops it (``unembedded``): such a file is imported in phases
instead, its vectors embedded before the write.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from engram.core.errors import InvalidInput
from engram.core.portability import records
from engram.core.portability.records import FactRecord, Parsed
from engram.core.ports import ModelRecord


def header(path: Path) -> ModelRecord | None:
    """The model of the export at ``path``: its first line, when that is an engram
    export header of this version naming one; else None."""
    try:
        with open(path, encoding="utf-8") as lines:
            head = json.loads(lines.readline())
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(head, dict) or head.get("format") != records.FORMAT:
        return None
    parsed = Parsed()
    model = records.header_model(head, 1, parsed)
    return None if parsed.errors else model


def count_lines(path: Path) -> int:
    """The lines of the file (a last one without a newline counts)."""
    count, last = 0, b"\n"
    with open(path, "rb") as raw:
        while chunk := raw.read(1 << 20):
            count += chunk.count(b"\n")
            last = chunk[-1:]
    return count + (last != b"\n")


class Reader:
    def __init__(self, path: Path, model: ModelRecord, batch: int, *, skip: bool = False) -> None:
        # Its facts go out in batches; errors and working stay. A vector of another width
        # than the model's is a bad record; ``skip``: the good ones go on out.
        self.parsed = Parsed(model=model)
        self.unembedded = False
        self._path, self._batch, self._skip = path, batch, skip

    def batches(self) -> Iterator[list[FactRecord]]:
        """Each batch of good facts, in the file's order, until the file ends, a record
        is bad or a fact has no vector. Raises InvalidInput (not UTF-8)."""
        parsed = self.parsed
        try:
            with open(self._path, encoding="utf-8") as lines:
                for number, obj in records.objects(lines, parsed.errors):
                    if number > 1 or obj.get("format") != records.FORMAT:
                        records.record(obj, number, parsed)
                    if parsed.facts and parsed.facts[-1].vector is None:
                        self.unembedded = True
                        return
                    if len(parsed.facts) >= self._batch and (part := self._part()):
                        yield part
        except UnicodeDecodeError as exc:
            raise InvalidInput(f"{self._path} is not UTF-8 text") from exc
        if part := self._part():
            yield part

    def _part(self) -> list[FactRecord]:
        """The facts read since the last batch, or none once a record was bad (unless
        bad records are skipped)."""
        part, self.parsed.facts = self.parsed.facts, []
        return [] if self.parsed.errors and not self._skip else part
