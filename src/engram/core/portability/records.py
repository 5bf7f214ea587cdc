"""A scope's memory as portable records, and the records read back and checked.

The export format (``engram-export``, version 1) is one header and one record per fact
and per working key. As ``.jsonl`` the header is line 1 and each record a line
(``{"kind": "fact", ...}`` or ``{"kind": "working", ...}``); as ``.json`` one object
``{"format", "version", "model", "scope", "facts": [...], "working": [...]}``. A fact
carries its id, words, context, type, tags, metadata, strength, source, times (RFC 3339)
and its vector (little-endian float32, base64) with the model that made it, so an
import into a store of the same model embeds nothing.

Reading collects every bad record with its line and field instead of stopping at the
first (:class:`engram.core.errors.BadRecords`): a field no record of its kind has (a CSV
column, a JSON key) is one, and so is a vector whose width is not the dimension of the
model the file names, or a record nested too deeply to read. CSV (import only) takes a
header row with ``content`` and optionally ``type``, ``tags`` (separated by ``;``),
``created_at``, ``context`` and ``metadata`` (JSON).
"""

from __future__ import annotations

import array
import base64
import binascii
import csv
import io
import json
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from engram.core import limits, rules
from engram.core.clock import from_us, to_us
from engram.core.errors import BadRecords, EngramError, InvalidInput
from engram.core.fields import Field, camel
from engram.core.models import Fact, JSONValue, SourceRef
from engram.core.ports import ModelRecord
from engram.core.writing import KEPT

FORMAT, VERSION = "engram-export", 1
FORMATS = ("json", "jsonl", "csv")
MAX_LISTED = 1000  # bad records an error lists
COLUMNS = ("content", "type", "tags", "created_at", "context", "metadata")
HEADER_FIELDS = ("format", "version", "model", "scope")
WORKING_FIELDS = ("kind", "key", "value", "expiresAt")
DEEP = "nests too deeply to be read"


# A fact's kept fields (its type, tags, context, strength, expiry, ...) are written
# under their names in camelCase and read back held to the remember operation's own
# rules; the source is written as ``source``.


@dataclass(frozen=True, slots=True)
class FactRecord:
    """A fact as a file carries it; ``kept`` holds those of its kept fields
    (:data:`engram.core.writing.KEPT`) the file gave, by name."""

    id: str | None
    content: str
    created_at: datetime | None = None
    updated_at: datetime | None = None
    metadata: dict[str, JSONValue] = field(default_factory=dict)
    metadata_json: str | None = None  # as checked, when it was, so it is encoded once
    source_ref: SourceRef | None = None
    kept: dict[str, Any] = field(default_factory=dict)
    vector: bytes | None = None  # float32 little-endian, as the file carries it
    line: int = 0


@dataclass(frozen=True, slots=True)
class WorkingRecord:
    key: str
    value_json: str
    expires_at: datetime | None = None
    line: int = 0


# What a file gets wrong as a whole, not in one record: never skipped.
WHOLE = frozenset({"document", "format", "version", "model", "header", "facts", "working"})


@dataclass(frozen=True, slots=True)
class Skipped:
    """A record left out of an import: its line, the field at fault and why, and the
    record as the file holds it (None when it could not be read)."""

    line: int
    field: str
    message: str
    record: Any = None


