"""Scopes: whose memory a row belongs to, and the canonical storage key for it.

The key escapes each part (``%`` and ``:``), so a key never contains an unescaped
separator and two different refs can never share a key: ``resource "acme:corp"``
and ``team "acme" + resource "corp"`` stay apart.
"""

from __future__ import annotations

from dataclasses import dataclass

from engram.core.errors import InvalidInput
from engram.core.text import check_text

MAX_PART_CHARS = 256


def _check_part(value: object, name: str) -> str:
    return check_text(value, name, max_chars=MAX_PART_CHARS)


def _escape(part: str) -> str:
    return part.replace("%", "%25").replace(":", "%3A")


def _unescape(part: str) -> str:
    return part.replace("%3A", ":").replace("%25", "%")


@dataclass(frozen=True, slots=True)
class ResourceRef:
    """An agent's resource: ``resource_id`` plus an optional ``team_id``.

    Two refs with the same parts share memory; a different ``team_id`` does not.
    Raises :class:`InvalidInput` for an empty or over-long part.
    """

    resource_id: str
    team_id: str | None = None

    def __post_init__(self) -> None:
        _check_part(self.resource_id, "resource_id")
        if self.team_id is not None:
            _check_part(self.team_id, "team_id")

    @property
    def key(self) -> str:
        """The canonical storage key of this scope (injective)."""
        if self.team_id is None:
            return f"r:{_escape(self.resource_id)}"
        return f"t:{_escape(self.team_id)}:{_escape(self.resource_id)}"

    def child(self, resource_id: str) -> ResourceRef:
        """The ref of a forked child: same team, another resource."""
        return ResourceRef(resource_id, team_id=self.team_id)


def parse_key(key: str) -> ResourceRef:
    """The ref a key was built from; the inverse of :attr:`ResourceRef.key`."""
    kind, _, rest = key.partition(":")
    parts = rest.split(":")
    if kind == "r" and len(parts) == 1:
        return ResourceRef(_unescape(parts[0]))
    if kind == "t" and len(parts) == 2:
        return ResourceRef(_unescape(parts[1]), team_id=_unescape(parts[0]))
    raise InvalidInput(f"not a scope key: {key!r}")


Scope = ResourceRef
