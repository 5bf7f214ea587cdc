"""Adapters that let other frameworks keep their memory in engram.

Each module here is an edge: it imports its framework (an optional extra) and the public
library, and nothing in engram imports it. ``engram.integrations.langgraph`` needs the
``[langgraph]`` extra.
"""
