"""A scope's memory as a folder of Markdown pages (``markdown``, or ``obsidian``: YAML
front matter, ``[[links]]`` and ``#tags``), written with strict path safety.

The folder holds ``index.md`` (the untyped facts, and a link to every other page),
``<type>.md`` for each type (its facts, newest first) and ``working.md`` (the working
keys). A type whose name is not safe as a file name (:mod:`engram.core.paths`), or that
would be the same file as another page on a case-insensitive disk, is left out with its
facts and listed in the report's ``left_out``, never renamed. The folder is new: it is
written under a hidden staging name beside the target, each file created with
``O_EXCL | O_NOFOLLOW`` relative to the staging directory's own descriptor (no link
followed, no name outside it), then renamed into place; a target that exists is refused,
unless the export is an explicit ``update`` of that folder (:func:`update`).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import stat
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engram.core.errors import Conflict
from engram.core.paths import folded, unsafe

FOLDER_FORMATS = ("markdown", "obsidian")
RESERVED = ("index.md", "working.md")


def pages(
    records: Sequence[dict[str, Any]], flavour: str
) -> tuple[dict[str, str], list[tuple[str, str]], dict[str, int]]:
    """The pages by file name, what was left out (what, why), and how many facts each
    page holds."""
    by_type: dict[str | None, list[dict[str, Any]]] = defaultdict(list)
    working = [r for r in records if r["kind"] == "working"]
    for record in records:
        if record["kind"] == "fact":
            by_type[record["type"]].append(record)
    taken = {folded(name) for name in RESERVED}
    written: dict[str, list[dict[str, Any]]] = {}
    left_out: list[tuple[str, str]] = []
    for kind in sorted((k for k in by_type if k is not None), key=str):
        name = f"{kind}.md"
        why = unsafe(name)
        if why is None and folded(name) in taken:
            why = "is the same file as another page on a case-insensitive disk"
        if why is not None:
            left_out.append((f"type {kind!r} ({len(by_type[kind])} facts)", f"its page {why}"))
            continue
        taken.add(folded(name))
        written[name] = by_type[kind]
    obsidian = flavour == "obsidian"
    out = {name: _page(name[:-3], facts, obsidian) for name, facts in written.items()}
    out["index.md"] = _index(sorted(written), by_type.get(None, []), obsidian)
    counts = {name: len(facts) for name, facts in written.items()}
    counts["index.md"] = len(by_type.get(None, []))
    if working:
        out["working.md"], counts["working.md"] = _working(working), 0
    return out, left_out, counts


def writable(names: Sequence[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """The names (``/`` between folders) that can be files, in order, and each left out
    with why: a part not safe as a file name, or the same file as a name before it on a
    case-insensitive disk."""
    kept: list[str] = []
    left: list[tuple[str, str]] = []
    seen: set[str] = set()
    for name in names:
        why = next((w for part in name.split("/") if (w := unsafe(part)) is not None), None)
        if why is None and folded(name) in seen:
            why = "is the same file as another page on a case-insensitive disk"
        if why is not None:
            left.append((name, f"its name {why}"))
            continue
        seen.add(folded(name))
        kept.append(name)
    return kept, left


def write(target: Path, files: dict[str, str]) -> int:
    """Writes ``files`` (flat names, each already safe) as the new folder ``target``,
    whole or not at all; the bytes written."""
    staged = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent))
    size = 0
    try:
        fd = os.open(staged, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            for name, text in sorted(files.items()):
                if unsafe(name) is not None:
                    raise AssertionError(f"an unsafe name reached the writer: {name!r}")
                size += _create(fd, name, text)
            os.fsync(fd)
        finally:
            os.close(fd)
        if os.path.lexists(target):
            raise Conflict(f"{target} appeared while it was exported; nothing replaced")
        os.rename(staged, target)
    except BaseException:
        shutil.rmtree(staged, ignore_errors=True)
        raise
    return size


def update(target: Path, files: dict[str, str]) -> tuple[int, list[tuple[str, str]]]:
    """Writes ``files`` (names, each part safe, ``/`` between a folder and what it
    holds) into the folder ``target`` (a new one when it does not exist): a name not
    there is created, a regular file with one link is replaced whole (a temporary file
    renamed over it), and anything else in the way (a link of any kind, a directory, a
    pipe or device, a file with other hard links; for a name in a folder, that folder
    being a link or not a folder) is left as it is and listed. Other files stay. The
    bytes written, and what was left (name, why)."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    try:
        root = os.open(target, flags)
    except FileNotFoundError:
        if all("/" not in name for name in files):
            return write(target, files), []  # a new flat folder appears whole
        try:
            os.mkdir(target)
            root = os.open(target, flags)
        except OSError as exc:
            raise Conflict(f"{target} could not be made a folder: {exc.strerror}") from exc
    except OSError as exc:  # a link (ELOOP), or not a directory
        raise Conflict(
            f"{target} is not a folder, or is a link; an export never follows one"
        ) from exc
    size, left = 0, []
    folders: dict[str, int | str] = {"": root}  # a folder's descriptor, or why not
    try:
        for name, text in sorted(files.items()):
            where, _, leaf = name.rpartition("/")
            if where not in folders:
                folders[where] = _folder(root, where)
            fd = folders[where]
            if isinstance(fd, str):
                left.append((name, fd))
                continue
            if unsafe(leaf) is not None:
                raise AssertionError(f"an unsafe name reached the writer: {name!r}")
            try:
                found = os.stat(leaf, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                found = None
            if found is not None and not (stat.S_ISREG(found.st_mode) and found.st_nlink == 1):
                left.append((name, f"{_kind(found)} is in the way; left as it is"))
                continue
            written = _replace(fd, leaf, text, create=found is None)
            if written is None:
                left.append((name, "appeared while it was exported; left as it is"))
            else:
                size += written
        for fd in folders.values():
            if isinstance(fd, int):
                os.fsync(fd)
    finally:
        for fd in folders.values():
            if isinstance(fd, int):
                os.close(fd)
    return size, left


def read(target: Path, name: str) -> str | None:
    """The text of the regular file ``name`` (flat) in the folder ``target``, read without
    following a link or waiting on a pipe; None when there is none (or a link, a pipe,
    not a folder)."""
    try:
        root = os.open(target, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=root)
    except OSError:
        return None
    finally:
        os.close(root)
    with os.fdopen(fd, encoding="utf-8", errors="replace") as found:
        return found.read() if stat.S_ISREG(os.fstat(fd).st_mode) else None


def remove(target: Path, names: Sequence[str]) -> list[tuple[str, str]]:
    """Deletes the files ``names`` (each part safe, ``/`` between a folder and what it
    holds) from the folder ``target``, never through a link: a name that is not a
    regular file with one link, or whose folder is a link, is left as it is and listed
    (name, why); one already gone is no matter."""
    left: list[tuple[str, str]] = []
    try:
        root = os.open(target, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return left
    try:
        for name in sorted(names):
            where, _, leaf = name.rpartition("/")
            if any(unsafe(part) is not None for part in name.split("/")):
                left.append((name, "its name is not safe; left as it is"))
                continue
            fd = os.dup(root)
            try:
                for part in where.split("/") if where else []:
                    inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
                    os.close(fd)
                    fd = inner
                found = os.stat(leaf, dir_fd=fd, follow_symlinks=False)
                if not (stat.S_ISREG(found.st_mode) and found.st_nlink == 1):
                    left.append((name, f"{_kind(found)} is in the way; left as it is"))
                    continue
                os.unlink(leaf, dir_fd=fd)
            except FileNotFoundError:
                continue
            except OSError as exc:
                left.append((name, f"could not be deleted: {exc.strerror}; left as it is"))
            finally:
                os.close(fd)
        os.fsync(root)
    finally:
        os.close(root)
    return left


def _folder(root: int, where: str) -> int | str:
    """The folder ``where`` under ``root`` (made where missing), opened without
    following a link; or why it cannot be written into."""
    fd = os.dup(root)
    for part in where.split("/"):
        if unsafe(part) is not None:
            os.close(fd)
            raise AssertionError(f"an unsafe name reached the writer: {where!r}")
        with contextlib.suppress(FileExistsError):
            os.mkdir(part, dir_fd=fd)
        try:
            inner = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
        except OSError:
            os.close(fd)
            return f"its folder {where} is a link or not a folder; left as it is"
        os.close(fd)
        fd = inner
    return fd


def _replace(fd: int, name: str, text: str, *, create: bool) -> int | None:
    """``name`` in the directory ``fd`` made ``text`` whole; None when ``create`` and a
    file of that name appeared meanwhile."""
    temp = f".{name}.{secrets.token_hex(6)}.part"
    try:
        size = _create(fd, temp, text)
        if not create:  # renaming replaces the entry itself, never what it points to
            os.rename(temp, name, src_dir_fd=fd, dst_dir_fd=fd)
            return size
        try:
            os.link(temp, name, src_dir_fd=fd, dst_dir_fd=fd, follow_symlinks=False)
        except FileExistsError:
            return None
        return size
    finally:
        with contextlib.suppress(FileNotFoundError):  # renamed into place
            os.unlink(temp, dir_fd=fd)


def _create(fd: int, name: str, text: str) -> int:
    """The new file ``name`` in the directory ``fd`` (never through a link), holding
    ``text`` on disk; the bytes written."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    with os.fdopen(os.open(name, flags, 0o644, dir_fd=fd), "w", encoding="utf-8") as out:
        size = out.write(text)
        out.flush()
        os.fsync(out.fileno())
    return size


def _kind(found: os.stat_result) -> str:
    if stat.S_ISLNK(found.st_mode):
        return "a link"
    if stat.S_ISDIR(found.st_mode):
        return "a directory"
    if stat.S_ISREG(found.st_mode):
        return f"a file with {found.st_nlink} hard links"
    return "a special file"


def _line(record: dict[str, Any], obsidian: bool) -> list[str]:
    words = " ".join(str(record["content"]).split())
    tags = record["tags"]
    shown = " ".join(f"#{t}" for t in tags if " " not in t) if obsidian else ", ".join(tags)
    meta = f"{record['createdAt'][:16].replace('T', ' ')} · {record['id']}"
    lines = [f"- {words}", f"  <small>{meta}{' · ' + shown if shown else ''}</small>"]
    if record.get("context"):
        lines.append("  > " + " ".join(str(record["context"]).split())[:500])
    return lines


def _front(title: str, count: int) -> list[str]:
    return ["---", f"title: {json.dumps(title, ensure_ascii=False)}", f"facts: {count}", "---", ""]


def _page(kind: str, facts: list[dict[str, Any]], obsidian: bool) -> str:
    lines = _front(kind, len(facts)) if obsidian else []
    lines += [f"# {kind}", ""]
    for record in reversed(facts):
        lines += _line(record, obsidian)
    if obsidian:
        lines += ["", "Back to [[index]]"]
    return "\n".join(lines) + "\n"


def _index(names: list[str], untyped: list[dict[str, Any]], obsidian: bool) -> str:
    lines = _front("index", len(untyped)) if obsidian else []
    lines += ["# Memory", ""]
    if names:
        lines += ["## Types", ""]
        for name in names:
            link = f"[[{name[:-3]}]]" if obsidian else f"[{name[:-3]}]({name.replace(' ', '%20')})"
            lines.append(f"- {link}")
        lines.append("")
    if untyped:
        lines += ["## Facts", ""]
        for record in reversed(untyped):
            lines += _line(record, obsidian)
    return "\n".join(lines) + "\n"


def _working(entries: list[dict[str, Any]]) -> str:
    lines = ["# Working memory", ""]
    for entry in entries:
        lines += [f"## {entry['key']}", "", "```json"]
        lines += [json.dumps(entry["value"], ensure_ascii=False, indent=2), "```", ""]
    return "\n".join(lines)
