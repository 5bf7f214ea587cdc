"""``engram feedback``: retrieval feedback. Each command calls ``mem.usage`` once and
prints the answer: ``--json`` as the service answers it (by field name), else one line
per signal."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from engram.cli.render import Output
from engram.core.memory import Memory
from engram.core.scopes import ResourceRef
from engram.core.usage import Feedback, Signal
from engram.wire.usage import FeedbackOut, SignalOut


def _ref(args: argparse.Namespace) -> ResourceRef:
    return ResourceRef(args.resource, team_id=args.team)


def detect(mem: Memory, args: argparse.Namespace) -> Output:
    response = sys.stdin.read() if args.response == "-" else args.response
    signals = mem.usage.detect(
        _ref(args), args.fact_id, response, query=args.query, record=not args.dry_run
    )
    data = [SignalOut.of(s).model_dump(mode="json") for s in signals]
    return Output({"signals": data}, [_signal_line(s) for s in signals])


def record(mem: Memory, args: argparse.Namespace) -> Output:
    row = mem.usage.record(
        _ref(args), args.fact_id, args.signal, reason=args.reason, query=args.query
    )
    return Output(FeedbackOut.of(row).model_dump(mode="json"), [_row_line(row)])


def show(mem: Memory, args: argparse.Namespace) -> Output:
    rows = mem.usage.signals(_ref(args), args.fact_id)
    data = [FeedbackOut.of(r).model_dump(mode="json") for r in rows]
    return Output({"feedback": data}, [_row_line(r) for r in rows] or ["no signals"])


def _signal_line(signal: Signal) -> str:
    return f"{signal.fact_id}  {signal.signal}  {signal.reason}  {signal.score:.3f}"


def _row_line(row: Feedback) -> str:
    why = "" if row.reason is None else f"  {row.reason}"
    return f"{row.at.isoformat()}  {row.fact_id}  {row.signal}{why}"


HANDLERS: dict[str, Callable[[Memory, argparse.Namespace], Output]] = {
    "feedback detect": detect,
    "feedback record": record,
    "feedback show": show,
}