@dataclass(slots=True)
class Parsed:
    """Records read from a file: the model its vectors came from (None: no vectors, or
    not engram's), the facts and working keys in order, every bad record (``bad``: each
    as read, by line), the records left out and said (``skipped``: a blank one always)
    and those taken with a change, said (``changed``: line, field, what changed)."""

    model: ModelRecord | None = None
    facts: list[FactRecord] = field(default_factory=list)
    working: list[WorkingRecord] = field(default_factory=list)
    errors: list[tuple[int, str, str]] = field(default_factory=list)
    bad: dict[int, Any] = field(default_factory=dict)
    skipped: list[Skipped] = field(default_factory=list)
    changed: list[tuple[int, str, str]] = field(default_factory=list)

    def check(self, *, skip: bool = False) -> None:
        """Raises BadRecords listing every bad record (the first 1000), if any; with
        ``skip``, the bad records are left out and listed in ``skipped`` instead, unless
        the file is wrong as a whole (:data:`WHOLE`)."""
        if not self.errors:
            return
        if skip and not any(name in WHOLE for _, name, _ in self.errors):
            left = [Skipped(n, name, text, self.bad.get(n)) for n, name, text in self.errors]
            self.skipped = sorted([*self.skipped, *left], key=lambda s: s.line)
            self.errors = []
            return
        shown = tuple(self.errors[:MAX_LISTED])
        first = shown[0]
        raise BadRecords(
            f"{len(self.errors)} bad record(s); nothing was imported. First: line {first[0]}, "
            f"{first[1]}: {first[2]}",
            errors=shown,
            hint=None
            if any(name in WHOLE for _, name, _ in self.errors)
            else "to import the others and leave these out, skip the bad records "
            "(on_error='skip', onError=skip, --skip-invalid)",
        )


# -- writing ---------------------------------------------------------------------------
def header(model: ModelRecord | None, scope_key: str) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "version": VERSION,
        "model": None if model is None else {"name": model.model, "dimension": model.dimension},
        "scope": scope_key,
    }


def fact_record(fact: Fact, vector: Any | None) -> dict[str, Any]:
    source = fact.source_ref
    return {
        "kind": "fact",
        "id": fact.id,
        "content": fact.content,
        **{camel(f.name): _written(getattr(fact, f.name)) for f in KEPT},
        "metadata": fact.metadata,
        "source": None
        if source is None
        else {"sandboxId": source.sandbox_id, "entryIndex": source.entry_index},
        "createdAt": fact.created_at.isoformat(),
        "updatedAt": fact.updated_at.isoformat(),
        "vector": None
        if vector is None
        else base64.b64encode(vector.astype("<f4").tobytes()).decode("ascii"),
    }


