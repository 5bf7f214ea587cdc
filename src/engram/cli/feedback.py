"""``engram feedback``: how retrieval feedback's commands print. The commands are built
from the declared operations (cli/declared.py); each prints its answer: ``--json`` as
the service answers it (by field name), else one line per signal."""

from __future__ import annotations

from typing import Any

from engram.cli.render import JSONData, Output
from engram.core import ops
from engram.core.records import Feedback, Signal


def rendered(op: ops.Op[Any], result: Any) -> Output:
    """What a feedback command prints of its operation's result (its data made of the
    wire shapes only when asked for: ``--json``)."""

    def data() -> JSONData:
        from engram.wire.usage import FeedbackOut, SignalOut

        if isinstance(op, ops.DetectFeedback):
            return {"signals": [SignalOut.of(s).model_dump(mode="json") for s in result]}
        if isinstance(op, ops.RecordFeedback):
            return FeedbackOut.of(result).model_dump(mode="json")
        return {"feedback": [FeedbackOut.of(r).model_dump(mode="json") for r in result]}

    if isinstance(op, ops.DetectFeedback):
        return Output(data, [_signal_line(s) for s in result])
    if isinstance(op, ops.RecordFeedback):
        return Output(data, [_row_line(result)])
    return Output(data, [_row_line(r) for r in result] or ["no signals"])


def _signal_line(signal: Signal) -> str:
    return f"{signal.fact_id}  {signal.signal}  {signal.reason}  {signal.score:.3f}"


def _row_line(row: Feedback) -> str:
    why = "" if row.reason is None else f"  {row.reason}"
    return f"{row.at.isoformat()}  {row.fact_id}  {row.signal}{why}"
