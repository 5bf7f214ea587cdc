"""A consolidation run on the wire (camelCase, as the agent routes speak): the steps asked
for, and what each step changed (or, in a dry run, would change)."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field

from engram.core.consolidation import STEPS, ConsolidationReport, StepReport
from engram.wire import Answer, Body

StepName = Literal["reindex", "strengthen", "prune", "merge", "derive", "compact"]
MAX_IDS = 1000  # fact ids an answer lists per step; ``truncated`` says when more changed


class ConsolidationSpec(Body):
    """``steps``: which to run (all when absent), always in the cycle's order;
    ``dryRun``: say what each would change and write nothing."""

    steps: list[StepName] | None = Field(default=None, min_length=1, max_length=len(STEPS))
    dry_run: bool = Field(default=False, alias="dryRun")


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
