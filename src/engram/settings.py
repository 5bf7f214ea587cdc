"""Configuration from the environment (``ENGRAM_…``), read only by the edges (CLI, service).

| variable | default | meaning |
| --- | --- | --- |
| ``ENGRAM_DB_PATH`` | ``./engram.db`` | the SQLite file |
| ``ENGRAM_DB_URL`` | | a ``postgresql://`` database instead (with pgvector) |
| ``ENGRAM_PG_BIN`` | | directory of ``pg_dump``/``pg_restore`` for backups (default: PATH) |
| ``ENGRAM_MEMORY_ENABLED`` | ``true`` | ``false``: the service's memory routes answer 501 |
| ``ENGRAM_EMBEDDER`` | ``local`` (``remote`` with a URL) | ``local``, ``remote``, ``none`` |
| ``ENGRAM_EMBEDDINGS_URL`` | | an OpenAI-compatible ``/v1/embeddings`` endpoint |
| ``ENGRAM_EMBEDDINGS_MODEL`` | | the model name sent to it; required with the URL |
| ``ENGRAM_EMBEDDINGS_API_KEY`` | | bearer token; empty sends no Authorization header |
| ``ENGRAM_EMBEDDINGS_ASYMMETRIC`` | ``false`` | send ``input_type`` passage / query |
| ``ENGRAM_EMBEDDINGS_TIMEOUT_MS`` | ``30000`` | bound on one embeddings request, body included |
| ``ENGRAM_MAX_FACTS`` | ``0`` | keep at most this many facts per scope (0: unbounded) |
| ``ENGRAM_MAX_AGE_MS`` | ``0`` | drop facts older than this (0: never) |
| ``ENGRAM_HOST`` / ``ENGRAM_PORT`` | ``127.0.0.1`` / ``4600`` | where the service listens |
| ``ENGRAM_OWNER_UID`` | | the person the service is launched as (scheduled runs act as them) |
| ``ENGRAM_JWT_SECRET`` | | HS256 secret verifying people's bearer tokens |
| ``ENGRAM_JWT_PUBLIC_KEY`` | | path of a PEM public key verifying RS256/ES256 tokens |
| ``ENGRAM_JWT_ISSUER`` / ``ENGRAM_JWT_AUDIENCE`` | | checked when set |
| ``ENGRAM_SERVICE_TOKENS`` | | sha256 (hex) of the tokens the agent routes accept |
| ``ENGRAM_ALLOW_UNAUTHENTICATED`` | ``false`` | allow a non-loopback host without auth |
| ``ENGRAM_ACCESS_LOG`` | ``true`` | one JSON line per request on stderr (``false``: none) |

Every bad value is an InvalidInput naming the variable; setting only one of the URL and
the model is one too.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from engram.backends import is_url
from engram.core.errors import InvalidInput
from engram.core.limits import MAX_COUNT

if TYPE_CHECKING:
    from engram.core.ports import Embedder

EmbedderKind = Literal["local", "remote", "none"]
DEFAULT_DB_PATH = "./engram.db"
DEFAULT_PORT = 4600
MAX_PORT = 65535
_TRUE, _FALSE = {"true", "1", "yes", "on"}, {"false", "0", "no", "off"}


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
    max_facts: int = 0
    max_age_ms: int = 0
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
    pg_bin: str = ""

    @property
    def auth_configured(self) -> bool:
        return bool(self.jwt_secret or self.jwt_public_key or self.service_token_hashes)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Settings:
        """Settings from ``env`` (e.g. ``os.environ``); raises InvalidInput on a bad value."""
        url = env.get("ENGRAM_EMBEDDINGS_URL", "").strip()
        model = env.get("ENGRAM_EMBEDDINGS_MODEL", "").strip()
        if bool(url) != bool(model):
            raise InvalidInput(
                "ENGRAM_EMBEDDINGS_URL and ENGRAM_EMBEDDINGS_MODEL go together: "
                f"only {'ENGRAM_EMBEDDINGS_URL' if url else 'ENGRAM_EMBEDDINGS_MODEL'} is set"
            )
        return cls(
            db_path=_store(env),
            memory_enabled=_flag(env, "ENGRAM_MEMORY_ENABLED", default=True),
            embedder=_kind(env.get("ENGRAM_EMBEDDER", ""), remote_configured=bool(url)),
            embeddings_url=url,
            embeddings_model=model,
            embeddings_api_key=env.get("ENGRAM_EMBEDDINGS_API_KEY", "").strip(),
            embeddings_asymmetric=_flag(env, "ENGRAM_EMBEDDINGS_ASYMMETRIC"),
            embeddings_timeout_ms=_count(env, "ENGRAM_EMBEDDINGS_TIMEOUT_MS", 30_000, minimum=1),
            max_facts=_count(env, "ENGRAM_MAX_FACTS", 0),
            max_age_ms=_count(env, "ENGRAM_MAX_AGE_MS", 0),
            host=env.get("ENGRAM_HOST", "").strip() or "127.0.0.1",
            port=_port(env),
            owner_uid=env.get("ENGRAM_OWNER_UID", "").strip(),
            jwt_secret=env.get("ENGRAM_JWT_SECRET", "").strip(),
            jwt_public_key=_pem(env.get("ENGRAM_JWT_PUBLIC_KEY", "").strip()),
            jwt_issuer=env.get("ENGRAM_JWT_ISSUER", "").strip(),
            jwt_audience=env.get("ENGRAM_JWT_AUDIENCE", "").strip(),
            service_token_hashes=_hashes(env.get("ENGRAM_SERVICE_TOKENS", "")),
            allow_unauthenticated=_flag(env, "ENGRAM_ALLOW_UNAUTHENTICATED"),
            access_log=_flag(env, "ENGRAM_ACCESS_LOG", default=True),
            pg_bin=env.get("ENGRAM_PG_BIN", "").strip(),
        )

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

    def make_embedder(self, kind: EmbedderKind | None = None) -> Embedder | None:
        """The embedder these settings name (or ``kind``); None for ``none``."""
        chosen = kind or self.embedder
        if chosen == "none":
            return None
        if chosen == "local":
            from engram.embedders.local import LocalEmbedder

            return LocalEmbedder()
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


def _kind(value: str, *, remote_configured: bool) -> EmbedderKind:
    chosen = value.strip().lower() or ("remote" if remote_configured else "local")
    if chosen == "local":
        return "local"
    if chosen == "remote":
        return "remote"
    if chosen == "none":
        return "none"
    raise InvalidInput(f"ENGRAM_EMBEDDER must be local, remote or none, got {value!r}")


def _flag(env: Mapping[str, str], name: str, *, default: bool = False) -> bool:
    value = env.get(name, "").strip().lower()
    if not value:
        return default
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise InvalidInput(f"{name} must be true or false, got {env[name]!r}")


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _pem(path: str) -> str:
    if not path:
        return ""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise InvalidInput(
            f"ENGRAM_JWT_PUBLIC_KEY names {path}, which cannot be read: {exc}"
        ) from exc
    if "-----BEGIN PUBLIC KEY-----" not in text:
        raise InvalidInput(f"ENGRAM_JWT_PUBLIC_KEY names {path}, which holds no PEM public key")
    return text


def _hashes(raw: str) -> tuple[str, ...]:
    """Service tokens are configured as their sha256 (hex), never as the tokens."""
    hashes = tuple(part.strip().lower() for part in raw.split(",") if part.strip())
    for value in hashes:
        if len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
            raise InvalidInput(
                "ENGRAM_SERVICE_TOKENS holds sha256 hashes (64 hex digits, comma-separated), "
                "not tokens"
            )
    return hashes


def _port(env: Mapping[str, str]) -> int:
    return _count(env, "ENGRAM_PORT", DEFAULT_PORT, maximum=MAX_PORT)


def _count(
    env: Mapping[str, str], name: str, default: int, *, minimum: int = 0, maximum: int = MAX_COUNT
) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    return parse_integer(raw, name, minimum=minimum, maximum=maximum)


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


def _store(env: Mapping[str, str]) -> str:
    path = env.get("ENGRAM_DB_PATH", "").strip()
    url = env.get("ENGRAM_DB_URL", "").strip()
    if path and url:
        raise InvalidInput("set one of ENGRAM_DB_PATH (a SQLite file) and ENGRAM_DB_URL, not both")
    if url and not is_url(url):
        raise InvalidInput("ENGRAM_DB_URL must be a postgresql:// URL")
    return url or path or DEFAULT_DB_PATH
