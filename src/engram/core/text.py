"""The one check every piece of caller text goes through before it is stored."""

from __future__ import annotations

from engram.core.errors import InvalidInput


def check_text(
    value: object, name: str, *, max_chars: int, strip: bool = False, empty: bool = False
) -> str:
    """``value`` as stored text, or InvalidInput naming ``name`` and the problem.

    It must be a str without NUL characters or lone surrogates (which no encoding
    stores), at most ``max_chars`` characters (after stripping surrounding
    whitespace when ``strip``), and not empty unless ``empty``.
    """
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string, got {type(value).__name__}")
    text = value.strip() if strip else value
    if not text and not empty:
        raise InvalidInput(f"{name} must not be empty")
    if len(text) > max_chars:
        raise InvalidInput(f"{name} is {len(text)} characters; the limit is {max_chars}")
    if "\x00" in text:
        raise InvalidInput(f"{name} must not contain NUL characters")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput(f"{name} is not valid Unicode text (lone surrogate)") from exc
    return text
