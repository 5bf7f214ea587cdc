"""``engram``: the command line over :func:`engram.open`. Parse, call the library, render."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import traceback
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import engram
from engram.cli import render
from engram.cli.render import Output
from engram.cli.serve import serve
from engram.core.errors import EngramError, InvalidInput
from engram.core.memory import Memory, Note
from engram.core.models import JSONValue, SourceRef
from engram.core.scopes import ResourceRef
from engram.opening import describe, is_url, open_store
from engram.settings import DEFAULT_DB_PATH, Settings
from engram.storage.sqlite import backup as backups

Handler = Callable[[Memory, argparse.Namespace], Output]


EMBEDDERS = ("local", "remote", "none")
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130


class _Parser(argparse.ArgumentParser):
    """Reports argument errors as InvalidInput (exit 2), like every other error."""

    def error(self, message: str) -> NoReturn:
        raise InvalidInput(message, hint=f"see '{self.prog} --help'")


if TYPE_CHECKING:
    Subparsers = argparse._SubParsersAction[_Parser]


# -- argument types -------------------------------------------------------------------
def _source(text: str) -> SourceRef:
    sandbox, sep, index = text.rpartition(":")
    if not sep or not sandbox or not (index.isascii() and index.isdigit()):
        raise argparse.ArgumentTypeError(f"expected SANDBOX_ID:ENTRY_INDEX, got {text!r}")
    return SourceRef(sandbox, int(index))


def _duration(text: str) -> timedelta:
    try:
        return timedelta(seconds=float(text))
    except (ValueError, OverflowError) as exc:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from exc


def _json_value(text: str) -> JSONValue:
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise InvalidInput(
            f"the value is not valid JSON: {exc}",
            hint="""quote text as a JSON string, e.g. '"draft"'""",
        ) from exc


# -- handlers -------------------------------------------------------------------------
def _ref(args: argparse.Namespace) -> ResourceRef:
    return ResourceRef(args.resource, team_id=args.team)


def _stdin_notes(args: argparse.Namespace) -> list[Note]:
    lines = [line.strip() for line in sys.stdin.read().splitlines()]
    notes = [Note(line, args.source, args.type, args.tag) for line in lines if line]
    if not notes:
        raise InvalidInput("no facts on stdin", hint="give one fact per non-empty line")
    return notes


def _remember(mem: Memory, args: argparse.Namespace) -> Output:
    if args.text == "-":
        return render.facts(mem.remember_many(_ref(args), _stdin_notes(args)))
    return render.fact(
        mem.remember(
            _ref(args),
            args.text,
            source_ref=args.source,
            type=args.type,
            tags=args.tag,
            context=args.context,
        )
    )


def _recall(mem: Memory, args: argparse.Namespace) -> Output:
    return render.recall_hits(
        mem.recall(
            _ref(args),
            args.query,
            top_k=args.top_k,
            type=args.type,
            tags=args.tag,
            verified_only=args.verified_only,
            mode=args.mode,
        )
    )


def _facts(mem: Memory, args: argparse.Namespace) -> Output:
    return render.facts_page(mem.facts(_ref(args), limit=args.limit, before=args.before))


def _forget(mem: Memory, args: argparse.Namespace) -> Output:
    return render.forgotten(args.fact_id, mem.forget(_ref(args), args.fact_id))


def _forget_all(mem: Memory, args: argparse.Namespace) -> Output:
    return render.forgotten_all(mem.forget_all(_ref(args), expected_count=args.expected_count))


def _correct(mem: Memory, args: argparse.Namespace) -> Output:
    return render.fact(mem.correct(_ref(args), args.fact_id, args.text, by=args.by))


def _fork(mem: Memory, args: argparse.Namespace) -> Output:
    return render.forked(mem.fork(_ref(args), args.child_resource_id))


def _compact(mem: Memory, args: argparse.Namespace) -> Output:
    return render.compacted(
        mem.compact(_ref(args), max_facts=args.max_facts, max_age=args.max_age_seconds)
    )


def _working_get(mem: Memory, args: argparse.Namespace) -> Output:
    return render.entry_value(mem.working.entry(_ref(args), args.key))


def _working_set(mem: Memory, args: argparse.Namespace) -> Output:
    value = _json_value(args.value)
    return render.entry_set(
        mem.working.set(
            _ref(args),
            args.key,
            value,
            expected_version=args.expected_version,
            ttl=args.ttl_seconds,
        )
    )


def _working_delete(mem: Memory, args: argparse.Namespace) -> Output:
    return render.entry_deleted(args.key, mem.working.delete(_ref(args), args.key))


def _working_list(mem: Memory, args: argparse.Namespace) -> Output:
    return render.working_page(mem.working.list(_ref(args), after=args.after, limit=args.limit))


def _status(mem: Memory, args: argparse.Namespace) -> Output:
    target = _db_path(args)
    shown = describe(target)
    return render.status(shown, mem.embedder, shown if is_url(target) else target, _program())


def _program() -> str:
    """How to run this command again: ``engram`` when it is on PATH, else its path."""
    launched = Path(sys.argv[0])
    if launched.name == "engram" and shutil.which("engram") != str(launched.absolute()):
        relative = os.path.relpath(launched.absolute())
        return str(launched.absolute()) if relative.startswith("..") else relative
    return "engram"


# -- the parser -----------------------------------------------------------------------
def _options(parser: argparse.ArgumentParser, *, top: bool, scope: bool) -> None:
    """The global options. Below the top level they default to SUPPRESS, so a value given
    before the subcommand is kept unless the same option is given again after it."""
    unset = None if top else argparse.SUPPRESS
    add = parser.add_argument
    add(
        "--db",
        metavar="PATH",
        default=unset,
        help="the store: a SQLite file or a postgresql:// URL "
        f"(default: $ENGRAM_DB_URL, $ENGRAM_DB_PATH or {DEFAULT_DB_PATH})",
    )
    add("--json", action="store_true", default=False if top else unset, help="print JSON on stdout")
    add(
        "--embedder",
        choices=EMBEDDERS,
        default=unset,
        help="the embedder (default: $ENGRAM_EMBEDDER, else remote when "
        "$ENGRAM_EMBEDDINGS_URL is set, else local); loaded only to embed",
    )
    if scope:
        add("--resource", metavar="ID", default=unset, help="whose memory (required when scoped)")
        add("--team", metavar="ID", default=unset, help="the resource's team")


def _parents() -> tuple[list[_Parser], list[_Parser]]:
    """The parent parsers of unscoped and of scoped subcommands."""
    common, scoped = _Parser(add_help=False), _Parser(add_help=False)
    _options(common, top=False, scope=False)
    _options(scoped, top=False, scope=True)
    return [common], [scoped]


def _command(
    sub: Subparsers,
    name: str,
    handler: Handler | None,
    help_text: str,
    *,
    scoped: bool = True,
    embeds: bool = False,
) -> argparse.ArgumentParser:
    parents = _parents()[1 if scoped else 0]
    parser = sub.add_parser(name, parents=parents, help=help_text, description=help_text)
    parser.set_defaults(handler=handler, scoped=scoped, embeds=embeds)
    return parser


def _filters(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--type", metavar="T", help="the fact's type")
    parser.add_argument(
        "--tag", metavar="T", nargs="+", action="extend", default=[], help="tags (repeatable)"
    )


def _add_writing_commands(sub: Subparsers) -> None:
    p = _command(
        sub, "remember", _remember, "remember a fact ('-': one per line of stdin)", embeds=True
    )
    p.add_argument("text", metavar="TEXT")
    p.add_argument(
        "--source",
        metavar="SANDBOX_ID:ENTRY_INDEX",
        type=_source,
        help="the ledger entry the fact came from (makes it verified)",
    )
    p.add_argument("--context", metavar="TEXT", help="text that helps find the fact")
    _filters(p)
    p = _command(sub, "correct", _correct, "change a fact's words", embeds=True)
    p.add_argument("fact_id", metavar="FACT_ID")
    p.add_argument("text", metavar="TEXT")
    p.add_argument("--by", metavar="WHO", help="who made the correction")


def _add_reading_commands(sub: Subparsers) -> None:
    p = _command(sub, "recall", _recall, "recall facts by meaning and words", embeds=True)
    p.add_argument("query", metavar="QUERY")
    p.add_argument("--top-k", metavar="N", type=int)
    p.add_argument("--verified-only", action="store_true")
    p.add_argument("--mode", choices=("hybrid", "text", "vector"), default="hybrid")
    _filters(p)
    p = _command(sub, "facts", _facts, "list facts, newest first")
    p.add_argument("--limit", metavar="N", type=int)
    p.add_argument("--before", metavar="CURSOR", help="the cursor printed by the previous page")


def _add_forgetting_commands(sub: Subparsers) -> None:
    p = _command(sub, "forget", _forget, "forget one fact")
    p.add_argument("fact_id", metavar="FACT_ID")
    p = _command(sub, "forget-all", _forget_all, "forget every fact of the scope")
    p.add_argument(
        "--expected-count",
        metavar="N",
        type=int,
        required=True,
        help="how many facts you expect; more means nothing is forgotten",
    )


def _add_working_commands(sub: Subparsers) -> None:
    working = sub.add_parser("working", parents=_parents()[1], help="working memory (JSON by key)")
    inner = working.add_subparsers(dest="working_command", metavar="ACTION", required=True)
    p = _command(inner, "get", _working_get, "print the value at KEY")
    p.add_argument("key", metavar="KEY")
    p = _command(inner, "set", _working_set, "set KEY to a JSON value")
    p.add_argument("key", metavar="KEY")
    p.add_argument("value", metavar="JSON_VALUE")
    p.add_argument(
        "--expected-version",
        metavar="N",
        type=int,
        help="compare-and-set: the current version (0: KEY must be unset)",
    )
    p.add_argument("--ttl-seconds", metavar="S", type=_duration, help="expire after S seconds")
    p = _command(inner, "delete", _working_delete, "remove KEY")
    p.add_argument("key", metavar="KEY")
    p = _command(inner, "list", _working_list, "list keys in ascending order")
    p.add_argument("--after", metavar="KEY")
    p.add_argument("--limit", metavar="N", type=int)


def _add_scope_commands(sub: Subparsers) -> None:
    p = _command(sub, "fork", _fork, "copy this scope's memory into another resource")
    p.add_argument("child_resource_id", metavar="CHILD_RESOURCE_ID")
    p = _command(sub, "compact", _compact, "apply the caps now: oldest facts go first")
    p.add_argument("--max-facts", metavar="N", type=int)
    p.add_argument("--max-age-seconds", metavar="S", type=_duration)
    _command(
        sub, "status", _status, "open the store and show how to use it", scoped=False, embeds=True
    )
    _file_command(sub, "serve", _serve, "run the HTTP service ($ENGRAM_HOST:$ENGRAM_PORT)")
    _file_command(sub, "migrate", _migrate, "bring the store's schema up to date")
    p = _file_command(sub, "backup", _backup, "copy the store into DEST_DIR, verified")
    p.add_argument("dest_dir", metavar="DEST_DIR")
    p.add_argument("--keep", metavar="N", type=int, help="keep only the N newest backups")
    p = _file_command(sub, "restore", _restore, "put a backup back (stop the service first)")
    p.add_argument("backup_dir", metavar="BACKUP_DIR")


def _file_command(
    sub: Subparsers, name: str, handler: Callable[[argparse.Namespace], Output], help_text: str
) -> argparse.ArgumentParser:
    """A command that works on the store's file itself, not through an open memory."""
    parser = _command(sub, name, None, help_text, scoped=False)
    parser.set_defaults(file_handler=handler)
    return parser


