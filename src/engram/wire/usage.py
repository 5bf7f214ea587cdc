"""Retrieval feedback's answers on the wire (camelCase, as the agent routes speak): what
a response used of the facts injected into its prompt, and the signals stored. The
requests are the declared operations' (engram.core.ops)."""

from __future__ import annotations

from datetime import datetime
from typing import Self

from engram.core.records import Feedback, Signal
from engram.wire import Answer


class SignalOut(Answer):
    """A detected signal: ``reason`` names the rule (cited, terms, sentence, none)."""

    fact_id: str
    signal: str
    reason: str
    score: float

    @classmethod
    def of(cls, signal: Signal) -> Self:
        return cls(
            fact_id=signal.fact_id, signal=signal.signal, reason=signal.reason, score=signal.score
        )


class SignalsOut(Answer):
    signals: list[SignalOut]


class FeedbackOut(Answer):
    """A stored signal."""

    id: str
    fact_id: str
    signal: str
    reason: str | None
    score: float | None
    query: str | None
    at: datetime

    @classmethod
    def of(cls, row: Feedback) -> Self:
        return cls(
            id=row.id,
            fact_id=row.fact_id,
            signal=row.signal,
            reason=row.reason,
            score=row.score,
            query=row.query,
            at=row.at,
        )


class FeedbackListOut(Answer):
    feedback: list[FeedbackOut]
