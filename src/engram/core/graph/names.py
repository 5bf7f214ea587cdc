"""What makes two names one: a name's normalised form, unique per scope."""

from __future__ import annotations

import unicodedata

_EDGES = " \t\n\r.,;:!?\"'()[]{}<>«»“”‘’"


def normalise(name: str) -> str:
    """``name`` case-folded (NFKC), its whitespace collapsed, surrounding punctuation and
    a possessive ending dropped: "Caroline's" and " caroline " are one name."""
    text = " ".join(unicodedata.normalize("NFKC", name).casefold().split()).strip(_EDGES)
    for ending in ("'s", "’s"):
        if text.endswith(ending):
            text = text[: -len(ending)].rstrip(_EDGES)
    return text
