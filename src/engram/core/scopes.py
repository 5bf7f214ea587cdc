"""Scopes: whose memory a row belongs to, and the canonical storage key for it.

The key escapes each part (``%`` and ``:``), so a key never contains an unescaped
separator and two different refs can never share a key: ``resource "acme:corp"``
and ``team "acme" + resource "corp"`` stay apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

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


APP_PREFIX = "app:"


@dataclass(frozen=True, slots=True)
class PersonAppRef:
    """What an application remembers of one person: a verified uid and ``app:<uid|id>``.

    Every deployment naming the same application shares it. Raises InvalidInput for an
    empty or over-long part, or an application not written ``app:<uid>``.
    """

    person: str
    app: str

    def __post_init__(self) -> None:
        _check_part(self.person, "person")
        check_app(self.app)

    @property
    def key(self) -> str:
        """The canonical storage key of this scope (injective, apart from agent scopes)."""
        return person_prefix(self.person) + _escape(self.app)


def person_prefix(person: str) -> str:
    """What the keys of every application's memory of ``person`` start with."""
    return f"p:{_escape(person)}:"


def check_app(app: object) -> str:
    """An application's name as memory keys it: ``app:`` and its uid (or id)."""
    text = _check_part(app, "app")
    if not text.startswith(APP_PREFIX) or len(text) == len(APP_PREFIX):
        raise InvalidInput(f"app must be written app:<uid>, got {text!r}")
    return text


Scope = ResourceRef | PersonAppRef


@lru_cache(maxsize=4096)  # every fact read names its scope; scopes are immutable
def parse_key(key: str) -> Scope:
    """The scope a key was built from; the inverse of ``.key``."""
    kind, _, rest = key.partition(":")
    parts = rest.split(":")
    if kind == "r" and len(parts) == 1:
        return ResourceRef(_unescape(parts[0]))
    if kind == "t" and len(parts) == 2:
        return ResourceRef(_unescape(parts[1]), team_id=_unescape(parts[0]))
    if kind == "p" and len(parts) == 2:
        return PersonAppRef(_unescape(parts[0]), _unescape(parts[1]))
    raise InvalidInput(f"not a scope key: {key!r}")
