"""Configuration from the environment (``ENGRAM_…``), read only by the edges (CLI, service).

Each variable is declared once, in ``SETTINGS`` below: its name, the ``Settings`` field it
fills, its parser, its default as people see it and its help. The loader walks that table,
and docs/configuration.md's settings table is generated from it (``make settings-table``, or
``python -m engram.settings --markdown`` to print it). Adding a variable is one entry there
and one field of ``Settings``.

A blank variable is an unset one. Every bad value is an InvalidInput naming the variable;
setting only one of the embeddings URL and model is one too, as is only one of the rerank
URL and model or of the LLM URL and model, and so is setting both ``ENGRAM_DB_PATH`` and
``ENGRAM_DB_URL``.
"""

from __future__ import annotations

import argparse
import ipaddress
import math
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from engram import generated
from engram.backends import is_url
from engram.core.errors import CapabilityMissing, InvalidInput
from engram.core.limits import MAX_COUNT

if TYPE_CHECKING:
    from engram.core.consolidation import Policy
    from engram.core.ports import ChatModel, Embedder, NameRecogniser, Reranker

EmbedderKind = Literal["local", "e5", "remote", "none"]
DEFAULT_DB_PATH = "./engram.db"
DEFAULT_PORT = 4600
MAX_PORT = 65535
_TRUE, _FALSE = {"true", "1", "yes", "on"}, {"false", "0", "no", "off"}


class StoreOptions(TypedDict):
    """What every surface that opens a store (the service, the CLI) passes
    :func:`engram.open` from the settings, by its parameters' names."""

    max_facts: int
    vector_index_above: int | None
    text_base_above: int | None
    max_age: timedelta | None
    trash_retention: timedelta | None
    ledger_retention: timedelta | None
    extractor: str
    self_improve: bool | Policy


Parser = Callable[[str, str], object]
"""``(value, name)``: the value of a set variable (stripped), or InvalidInput naming ``name``."""


@dataclass(frozen=True, slots=True)
class Setting:
    """One ``ENGRAM_…`` variable. ``default`` is written as one would set the variable (a test
    holds it equal to the field's default); ``default_note`` qualifies it in the docs."""

    name: str
    field: str
    parse: Parser
    default: str = ""
    help: str = ""
    default_note: str = ""


