"""Which names engram writes as files: a name that is not safe is left out and said so,
never rewritten into another (which could collide, or mislead).

A name is unsafe when it is empty, ``.`` or ``..``; holds a path separator (``/`` or
``\\``), a colon, NUL or another control character; ends in a dot or a space; is a
Windows device name (``CON``, ``PRN``, ``AUX``, ``NUL``, ``COM1``-``COM9``,
``LPT1``-``LPT9``, with any extension); or is over 200 bytes in UTF-8. Two names that
are equal once NFC-normalised and case-folded (``Straße`` and ``STRASSE``) would be one
file on a case-insensitive disk: the second is left out.
"""

from __future__ import annotations

import re
import stat
import unicodedata

MAX_NAME_BYTES = 200
_DEVICES = re.compile(r"(con|prn|aux|nul|com[1-9]|lpt[1-9])(\..*)?", re.IGNORECASE)


def unsafe(name: str) -> str | None:
    """Why ``name`` cannot be a file name, or None when it can."""
    if not name or name in (".", ".."):
        return "empty, or a directory's own name"
    if "/" in name or "\\" in name:
        return "holds a path separator"
    if ":" in name:
        return "holds a colon"
    if any(unicodedata.category(c) == "Cc" for c in name):
        return "holds a control character"
    if name[-1] in ". ":
        return "ends in a dot or a space"
    if _DEVICES.fullmatch(name):
        return "is a device name on Windows"
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        return f"is over {MAX_NAME_BYTES} bytes"
    return None


def folded(name: str) -> str:
    """The name as a case-insensitive, normalising disk sees it."""
    return unicodedata.normalize("NFC", name).casefold()


def file_kind(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISFIFO(mode):
        return "a pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"
