"""The commands that work through an open Memory: call the library, render the result.

Imported only when such a command runs: ``engram --help`` and argument errors never load
the store, numpy or a model (``cli/main.py`` names these handlers by key).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from engram.backends import is_url
from engram.cli import arguments, declared, graph, render
from engram.cli.render import JSONData, Output
from engram.core.conversations import Turn
from engram.core.documents import files
from engram.core.errors import InvalidInput, TooLarge, Unprocessable
from engram.core.memory import Memory
from engram.core.people import Acting, AppMemory
from engram.core.portability import files as portable_files
from engram.core.portability.records import Skipped, jsonl_lines
from engram.core.progress import Progress, untold
from engram.core.records import Entry
from engram.core.scopes import ResourceRef
from engram.opening import describe
from engram.settings import Settings

# What a command reads whole from a file or stdin (a conversation's turns, facts a line):
# above what it takes at once (1,000 turns of 2,000 characters and 16 KiB of metadata
# each, escaped: ~30 MB), so only a stream without end meets it.
MAX_INPUT_BYTES = 64 * 1024 * 1024

Handler = Callable[[Memory, argparse.Namespace], Output]


def _ref(args: argparse.Namespace) -> ResourceRef:
    return ResourceRef(args.resource, team_id=args.team)


# -- facts ----------------------------------------------------------------------------
def ingest(mem: Memory, args: argparse.Namespace) -> Output:
    """The walk's reports; each file a step of :func:`_progress` while it runs."""
    with _progress(quiet=bool(args.json)) as bar:
        walked = mem.ingest(
            _ref(args),
            args.path,
            include=args.include or files.DEFAULT_INCLUDE,
            exclude=args.exclude,
            max_files=args.max_files,
            max_bytes=args.max_bytes,
            strategy=args.strategy,
            chunk_tokens=args.chunk_tokens,
            tags=args.tag,
            type=args.type or "document",
            progress=lambda report: bar(report.source),
            allow_private=Settings.from_env(os.environ).ingest_allow_private,
            dry_run=args.dry_run,
        )
    return render.walk(walked)


@contextmanager
def _bar(unit: str, *, quiet: bool) -> Iterator[Any]:
    """A tqdm bar on stderr counting ``unit``, only on a terminal and never with --json
    (``quiet``); None where there is none."""
    if quiet or not sys.stderr.isatty():
        yield None
        return
    from tqdm import tqdm  # type: ignore[import-untyped]

    with tqdm(unit=unit, file=sys.stderr, leave=False) as bar:
        yield bar


@contextmanager
def _progress(*, quiet: bool) -> Iterator[Callable[[str], None]]:
    """Each file walked, as a step of :func:`_bar`."""
    with _bar("file", quiet=quiet) as bar:
        if bar is None:
            yield lambda _: None
            return

        def step(source: str) -> None:
            bar.set_postfix_str(Path(source).name, refresh=False)
            bar.update(1)

        yield step


def remember_conversation(mem: Memory, args: argparse.Namespace) -> Output:
    lines = stdin_text("the turns") if args.file == "-" else _read(args.file)
    turns = []
    for n, line in enumerate(jsonl_lines(lines), 1):  # a turn's text may hold U+2028
        if not line.strip():
            continue
        try:
            turns.append(_turn(json.loads(line)))
        except RecursionError as exc:
            raise InvalidInput(f"line {n} nests too deeply to be read") from exc
        except (ValueError, TypeError) as exc:
            raise InvalidInput(
                f"line {n} is not a turn: {exc}",
                hint='one JSON object a line: {"speaker": "Ana", "text": "…", "at": "…"}',
            ) from exc
    done = mem.remember_conversation(
        _ref(args),
        turns,
        session_id=args.session,
        expected_next=args.expected_next,
        context_turns=args.context_turns,
    )
    return render.conversation(done)


def _read(path: str) -> str:
    """A regular file's text, up to MAX_INPUT_BYTES (files.read: a device or a pipe is
    refused, never read)."""
    try:
        return files.read(Path(path), MAX_INPUT_BYTES).decode("utf-8")
    except Unprocessable as exc:  # the system's refusal, the path named
        raise InvalidInput(exc.message) from exc
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"cannot read {path}: {exc}") from exc


def stdin_text(what: str) -> str:
    """Standard input's text, up to MAX_INPUT_BYTES: a stream with no end stops there."""
    stream = getattr(sys.stdin, "buffer", None)  # None: a text stream put in its place
    data: str | bytes = (
        stream.read(MAX_INPUT_BYTES + 1) if stream else sys.stdin.read(MAX_INPUT_BYTES + 1)
    )
    if len(data) > MAX_INPUT_BYTES:
        raise TooLarge(f"{what} on stdin run past {MAX_INPUT_BYTES} bytes; read no further")
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{what} on stdin are not UTF-8: {exc}") from exc