@dataclass(frozen=True, slots=True)
class Settings:
    db_path: str = DEFAULT_DB_PATH  # the store: a SQLite file, or a PostgreSQL URL
    memory_enabled: bool = True
    embedder: EmbedderKind = "local"
    embeddings_url: str = ""
    embeddings_model: str = ""
    embeddings_api_key: str = ""
    embeddings_asymmetric: bool = False
    embeddings_timeout_ms: int = 30_000
    rerank_url: str = ""
    rerank_model: str = ""
    rerank_api_key: str = ""
    rerank_timeout_ms: int = 30_000
    coalesce_embeddings: bool = True  # the service's only: engram.open embeds as called
    llm_url: str = ""
    llm_model: str = ""
    llm_api_key: str = ""
    llm_timeout_ms: int = 60_000
    spacy_model: str = ""
    max_facts: int = 0
    vector_index_above: int = 0  # 0: the backend's own threshold
    text_base_above: int = 0  # 0: the backend's own threshold
    max_age_ms: int = 0
    trash_retention_days: int = 30
    ledger_retention_days: int = 90
    extractor: str = "rules"
    self_improve: bool = True
    prune_below: float = 0.2
    prune_after_days: int = 30
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    owner_uid: str = ""
    jwt_secret: str = ""
    jwt_public_key: str = ""  # the PEM text, read from the file the variable names
    jwt_issuer: str = ""
    jwt_audience: str = ""
    service_token_hashes: tuple[str, ...] = ()
    allow_unauthenticated: bool = False
    access_log: bool = True
    ingest_allow_private: bool = False
    pg_bin: str = ""
    debug: bool = False  # the CLI reads it with debugging(), while failing

    @property
    def auth_configured(self) -> bool:
        return bool(self.jwt_secret or self.jwt_public_key or self.service_token_hashes)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Settings:
        """Settings from ``env`` (e.g. ``os.environ``), one ``SETTINGS`` entry per variable;
        raises InvalidInput on a bad value or a bad combination of them."""
        given = {s.name: s for s in SETTINGS if env.get(s.name, "").strip()}
        _check_combination(given)
        values: dict[str, Any] = {
            s.field: s.parse(env[s.name].strip(), s.name) for s in given.values()
        }
        if "ENGRAM_EMBEDDINGS_URL" in given and "ENGRAM_EMBEDDER" not in given:
            values["embedder"] = "remote"
        return replace(cls(), **values)

    def check_exposure(self) -> None:
        """Refuses to serve beyond loopback with no auth configured, unless
        ``ENGRAM_ALLOW_UNAUTHENTICATED`` says so explicitly."""
        if _loopback(self.host) or self.auth_configured or self.allow_unauthenticated:
            return
        raise InvalidInput(
            f"refusing to listen on {self.host} with no auth configured: anyone who can reach "
            "it could read and rewrite every memory",
            hint="set ENGRAM_SERVICE_TOKENS and ENGRAM_JWT_SECRET or ENGRAM_JWT_PUBLIC_KEY, "
            "or ENGRAM_ALLOW_UNAUTHENTICATED=true",
        )

    @property
    def max_age(self) -> timedelta | None:
        return timedelta(milliseconds=self.max_age_ms) if self.max_age_ms else None

    @property
    def trash_retention(self) -> timedelta | None:
        return timedelta(days=self.trash_retention_days) if self.trash_retention_days else None

    @property
    def ledger_retention(self) -> timedelta | None:
        return timedelta(days=self.ledger_retention_days) if self.ledger_retention_days else None

    def store_options(self) -> StoreOptions:
        """The store's bounds and thresholds these settings give (0: the default)."""
        return StoreOptions(
            max_facts=self.max_facts,
            vector_index_above=self.vector_index_above or None,
            text_base_above=self.text_base_above or None,
            max_age=self.max_age,
            trash_retention=self.trash_retention,
            ledger_retention=self.ledger_retention,
            extractor=self.extractor,
            self_improve=self.consolidation() or False,
        )

    def consolidation(self) -> Policy | None:
        """What consolidation prunes; None when self-improvement is off."""
        from engram.core.consolidation import Policy

        if not self.self_improve:
            return None
        return Policy(self.prune_below, timedelta(days=self.prune_after_days))

    def make_embedder(self, kind: EmbedderKind | None = None) -> Embedder | None:
        """The embedder these settings name (or ``kind``); None for ``none``."""
        chosen = kind or self.embedder
        if chosen == "none":
            return None
        if chosen == "local" or chosen == "e5":
            from engram.embedders import packaged

            return packaged.load(chosen)
        if not self.embeddings_url:
            raise InvalidInput(
                "the remote embedder needs ENGRAM_EMBEDDINGS_URL and ENGRAM_EMBEDDINGS_MODEL"
            )
        from engram.embedders.remote import RemoteEmbedder

        return RemoteEmbedder(
            self.embeddings_url,
            self.embeddings_model,
            api_key=self.embeddings_api_key or None,
            asymmetric=self.embeddings_asymmetric,
            timeout=self.embeddings_timeout_ms / 1000,
        )

    def make_reranker(self) -> Reranker | None:
        """The remote reranker these settings name; None when no rerank URL is set."""
        if not self.rerank_url:
            return None
        from engram.embedders.reranker import RemoteReranker

        try:
            return RemoteReranker(
                self.rerank_url,
                self.rerank_model,
                api_key=self.rerank_api_key or None,
                timeout=self.rerank_timeout_ms / 1000,
            )
        except InvalidInput as exc:
            raise InvalidInput(
                f"the rerank settings are invalid: {exc.message}",
                hint="check ENGRAM_RERANK_URL, ENGRAM_RERANK_MODEL and ENGRAM_RERANK_API_KEY",
            ) from exc

    def make_chat(self) -> ChatModel | None:
        """The remote chat model these settings name (the graph's ``llm`` extractor reads
        facts with it); None when no LLM URL is set."""
        if not self.llm_url:
            return None
        from engram.embedders.chat import RemoteChat

        try:
            return RemoteChat(
                self.llm_url,
                self.llm_model,
                api_key=self.llm_api_key or None,
                timeout=self.llm_timeout_ms / 1000,
            )
        except InvalidInput as exc:
            raise InvalidInput(
                f"the LLM settings are invalid: {exc.message}",
                hint="check ENGRAM_LLM_URL, ENGRAM_LLM_MODEL and ENGRAM_LLM_API_KEY",
            ) from exc

    def make_recogniser(self) -> NameRecogniser | None:
        """The spaCy pipeline these settings name (the graph's ``spacy`` extractor reads
        facts with it), checked as installed now and loaded on first use; None when
        ``ENGRAM_SPACY_MODEL`` is unset."""
        if not self.spacy_model:
            return None
        from engram.embedders.spacy import SpacyRecogniser

        try:
            return SpacyRecogniser(self.spacy_model)
        except CapabilityMissing as exc:
            raise CapabilityMissing(f"ENGRAM_SPACY_MODEL: {exc.message}", hint=exc.hint) from exc


