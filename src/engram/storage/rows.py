"""Rows as both backends store them, turned into the core's records.

Both backends keep the same columns in the same order, so one mapping serves them.
"""

from __future__ import annotations

import json
from typing import Any

from engram.core import limits
from engram.core.agents import Agent
from engram.core.clock import from_us
from engram.core.errors import StorageFailure
from engram.core.models import Fact, SourceRef, Traits, WorkingEntry
from engram.core.scopes import ResourceRef, parse_key
from engram.core.sessions import Entry, Session

FACT_COLUMNS = (
    "id, scope, content, created_at, updated_at, source_sandbox, source_entry, type, tags, "
    "metadata, corrected_by, corrected_at, context, strength, turn_user, seq"
)
WORKING_COLUMNS = "key, value, version, updated_at, expires_at"
AGENT_COLUMNS = "id, name, scope, parent_id, created_at, ended_at"
SESSION_COLUMNS = "id, scope, name, parent_id, fork_entry, depth, created_at, next_index"
ENTRY_COLUMNS = "session_id, idx, at, kind, role, content, data"


def to_fact(row: tuple[Any, ...]) -> Fact:
    (
        fid,
        scope,
        content,
        created,
        updated,
        sandbox,
        entry,
        ftype,
        tags,
        metadata,
        corrected_by,
        corrected_at,
        context,
        strength,
        turn_user,
        _seq,
    ) = row
    return Fact(
        id=str(fid),
        scope=parse_key(str(scope)),
        content=str(content),
        created_at=from_us(int(created)),
        updated_at=from_us(int(updated)),
        source_ref=None if sandbox is None else SourceRef(str(sandbox), int(entry)),
        type=None if ftype is None else str(ftype),
        tags=tuple(json.loads(str(tags))),
        metadata=json.loads(str(metadata)),
        corrected_by=None if corrected_by is None else str(corrected_by),
        corrected_at=None if corrected_at is None else from_us(int(corrected_at)),
        context=None if context is None else str(context),
        strength=float(strength),
        turn_user=None if turn_user is None else str(turn_user),
    )


def to_traits(row: tuple[Any, ...]) -> Traits:
    """A row of ``id, content, context, created_at, metadata`` as a candidate's traits."""
    _id, content, context, created, metadata = row
    speaker = json.loads(str(metadata)).get("speaker")
    return Traits(
        text=str(content) if context is None else f"{content}\n{context}",
        at=from_us(int(created)),
        speaker=speaker if isinstance(speaker, str) else None,
    )


def to_entry(row: tuple[Any, ...]) -> WorkingEntry:
    key, value, version, updated, expires = row
    text = str(value)
    try:
        decoded = json.loads(text)
    except RecursionError:  # stored before values' depth was limited; see WorkingEntry
        decoded = None
        too_deep = True
    else:
        # Nesting deeper than the limit takes more brackets than it: counting them (in C)
        # spares almost every read the walk over the value.
        brackets = text.count("[") + text.count("{")
        too_deep = brackets > limits.MAX_DEPTH and not limits.depth_ok(decoded)
    return WorkingEntry(
        key=str(key),
        value=None if too_deep else decoded,
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