def _turn(raw: object) -> Turn:
    """A turn from one JSON line (``at`` an ISO 8601 time with its offset); the library
    checks its fields."""
    if not isinstance(raw, dict) or set(raw) - {"speaker", "text", "at", "metadata"}:
        raise ValueError("expected an object with speaker, text and perhaps at, metadata")
    at = raw.get("at")
    return Turn(
        raw.get("speaker"),  # type: ignore[arg-type]  # checked by the library
        raw.get("text"),  # type: ignore[arg-type]
        datetime.fromisoformat(at) if isinstance(at, str) else at,
        raw.get("metadata"),
    )


# -- history --------------------------------------------------------------------------
def delete(mem: Memory, args: argparse.Namespace) -> Output:
    """Deletion for good: the ids given, or (``--scope``) every fact of the scope."""
    if bool(args.fact_ids) == bool(args.scope):
        raise InvalidInput("give fact ids, or --scope with --confirm-count, not both")
    if args.fact_ids:
        if args.confirm_count is not None or args.turn_user is not None:
            raise InvalidInput("--confirm-count and --turn-user go with --scope")
        return render.deleted(mem.delete_traces(_ref(args), args.fact_ids))
    if args.confirm_count is None:
        raise InvalidInput(
            "deleting a scope needs --confirm-count N", hint="how many facts you expect to go"
        )
    receipt = mem.delete_scope(
        _ref(args), turn_user_id=args.turn_user, expected_count=args.confirm_count
    )
    return render.deleted(receipt)


def fork(mem: Memory, args: argparse.Namespace) -> Output:
    forked = mem.fork(_ref(args), args.child_resource_id, into_existing=args.into_existing)
    return render.forked(forked)


def compact(mem: Memory, args: argparse.Namespace) -> Output:
    return render.compacted(
        mem.compact(_ref(args), max_facts=args.max_facts, max_age=args.max_age_seconds)
    )


def export(mem: Memory, args: argparse.Namespace) -> Output:
    return render.exported(
        mem.export(_ref(args), args.path, format=args.format, update=args.update)
    )


def import_(mem: Memory, args: argparse.Namespace) -> Output:
    """The import's report; its progress drawn by :func:`phases` while it embeds and
    writes."""
    if args.rejects is not None and not args.skip_invalid:
        raise InvalidInput("--rejects names where --skip-invalid writes; give both")
    rejects = None
    if args.skip_invalid:  # a path already taken is refused before anything is imported
        rejects = portable_files.target(args.rejects or f"{args.path}.rejects.jsonl")
    with phases(quiet=bool(args.json)) as tell:
        report = mem.import_file(
            _ref(args),
            args.path,
            format=args.format,
            source=args.source,
            dry_run=args.dry_run,
            progress=tell,
            on_error="skip" if args.skip_invalid else "refuse",
        )
    if rejects is None or not report.skipped:
        return render.imported(report)
    with portable_files.writing(rejects):
        portable_files.write_text(rejects, [_rejected(s) for s in report.skipped])
    return render.imported(report, str(rejects))


def _rejected(skipped: Skipped) -> str:
    """A line of the rejects file: where the record was, what was wrong, and the record."""
    said = {"line": skipped.line, "field": skipped.field, "message": skipped.message}
    return json.dumps({**said, "record": skipped.record}, ensure_ascii=False) + "\n"


@contextmanager
def phases(*, quiet: bool) -> Iterator[Progress]:
    """Work's (phase, done, total), drawn on a :func:`_bar` of facts."""
    with _bar("fact", quiet=quiet) as bar:
        if bar is None:
            yield untold
            return

        def tell(phase: str, done: int, total: int) -> None:
            bar.set_description(phase, refresh=False)
            bar.total = total
            bar.n = done
            bar.refresh()

        yield tell


def wiki(mem: Memory, args: argparse.Namespace) -> Output:
    if args.folder is not None:
        mem.wiki.attach(_ref(args), args.folder)
    report = mem.wiki.compile(_ref(args), batch=args.batch)
    lines = [f"folded {report.facts} facts; wrote {len(report.pages)} pages"]
    lines += [f"  {page}" for page in report.pages]
    lines += [f"  left out of the folder: {page}: {why}" for page, why in report.left_out]
    data: JSONData = {
        "facts": report.facts,
        "pages": list(report.pages),
        "watermark": report.watermark,
        "left_out": [{"page": page, "why": why} for page, why in report.left_out],
    }
    return Output(data, lines)


