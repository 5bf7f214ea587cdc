"""The documentation's generated sections: what lies between two markers is written from
a declaration (the settings in docs/configuration.md, the routes in docs/service.md), and
a test holds the page to it."""

from __future__ import annotations


def between(document: str, begin: str, end: str, body: str) -> str:
    """``document`` with what lies between ``begin`` and ``end`` replaced by ``body``;
    raises ValueError when it has no such markers."""
    head, found_begin, rest = document.partition(begin)
    _, found_end, tail = rest.partition(end)
    if not (found_begin and found_end):
        raise ValueError(f"no {begin} … {end} section")
    return f"{head}{begin}\n\n{body}\n{end}{tail}"