# Variables that go together: each names a model and where it is served.
PAIRS = (
    ("ENGRAM_EMBEDDINGS_URL", "ENGRAM_EMBEDDINGS_MODEL"),
    ("ENGRAM_RERANK_URL", "ENGRAM_RERANK_MODEL"),
    ("ENGRAM_LLM_URL", "ENGRAM_LLM_MODEL"),
)


def _check_combination(given: Collection[str]) -> None:
    """The rules across variables, checked on which are set, before any value is parsed."""
    for url, model in PAIRS:
        if (url in given) != (model in given):
            raise InvalidInput(
                f"{url} and {model} go together: only {url if url in given else model} is set"
            )
    if "ENGRAM_DB_PATH" in given and "ENGRAM_DB_URL" in given:
        raise InvalidInput("set one of ENGRAM_DB_PATH (a SQLite file) and ENGRAM_DB_URL, not both")


def debugging(env: Mapping[str, str]) -> bool:
    """Whether ``ENGRAM_DEBUG`` asks for an internal error's traceback. Read on its own and
    never refused: it is consulted while failing, perhaps because another setting is bad."""
    return env.get("ENGRAM_DEBUG", "").strip().lower() in _TRUE


def _text(value: str, name: str) -> str:
    return value


def _flag(value: str, name: str) -> bool:
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    raise InvalidInput(f"{name} must be true or false, got {value!r}")


def _extractor(value: str, name: str) -> str:
    chosen = value.lower()
    if chosen in ("rules", "off"):
        return chosen
    raise InvalidInput(f"{name} must be rules or off, got {value!r}")


def _embedder_kind(value: str, name: str) -> EmbedderKind:
    chosen = value.lower()
    if chosen == "local":
        return "local"
    if chosen == "e5":
        return "e5"
    if chosen == "remote":
        return "remote"
    if chosen == "none":
        return "none"
    raise InvalidInput(f"{name} must be local, e5, remote or none, got {value!r}")


def _postgres_url(value: str, name: str) -> str:
    if not is_url(value):
        raise InvalidInput(f"{name} must be a postgresql:// URL")
    return value


def _pem(path: str, name: str) -> str:
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise InvalidInput(f"{name} names {path}, which cannot be read: {exc}") from exc
    if "-----BEGIN PUBLIC KEY-----" not in text:
        raise InvalidInput(f"{name} names {path}, which holds no PEM public key")
    return text


def _hashes(raw: str, name: str) -> tuple[str, ...]:
    """Service tokens are configured as their sha256 (hex), never as the tokens."""
    hashes = tuple(part.strip().lower() for part in raw.split(",") if part.strip())
    for value in hashes:
        if len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
            raise InvalidInput(
                f"{name} holds sha256 hashes (64 hex digits, comma-separated), not tokens"
            )
    return hashes