def _migrate(args: argparse.Namespace) -> Output:
    target = _db_path(args)
    store = open_store(target)
    try:
        version = store.schema_version
    finally:
        store.close()
    return Output(
        {"store": describe(target), "schema_version": version},
        [f"{describe(target)} is at schema version {version}"],
    )


def _serve(args: argparse.Namespace) -> Output:
    serve(args.db)
    return Output({"stopped": True}, ["engram stopped"])


def _backup(args: argparse.Namespace) -> Output:
    target = _db_path(args)
    if is_url(target):
        from engram.storage.postgres import backup as pg_backups

        made = pg_backups.backup(target, args.dest_dir, keep=args.keep)
    else:
        made = backups.backup(target, args.dest_dir, keep=args.keep)
    return Output({"backup": str(made)}, [f"backed up to {made}"])


def _restore(args: argparse.Namespace) -> Output:
    if is_url(_db_path(args)):
        raise InvalidInput(
            "engram restores SQLite stores only; a PostgreSQL backup is a pg_dump archive",
            hint="stop every engram service on the database (pg_restore replaces what they "
            "write meanwhile), check `sha256sum engram.dump` against the manifest's sha256, "
            "then: pg_restore --clean --if-exists --single-transaction "
            f"-d URL {Path(args.backup_dir) / 'engram.dump'}",
        )
    kept = backups.restore(args.backup_dir, _db_path(args))
    lines = [f"restored {args.backup_dir} to {_db_path(args)}"]
    if kept is not None:
        lines.append(f"the store it replaced is kept at {kept}")
    return Output({"restored": str(args.backup_dir), "kept": str(kept) if kept else None}, lines)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="engram", description="engram: durable memory for AI agents.")
    _options(parser, top=True, scope=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _add_writing_commands(sub)
    _add_reading_commands(sub)
    _add_forgetting_commands(sub)
    _add_working_commands(sub)
    _add_scope_commands(sub)
    return parser


# -- running --------------------------------------------------------------------------
def _db_path(args: argparse.Namespace) -> str:
    if args.db is not None:
        return str(args.db)
    return Settings.from_env(os.environ).db_path


def _open(args: argparse.Namespace) -> Memory:
    """The store with the settings of the environment; commands that never embed
    (listing, working memory, fork, compact) open it without loading a model."""
    settings = Settings.from_env(os.environ)
    kind = args.embedder or settings.embedder if args.embeds else "none"
    return engram.open(
        _db_path(args),
        embedder=settings.make_embedder(kind),
        max_facts=settings.max_facts,
        max_age=settings.max_age,
    )


def _run(args: argparse.Namespace) -> Output:
    if args.scoped and args.resource is None:
        command = " ".join(filter(None, (args.command, getattr(args, "working_command", None))))
        raise InvalidInput(
            f"'engram {command}' needs --resource ID",
            hint="the resource whose memory it reads or writes",
        )
    if getattr(args, "file_handler", None) is not None:
        file_handler: Callable[[argparse.Namespace], Output] = args.file_handler
        return file_handler(args)
    with _open(args) as mem:
        handler: Handler = args.handler
        return handler(mem, args)


def _fail(code: str, message: str, exit_code: int, as_json: bool, hint: str | None = None) -> int:
    print(f"error[{code}]: {message}" + (f" ({hint})" if hint else ""), file=sys.stderr)
    if as_json:
        print(render.dumps(render.error_data(code, message, hint)))
    return exit_code


def main(argv: list[str] | None = None) -> int:
    """Runs one command; returns the exit code (0, an error's ``exit_code``, or 70)."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    as_json = "--json" in arguments
    try:
        args = build_parser().parse_args(arguments)
        as_json = bool(args.json)
        print(_run(args).text(as_json))
        return 0
    except SystemExit as exc:  # --help
        return exc.code if isinstance(exc.code, int) else 0
    except EngramError as exc:
        return _fail(exc.code, exc.message, exc.exit_code, as_json, exc.hint)
    except KeyboardInterrupt:
        return _fail("interrupted", "interrupted", EXIT_INTERRUPTED, as_json)
    except Exception:
        if os.environ.get("ENGRAM_DEBUG") == "1":
            traceback.print_exc()
        return _fail("internal", "internal error", EXIT_INTERNAL, as_json)
