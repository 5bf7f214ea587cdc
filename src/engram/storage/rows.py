"""Rows as both backends store them, turned into the core's records.

Both backends keep the same columns in the same order, so one mapping serves them. A
fact's columns follow its fields (:data:`PLAIN`): the statements that write, copy,
trash and restore a fact and read it back build their column lists from them, and
:func:`to_fact` reads them. A new plain field of a fact needs no line here, only a
migration on each backend.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import typing
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

from engram.core import limits
from engram.core.clock import from_us, to_us
from engram.core.errors import StorageFailure
from engram.core.models import Fact, SourceRef, WorkingEntry
from engram.core.ranking import Traits
from engram.core.records import Agent, Entry, Session
from engram.core.scopes import ResourceRef, parse_key

if TYPE_CHECKING:
    from engram.core.ports import NewFact


@dataclass(frozen=True, slots=True)
class Kind:
    """How a field's value is stored, alike on both backends: the column's type
    (PostgreSQL's insert casts its arrays by it), the value as written, and the stored
    value ``{v}`` read back, as an expression (the row reader is written out from them)."""

    sql: Literal["text", "integer", "real"]
    write: Callable[[Any], Any]
    read: str


def _same(value: Any) -> Any:
    return value


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _optional_time(value: datetime | None) -> int | None:
    return None if value is None else to_us(value)


TEXT = Kind("text", _same, "str({v})")
OPTIONAL_TEXT = Kind("text", _same, "None if {v} is None else str({v})")
OPTIONAL_INTEGER = Kind("integer", _same, "None if {v} is None else int({v})")
REAL = Kind("real", _same, "float({v})")
TIME = Kind("integer", to_us, "from_us(int({v}))")
OPTIONAL_TIME = Kind("integer", _optional_time, "None if {v} is None else from_us(int({v}))")
# Most facts' metadata and tags are empty, read without the JSON parser (a dict each time)
JSON = Kind("text", _json, "{{}} if {v} == '{{}}' else json.loads(str({v}))")
TAGS = Kind(  # a list
    "text", lambda tags: _json(list(tags)), "() if {v} == '[]' else tuple(json.loads(str({v})))"
)


def stored_digest(content_hash: str) -> str:
    """A fact's content hash (64 hex digits) as both stores keep it: its first 128 bits
    in base64url, 22 characters. A scope's facts are told apart by it (a unique index
    holds a second copy), so 84 bytes a fact less; two texts share one with odds of
    1.5e-21 among a billion facts of a scope."""
    raw = bytes.fromhex(content_hash)[:16]
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


@dataclass(frozen=True, slots=True)
class Column:
    """A column of a fact that every copy of it (a fork's, the trash's, a restore's)
    takes as it is. A new fact writes its field of the column's name as ``kind`` writes
    it, or ``new`` of it when given. The column reads back as that field unless ``field``
    is False (the source's two columns read back as one :class:`SourceRef`); reading a
    fact leaves it out when ``selected`` is False."""

    name: str
    kind: Kind
    new: Callable[[NewFact], Any] | None = None
    field: bool = True
    selected: bool = True


def _sandbox(new: NewFact) -> str | None:
    source = new.fact.source_ref
    return None if source is None else source.sandbox_id


def _entry(new: NewFact) -> int | None:
    source = new.fact.source_ref
    return None if source is None else source.entry_index


# How a fact's field is stored, by its type: a plain field of a fact needs no line here.
_KINDS: dict[Any, Kind] = {
    str: TEXT,
    str | None: OPTIONAL_TEXT,
    int | None: OPTIONAL_INTEGER,
    float: REAL,
    datetime: TIME,
    datetime | None: OPTIONAL_TIME,
    tuple[str, ...]: TAGS,
}
# The fields stored otherwise: the id and scope (which a fork rewrites) are each
# statement's own; the source is two columns; the metadata is written as checked.
_OWN: dict[str, tuple[Column, ...]] = {
    "id": (),
    "scope": (),
    "source_ref": (
        Column("source_sandbox", OPTIONAL_TEXT, new=_sandbox, field=False),
        Column("source_entry", OPTIONAL_INTEGER, new=_entry, field=False),
    ),
    "metadata": (Column("metadata", JSON, new=lambda new: new.metadata_json),),
}


def _columns() -> tuple[Column, ...]:
    """A fact's plain columns, in the order of its fields: each field in the column of
    its name, stored as its type says (:data:`_KINDS`), but those of :data:`_OWN`."""
    hints = typing.get_type_hints(Fact)
    found: list[Column] = []
    for f in dataclasses.fields(Fact):
        if f.name in _OWN:
            found.extend(_OWN[f.name])
        elif hints[f.name] in _KINDS:
            found.append(Column(f.name, _KINDS[hints[f.name]]))
        else:
            raise TypeError(f"no column kind for Fact.{f.name} of type {hints[f.name]}")
    # What deduplicates a scope's facts: copied with the fact, never read into it.
    found.append(
        Column(
            "content_hash", TEXT, new=lambda new: stored_digest(new.content_hash), selected=False
        )
    )
    return tuple(found)


PLAIN = _columns()
"""A fact's plain columns, in the order its row reads; seq, scope_token, vector and
deleted_at are each statement's own."""
PLAIN_COLUMNS = ", ".join(c.name for c in PLAIN)
_READ = tuple(c for c in PLAIN if c.selected)
FACT_FIELDS = ", ".join(("id", "scope", *(c.name for c in _READ)))
"""A fact's row as :func:`to_fact` reads it, without the ``seq`` that follows it."""
FACT_COLUMNS = f"{FACT_FIELDS}, seq"
WORKING_COLUMNS = "key, value, version, updated_at, expires_at"
AGENT_COLUMNS = "id, name, scope, parent_id, created_at, ended_at"
SESSION_COLUMNS = "id, scope, name, parent_id, fork_entry, depth, created_at, next_index"
ENTRY_COLUMNS = "session_id, idx, at, kind, role, content, data"


def plain_columns(prefix: str) -> str:
    """:data:`PLAIN_COLUMNS`, each name led by ``prefix`` (a table's alias and a dot)."""
    return _prefixed(PLAIN_COLUMNS, prefix)


def _prefixed(columns: str, prefix: str) -> str:
    return ", ".join(prefix + column for column in columns.split(", "))


def plain_values(new: NewFact) -> tuple[Any, ...]:
    """A new fact's values of :data:`PLAIN_COLUMNS`, as stored."""
    fact = new.fact
    return tuple(
        c.kind.write(getattr(fact, c.name)) if c.new is None else c.new(new) for c in PLAIN
    )


# Where each field of a row of FACT_COLUMNS is; its source's two columns.
_AT = {c.name: i for i, c in enumerate(_READ, start=2)}
_SANDBOX, _ENTRY = _AT["source_sandbox"], _AT["source_entry"]
CREATED_AT = _AT["created_at"]
"""Where a row of :data:`FACT_COLUMNS` has its ``created_at`` (a page's cursor)."""
SEQ = len(_READ) + 2
"""Where a row of :data:`FACT_COLUMNS` has its ``seq``."""


def _reader() -> Callable[[tuple[Any, ...]], Fact]:
    """The row reader, written out from :data:`PLAIN` once, as a hand-written one would
    read (a row a listing page reads a hundred times: no call per column)."""
    fields = "".join(
        f"        {name}={kind.read.format(v=f'row[{i}]')},\n"
        for i, name, kind in ((i, c.name, c.kind) for i, c in enumerate(_READ, start=2) if c.field)
    )
    source = (
        "def to_fact(row):\n"
        f"    sandbox = row[{_SANDBOX}]\n"
        "    return Fact(\n"
        "        id=str(row[0]),\n"
        "        scope=parse_key(str(row[1])),\n"
        "        source_ref=None if sandbox is None\n"
        f"        else SourceRef(str(sandbox), int(row[{_ENTRY}])),\n"
        f"{fields}"
        "    )\n"
    )
    names: dict[str, Any] = {
        "Fact": Fact,
        "SourceRef": SourceRef,
        "parse_key": parse_key,
        "from_us": from_us,
        "json": json,
    }
    exec(compile(source, "<engram.storage.rows.to_fact>", "exec"), names)
    reader: Callable[[tuple[Any, ...]], Fact] = names["to_fact"]
    return reader


to_fact = _reader()
"""A row of :data:`FACT_COLUMNS` (or :data:`FACT_FIELDS` and one more) as a fact."""


def fact_columns(prefix: str) -> str:
    """:data:`FACT_COLUMNS`, each name led by ``prefix`` (a table's alias and a dot)."""
    return _prefixed(FACT_COLUMNS, prefix)


_CONTENT, _CONTEXT, _METADATA, _STRENGTH = (
    _AT[name] for name in ("content", "context", "metadata", "strength")
)


def to_traits(row: tuple[Any, ...]) -> Traits:
    """A row of :data:`FACT_COLUMNS` as a candidate's traits, the whole fact built from it
    when asked."""
    held = str(row[_METADATA])  # parsed only where it names a speaker: most facts' is "{}"
    speaker = json.loads(held).get("speaker") if '"speaker"' in held else None
    context = row[_CONTEXT]
    return Traits(
        content=str(row[_CONTENT]),
        at=from_us(int(row[CREATED_AT])),
        speaker=speaker if isinstance(speaker, str) else None,
        context=None if context is None else str(context),
        strength=float(row[_STRENGTH]),
        fact=partial(to_fact, row),
    )


def to_entry(row: tuple[Any, ...]) -> WorkingEntry:
    key, value, version, updated, expires = row
    decoded, too_deep = limits.decode_value(str(value))  # see WorkingEntry.too_deep
    return WorkingEntry(
        key=str(key),
        value=decoded,
        version=int(version),
        updated_at=from_us(int(updated)),
        expires_at=None if expires is None else from_us(int(expires)),
        too_deep=too_deep,
    )


def to_agent(row: tuple[Any, ...]) -> Agent:
    agent_id, name, scope, parent_id, created, ended = row
    ref = parse_key(str(scope))
    if not isinstance(ref, ResourceRef):
        raise StorageFailure(f"agent {agent_id} has a scope that is not an agent resource")
    return Agent(
        id=str(agent_id),
        name=str(name),
        ref=ref,
        parent_id=None if parent_id is None else str(parent_id),
        created_at=from_us(int(created)),
        ended_at=None if ended is None else from_us(int(ended)),
    )


def to_session(row: tuple[Any, ...]) -> Session:
    sid, scope, name, parent_id, fork_entry, depth, created, next_index = row
    return Session(
        id=str(sid),
        scope=parse_key(str(scope)),
        name=None if name is None else str(name),
        fork_of=None if parent_id is None else SourceRef(str(parent_id), int(fork_entry)),
        depth=int(depth),
        created_at=from_us(int(created)),
        next_index=int(next_index),
    )


def to_session_entry(row: tuple[Any, ...]) -> Entry:
    sid, idx, at, kind, role, content, data = row
    return Entry(
        kind=str(kind),
        content=str(content),
        role=None if role is None else str(role),
        at=from_us(int(at)),
        data=None if data is None else json.loads(str(data)),
        session_id=str(sid),
        index=int(idx),
    )
