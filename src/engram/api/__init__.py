"""The HTTP edge: the service over the library (agents, working memory, facts)."""

from engram.api.app import create_app

__all__ = ["create_app"]
