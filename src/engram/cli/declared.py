"""Commands built from the declared operations (:mod:`engram.core.ops`): each operation
with a command-line name becomes a subcommand whose arguments are its parameters (a
required text a positional argument, a flag ``--name``, a list ``--name`` repeated, a
bounded number checked as it is parsed), carried out by ``Memory.run``. What stays per
command is how its answer is printed.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, get_args, get_origin

from engram.cli import arguments
from engram.core import fields, ops
from engram.core.errors import InvalidInput, UpstreamFailure
from engram.core.fields import Field, Items, Json, Real, Value, Whole, fields_of
from engram.core.graph import ops as graph_ops
from engram.core.models import LedgerPage, SourceRef

if TYPE_CHECKING:
    from engram.cli.render import Output
    from engram.core.memory import Memory
    from engram.core.scopes import Scope

OpType = type[ops.Op[Any]]
COMMANDS: dict[str, OpType] = {
    op.surface.cli: op for op in (*ops.OPS, *graph_ops.OPS) if op.surface.cli
}
# Commands that only read: where there is no store, they refuse rather than make one.
READING = frozenset(name for name, op in COMMANDS.items() if not op.surface.writes)


def embeds(op: OpType) -> bool:
    """Whether carrying it out may ask the embedder (the store opens with it)."""
    return UpstreamFailure in op.surface.errors


def add(parser: argparse.ArgumentParser, op: OpType) -> None:
    """The operation's parameters as the command's arguments."""
    for f in fields_of(op):
        if _positional(f):
            many = "+" if _is_list(f) else None
            read = _reader(f)
            more: dict[str, Any] = {} if read is None else {"type": read}
            if get_origin(f.base) is Literal:
                more["choices"] = get_args(f.base)
            shown = "JSON_" + f.name.upper() if isinstance(f.marker, Value) else f.name.upper()
            parser.add_argument(f.name, metavar=shown, nargs=many, help=f.help or None, **more)
            continue
        if f.base is bool and f.required and f.cli_off:  # one of the two must be given
            pair = parser.add_mutually_exclusive_group(required=True)
            pair.add_argument(_option(f), dest=f.name, action="store_true", help=f.help or None)
            pair.add_argument(f.cli_off, dest=f.name, action="store_false", help="the opposite")
            continue
        if f.base is bool:
            parser.add_argument(_option(f), dest=f.name, action="store_true", help=f.help or None)
            continue
        extra: dict[str, Any] = {}
        reader = _reader(f)
        if reader is not None:
            extra["type"] = reader
        if _is_list(f):
            extra |= {"nargs": "+", "action": "extend", "default": []}
        elif get_origin(f.base) is Literal:
            extra |= {"choices": get_args(f.base), "default": f.default}
        parser.add_argument(
            _option(f),
            dest=f.name,
            metavar=_metavar(f),
            required=f.required,
            help=f.help or None,
            **extra,
        )


def run(op: OpType, mem: Memory, scope: Scope, args: argparse.Namespace) -> Output:
    """Carries the command out: the operation made from its arguments (messages name the
    options as typed), run, its answer printed."""
    values = {f.name: getattr(args, f.name) for f in fields_of(op)}
    values = {k: v for k, v in values.items() if v is not None and v != []}
    if op is ops.Remember and values.get("content") == "-":
        from engram.cli import render

        lines = _lines()
        notes = [fields.made(ops.Remember, {**values, "content": t}, _called) for t in lines]
        return render.facts(mem.remember_many(scope, notes))
    if op is ops.DetectFeedback and values.get("response") == "-":
        from engram.cli.commands import stdin_text

        values["response"] = stdin_text("the response")
    for f in fields_of(op):
        if isinstance(f.marker, Value) and f.name in values:  # read here: a refusal is
            values[f.name] = arguments.json_value(values[f.name])  # an engram error
    made: ops.Op[Any] = fields.made(op, values, _called)
    result = mem.run(scope, made)
    if op in graph_ops.OPS:
        from engram.cli import graph

        return graph.rendered(mem, scope, made, result)
    if op in (ops.DetectFeedback, ops.RecordFeedback, ops.FactFeedback):
        from engram.cli import feedback

        return feedback.rendered(made, result)
    return _render(op, made, result)


def _option(f: Field) -> str:
    return f.cli or "--" + f.name.replace("_", "-")


def _called(f: Field) -> str:
    return f.name.upper() if _positional(f) else _option(f)


def _positional(f: Field) -> bool:
    """A path's id, or a required text, list or choice without an option of its own."""
    if f.in_path:
        return True
    kind = f.base is str or _is_list(f) or get_origin(f.base) is Literal
    kind = kind or isinstance(f.marker, Value)
    return f.required and kind and not f.cli


