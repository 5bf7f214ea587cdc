"""The scale-out backend: PostgreSQL with pgvector, shared by many engram processes."""

from engram.storage.postgres.store import PostgresStore

__all__ = ["PostgresStore"]