# -- sessions and episodes ------------------------------------------------------------
def session_start(mem: Memory, args: argparse.Namespace) -> Output:
    started = mem.sessions.start(
        _ref(args), session_id=args.session_id, name=args.name, fork_of=args.fork_of
    )
    return render.session(started)


def session_append(mem: Memory, args: argparse.Namespace) -> Output:
    """Appends one entry to ``--session``, or to the scope's newest session."""
    data = None if args.data is None else arguments.json_value(args.data)
    entry = Entry(args.kind, args.text, role=args.role, at=args.at, data=data)
    ref = _ref(args)
    sid = args.session if args.session is not None else mem.sessions.latest(ref).id
    written = mem.sessions.append(ref, [entry], session_id=sid, expected_next=args.expected_next)
    return render.appended(sid, written)


def episodes(mem: Memory, args: argparse.Namespace) -> Output:
    if args.tree:
        return render.tree(mem.episodic_tree(_ref(args)))
    page = mem.episodic_recall(
        _ref(args),
        branch="lineage" if args.lineage else "own",
        limit=args.limit,
        after=args.after,
        query=args.query,
    )
    return render.episodes(page)


# -- working memory -------------------------------------------------------------------
# -- what an application remembers of the owner ---------------------------------------
def _owner_app(mem: Memory, args: argparse.Namespace) -> tuple[AppMemory, Acting]:
    """The application's memory, and the owner acting with no session: the command line
    is the machine itself, so it reads the owner's own memories only, no allowances."""
    app = args.app if args.app.startswith("app:") else f"app:{args.app}"
    return AppMemory(mem, app), Acting.owner(args.owner)


def app_remember(mem: Memory, args: argparse.Namespace) -> Output:
    app, owner = _owner_app(mem, args)
    return render.fact(app.remember(owner, args.text))


def app_recall(mem: Memory, args: argparse.Namespace) -> Output:
    app, owner = _owner_app(mem, args)
    return render.recall_hits(
        [shared.hit for shared in app.recall(owner, args.query, top_k=args.top_k)]
    )


def app_list(mem: Memory, args: argparse.Namespace) -> Output:
    app, owner = _owner_app(mem, args)
    count, page = app.listing(owner, limit=args.limit)
    shown = render.facts_page(page)
    heading = f"{app.app} remembers {count} thing{'' if count == 1 else 's'} of {owner.person}"
    return Output(lambda: {"app": app.app, "count": count, **shown.data}, [heading, *shown.lines])


def app_correct(mem: Memory, args: argparse.Namespace) -> Output:
    app, owner = _owner_app(mem, args)
    return render.fact(app.correct(owner, args.memory_id, args.text, by=owner.person))


def app_forget(mem: Memory, args: argparse.Namespace) -> Output:
    app, owner = _owner_app(mem, args)
    app.forget(owner, args.memory_id)
    return render.forgotten(args.memory_id, True, hard=True)


def app_forget_all(mem: Memory, args: argparse.Namespace) -> Output:
    app, owner = _owner_app(mem, args)
    return render.forgotten_all(app.forget_all(owner, count=args.count), hard=True)


# -- the store ------------------------------------------------------------------------
def health(mem: Memory, args: argparse.Namespace) -> Output:
    """The scope's report with --resource, else the whole store's (--store says so)."""
    if args.store_wide and args.resource is not None:
        raise InvalidInput("--store reports the whole store; it takes no --resource")
    ref = None if args.resource is None else _ref(args)
    report = mem.health(ref, graph_drift=args.graph_drift)
    return render.health(report, describe(args.store))


def status(mem: Memory, args: argparse.Namespace) -> Output:
    target: str = args.store
    shown = describe(target)
    return render.status(shown, mem.embedder, shown if is_url(target) else target, _program())


def _program() -> str:
    """How to run this command again: ``engram`` when it is on PATH, else its path."""
    launched = Path(sys.argv[0])
    if launched.name == "engram" and shutil.which("engram") != str(launched.absolute()):
        relative = os.path.relpath(launched.absolute())
        return str(launched.absolute()) if relative.startswith("..") else relative
    return "engram"


HANDLERS: dict[str, Handler] = {
    **{name: declared.handler(op) for name, op in declared.COMMANDS.items()},
    "ingest": ingest,
    "export": export,
    "import": import_,
    "wiki": wiki,
    "delete": delete,
    "remember-conversation": remember_conversation,
    "fork": fork,
    "compact": compact,
    "session start": session_start,
    "session append": session_append,
    "episodes": episodes,
    "app remember": app_remember,
    "app recall": app_recall,
    "app list": app_list,
    "app correct": app_correct,
    "app forget": app_forget,
    "app forget-all": app_forget_all,
    "status": status,
    "health": health,
    **graph.HANDLERS,
}