def _is_list(f: Field) -> bool:
    return get_origin(f.base) in (Sequence, list, tuple)


def _metavar(f: Field) -> str | None:
    if get_origin(f.base) is Literal:
        return None  # its choices
    if f.base is SourceRef:
        return "SANDBOX_ID:ENTRY_INDEX"
    if f.base is datetime:
        return "TIME"
    if f.base in (int, float):
        return "N"
    if isinstance(f.marker, Items):
        return f.marker.item.split()[-1].upper()  # ID, TAG, TYPE
    if isinstance(f.marker, Json):
        return "JSON"
    return f.name.split("_")[-1].upper()


def _reader(f: Field) -> Callable[[str], Any] | None:
    """How the option's text is read; a bound the declaration gives is checked here."""
    marker = f.marker
    if f.base is SourceRef:
        return arguments.source
    if f.base is datetime:
        return arguments.time
    if isinstance(marker, Json):
        return arguments.json_object
    if isinstance(marker, Whole):
        return arguments.integer_in(marker.low, marker.high)
    if isinstance(marker, Real):
        return arguments.decimal_in(marker.high)
    return None


def handler(op: OpType) -> Callable[[Memory, argparse.Namespace], Output]:
    """The command's handler: ``run`` over the scope its options name."""

    def handle(mem: Memory, args: argparse.Namespace) -> Output:
        from engram.core.scopes import ResourceRef

        return run(op, mem, ResourceRef(args.resource, args.team), args)

    return handle


def _lines() -> list[str]:
    """The facts to remember, one a line of standard input."""
    from engram.cli.commands import stdin_text

    lines = [line.strip() for line in stdin_text("the facts").splitlines()]
    found = [line for line in lines if line]
    if not found:
        raise InvalidInput("no facts on stdin", hint="give one fact per non-empty line")
    return found


def _render(op: OpType, made: Any, result: Any) -> Output:
    from engram.cli import render

    by_op: dict[OpType, Callable[[], Output]] = {
        ops.Recall: lambda: render.recall_hits(result),
        ops.Facts: lambda: render.facts_page(result),
        ops.FactProvenance: lambda: render.provenance(made.fact_id, result),
        ops.Trash: lambda: render.trash(result),
        ops.Ledger: lambda: render.ledger(result),
        ops.History: lambda: render.ledger(LedgerPage(result, None)),
        ops.LedgerChanges: lambda: render.changes(result),
        ops.Revert: lambda: render.ledger_entry(result),
        ops.Documents: lambda: render.documents(result),
        ops.GetDocument: lambda: render.document(result),
        ops.ForgetDocument: lambda: render.forgot_document(
            made.document_id, result, hard=made.hard
        ),
        ops.Forget: lambda: render.forgotten(made.fact_id, result, hard=made.hard),
        ops.Consolidate: lambda: render.consolidated(result),
        ops.ForgetAll: lambda: render.forgotten_all(result, hard=made.hard),
        ops.WorkingList: lambda: render.working_page(result),
        ops.WorkingGet: lambda: render.entry_value(result),
        ops.WorkingSet: lambda: render.entry_set(result),
        ops.WorkingDelete: lambda: render.entry_deleted(made.key, result),
    }
    printed = by_op.get(op)
    return render.fact(result) if printed is None else printed()  # a fact: remember, correct…
