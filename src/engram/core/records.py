"""What the core's services keep and answer: agents, sessions and their entries, a
person's allowances, retrieval feedback, a scope's episodes, and the reports of a
consolidation and of a wiki compile.

They sit below the ports that store them (:mod:`engram.core.ports`) and the operations
that answer them (:mod:`engram.core.ops`); each service's module names its own records
too (``engram.core.agents.Agent``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from engram.core.models import JSONValue, SourceRef
from engram.core.scopes import ResourceRef, Scope

SignalKind = Literal["used", "ignored"]
Reason = Literal["cited", "terms", "sentence", "none"]


@dataclass(frozen=True, slots=True)
class Agent:
    """A registered agent; ``ref`` is where its memory lives."""

    id: str
    name: str
    ref: ResourceRef
    parent_id: str | None
    created_at: datetime
    ended_at: datetime | None = None

    @property
    def status(self) -> Literal["running", "ended"]:
        return "running" if self.ended_at is None else "ended"


@dataclass(frozen=True, slots=True)
class AgentPage:
    """One page of agents in ascending id order; ``next_after`` is set when more follow."""

    agents: list[Agent]
    next_after: str | None


@dataclass(frozen=True, slots=True)
class Entry:
    """One entry of a session. Given to :meth:`Sessions.append` as (kind, content,
    role, at, data); ``at`` defaults to the time of the append. Read back, it also
    carries its ``session_id`` and ``index``."""

    kind: str
    content: str
    role: str | None = None
    at: datetime | None = None
    data: JSONValue = None
    session_id: str | None = None
    index: int | None = None

    @property
    def source_ref(self) -> SourceRef | None:
        """Where a fact learned from this entry points (None before it is stored)."""
        if self.session_id is None or self.index is None:
            return None
        return SourceRef(self.session_id, self.index)


@dataclass(frozen=True, slots=True)
class Session:
    """A session: ``fork_of`` is the entry it started from (None for a root), ``depth``
    its number of forks from its root, ``next_index`` the index its next entry takes."""

    id: str
    scope: Scope
    name: str | None
    fork_of: SourceRef | None
    depth: int
    created_at: datetime
    next_index: int


@dataclass(frozen=True, slots=True)
class Share:
    person: str
    source: str
    reader: str
    allowed_at: datetime


@dataclass(frozen=True)
class Injected:
    """A fact as it was injected: its id and its words."""

    id: str
    text: str


@dataclass(frozen=True)
class Signal:
    """Whether a response used an injected fact, why, and how strongly."""

    fact_id: str
    signal: SignalKind
    reason: Reason
    score: float


@dataclass(frozen=True)
class Feedback:
    """A stored signal: a response used or ignored fact ``fact_id`` at ``at``, the rule
    that said so (``reason``; None when a caller recorded it without one), the score, and
    the query the fact was recalled for."""

    id: str
    fact_id: str
    signal: SignalKind
    reason: str | None
    score: float | None
    query: str | None
    at: datetime


@dataclass(frozen=True, slots=True)
class EntryPage:
    """Entries in time order. ``next_after`` is set when more follow: pass it back as
    ``after``. A page never ends inside a run of entries of one microsecond (unless the
    whole page is one, which is then cut at ``limit``)."""

    entries: list[Entry]
    next_after: datetime | None


@dataclass(frozen=True, slots=True)
class SessionNode:
    """A session of the fork tree: its own entries, and the sessions forked from it
    (in order of start)."""

    session: Session
    entries: list[Entry]
    children: list[SessionNode] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class StepReport:
    """What one step did (or, in a dry run, would do): how many things it ``changed``
    (none: the step found nothing to do), ``counts`` by kind, the facts it changed (for
    merge, ``merged``: each fact kept with those folded into it), and its ledger entry
    (None: nothing changed, a dry run, or a step whose work wrote entries of its own,
    as derive does)."""

    step: str
    changed: int
    counts: dict[str, int]
    fact_ids: tuple[str, ...] = ()
    entry: int | None = None
    merged: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ConsolidationReport:
    dry_run: bool
    steps: tuple[StepReport, ...]

    @property
    def changed(self) -> int:
        return sum(s.changed for s in self.steps)

    def step(self, name: str) -> StepReport | None:
        return next((s for s in self.steps if s.step == name), None)


@dataclass(frozen=True, slots=True)
class WikiReport:
    """What a compile did: the facts folded, the pages written (paths; a page whose bytes
    were unchanged is not among them), and the watermark after (``created_us.seq``;
    None before any fact was folded)."""

    facts: int
    pages: tuple[str, ...]
    watermark: str | None
    left_out: tuple[tuple[str, str], ...] = ()  # pages not mirrored to the folder, and why