def _written(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    return list(value) if isinstance(value, tuple) else value


def working_record(key: str, value_json: str, expires_at_us: int | None) -> dict[str, Any]:
    return {
        "kind": "working",
        "key": key,
        "value": json.loads(value_json),
        "expiresAt": None if expires_at_us is None else from_us(expires_at_us).isoformat(),
    }


# -- reading ---------------------------------------------------------------------------
def sniff(text: str) -> str:
    """``json``, ``jsonl`` or ``csv``, by what the text starts with."""
    start = text.lstrip()[:1]
    if start == "[":
        return "json"
    if start == "{":
        first = text.lstrip().split("\n", 1)[0]
        try:
            head = json.loads(first)
        except (ValueError, RecursionError):
            return "json"  # an object over several lines (or too deep to tell)
        return "jsonl" if isinstance(head, dict) and "\n" in text.strip() else "json"
    return "csv"


def parse(text: str, format: str) -> Parsed:
    if format == "jsonl":
        return parse_jsonl(jsonl_lines(text))
    if format == "json":
        return parse_json(text)
    if format == "csv":
        return parse_csv(text)
    raise InvalidInput(f"format must be one of {', '.join(FORMATS)}, got {format!r}")


_SPACE_RUN = re.compile(r"\s+")


def pieces(text: str, most: int) -> list[tuple[str, str]]:
    """``text`` as consecutive (piece, gap) pairs: each piece at most ``most`` characters,
    cut at whitespace where some is near its end, and the gap the whitespace run after it
    (``""`` for the last), so ``"".join(piece + gap)`` is ``text``. Words longer than a
    fact holds are kept whole this way, a fact a piece."""
    found, start = [], 0
    while len(text) - start > most:
        end = start + most
        spaces = list(_SPACE_RUN.finditer(text, start + most // 2, end + 1))
        if spaces and spaces[-1].start() > start:
            cut = spaces[-1]
            whole = _SPACE_RUN.match(text, cut.start())
            assert whole is not None
            found.append((text[start : cut.start()], whole.group()))
            start = whole.end()
        else:
            found.append((text[start:end], ""))
            start = end
    return [*found, (text[start:], "")]


def jsonl_lines(text: str) -> list[str]:
    """The lines of JSONL text: split at line feeds only (a record's strings may hold
    U+2028, U+0085 and the other breaks ``str.splitlines`` would split at, as
    ``JSON.stringify`` and ``json.dumps(ensure_ascii=False)`` write them), a carriage
    return before one dropped."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def objects(
    lines: Iterable[str], errors: list[tuple[int, str, str]]
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each JSON object of a JSONL text with its line number; a line that is not one is
    an error of ``errors`` (blank lines are skipped)."""
    for number, raw in enumerate(lines, 1):
        if not raw or raw.isspace():
            continue
        try:
            obj = json.loads(raw)
        except ValueError as exc:
            errors.append((number, "line", f"not JSON: {exc}"))
            continue
        except RecursionError:
            errors.append((number, "line", DEEP))
            continue
        if isinstance(obj, dict):
            yield number, obj
        else:
            errors.append((number, "line", "not a JSON object"))


def parse_jsonl(lines: Iterable[str]) -> Parsed:
    parsed = Parsed()
    for number, obj in objects(lines, parsed.errors):
        if number == 1 and obj.get("format") == FORMAT:
            parsed.model = header_model(obj, number, parsed, HEADER_FIELDS)
        else:
            record(obj, number, parsed)
    return parsed


def parse_json(text: str) -> Parsed:
    parsed = Parsed()
    try:
        obj = json.loads(text)
    except ValueError as exc:
        parsed.errors.append((1, "document", f"not JSON: {exc}"))
        return parsed
    except RecursionError:
        parsed.errors.append((1, "document", DEEP))
        return parsed
    if isinstance(obj, list):  # bare facts
        for n, item in enumerate(obj, 1):
            record(item if not isinstance(item, dict) else {"kind": "fact", **item}, n, parsed)
        return parsed
    if not isinstance(obj, dict) or obj.get("format") != FORMAT:
        parsed.errors.append((1, "format", f"not an {FORMAT} document (or a list of facts)"))
        return parsed
    parsed.model = header_model(obj, 1, parsed, (*HEADER_FIELDS, "facts", "working"))
    for name in ("facts", "working"):
        items = obj.get(name, [])
        if not isinstance(items, list):
            parsed.errors.append((1, name, "must be a list"))
            continue
        kind = "fact" if name == "facts" else "working"
        for n, item in enumerate(items, 1):
            record({"kind": kind, **item} if isinstance(item, dict) else item, n, parsed)
    return parsed


def parse_csv(text: str) -> Parsed:
    parsed = Parsed()
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        names = _columns(next(reader, None), parsed.errors)
        for row in reader if names else ():
            if row:  # not a blank line
                _csv_row(row, reader.line_num, names, parsed)
    except csv.Error as exc:  # the reader cannot go on: where the next record starts is lost
        line = reader.line_num
        parsed.errors.append((line, "header" if line <= 1 else "line", _csv_problem(exc)))
    return parsed


def _columns(header: list[str] | None, errors: list[tuple[int, str, str]]) -> list[str]:
    """The header row's columns, or none when it is bad (each problem listed)."""
    if header is None or "content" not in header:
        errors.append((1, "header", "a header row naming at least content is required"))
        return []
    before = len(errors)
    for n, name in enumerate(header):
        if name not in COLUMNS:
            errors.append((1, name, f"unknown column: the columns are {', '.join(COLUMNS)}"))
        elif name in header[:n]:
            errors.append((1, name, "named twice in the header"))
    return header if len(errors) == before else []


def _csv_row(fields: list[str], number: int, names: list[str], parsed: Parsed) -> None:
    if len(fields) > len(names):
        parsed.errors.append(
            (number, "line", f"{len(fields)} fields where the header names {len(names)} columns")
        )
        return
    row = dict(zip(names, fields, strict=False))  # a short row leaves the last columns empty
    obj: dict[str, Any] = {"kind": "fact", "content": row.get("content")}
    for name in ("type", "context"):
        if row.get(name):
            obj[name] = row[name]
    if row.get("tags"):
        obj["tags"] = [t.strip() for t in row["tags"].split(";") if t.strip()]
    if row.get("created_at"):
        obj["createdAt"] = row["created_at"]
    if row.get("metadata"):
        try:
            obj["metadata"] = json.loads(row["metadata"])
        except ValueError:
            parsed.errors.append((number, "metadata", "not JSON"))
            return
        except RecursionError:
            parsed.errors.append((number, "metadata", DEEP))
            return
    record(obj, number, parsed)


def _csv_problem(exc: csv.Error) -> str:
    """What the CSV reader stopped at, in words. A field over the reader's limit is too
    long for every column (content holds at most MAX_FACT_CHARS characters, the longest
    column far less than the limit), so it is reported as too long."""
    if "field limit" in str(exc):
        return (
            f"a field is over {csv.field_size_limit()} characters, longer than any column "
            f"holds (content: at most {limits.MAX_FACT_CHARS})"
        )
    return f"not CSV: {exc}"


def header_model(
    obj: dict[str, Any], line: int, parsed: Parsed, known: tuple[str, ...] = HEADER_FIELDS
) -> ModelRecord | None:
    """The model a header names (None: none), its problems listed in ``parsed``: a bad
    version or model, a field other than ``known``."""
    unknown(obj, known, line, parsed.errors, "the header")
    if obj.get("version") != VERSION:
        parsed.errors.append((line, "version", f"version {obj.get('version')!r} is not {VERSION}"))
    model = obj.get("model")
    if model is None:
        return None
    if (
        not isinstance(model, dict)
        or not isinstance(model.get("name"), str)
        or type(model.get("dimension")) is not int
        or model["dimension"] < 1
        or set(model) - {"name", "dimension"}
    ):
        parsed.errors.append(
            (line, "model", "must be {name, dimension} (a positive integer) or null")
        )
        return None
    return ModelRecord(model["name"], model["dimension"])


def unknown(
    obj: dict[str, Any],
    known: tuple[str, ...],
    line: int,
    errors: list[tuple[int, str, str]],
    what: str,
) -> None:
    """Each field of ``obj`` other than ``known`` as a bad record: nothing is dropped
    silently."""
    for name in obj:
        if name not in known:
            errors.append((line, str(name)[:64], f"unknown field: {what} has {', '.join(known)}"))


def record(obj: object, line: int, parsed: Parsed) -> None:
    """The record of ``line`` read into ``parsed``: a fact or working key, or its errors
    (the record kept as read in ``parsed.bad``)."""
    before = len(parsed.errors)
    _record(obj, line, parsed)
    if len(parsed.errors) > before:
        parsed.bad.setdefault(line, obj)


def _record(obj: object, line: int, parsed: Parsed) -> None:
    if not isinstance(obj, dict):
        parsed.errors.append((line, "record", "not a JSON object"))
        return
    kind = obj.get("kind")
    if kind == "fact":
        fact = _fact(obj, line, parsed.errors)
        if fact is not None and _width(fact, parsed.model, parsed.errors):
            parsed.facts.append(fact)
    elif kind == "working":
        entry = _working(obj, line, parsed.errors)
        if entry is not None:
            parsed.working.append(entry)
    else:
        parsed.errors.append((line, "kind", f"must be fact or working, got {kind!r}"))


def _width(fact: FactRecord, model: ModelRecord | None, errors: list[tuple[int, str, str]]) -> bool:
    """Whether the fact's vector (if any) has the width of the file's model and only values
    an L2-normalised vector has."""
    if fact.vector is None:
        return True
    if model is None:
        errors.append((fact.line, "vector", "the file names no model its vectors are of"))
        return False
    if len(fact.vector) != 4 * model.dimension:
        errors.append(
            (
                fact.line,
                "vector",
                f"has {len(fact.vector) // 4} value(s); the file's model {model.model!r} has "
                f"dimension {model.dimension}",
            )
        )
        return False
    values = array.array("f", fact.vector)  # the file's little-endian float32s
    if sys.byteorder == "big":
        values.byteswap()
    odd = next((v for v in values if not abs(v) <= rules.UNIT_BOUND), None)  # NaN too
    if odd is not None:
        errors.append(
            (
                fact.line,
                "vector",
                f"holds the value {odd:g}; a vector is L2-normalised, every value in [-1, 1]",
            )
        )
        return False
    return True


def _fact(obj: dict[str, Any], line: int, errors: list[tuple[int, str, str]]) -> FactRecord | None:
    found: dict[str, Any] = {}
    before = len(errors)
    unknown(obj, FACT_FIELDS, line, errors, "a fact")
    for name, check in _FACT_FIELDS:
        if name not in obj or (obj[name] is None and name != "content"):
            continue
        try:
            found[name] = check(obj[name])
        except EngramError as exc:
            errors.append((line, name, exc.message))
    if "content" not in obj:
        errors.append((line, "content", "is required"))
    if len(errors) > before:
        return None
    return FactRecord(
        id=found.get("id"),
        content=found["content"],
        created_at=found.get("createdAt"),
        updated_at=found.get("updatedAt"),
        metadata=dict(obj["metadata"]) if "metadata" in found else {},
        metadata_json=found.get("metadata"),
        source_ref=found.get("source"),
        kept={f.name: found[camel(f.name)] for f in KEPT if found.get(camel(f.name)) is not None},
        vector=found.get("vector"),
        line=line,
    )


def _working(
    obj: dict[str, Any], line: int, errors: list[tuple[int, str, str]]
) -> WorkingRecord | None:
    before = len(errors)
    unknown(obj, WORKING_FIELDS, line, errors, "a working key")
    found: dict[str, Any] = {}
    checks = (
        ("key", limits.check_key),
        ("value", limits.encode_value),
        ("expiresAt", lambda v: None if v is None else _time(v)),
    )
    for name, check in checks:
        if name == "value" and name not in obj:
            errors.append((line, name, "is required"))
            continue
        try:
            found[name] = check(obj.get(name))
        except EngramError as exc:
            errors.append((line, name, exc.message))
    if len(errors) > before:
        return None
    return WorkingRecord(found["key"], found["value"], found["expiresAt"], line)


def _time(value: object) -> datetime:
    if not isinstance(value, str):
        raise InvalidInput("must be an RFC 3339 time")
    try:
        at = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise InvalidInput(f"not an RFC 3339 time: {value!r}") from exc
    if at.tzinfo is None:
        raise InvalidInput(f"a time needs its offset: {value!r}")
    return from_us(to_us(at))


def _source(value: object) -> SourceRef:
    if not isinstance(value, dict):
        raise InvalidInput("must be {sandboxId, entryIndex}")
    ref = limits.check_source_ref(SourceRef(value.get("sandboxId"), value.get("entryIndex")))  # type: ignore[arg-type]
    assert ref is not None
    return ref


def _vector(value: object) -> bytes:
    if not isinstance(value, str):
        raise InvalidInput("must be base64 float32")
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise InvalidInput("not base64") from exc
    if not raw or len(raw) % 4:
        raise InvalidInput("not a whole number of float32 values")
    return raw


def _id(value: object) -> str:
    checked = limits.check_id(value)
    if not checked.startswith("f_"):
        raise InvalidInput(f"a fact id starts with f_, got {checked!r}")
    return checked


def _held(kept: Field) -> Callable[[object], Any]:
    """The check of a :data:`KEPT` field: the remember operation's rule for it (a time
    read from RFC 3339 first)."""
    name = camel(kept.name)

    def check(value: object) -> Any:
        if kept.base is datetime:
            value = _time(value)
        checked = value if kept.marker is None else kept.marker.check(value, name)
        return None if checked == "" and kept.optional else checked

    return check


_FACT_FIELDS: tuple[tuple[str, Callable[[object], Any]], ...] = (
    ("id", _id),
    ("content", limits.check_content),
    *((camel(f.name), _held(f)) for f in KEPT),
    ("metadata", limits.encode_metadata),
    ("source", _source),
    ("createdAt", _time),
    ("updatedAt", _time),
    ("vector", _vector),
)
FACT_FIELDS = ("kind", *(name for name, _ in _FACT_FIELDS))


def lines(head: dict[str, Any], records: Iterable[dict[str, Any]]) -> Iterator[str]:
    """The JSONL text: the header, then one record a line."""
    yield json.dumps(head, ensure_ascii=False) + "\n"
    for record in records:
        yield json.dumps(record, ensure_ascii=False) + "\n"
