"""Shared fixtures: real SQLite files in a temporary directory, real embedders."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

import engram
from engram.embedders.local import LocalEmbedder

# Examples write to real files with fsync: their time follows the machine's load, so a
# per-example deadline would only measure the neighbours.
settings.register_profile("engram", deadline=None)
settings.load_profile("engram")


@pytest.fixture(scope="session")
def local_embedder() -> LocalEmbedder:
    """The packaged model, loaded once per test session (loading costs ~0.3 s)."""
    return LocalEmbedder()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "engram.db"


@pytest.fixture
def hashing() -> engram.HashingEmbedder:
    return engram.HashingEmbedder(64)


@pytest.fixture
def mem(db_path: Path, hashing: engram.HashingEmbedder) -> Iterator[engram.Memory]:
    """A store with the deterministic embedder, for tests that assert exact order."""
    with engram.open(db_path, embedder=hashing) as memory:
        yield memory


@pytest.fixture
def local_mem(db_path: Path, local_embedder: LocalEmbedder) -> Iterator[engram.Memory]:
    """A store with the real local model, for tests about meaning."""
    with engram.open(db_path, embedder=local_embedder) as memory:
        yield memory


@pytest.fixture
def ref() -> engram.ResourceRef:
    return engram.ResourceRef("user-42")
