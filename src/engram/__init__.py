"""engram: durable memory for AI agents.

>>> import engram
>>> mem = engram.open("./engram.db")
>>> ref = engram.ResourceRef("user-42")
>>> mem.remember(ref, "upgraded to Pro on the 3rd")

The error classes and plain records load with the package; everything else (the stores,
numpy, the HTTP client) loads on first use of its name, so ``engram --help`` starts
without them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from engram.core.errors import (
    BadRecords,
    CapabilityMissing,
    Conflict,
    EmbedderMismatch,
    EngramError,
    Forbidden,
    InvalidInput,
    NotFound,
    RevertBlocked,
    StorageFailure,
    TooLarge,
    Unauthenticated,
    Unavailable,
    Unprocessable,
    UpstreamFailure,
)
from engram.core.models import (
    Change,
    ChangesPage,
    Compaction,
    DeletionReceipt,
    Fact,
    FactPage,
    ForkResult,
    LedgerEntry,
    LedgerPage,
    RecallHit,
    SourceRef,
    Trashed,
    TrashPage,
    WorkingEntry,
    WorkingPage,
    Writer,
)
from engram.core.scopes import PersonAppRef, ResourceRef

if TYPE_CHECKING:
    from engram.client import Client
    from engram.core.consolidation import Policy
    from engram.core.conversations import Conversation, Turn
    from engram.core.documents.models import Document, IngestReport, StoredChunk, WalkReport
    from engram.core.health import HealthReport
    from engram.core.memory import Memory
    from engram.core.people import Acting, AppMemory
    from engram.core.records import (
        ConsolidationReport,
        Entry,
        EntryPage,
        Session,
        SessionNode,
        StepReport,
    )
    from engram.core.tools import Tool, ToolResult
    from engram.core.writing import Note
    from engram.embedders.chat import RemoteChat
    from engram.embedders.hashing import HashingEmbedder
    from engram.embedders.remote import RemoteEmbedder
    from engram.embedders.reranker import RemoteReranker
    from engram.embedders.spacy import SpacyRecogniser
    from engram.fetching import HttpFetcher
    from engram.opening import open

# name -> the module that defines it, imported when the name is first used
_LAZY = {
    "Acting": "engram.core.people",
    "AppMemory": "engram.core.people",
    "Client": "engram.client",
    "Document": "engram.core.documents.models",
    "Entry": "engram.core.sessions",
    "IngestReport": "engram.core.documents.models",
    "StoredChunk": "engram.core.documents.models",
    "WalkReport": "engram.core.documents.models",
    "EntryPage": "engram.core.episodes",
    "HashingEmbedder": "engram.embedders.hashing",
    "HealthReport": "engram.core.health",
    "HttpFetcher": "engram.fetching",
    "Memory": "engram.core.memory",
    "Note": "engram.core.writing",
    "Tool": "engram.core.tools",
    "ToolResult": "engram.core.tools",
    "RemoteChat": "engram.embedders.chat",
    "RemoteEmbedder": "engram.embedders.remote",
    "RemoteReranker": "engram.embedders.reranker",
    "Session": "engram.core.sessions",
    "Conversation": "engram.core.conversations",
    "ConsolidationReport": "engram.core.consolidation",
    "Policy": "engram.core.consolidation",
    "StepReport": "engram.core.consolidation",
    "Turn": "engram.core.conversations",
    "SessionNode": "engram.core.episodes",
    "SpacyRecogniser": "engram.embedders.spacy",
    "open": "engram.opening",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'engram' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "Acting",
    "AppMemory",
    "BadRecords",
    "CapabilityMissing",
    "Change",
    "ChangesPage",
    "Client",
    "Compaction",
    "Conflict",
    "ConsolidationReport",
    "Conversation",
    "DeletionReceipt",
    "Document",
    "EmbedderMismatch",
    "EngramError",
    "Entry",
    "EntryPage",
    "Fact",
    "FactPage",
    "Forbidden",
    "ForkResult",
    "HashingEmbedder",
    "HealthReport",
    "HttpFetcher",
    "IngestReport",
    "InvalidInput",
    "LedgerEntry",
    "LedgerPage",
    "Memory",
    "NotFound",
    "Note",
    "PersonAppRef",
    "Policy",
    "RecallHit",
    "RemoteChat",
    "RemoteEmbedder",
    "RemoteReranker",
    "ResourceRef",
    "RevertBlocked",
    "Session",
    "SessionNode",
    "SourceRef",
    "SpacyRecogniser",
    "StepReport",
    "StorageFailure",
    "StoredChunk",
    "TooLarge",
    "Tool",
    "ToolResult",
    "TrashPage",
    "Trashed",
    "Turn",
    "Unauthenticated",
    "Unavailable",
    "Unprocessable",
    "UpstreamFailure",
    "WalkReport",
    "WorkingEntry",
    "WorkingPage",
    "Writer",
    "open",
]
