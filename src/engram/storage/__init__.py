"""Backends that implement :class:`engram.core.ports.Store`."""
