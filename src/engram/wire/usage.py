"""Retrieval feedback on the wire (camelCase, as the agent routes speak): what a response
used of the facts injected into its prompt, and one signal recorded by hand."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal, Self

from pydantic import Field

from engram.core import limits
from engram.core.usage import MAX_INJECTED, MAX_RESPONSE_CHARS, Feedback, Signal
from engram.wire import Answer, Body, FactId

Query = Annotated[str, Field(min_length=1, max_length=limits.MAX_QUERY_CHARS)]


class DetectionSpec(Body):
    """``factIds``: the facts injected into the prompt, in the order shown (``[n]`` in
    the response cites the n-th); ``response``: the assistant's final response;
    ``query``: what the facts were recalled for (its words alone are no evidence)."""

    fact_ids: list[FactId] = Field(alias="factIds", min_length=1, max_length=MAX_INJECTED)
    response: str = Field(max_length=MAX_RESPONSE_CHARS)
    query: Query | None = None


class SignalSpec(Body):
    """A response ``used`` or ``ignored`` the fact; ``reason`` and ``query`` optional."""

    signal: Literal["used", "ignored"]
    reason: str | None = Field(default=None, min_length=1, max_length=limits.MAX_LABEL_CHARS)
    query: Query | None = None


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