def parse_integer(raw: str, name: str, *, minimum: int, maximum: int) -> int:
    """``raw`` as a decimal integer from ``minimum`` to ``maximum``, or InvalidInput naming
    ``name``. Only ASCII digits count (``int`` also takes ``¹``-like digits, and fails on
    thousands of them), and the bounds are checked before anything stores the value."""
    digits = raw.removeprefix("-")
    if not (digits.isascii() and digits.isdigit()) or len(digits) > len(str(maximum)) + 1:
        raise InvalidInput(f"{name} must be an integer from {minimum} to {maximum}, got {raw!r}")
    value = int(raw)
    if not minimum <= value <= maximum:
        raise InvalidInput(f"{name} must be an integer from {minimum} to {maximum}, got {raw!r}")
    return value


def _strength(value: str, name: str) -> float:
    try:  # ASCII only: float() also reads other scripts' digits ("٣" is 3.0)
        number = float(value) if value.isascii() else math.nan
    except ValueError:
        number = math.nan
    if not 0.0 <= number <= 10.0:
        raise InvalidInput(f"{name} must be a number from 0 to 10, got {value!r}")
    return number


def _integer(minimum: int = 0, maximum: int = MAX_COUNT) -> Parser:
    return partial(parse_integer, minimum=minimum, maximum=maximum)


