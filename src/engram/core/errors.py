"""One error taxonomy for the whole of engram.

Every error engram raises on purpose is an :class:`EngramError`. Each subclass has a
stable ``code`` (part of the public contract: the HTTP service, the CLI and the agent
tools all speak it) and an ``http_status``. Messages are safe to show to the caller;
an optional ``hint`` says what to do about it.
"""

from __future__ import annotations


class EngramError(Exception):
    """Base class of every error engram raises on purpose."""

    code = "error"
    http_status = 500
    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if self.hint is None else f"{self.message} ({self.hint})"

    @property
    def details(self) -> dict[str, object]:
        """What the error names beyond its message, for the wire (none by default)."""
        return {}


class InvalidInput(EngramError):
    """The caller's input is malformed or outside a documented limit."""

    code = "invalid_input"
    http_status = 400
    exit_code = 2


class TooLarge(InvalidInput):
    """A source over a documented size: too many bytes or files (the service's 413)."""

    code = "too_large"
    http_status = 413
    exit_code = 2


class Unauthenticated(EngramError):
    """No verified identity: no token, a bad signature, an expired token."""

    code = "unauthenticated"
    http_status = 401
    exit_code = 8


class Forbidden(EngramError):
    """A verified identity that may not do this (e.g. a service token on a person's route)."""

    code = "forbidden"
    http_status = 403
    exit_code = 9


class Unprocessable(EngramError):
    """Well-formed input the domain refuses (an application as its own reader, empty words)."""

    code = "unprocessable"
    http_status = 422
    exit_code = 2


class BadRecords(Unprocessable):
    """An import whose records the domain refuses: every bad one, by line and field."""

    code = "bad_records"

    def __init__(
        self,
        message: str,
        *,
        errors: tuple[tuple[int, str, str], ...],
        hint: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.errors = errors

    @property
    def details(self) -> dict[str, object]:
        return {
            "errors": [
                {"line": line, "field": name, "message": text} for line, name, text in self.errors
            ]
        }


class NotFound(EngramError):
    """The scope holds no such key or fact."""

    code = "not_found"
    http_status = 404
    exit_code = 3


class Conflict(EngramError):
    """The store is not in the state the caller said it was (count, version, content)."""

    code = "conflict"
    http_status = 409
    exit_code = 4


class RevertBlocked(Conflict):
    """A revert that later changes to the same objects block; ``later`` names them."""

    code = "revert_blocked"

    def __init__(self, message: str, *, later: tuple[int, ...], hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.later = later

    @property
    def details(self) -> dict[str, object]:
        return {"later": list(self.later)}


class EmbedderMismatch(Conflict):
    """The store's vectors were written by another embedding model or dimension."""

    code = "embedder_mismatch"


class CapabilityMissing(EngramError):
    """The operation needs something this store was opened without (an embedder)."""

    code = "capability_missing"
    http_status = 501
    exit_code = 5


class Unavailable(EngramError):
    """A part the request needs is not available now: semantic memory without an embedder,
    or a store still locked by another writer after its waits and retries (retry later)."""

    code = "unavailable"
    http_status = 503
    exit_code = 10


class UpstreamFailure(EngramError):
    """The embedding provider failed or timed out; nothing was stored."""

    code = "upstream_failure"
    http_status = 502
    exit_code = 6


class StorageFailure(EngramError):
    """The local store failed (disk, corruption, bad path). A lock that stays held is
    Unavailable instead. Never an upstream failure."""

    code = "storage_failure"
    http_status = 500
    exit_code = 7


ALL_ERRORS: tuple[type[EngramError], ...] = (
    InvalidInput,
    TooLarge,
    Unauthenticated,
    Forbidden,
    Unprocessable,
    BadRecords,
    Unavailable,
    NotFound,
    Conflict,
    RevertBlocked,
    EmbedderMismatch,
    CapabilityMissing,
    UpstreamFailure,
    StorageFailure,
)
