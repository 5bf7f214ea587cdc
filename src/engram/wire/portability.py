"""An import's report on the wire (camelCase, as the agent routes speak)."""

from __future__ import annotations

from typing import Any, Self

from engram.core.portability.transfer import ImportReport
from engram.wire import Answer


class ExportDocument(Answer):
    """An export as one JSON document: the header (``format`` engram-export, ``version``,
    the ``model`` that made the vectors, the ``scope``), then the facts and working keys
    as the JSONL records carry them."""

    format: str
    version: int
    model: dict[str, Any] | None
    scope: str
    facts: list[dict[str, Any]]
    working: list[dict[str, Any]]


class Mem0Memories(Answer):
    """An export in mem0's shape (``format=mem0``): what its ``Memory.get_all()`` answers,
    one record a memory."""

    results: list[dict[str, Any]]


class SkippedOut(Answer):
    """A record left out: its line, the field at fault, why, and the record as sent."""

    line: int
    field: str
    message: str
    record: Any = None


class ChangedOut(Answer):
    """A record taken with a change: its line, the field, and what changed."""

    line: int
    field: str
    message: str


class ImportOut(Answer):
    """Facts written, facts whose words the agent already held (linked, not written),
    working keys set, vectors taken from the file and embedded, each fact id that was
    taken and so changed (old → new), the ledger entry (null for a dry run, or an
    import that changed nothing), the records left out (``skipped``: a blank one always,
    a bad one with ``onError=skip``) and those taken with a change (``changed``)."""

    facts_added: int
    facts_existing: int
    working_set: int
    vectors_reused: int
    vectors_embedded: int
    id_mappings: dict[str, str]
    dry_run: bool
    entry: int | None
    skipped: list[SkippedOut]
    changed: list[ChangedOut]

    @classmethod
    def of(cls, report: ImportReport) -> Self:
        return cls(
            facts_added=report.facts_added,
            facts_existing=report.facts_existing,
            working_set=report.working_set,
            vectors_reused=report.vectors_reused,
            vectors_embedded=report.vectors_embedded,
            id_mappings=report.id_mappings,
            dry_run=report.dry_run,
            entry=report.entry,
            skipped=[
                SkippedOut(line=s.line, field=s.field, message=s.message, record=s.record)
                for s in report.skipped
            ],
            changed=[ChangedOut(line=n, field=f, message=m) for n, f, m in report.changed],
        )