# The order is docs/configuration.md's. Help is Markdown, shown as written.
SETTINGS: tuple[Setting, ...] = (
    Setting("ENGRAM_DB_PATH", "db_path", _text, DEFAULT_DB_PATH, "the SQLite file"),
    Setting(
        "ENGRAM_DB_URL",
        "db_path",
        _postgres_url,
        help="a `postgresql://` database (with pgvector) instead; set one of the two",
    ),
    Setting(
        "ENGRAM_PG_BIN",
        "pg_bin",
        _text,
        help="directory of `pg_dump`/`pg_restore` for `engram backup` and `engram restore` "
        "(default: `PATH`)",
    ),
    Setting(
        "ENGRAM_MEMORY_ENABLED",
        "memory_enabled",
        _flag,
        "true",
        "`false`: the service's memory routes answer 501",
    ),
    Setting(
        "ENGRAM_EMBEDDER",
        "embedder",
        _embedder_kind,
        "local",
        "`local` (all-MiniLM-L6-v2), `e5` (multilingual-e5-small, `engram-durable[e5]`), `remote` "
        "or `none`; a store written by another model opens only with `reembed`",
        default_note="`remote` when a URL is set",
    ),
    Setting(
        "ENGRAM_EMBEDDINGS_URL",
        "embeddings_url",
        _text,
        help="an OpenAI-compatible `/v1/embeddings` endpoint",
    ),
    Setting(
        "ENGRAM_EMBEDDINGS_MODEL",
        "embeddings_model",
        _text,
        help="the model name sent to it; setting only one of URL and model is an error",
    ),
    Setting(
        "ENGRAM_EMBEDDINGS_API_KEY",
        "embeddings_api_key",
        _text,
        help="bearer token; empty sends no `Authorization` header",
    ),
    Setting(
        "ENGRAM_EMBEDDINGS_ASYMMETRIC",
        "embeddings_asymmetric",
        _flag,
        "false",
        "send `input_type` `passage` when storing, `query` when recalling",
    ),
    Setting(
        "ENGRAM_EMBEDDINGS_TIMEOUT_MS",
        "embeddings_timeout_ms",
        _integer(minimum=1),
        "30000",
        "bound on one embeddings request, body included",
    ),
    Setting(
        "ENGRAM_RERANK_URL",
        "rerank_url",
        _text,
        help="a Cohere-style rerank endpoint (e.g. `/v1/rerank`): hybrid recall reorders its "
        "best 30 candidates (or `top_k`, if more) by its scores; unset, none",
    ),
    Setting(
        "ENGRAM_RERANK_MODEL",
        "rerank_model",
        _text,
        help="the model name sent to it; setting only one of URL and model is an error",
    ),
    Setting(
        "ENGRAM_RERANK_API_KEY",
        "rerank_api_key",
        _text,
        help="bearer token; empty sends no `Authorization` header",
    ),
    Setting(
        "ENGRAM_RERANK_TIMEOUT_MS",
        "rerank_timeout_ms",
        _integer(minimum=1),
        "30000",
        "bound on one rerank request, body included",
    ),
    Setting(
        "ENGRAM_COALESCE_EMBEDDINGS",
        "coalesce_embeddings",
        _flag,
        "true",
        "the service embeds the texts of concurrent requests together, one model call per "
        "batch; `false`: each request alone",
    ),
    Setting(
        "ENGRAM_LLM_URL",
        "llm_url",
        _text,
        help="an OpenAI-compatible `/v1/chat/completions` endpoint: `mem.graph.extract(ref, "
        'extractor="llm")` reads the facts it has not read with it, never inline; unset, none',
    ),
    Setting(
        "ENGRAM_LLM_MODEL",
        "llm_model",
        _text,
        help="the model name sent to it; setting only one of URL and model is an error",
    ),
    Setting(
        "ENGRAM_LLM_API_KEY",
        "llm_api_key",
        _text,
        help="bearer token; empty sends no `Authorization` header",
    ),
    Setting(
        "ENGRAM_LLM_TIMEOUT_MS",
        "llm_timeout_ms",
        _integer(minimum=1),
        "60000",
        "bound on one chat request, body included",
    ),
    Setting(
        "ENGRAM_SPACY_MODEL",
        "spacy_model",
        _text,
        help="an installed spaCy pipeline, by package name or directory (`engram-durable[nlp]`; "
        'never downloaded): `mem.graph.extract(ref, extractor="spacy")` reads the facts it '
        "has not read with it, never inline; loaded on first use; unset, none",
    ),
    Setting(
        "ENGRAM_MAX_FACTS",
        "max_facts",
        _integer(),
        "0",
        "keep at most this many facts per scope, oldest dropped first (0: no cap)",
    ),
    Setting(
        "ENGRAM_VECTOR_INDEX_ABOVE",
        "vector_index_above",
        _integer(),
        "0",
        "scopes of at least this many facts search their vectors through an approximate "
        "index (SQLite: a graph file beside the database, `<file>-vectors/`, built in the "
        "background; PostgreSQL: an HNSW index of the scope); exact search below (0: the "
        "backend's own, SQLite 50,000, PostgreSQL 10,000)",
    ),
    Setting(
        "ENGRAM_TEXT_BASE_ABOVE",
        "text_base_above",
        _integer(),
        "0",
        "SQLite: scopes of at least this many facts save their common words' postings in "
        "the file, built in the background, so a new process reads such a word as one row "
        "(0: 100,000); PostgreSQL keeps none",
    ),
    Setting(
        "ENGRAM_MAX_AGE_MS",
        "max_age_ms",
        _integer(),
        "0",
        "drop facts older than this when a scope next remembers (0: never)",
    ),
    Setting(
        "ENGRAM_TRASH_RETENTION_DAYS",
        "trash_retention_days",
        _integer(maximum=36_500),
        "30",
        "a softly forgotten fact is deleted for good after this many days (0: kept)",
    ),
    Setting(
        "ENGRAM_LEDGER_RETENTION_DAYS",
        "ledger_retention_days",
        _integer(maximum=36_500),
        "90",
        "a compaction drops ledger entries older than this many days (0: kept)",
    ),
    Setting(
        "ENGRAM_SELF_IMPROVE",
        "self_improve",
        _flag,
        "true",
        "`false` turns consolidation off: `engram consolidate` and its route answer 501 and "
        "agents get no `memory_reflect` tool",
    ),
    Setting(
        "ENGRAM_PRUNE_BELOW",
        "prune_below",
        _strength,
        "0.2",
        "consolidation prunes unverified facts weaker than this (0 to 10) once old enough",
    ),
    Setting(
        "ENGRAM_PRUNE_AFTER_DAYS",
        "prune_after_days",
        _integer(maximum=36_500),
        "30",
        "how old, in days, a weak fact must be before consolidation prunes it",
    ),
    Setting(
        "ENGRAM_EXTRACTOR",
        "extractor",
        _extractor,
        "rules",
        "how facts' words fill the knowledge graph: rules (inline, no model) or off",
    ),
    Setting("ENGRAM_HOST", "host", _text, "127.0.0.1", "the address `engram serve` listens on"),
    Setting(
        "ENGRAM_PORT",
        "port",
        _integer(maximum=MAX_PORT),
        str(DEFAULT_PORT),
        "the port `engram serve` listens on",
    ),
    Setting(
        "ENGRAM_OWNER_UID",
        "owner_uid",
        _text,
        help="the person the runtime is launched as: `engram app` (no session) acts as them, "
        "own memories only",
    ),
    Setting(
        "ENGRAM_JWT_SECRET",
        "jwt_secret",
        _text,
        help="HS256 secret verifying people's bearer tokens",
    ),
    Setting(
        "ENGRAM_JWT_PUBLIC_KEY",
        "jwt_public_key",
        _pem,
        help="path of a PEM public key verifying RS256/ES256 tokens",
    ),
    Setting(
        "ENGRAM_JWT_ISSUER",
        "jwt_issuer",
        _text,
        help="the issuer (`iss`) checked in tokens when set",
    ),
    Setting(
        "ENGRAM_JWT_AUDIENCE",
        "jwt_audience",
        _text,
        help="the audience (`aud`) checked in tokens when set",
    ),
    Setting(
        "ENGRAM_SERVICE_TOKENS",
        "service_token_hashes",
        _hashes,
        help="sha256 (hex) of each token the agent routes accept, comma-separated",
    ),
    Setting(
        "ENGRAM_ALLOW_UNAUTHENTICATED",
        "allow_unauthenticated",
        _flag,
        "false",
        "`true` lets the service listen beyond loopback with no auth",
    ),
    Setting(
        "ENGRAM_ACCESS_LOG",
        "access_log",
        _flag,
        "true",
        "one JSON line per request on stderr (method, path, status, duration_ms); `false`: none",
    ),
    Setting(
        "ENGRAM_INGEST_ALLOW_PRIVATE",
        "ingest_allow_private",
        _flag,
        "false",
        "`true` lets `engram ingest URL` and the service's `{url}` ingest fetch from loopback, "
        "private, link-local and other non-public addresses (refused by default, at every "
        "redirect)",
    ),
    Setting(
        "ENGRAM_DEBUG",
        "debug",
        _flag,
        "false",
        "`true` (or `1`): a command failing with an internal error (exit 70) prints the traceback",
    ),
)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


