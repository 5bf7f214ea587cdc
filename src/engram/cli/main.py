"""``engram``: the command line over :func:`engram.open`. Parse, call the library, render.

This module imports only what parsing needs: the store, numpy and the models load when a
command runs (``cli/commands.py``), so ``engram --help`` answers at once.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import getpass
import os
import sys
import traceback
from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING

import engram
from engram import offline
from engram.backends import backend_for
from engram.cli import arguments, declared
from engram.cli.arguments import Parser as _Parser
from engram.core import ops
from engram.core.errors import EngramError, InvalidInput, NotFound
from engram.core.limits import MAX_COUNT
from engram.core.people import Acting
from engram.opening import describe
from engram.settings import DEFAULT_DB_PATH, MAX_PORT, Settings, debugging

if TYPE_CHECKING:
    from engram.cli.render import Output
    from engram.core.memory import Memory

EMBEDDERS = ("local", "e5", "remote", "none")
# Commands that only read the store (and every --dry-run): where there is no store they
# refuse (exit 3) rather than create an empty one to read.
READING = declared.READING | frozenset(
    {
        "episodes",
        "app recall",
        "app list",
        "health",
        "export",
    }
)
EXIT_INTERNAL = 70
EXIT_INTERRUPTED = 130
MAX_TOKEN_SECONDS = 86_400 * 366


if TYPE_CHECKING:
    Subparsers = argparse._SubParsersAction[_Parser]


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


@functools.cache
def _parents() -> tuple[list[_Parser], list[_Parser]]:
    """The parent parsers of unscoped and of scoped subcommands, made once: a subcommand
    copies their options as it is made (made again for each of 71 subcommands, the parser
    took 76 ms of a core to build; 25 made once)."""
    common, scoped = _Parser(add_help=False), _Parser(add_help=False)
    _options(common, top=False, scope=False)
    _options(scoped, top=False, scope=True)
    return [common], [scoped]


def _command(
    sub: Subparsers,
    name: str,
    handler: str | None,
    help_text: str,
    *,
    scoped: bool = True,
    embeds: bool = False,
) -> argparse.ArgumentParser:
    """A subcommand; ``handler`` names its function in ``commands.HANDLERS``."""
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
        sub,
        "remember-conversation",
        "remember-conversation",
        "remember a conversation's turns, one JSON object a line: "
        '{"speaker", "text", "at"?} (FILE, or - for stdin)',
        embeds=True,
    )
    p.add_argument("file", metavar="FILE")
    p.add_argument("--session", metavar="ID", help="the session (a new one without it)")
    p.add_argument(
        "--expected-next",
        metavar="N",
        type=arguments.COUNT,
        help="where the session ends (a retry)",
    )
    p.add_argument(
        "--context-turns",
        metavar="N",
        type=arguments.integer_in(0, 5),
        default=1,
        help="neighbouring turns kept as each turn's context (default 1)",
    )


def _add_ingest_command(sub: Subparsers) -> None:
    p = _command(
        sub,
        "ingest",
        "ingest",
        "ingest a URL, or a Markdown, text, HTML or PDF file, or a directory's, each chunk "
        "a fact (a progress bar on a terminal; none with --json)",
        embeds=True,
    )
    p.add_argument("path", metavar="PATH|URL")
    p.add_argument(
        "--include", metavar="GLOB", nargs="+", action="extend", help="files to take (*.md ...)"
    )
    p.add_argument(
        "--exclude", metavar="GLOB", nargs="+", action="extend", default=[], help="files to skip"
    )
    p.add_argument("--strategy", choices=("auto", "markdown", "paragraph"), default="auto")
    p.add_argument(
        "--chunk-tokens",
        metavar="N",
        type=arguments.integer_in(16, 254),
        default=200,
        help="16 to 254",
    )
    p.add_argument(
        "--max-files", metavar="N", type=arguments.integer_in(1, 1_000_000), default=10_000
    )
    p.add_argument(
        "--max-bytes", metavar="N", type=arguments.integer_in(1, 500_000_000), default=50_000_000
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="say what would be created or replaced; write nothing",
    )
    _filters(p)


def _add_portability_commands(sub: Subparsers) -> None:
    p = _command(
        sub,
        "export",
        "export",
        "write the resource's facts (with vectors) and working keys to a new file: "
        ".json, .jsonl, or .sqlite/.db (a store engram opens)",
    )
    p.add_argument("path", metavar="PATH")
    p.add_argument(
        "--format",
        choices=("json", "jsonl", "sqlite", "mcp-memory", "mem0", "markdown", "obsidian"),
        help="else by suffix (a folder: markdown or obsidian)",
    )
    p.add_argument(
        "--update",
        action="store_true",
        help="bring an existing markdown or obsidian folder up to date in place",
    )
    p = _command(
        sub,
        "import",
        "import",
        "import an export, CSV or mem0's memories, all or nothing (a progress bar on a "
        "terminal; none with --json)",
        embeds=True,
    )
    p.add_argument("path", metavar="PATH")
    p.add_argument("--format", choices=("json", "jsonl", "csv", "sqlite"), help="else by suffix")
    p.add_argument(
        "--from",
        dest="source",
        choices=("engram", "mem0", "mcp-memory"),
        default="engram",
        help="whose format",
    )
    p.add_argument("--dry-run", action="store_true", help="check and count; write nothing")
    p.add_argument(
        "--skip-invalid",
        action="store_true",
        help="import the good records and leave the bad ones out, each written with its line, "
        "field and reason to the rejects file",
    )
    p.add_argument(
        "--rejects",
        metavar="FILE",
        help="where --skip-invalid writes the records it left out (default: PATH.rejects.jsonl)",
    )
    p = _command(
        sub,
        "wiki",
        "wiki",
        "fold the facts written since the last compile into the wiki's pages (documents "
        "wiki:<path>: index, entities, types, daily log)",
        embeds=True,
    )
    p.add_argument("--batch", metavar="N", type=arguments.integer_in(1, 10_000), default=500)
    p.add_argument(
        "--folder", metavar="DIR", help="also write the pages into this folder, as files"
    )


def _add_declared_commands(sub: Subparsers, group: str = "") -> None:
    """The commands of the declared operations (cli/declared.py) in ``group`` (``graph``
    for ``graph relate``), one per operation."""
    for name, op in declared.COMMANDS.items():
        within, _, word = name.rpartition(" ")
        if within != group:
            continue
        help_text = ops.summary(op)[:1].lower() + ops.summary(op)[1:]
        if op is ops.Remember:
            help_text += " ('-': one per line of stdin)"
        parser = _command(sub, word, name, help_text, embeds=declared.embeds(op))
        declared.add(parser, op)


def _add_forgetting_commands(sub: Subparsers) -> None:
    p = _command(sub, "delete", "delete", "delete facts for good, live or trashed, ledger included")
    p.add_argument("fact_ids", metavar="FACT_ID", nargs="*")
    p.add_argument("--scope", action="store_true", help="every fact of the scope")
    p.add_argument(
        "--confirm-count",
        metavar="N",
        type=arguments.COUNT,
        help="with --scope: how many facts (live and trashed) you expect to go",
    )
    p.add_argument("--turn-user", metavar="UID", help="with --scope: only this user's facts")


def _add_working_commands(sub: Subparsers) -> None:
    working = sub.add_parser("working", parents=_parents()[1], help="working memory (JSON by key)")
    inner = working.add_subparsers(dest="working_command", metavar="ACTION", required=True)
    _add_declared_commands(inner, "working")


def _add_app_commands(sub: Subparsers) -> None:
    app = sub.add_parser(
        "app",
        parents=_parents()[0],
        help="what an application remembers of the owner ($ENGRAM_OWNER_UID)",
        description="What an application remembers of the owner: the command line is the "
        "machine itself, so it acts as $ENGRAM_OWNER_UID and reads the owner's own memories "
        "only (no other application's, allowed or not).",
    )
    app.add_argument("app", metavar="APP", help="the application: app:<uid> (or its uid)")
    inner = app.add_subparsers(dest="app_command", metavar="ACTION", required=True)

    def add(name: str, help_text: str, *, embeds: bool = False) -> argparse.ArgumentParser:
        return _command(inner, name, f"app {name}", help_text, scoped=False, embeds=embeds)

    add("remember", "remember TEXT of the owner", embeds=True).add_argument("text", metavar="TEXT")
    p = add("recall", "recall the owner's memories by meaning and words", embeds=True)
    p.add_argument("query", metavar="QUERY")
    p.add_argument("--top-k", metavar="N", type=arguments.TOP_K)
    add("list", "how many it remembers, and the newest").add_argument(
        "--limit", metavar="N", type=arguments.PAGE
    )
    p = add("correct", "change a memory's words (embedded again)", embeds=True)
    p.add_argument("memory_id", metavar="MEMORY_ID")
    p.add_argument("text", metavar="TEXT")
    add("forget", "forget one memory").add_argument("memory_id", metavar="MEMORY_ID")
    add("forget-all", "forget all of them, confirming how many").add_argument(
        "--count", metavar="N", type=arguments.COUNT, required=True, help="how many you were shown"
    )


def _add_session_commands(sub: Subparsers) -> None:
    session = sub.add_parser(
        "session", parents=_parents()[1], help="episodic sessions: start one, append entries"
    )
    inner = session.add_subparsers(dest="session_command", metavar="ACTION", required=True)
    p = _command(inner, "start", "session start", "start a session of the scope")
    p.add_argument("--name", metavar="NAME")
    p.add_argument("--session-id", metavar="ID", help="its id (default: a new one)")
    p.add_argument(
        "--fork-of",
        metavar="SESSION_ID:ENTRY_INDEX",
        type=arguments.source,
        help="start from this entry of another session (of the scope, or of its team)",
    )
    p = _command(inner, "append", "session append", "append one entry to a session")
    p.add_argument("kind", metavar="KIND", help="what the entry is: message, tool_call, ...")
    p.add_argument("text", metavar="TEXT")
    p.add_argument("--session", metavar="ID", help="the session (default: the newest)")
    p.add_argument("--role", metavar="ROLE")
    p.add_argument("--data", metavar="JSON", help="a JSON value carried with the entry")
    p.add_argument(
        "--at", metavar="TIME", type=arguments.time, help="when it happened (default: now)"
    )
    p.add_argument(
        "--expected-next",
        metavar="N",
        type=arguments.COUNT,
        help="the index the entry should take: a retry is idempotent, a stale one exit 4",
    )
    p = _command(sub, "episodes", "episodes", "the scope's session entries in time order")
    which = p.add_mutually_exclusive_group()
    which.add_argument(
        "--lineage", action="store_true", help="with each ancestor's entries up to its fork"
    )
    which.add_argument("--tree", action="store_true", help="the fork trees, siblings apart")
    p.add_argument("--limit", metavar="N", type=arguments.PAGE)
    p.add_argument("--after", metavar="TIME", type=arguments.time, help="entries after this time")
    p.add_argument("--query", metavar="WORDS", help="entries holding every word")


def _add_graph_commands(sub: Subparsers) -> None:
    graph = sub.add_parser(
        "graph", parents=_parents()[1], help="the knowledge graph: entities, relations, walks"
    )
    inner = graph.add_subparsers(dest="graph_command", metavar="ACTION", required=True)
    entity = inner.add_parser(
        "entity", parents=_parents()[1], help="entities: add, show, search, rm"
    )
    entities = entity.add_subparsers(dest="entity_command", metavar="ACTION", required=True)
    _add_declared_commands(inner, "graph")
    _add_declared_commands(entities, "graph entity")
    p = _command(inner, "unrelate", "graph unrelate", "delete a relation, as if it never was")
    p.add_argument("relation_id", metavar="RELATION_ID")


def _add_feedback_commands(sub: Subparsers) -> None:
    feedback = sub.add_parser(
        "feedback", parents=_parents()[1], help="retrieval feedback: which facts a response used"
    )
    inner = feedback.add_subparsers(dest="feedback_command", metavar="ACTION", required=True)
    _add_declared_commands(inner, "feedback")


def _add_scope_commands(sub: Subparsers) -> None:
    p = _command(sub, "fork", "fork", "copy this scope's memory into another resource")
    p.add_argument("child_resource_id", metavar="CHILD_RESOURCE_ID")
    p.add_argument(
        "--into-existing",
        action="store_true",
        help="fork even if the child already holds memory (its keys of the same name are "
        "overwritten, facts merged); without it that is refused (exit 4)",
    )

    p = _command(sub, "compact", "compact", "apply the caps now: oldest facts go first")
    p.add_argument("--max-facts", metavar="N", type=arguments.COUNT)
    p.add_argument("--max-age-seconds", metavar="S", type=arguments.seconds)
    _command(
        sub, "status", "status", "open the store and show how to use it", scoped=False, embeds=True
    )
    p = _command(
        sub,
        "health",
        "health",
        "what a scope (--resource) or the whole store holds: facts, full text, working "
        "keys, ledger, sessions, graph, documents, feedback, what is kept past its time, "
        "bytes; only reads",
    )
    p.set_defaults(scoped=False)  # the scope is optional: without one, the whole store
    p.add_argument(
        "--store", dest="store_wide", action="store_true", help="the whole store (the default)"
    )
    p.add_argument(
        "--graph-drift",
        action="store_true",
        help="also rebuild the scope's graph from its facts by the rules and count how the "
        "stored one differs (a scope's only: needs --resource)",
    )


def _add_service_commands(sub: Subparsers) -> None:
    p = _file_command(sub, "serve", _serve, "run the HTTP service ($ENGRAM_HOST:$ENGRAM_PORT)")
    p.add_argument("--host", metavar="HOST", help="listen here (default: $ENGRAM_HOST)")
    p.add_argument(
        "--port",
        metavar="N",
        type=arguments.integer_in(0, MAX_PORT),
        help="(default: $ENGRAM_PORT)",
    )
    p.add_argument(
        "--no-access-log",
        action="store_true",
        help="log no line per request (default: $ENGRAM_ACCESS_LOG, on)",
    )
    _file_command(sub, "migrate", _migrate, "bring the store's schema up to date")
    _file_command(
        sub,
        "reembed",
        _reembed,
        "embed every stored fact again with the chosen embedder (--embedder, $ENGRAM_EMBEDDER), "
        "so a store written by another model opens with it (a progress bar on a terminal; "
        "cut short, it goes on where it stopped when run again)",
    )
    p = _file_command(sub, "backup", _backup, "copy the store into DEST_DIR, verified")
    p.add_argument("dest_dir", metavar="DEST_DIR")
    p.add_argument(
        "--keep", metavar="N", type=arguments.integer_in(1, MAX_COUNT), help="keep the N newest"
    )
    p = _file_command(
        sub,
        "scrub",
        _scrub,
        "take the words erased for good out of the store's files now (PostgreSQL: writes its "
        "tables anew, each held from reads and writes meanwhile)",
    )
    p.add_argument(
        "--vectors",
        action="store_true",
        help="PostgreSQL: the vectors' table too, which builds every scope's vector graph again",
    )
    p = _file_command(sub, "restore", _restore, "put a backup back (stop the service first)")
    p.add_argument("backup_dir", metavar="BACKUP_DIR")
    p = _file_command(
        sub, "token", _token, "mint a bearer token: a person's ($ENGRAM_JWT_SECRET) or a service's"
    )
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--person", metavar="UID", help="the person the token names (its sub)")
    which.add_argument(
        "--service", action="store_true", help="a new random service token, and its sha256"
    )
    p.add_argument(
        "--ttl",
        metavar="S",
        type=arguments.integer_in(1, MAX_TOKEN_SECONDS),
        default=3600,
        help="a person's token expires after S seconds (default: 3600)",
    )


def _add_mcp_command(sub: Subparsers) -> None:
    help_text = "serve the memory tools to an MCP client over stdio, for one scope"
    p = sub.add_parser("mcp", parents=_parents()[1], help=help_text, description=help_text)
    p.set_defaults(handler=None, scoped=False, embeds=True, file_handler=_mcp)
    p.add_argument(
        "--app",
        metavar="APP",
        help="what this application (app:<uid>) remembers of $ENGRAM_OWNER_UID, "
        "instead of --resource",
    )


def _mcp(args: argparse.Namespace) -> Output:
    """Serves until the client closes stdin; prints nothing (stdout is the protocol's)."""
    from engram.core.people import Acting, AppMemory
    from engram.mcp import catalogue
    from engram.mcp.stdio import serve

    if (args.resource is None) == (args.app is None):
        raise InvalidInput(
            "'engram mcp' needs --resource ID or --app APP, not both",
            hint="the scope whose memory the client's tools read and write",
        )
    settings = Settings.from_env(os.environ)
    with _open(args, settings) as opened:
        mem = opened.acting(actor=_user(), via="mcp")
        if args.app is None:
            found = catalogue.agent(mem, engram.ResourceRef(args.resource, team_id=args.team))
        else:
            app = args.app if args.app.startswith("app:") else f"app:{args.app}"
            found = catalogue.person(mem, AppMemory(mem, app), Acting.owner(settings.owner_uid))
        serve(found)
    raise SystemExit(0)


def _file_command(
    sub: Subparsers, name: str, handler: Callable[[argparse.Namespace], Output], help_text: str
) -> argparse.ArgumentParser:
    """A command that works on the store's file itself (or on none), not through an
    open memory."""
    parser = _command(sub, name, None, help_text, scoped=False)
    parser.set_defaults(file_handler=handler)
    return parser


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="engram", description="engram: durable memory for AI agents.")
    _options(parser, top=True, scope=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    _add_declared_commands(sub)
    _add_writing_commands(sub)
    _add_ingest_command(sub)
    _add_portability_commands(sub)
    _add_forgetting_commands(sub)
    _add_working_commands(sub)
    _add_app_commands(sub)
    _add_session_commands(sub)
    _add_graph_commands(sub)
    _add_feedback_commands(sub)
    _add_scope_commands(sub)
    _add_service_commands(sub)
    _add_mcp_command(sub)
    return parser


# -- commands on the store itself -----------------------------------------------------
def _migrate(args: argparse.Namespace) -> Output:
    from engram.cli.render import Output
    from engram.opening import open_store

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


def _reembed(args: argparse.Namespace) -> Output:
    """Every fact embedded again, its progress drawn by :func:`engram.cli.commands.phases`;
    cut short, it goes on after its last batch when run again."""
    from engram.cli.commands import phases
    from engram.cli.render import Output

    settings = Settings.from_env(os.environ)
    target = _db_path(args)
    embedder = settings.make_embedder(args.embedder or settings.embedder)
    if embedder is None:
        raise InvalidInput("reembed needs an embedder, not none", hint="pass --embedder")
    _require_store(target, "'engram reembed' embeds a store's facts again")
    with (
        phases(quiet=bool(args.json)) as tell,
        engram.open(target, embedder=embedder, reembed=True, progress=tell),
    ):
        pass
    model = {"model": embedder.model, "dimension": embedder.dimension}
    line = f"{describe(target)}: every fact is embedded by {embedder.model}"
    return Output({"store": describe(target), "embedder": model}, [line])


def _serve(args: argparse.Namespace) -> Output:
    """The service on the environment's settings, with this command line's options
    (global ones included: ``engram --embedder none serve``) over them."""
    from engram.cli.render import Output
    from engram.cli.serve import serve

    settings = Settings.from_env(os.environ)
    if args.host is not None and not args.host.strip():
        raise InvalidInput("--host must name a host or an address, e.g. 127.0.0.1")
    serve(
        dataclasses.replace(
            settings,
            db_path=str(args.db) if args.db is not None else settings.db_path,
            embedder=args.embedder or settings.embedder,
            host=settings.host if args.host is None else args.host.strip(),
            port=settings.port if args.port is None else args.port,
            access_log=settings.access_log and not args.no_access_log,
        )
    )
    return Output({"stopped": True}, ["engram stopped"])


def _backup(args: argparse.Namespace) -> Output:
    from engram.cli.render import Output

    target = _db_path(args)
    tools = Settings.from_env(os.environ).pg_bin
    made = backend_for(target).backup(target, args.dest_dir, keep=args.keep, tools_dir=tools)
    return Output({"backup": str(made)}, [f"backed up to {made}"])


def _scrub(args: argparse.Namespace) -> Output:
    from engram.cli.render import Output

    target = _db_path(args)
    _require_store(target, "'engram scrub' scrubs a store's files")
    done = backend_for(target).scrub(target, vectors=args.vectors)
    lines = [
        f"{describe(target)}: scrubbed in {done.seconds:.1f} s"
        + (f", {len(done.rewritten)} tables written anew" if done.rewritten else "")
        + ("" if done.was_due else " (no write had erased words since the last scrub)")
    ]
    if done.still_due:
        lines.append("a scrub is still due (words were erased meanwhile, or a reader held the log)")
    lines += [f"may still hold erased words: {left}" for left in done.left]
    data = {
        "store": describe(target),
        **dataclasses.asdict(done),
        "seconds": round(done.seconds, 3),
    }
    return Output(data, lines)


def _restore(args: argparse.Namespace) -> Output:
    from engram.cli.render import Output

    target = _db_path(args)
    tools = Settings.from_env(os.environ).pg_bin
    kept = backend_for(target).restore(args.backup_dir, target, tools_dir=tools)
    lines = [f"restored {args.backup_dir} to {target}"]
    if kept is not None:
        lines.append(f"the store it replaced is kept at {kept}")
    return Output({"restored": str(args.backup_dir), "kept": str(kept) if kept else None}, lines)


def _token(args: argparse.Namespace) -> Output:
    from engram.cli import tokens
    from engram.cli.render import Output

    if args.service:
        token, digest = tokens.service_token()
        print(f"configure the service with ENGRAM_SERVICE_TOKENS={digest}", file=sys.stderr)
        return Output({"token": token, "sha256": digest}, [token])
    settings = Settings.from_env(os.environ)
    token = tokens.person_token(settings, args.person, ttl=timedelta(seconds=args.ttl))
    return Output({"token": token, "person": args.person, "expires_in": args.ttl}, [token])


# -- running --------------------------------------------------------------------------
def _db_path(args: argparse.Namespace) -> str:
    if args.db is not None:
        return str(args.db)
    return Settings.from_env(os.environ).db_path


def _open(args: argparse.Namespace, settings: Settings) -> Memory:
    """The store with the settings of the environment; commands that never embed
    (listing, working memory, fork, compact) open it without loading a model or making a
    reranker."""
    kind = args.embedder or settings.embedder if args.embeds else "none"
    target = args.db if args.db is not None else settings.db_path
    embedder = settings.make_embedder(kind)
    reranker = settings.make_reranker() if args.embeds else None
    chat, recogniser = settings.make_chat(), settings.make_recogniser()
    if args.handler in READING or getattr(args, "dry_run", False):  # settings first
        dry = " --dry-run" if getattr(args, "dry_run", False) else ""
        _require_store(str(target), f"'engram {args.handler}{dry}' only reads")
    return engram.open(
        target,
        embedder=embedder,
        reranker=reranker,
        **settings.store_options(),
        chat=chat,
        recogniser=recogniser,
    )


def _run(args: argparse.Namespace) -> Output:
    if args.scoped and args.resource is None:
        inner = (
            "working_command",
            "session_command",
            "graph_command",
            "entity_command",
            "feedback_command",
        )
        command = " ".join(filter(None, (args.command, *(getattr(args, n, None) for n in inner))))
        raise InvalidInput(
            f"'engram {command}' needs --resource ID",
            hint="the resource whose memory it reads or writes",
        )
    if getattr(args, "file_handler", None) is not None:
        file_handler: Callable[[argparse.Namespace], Output] = args.file_handler
        return file_handler(args)
    from engram.cli.commands import HANDLERS

    settings = Settings.from_env(os.environ)
    args.store = str(args.db) if args.db is not None else settings.db_path
    args.owner = settings.owner_uid
    if args.handler.startswith("app "):
        Acting.owner(args.owner)  # who it acts as is checked before the store is looked at
    with _open(args, settings) as mem:
        return HANDLERS[args.handler](mem.acting(actor=_user(), via="cli"), args)


def _require_store(target: str, why: str) -> None:
    """NotFound when there is no store at ``target`` (opening would create one)."""
    if not backend_for(target).exists(target):
        raise NotFound(
            f"no store at {describe(target)}: {why}, and creates none",
            hint="check --db or ENGRAM_DB_PATH (ENGRAM_DB_URL); the first command that "
            "writes (engram remember, engram serve) creates the store",
        )


def _user() -> str:
    """Who runs the command, as the system names them: the ledger's writer."""
    try:
        return getpass.getuser() or "cli"
    except (KeyError, OSError):  # no name for this uid (a bare container)
        return "cli"


def _fail(
    code: str,
    message: str,
    exit_code: int,
    as_json: bool,
    hint: str | None = None,
    details: dict[str, object] | None = None,
) -> int:
    print(f"error[{code}]: {message}" + (f" ({hint})" if hint else ""), file=sys.stderr)
    for line in _listed(details):
        print(line, file=sys.stderr)
    if as_json:
        from engram.cli import render

        data = render.error_data(code, message, hint)
        if details:
            data["error"] |= details
        print(render.dumps(data))
    return exit_code


SHOWN = 20  # bad records a failed import lists on the terminal


def _listed(details: dict[str, object] | None) -> list[str]:
    """Each bad record of a refused import (the first :data:`SHOWN`, then how many more),
    in the file's order."""
    errors = (details or {}).get("errors")
    if not isinstance(errors, list):
        return []
    lines = [f"  line {e['line']}, {e['field']}: {e['message']}" for e in errors[:SHOWN]]
    if len(errors) > SHOWN:
        lines.append(f"  ... and {len(errors) - SHOWN} more")
    return lines


def main(argv: list[str] | None = None) -> int:
    """Runs one command; returns the exit code (0, an error's ``exit_code``, or 70)."""
    offline.offline()  # the command owns its process: no dependency reaches out by itself
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
        return _fail(exc.code, exc.message, exc.exit_code, as_json, exc.hint, exc.details)
    except KeyboardInterrupt:
        return _fail("interrupted", "interrupted", EXIT_INTERRUPTED, as_json)
    except Exception:
        if debugging(os.environ):
            traceback.print_exc()
        return _fail("internal", "internal error", EXIT_INTERNAL, as_json)
