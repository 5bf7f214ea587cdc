"""engram: durable memory for AI agents.

>>> import engram
>>> mem = engram.open("./engram.db")
>>> ref = engram.ResourceRef("user-42")
>>> mem.remember(ref, "upgraded to Pro on the 3rd")
"""

from engram.client import Client
from engram.core.errors import (
    CapabilityMissing,
    Conflict,
    EmbedderMismatch,
    EngramError,
    Forbidden,
    InvalidInput,
    NotFound,
    StorageFailure,
    Unauthenticated,
    Unavailable,
    Unprocessable,
    UpstreamFailure,
)
from engram.core.memory import Memory, Note
from engram.core.models import (
    Compaction,
    Fact,
    FactPage,
    ForkResult,
    RecallHit,
    SourceRef,
    WorkingEntry,
    WorkingPage,
)
from engram.core.people import AppMemory
from engram.core.scopes import PersonAppRef, ResourceRef
from engram.embedders.hashing import HashingEmbedder
from engram.embedders.remote import RemoteEmbedder
from engram.opening import open

__all__ = [
    "AppMemory",
    "CapabilityMissing",
    "Client",
    "Compaction",
    "Conflict",
    "EmbedderMismatch",
    "EngramError",
    "Fact",
    "FactPage",
    "Forbidden",
    "ForkResult",
    "HashingEmbedder",
    "InvalidInput",
    "Memory",
    "NotFound",
    "Note",
    "PersonAppRef",
    "RecallHit",
    "RemoteEmbedder",
    "ResourceRef",
    "SourceRef",
    "StorageFailure",
    "Unauthenticated",
    "Unavailable",
    "Unprocessable",
    "UpstreamFailure",
    "WorkingEntry",
    "WorkingPage",
    "open",
]
