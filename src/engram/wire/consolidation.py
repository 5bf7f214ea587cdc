"""Tidying on the wire (camelCase, as the agent routes speak): what each step of a
consolidation run changed (or, in a dry run, would change), and what a wiki compile
folded. The requests are the declared operations' (engram.core.ops)."""

from __future__ import annotations

from typing import Literal, Self

from engram.core.records import ConsolidationReport, StepReport, WikiReport
from engram.wire import Answer

StepName = Literal["reindex", "strengthen", "prune", "merge", "derive", "compact"]
MAX_IDS = 1000  # fact ids an answer lists per step; ``truncated`` says when more changed


class StepOut(Answer):
    """One step: how many things it changed, by kind; the facts it changed (the first
    1000); for merge, each fact kept with those folded into it; its ledger entry."""

    step: StepName
    changed: int
    counts: dict[str, int]
    fact_ids: list[str]
    truncated: bool
    merged: dict[str, list[str]]
    entry: int | None

    @classmethod
    def of(cls, report: StepReport) -> Self:
        return cls(
            step=report.step,  # type: ignore[arg-type]
            changed=report.changed,
            counts=report.counts,
            fact_ids=list(report.fact_ids[:MAX_IDS]),
            truncated=len(report.fact_ids) > MAX_IDS,
            merged={k: list(v) for k, v in list(report.merged.items())[:MAX_IDS]},
            entry=report.entry,
        )


class ConsolidationOut(Answer):
    dry_run: bool
    changed: int
    steps: list[StepOut]

    @classmethod
    def of(cls, report: ConsolidationReport) -> Self:
        return cls(
            dry_run=report.dry_run,
            changed=report.changed,
            steps=[StepOut.of(s) for s in report.steps],
        )


class WikiOut(Answer):
    """The facts folded, the pages written (unchanged pages are not listed) and the
    watermark after (``created_us.seq``, null before any fact was folded)."""

    facts: int
    pages: list[str]
    watermark: str | None

    @classmethod
    def of(cls, report: WikiReport) -> WikiOut:
        return cls(facts=report.facts, pages=list(report.pages), watermark=report.watermark)
