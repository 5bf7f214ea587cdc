"""What an operation's parameter may hold, said once: markers the one checker reads.

A parameter of an operation (:mod:`engram.core.ops`) is typed, and bounded by a marker
in its ``Annotated`` type: ``Annotated[str, Text(2000)]`` is text of at most 2,000
characters, not blank. :func:`check` enforces every marker of an operation with the
library's own messages, and :meth:`Marker.schema` says the same rule in JSON Schema, so
the HTTP schema, the agent tools and MCP publish exactly what the library enforces.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

from engram.core import limits
from engram.core.errors import InvalidInput
from engram.core.text import check_text

JSON = dict[str, Any]
T = TypeVar("T")
NO_NUL = "^[^\\x00]*$"
# The whitespace that stripping drops, spelled out for a character set: ``\\s`` differs
# between Python and the ECMA-262 patterns JSON Schema means (U+001C-U+001F, U+0085,
# U+FEFF), so a generated client would take for text what the service strips away.
SPACES = (
    "\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a"
    "\\u2028\\u2029\\u202f\\u205f\\u3000"
)
NOT_BLANK = "^[^\\x00]*[^" + SPACES + "\\x00][^\\x00]*$"


class Marker:
    """A rule for one parameter: how it is checked, and how JSON Schema says it."""

    def check(self, value: Any, name: str) -> Any:
        raise NotImplementedError

    def schema(self) -> JSON:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class Text(Marker):
    """A string of at most ``max_chars`` characters without NUL. ``strip``: surrounding
    whitespace is dropped first; ``empty``: it may be empty (then it is ``None`` when the
    parameter is optional). ``called`` names it in messages instead of its parameter."""

    max_chars: int
    strip: bool = True
    empty: bool = False
    called: str = ""
    pattern: str = ""  # the schema's pattern, when narrower than text (the op reads it)

    def check(self, value: Any, name: str) -> Any:
        name = self.called or name
        return check_text(value, name, max_chars=self.max_chars, strip=self.strip, empty=self.empty)

    def schema(self) -> JSON:
        blank = self.empty or not self.strip
        found: JSON = {"type": "string", "maxLength": self.max_chars}
        if not self.empty:
            found["minLength"] = 1
        found["pattern"] = self.pattern or (NO_NUL if blank else NOT_BLANK)
        return found


@dataclass(frozen=True, slots=True)
class Whole(Marker):
    """An integer from ``low`` to ``high`` (a bool is not one)."""

    low: int = 0
    high: int = limits.MAX_COUNT

    def check(self, value: Any, name: str) -> Any:
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidInput(f"{name} must be an integer, got {value!r}")
        if not self.low <= value <= self.high:
            raise InvalidInput(
                f"{name} must be an integer from {self.low} to {self.high}, got {value}"
            )
        return value

    def schema(self) -> JSON:
        return {"type": "integer", "minimum": self.low, "maximum": self.high}


@dataclass(frozen=True, slots=True)
class Real(Marker):
    """A finite number from ``low`` to ``high``."""

    low: float
    high: float

    def check(self, value: Any, name: str) -> Any:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise InvalidInput(f"{name} must be a number from {self.low:g} to {self.high:g}")
        if not (math.isfinite(value) and self.low <= value <= self.high):
            raise InvalidInput(
                f"{name} must be a number from {self.low:g} to {self.high:g}, got {value!r}"
            )
        return float(value)

    def schema(self) -> JSON:
        return {"type": "number", "minimum": self.low, "maximum": self.high}


@dataclass(frozen=True, slots=True)
class Items(Marker):
    """A list of ``low`` to ``high`` items, each held to ``each``; ``unique`` drops
    repeats (keeping the first) and ``sort`` orders what is left; ``distinct`` refuses
    a repeat instead (where the items' places mean something)."""

    each: Marker
    high: int
    low: int = 0
    unique: bool = True
    sort: bool = False
    item: str = "item"
    distinct: bool = False

    def check(self, value: Any, name: str) -> Any:
        if isinstance(value, str) or not isinstance(value, list | tuple | set | frozenset):
            raise InvalidInput(f"{name} must be a list")
        if len(value) > self.high:
            raise InvalidInput(f"{len(value)} {name} given; the limit is {self.high}")
        if len(value) < self.low:
            raise InvalidInput(
                f"{name} must hold {self.low} to {self.high} {self.item}s, got {len(value)}"
            )
        items = [self.each.check(v, self.item) for v in value]
        if self.distinct and len(set(items)) < len(items):
            twice = next(i for n, i in enumerate(items) if i in items[:n])
            raise InvalidInput(f"{name} names {twice!r} twice; each {self.item} goes once")
        if self.unique:
            items = list(dict.fromkeys(items))
        return tuple(sorted(items) if self.sort else items)

    def schema(self) -> JSON:
        found: JSON = {"type": "array", "items": self.each.schema(), "maxItems": self.high}
        if self.low:
            found["minItems"] = self.low
        if self.distinct or (self.unique and self.low > 1):
            found["uniqueItems"] = True  # refused, or dropped to leave too few
        return found


@dataclass(frozen=True, slots=True)
class Json(Marker):
    """A JSON object with string keys, as metadata is (at most 16 KiB once encoded)."""

    def check(self, value: Any, name: str) -> Any:
        return limits.check_metadata(value)

    def schema(self) -> JSON:
        return {"type": "object"}


@dataclass(frozen=True, slots=True)
class Value(Marker):
    """Any JSON value, null too: at most 64 KiB once encoded, nested at most 64 levels."""

    def check(self, value: Any, name: str) -> Any:
        limits.encode_value(value, name)
        return value

    def schema(self) -> JSON:
        return {}  # any JSON value


@dataclass(frozen=True, slots=True)
class Moment(Marker):
    """A time with its UTC offset."""

    def check(self, value: Any, name: str) -> Any:
        return limits.check_time(value, name)

    def schema(self) -> JSON:
        return {"type": "string", "format": "date-time"}


@dataclass(frozen=True, slots=True)
class Flag(Marker):
    def check(self, value: Any, name: str) -> Any:
        if not isinstance(value, bool):
            raise InvalidInput(f"{name} must be true or false, got {value!r}")
        return value

    def schema(self) -> JSON:
        return {"type": "boolean"}


@dataclass(frozen=True, slots=True)
class OneOf(Marker):
    """One of some texts, or a constant such as ``true`` (of its own type: ``1`` is not
    ``true``)."""

    choices: tuple[str | bool, ...]

    def check(self, value: Any, name: str) -> Any:
        if not any(value == c and type(value) is type(c) for c in self.choices):
            raise InvalidInput(f"{name} must be {_or(self.choices)}, got {value!r}")
        return value

    def schema(self) -> JSON:
        if all(isinstance(c, bool) for c in self.choices):
            return {"type": "boolean", "enum": list(self.choices)}
        return {"type": "string", "enum": list(self.choices)}


@dataclass(frozen=True, slots=True)
class Checked(Marker):
    """A rule the library states as a function (``check(value, name)``), with its schema."""

    rule: Any
    shape: tuple[tuple[str, Any], ...] = ()

    def check(self, value: Any, name: str) -> Any:
        return self.rule(value, name)

    def schema(self) -> JSON:
        return dict(self.shape)


@dataclass(frozen=True, slots=True)
class Help:
    """A parameter's description, for every surface's help."""

    text: str


@dataclass(frozen=True, slots=True)
class Wire:
    """The name a parameter goes by on the wire, when not its own in camelCase."""

    name: str


@dataclass(frozen=True, slots=True)
class Cli:
    """The command line's option for a parameter, when not ``--`` and its own name;
    ``off``, for a true-or-false that must be given, the option that says false."""

    option: str
    off: str = ""


@dataclass(frozen=True, slots=True)
class Path:
    """A parameter carried in the HTTP path (an id), not the body or the query; ``rest``:
    the rest of the path, whatever it holds (a key with slashes or newlines)."""

    rest: bool = False


@dataclass(frozen=True, slots=True)
class Field:
    """One parameter of an operation as the surfaces need it."""

    name: str
    base: Any  # the type without None and markers: str, int, float, bool, datetime, a class
    marker: Marker | None
    optional: bool  # None is a value
    default: Any  # dataclasses.MISSING when required
    help: str
    in_path: bool
    rest: bool = False  # in the path, it takes the rest of it
    wire: str = ""  # its name on the wire, when not its own in camelCase
    cli: str = ""  # its command-line option, when not --its-own-name
    cli_off: str = ""  # a required true-or-false's option that says false

    @property
    def required(self) -> bool:
        return self.default is dataclasses.MISSING

    def schema(self) -> JSON:
        found = self.marker.schema() if self.marker else {}
        if self.help:
            found = {**found, "description": self.help}
        return found


def camel(name: str) -> str:
    """A parameter's name in camelCase, as the wire and files spell it (``expires_at``:
    ``expiresAt``)."""
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def fields_of(cls: Any) -> tuple[Field, ...]:
    """The parameters of a dataclass, as declared (markers and help read once)."""
    return _fields_of(cls)


@cache
def _fields_of(cls: Any) -> tuple[Field, ...]:
    hints = typing.get_type_hints(cls, include_extras=True)
    found = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        kind, extras = _unwrap(hints[f.name])
        optional = False
        if _is_union(kind):
            args = [a for a in get_args(kind) if a is not type(None)]
            optional = len(args) < len(get_args(kind))
            kind, more = _unwrap(args[0])
            extras += more
        marker = next((e for e in extras if isinstance(e, Marker)), None) or _implied(kind)
        help_ = next((e.text for e in extras if isinstance(e, Help)), "")
        in_path = any(isinstance(e, Path) for e in extras)
        rest = any(isinstance(e, Path) and e.rest for e in extras)
        wire = next((e.name for e in extras if isinstance(e, Wire)), "")
        cli = next((e for e in extras if isinstance(e, Cli)), Cli(""))
        default = f.default
        if f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        found.append(
            Field(
                f.name,
                kind,
                marker,
                optional,
                default,
                help_,
                in_path,
                rest,
                wire,
                cli.option,
                cli.off,
            )
        )
    return tuple(found)


_NAMING: ContextVar[Callable[[Field], str] | None] = ContextVar("naming", default=None)


@contextmanager
def naming(name: Callable[[Field], str]) -> Iterator[None]:
    """Within it, messages name parameters as ``name`` gives them (a surface's own
    spelling: ``topK`` over HTTP, ``--top-k`` on the command line)."""
    token = _NAMING.set(name)
    try:
        yield
    finally:
        _NAMING.reset(token)


def called(cls: Any, name: str) -> str:
    """The parameter ``name`` of ``cls`` as the surface at work spells it."""
    spell = _NAMING.get()
    if spell is None:
        return name
    return next((spell(f) for f in fields_of(cls) if f.name == name), name)


def made(cls: type[T], values: dict[str, Any], name: Callable[[Field], str]) -> T:
    """``cls`` made of ``values``, its checker's messages naming parameters by ``name``
    (how the surface making it spells them)."""
    with naming(name):
        return cls(**values)


def check(value: Any) -> None:
    """Holds each parameter of the dataclass ``value`` to its marker, in place: the
    checked (stripped, deduplicated) values replace the given ones."""
    spell = _NAMING.get()
    for f in fields_of(type(value)):
        given = getattr(value, f.name)
        name = f.name if spell is None else spell(f)
        if given is None and f.optional:
            continue
        if f.marker is None:
            if given is None:
                raise InvalidInput(f"{name} is required")
            continue
        checked = f.marker.check(given, name)
        if checked == "" and f.optional:
            checked = None
        if checked is not given:
            object.__setattr__(value, f.name, checked)


def _unwrap(kind: Any) -> tuple[Any, list[Any]]:
    if get_origin(kind) is typing.Annotated:
        base, *extras = get_args(kind)
        return base, list(extras)
    return kind, []


def _is_union(kind: Any) -> bool:
    return get_origin(kind) in (Union, types.UnionType)


def _implied(kind: Any) -> Marker | None:
    if kind is bool:
        return Flag()
    if kind is datetime:
        return Moment()
    if get_origin(kind) is Literal:
        return OneOf(tuple(get_args(kind)))
    return None


def _or(choices: tuple[str | bool, ...]) -> str:
    said = [str(c).lower() if isinstance(c, bool) else str(c) for c in choices]
    return ", ".join(said[:-1]) + " or " + said[-1] if len(said) > 1 else said[0]
