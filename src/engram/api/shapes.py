"""Request bodies and the JSON shapes of answers (camelCase on the wire)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from engram.core.agents import Agent
from engram.core.errors import InvalidInput
from engram.core.models import Compaction, Fact, ForkResult, WorkingEntry
from engram.core.scopes import ResourceRef

JSON = dict[str, Any]


class Body(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class AgentSpec(Body):
    name: str
    resource_id: str | None = Field(default=None, alias="resourceId")
    team_id: str | None = Field(default=None, alias="teamId")


class SpawnSpec(Body):
    name: str
    resource_id: str | None = Field(default=None, alias="resourceId")


class PutValue(Body):
    value: Any = Field(...)


class SourceRefBody(Body):
    sandbox_id: str = Field(alias="sandboxId")
    entry_index: int = Field(alias="entryIndex")


class NewFact(Body):
    """``verified`` is never read from a request: it is computed from ``sourceRef``.
    ``context`` is text that helps find the fact without being part of it (say, the
    turns of a conversation around it); full-text recall matches it."""

    content: str
    source_ref: SourceRefBody | None = Field(default=None, alias="sourceRef")
    context: str | None = None


class CompactionSpec(Body):
    max_facts: int | None = Field(default=None, alias="maxFacts", ge=0, le=1 << 53)
    max_age_ms: int | None = Field(default=None, alias="maxAgeMs", ge=0, le=1 << 53)


def int_param(raw: str | None, name: str, *, default: int, maximum: int) -> int:
    """A positive integer query parameter within its limit, or InvalidInput (400)."""
    if raw is None:
        return default
    if not raw.strip().isdigit() or not 1 <= int(raw) <= maximum:
        raise InvalidInput(f"{name} must be an integer from 1 to {maximum}, got {raw!r}")
    return int(raw)


def iso(moment: datetime | None) -> str | None:
    """A time as ISO 8601 in UTC with a Z."""
    return None if moment is None else moment.isoformat().replace("+00:00", "Z")


def ref_json(ref: ResourceRef) -> JSON:
    out: JSON = {"resourceId": ref.resource_id}
    if ref.team_id is not None:
        out["teamId"] = ref.team_id
    return out


def agent_json(agent: Agent) -> JSON:
    return {
        "id": agent.id,
        "name": agent.name,
        "resourceRef": ref_json(agent.ref),
        "parentId": agent.parent_id,
        "status": agent.status,
        "createdAt": iso(agent.created_at),
        "endedAt": iso(agent.ended_at),
    }


def fork_json(fork: ForkResult) -> JSON:
    return {
        "resourceRef": ref_json(fork.ref),
        "workingKeysCopied": fork.working_keys_copied,
        "semanticFactsCopied": fork.facts_copied,
    }


def entry_json(entry: WorkingEntry) -> JSON:
    return {
        "key": entry.key,
        "value": entry.value,
        "version": entry.version,
        "updatedAt": iso(entry.updated_at),
        "expiresAt": iso(entry.expires_at),
    }


def fact_json(fact: Fact) -> JSON:
    source = fact.source_ref
    return {
        "id": fact.id,
        "content": fact.content,
        "context": fact.context,
        "sourceRef": None
        if source is None
        else {"sandboxId": source.sandbox_id, "entryIndex": source.entry_index},
        "verified": fact.verified,
        "type": fact.type,
        "tags": list(fact.tags),
        "createdAt": iso(fact.created_at),
        "updatedAt": iso(fact.updated_at),
        "correctedBy": fact.corrected_by,
        "correctedAt": iso(fact.corrected_at),
    }


def compaction_json(result: Compaction) -> JSON:
    return {"removed": result.removed, "expired": result.expired, "overCap": result.over_cap}