TABLE_BEGIN, TABLE_END = "<!-- settings:begin -->", "<!-- settings:end -->"


def markdown_table() -> str:
    """The settings as docs/configuration.md shows them: one row per variable, in
    ``SETTINGS`` order."""
    lines = ["| variable | default | meaning |", "| --- | --- | --- |"]
    for s in SETTINGS:
        default = f"`{s.default}`" if s.default else ""
        if s.default_note:
            default += f" ({s.default_note})"
        cells = (f"`{s.name}`", default, s.help)
        lines.append("|" + "|".join(f" {cell} " if cell else " " for cell in cells) + "|")
    return "\n".join(lines) + "\n"


def with_table(document: str) -> str:
    """``document`` with what lies between ``TABLE_BEGIN`` and ``TABLE_END`` replaced by
    ``markdown_table()``; raises ValueError when it has no such markers."""
    return generated.between(document, TABLE_BEGIN, TABLE_END, markdown_table())


def _main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m engram.settings")
    choice = parser.add_mutually_exclusive_group(required=True)
    choice.add_argument("--markdown", action="store_true", help="print the settings table")
    choice.add_argument("--write", metavar="FILE", type=Path, help="rewrite FILE's table")
    args = parser.parse_args(argv)
    if args.markdown:
        print(markdown_table(), end="")
    else:
        args.write.write_text(with_table(args.write.read_text()))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
