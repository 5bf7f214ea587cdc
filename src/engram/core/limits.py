"""The documented limits, and the checks that enforce them with clear errors."""

from __future__ import annotations

import json
import unicodedata
from datetime import UTC, datetime, timedelta

from engram.core.errors import InvalidInput
from engram.core.models import JSONValue, SourceRef
from engram.core.text import check_text

MAX_KEY_CHARS = 256
MAX_USER_CHARS = 256  # an actor's or a second user's name
MAX_SESSION_NAME_CHARS = 256
MAX_SOURCE_CHARS = 1024  # a document's name: a file's path or a URL
MAX_VALUE_BYTES = 64 * 1024
DEFAULT_PAGE = 100
MAX_PAGE = 1000
# The changes of each entry a listing of the ledger shows: a remember_many of N made N, and
# a page of batches would otherwise carry them all (the rest: Memory.ledger_changes).
CHANGES_SHOWN = 100
DEFAULT_TOP_K = 5
MAX_TOP_K = 100
MAX_FACT_CHARS = 2000
MAX_CONTEXT_CHARS = 8000
MAX_QUERY_CHARS = 8000
MAX_RESPONSE_CHARS = 100_000  # a response read for feedback
MAX_INJECTED = 100  # facts per detection of feedback (recall's largest top_k)
# The consolidation cycle's steps, in the order it runs them.
STEPS = ("reindex", "strengthen", "prune", "merge", "derive", "compact")
MAX_WIKI_BATCH = 10_000  # facts one wiki compile folds at a time
MAX_TAGS = 32
MAX_LABEL_CHARS = 128
MAX_METADATA_BYTES = 16 * 1024
# JSON values (working memory, metadata) nest at most this deep: a list or an object is
# one level. Deeper values would be stored, then fail to serialise on the way out.
MAX_DEPTH = 64
MAX_STRENGTH = 10.0  # a fact's strength lies in [0, MAX_STRENGTH]; 1.0 is neutral
MAX_COUNT = 1 << 53  # beyond any store, and within what SQLite and JSON carry exactly
MAX_TTL = timedelta(days=10**6)  # about 2,700 years; its expiry fits in int64 microseconds
MAX_TTL_SECONDS = MAX_TTL // timedelta(seconds=1)  # as HTTP and the tools give it
MAX_AGE_MS = MAX_TTL // timedelta(milliseconds=1)  # a compaction's max age, in milliseconds


def check_key(key: object) -> str:
    return check_text(key, "key", max_chars=MAX_KEY_CHARS)


def encode_value(value: JSONValue, name: str = "value") -> str:
    """The compact JSON text of ``value``; refuses non-JSON values, values nested deeper
    than 64 levels and values over 64 KiB."""
    if type(value) is dict and not value:  # the commonest metadata, spared the walk
        return "{}"
    check_depth(value, name)
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        size = len(text.encode("utf-8"))
    except (TypeError, ValueError, UnicodeEncodeError, RecursionError) as exc:
        raise InvalidInput(f"{name} is not JSON: {exc}") from exc
    if size > MAX_VALUE_BYTES:
        raise InvalidInput(
            f"{name} is {size} bytes encoded; the limit is {MAX_VALUE_BYTES} (64 KiB)"
        )
    return text


def check_depth(value: JSONValue, name: str = "value") -> None:
    """Refuses a value whose lists or objects nest more than MAX_DEPTH levels deep.

    Walks without recursion, containers only; a cycle only nests deeper, so it is
    refused too."""
    stack: list[tuple[dict[object, object] | list[object] | tuple[object, ...], int]] = []
    if isinstance(value, dict | list | tuple):
        stack.append((value, 1))
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise InvalidInput(f"{name} nests lists or objects more than {MAX_DEPTH} levels deep")
        children = item.values() if isinstance(item, dict) else item
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list | tuple))


def depth_ok(value: JSONValue) -> bool:
    """Whether ``value`` nests at most MAX_DEPTH levels (see :func:`check_depth`)."""
    try:
        check_depth(value)
    except InvalidInput:
        return False
    return True


def decode_value(text: str) -> tuple[JSONValue, bool]:
    """A stored working value read back, and whether it nests deeper than MAX_DEPTH (a
    value stored before values' depth was limited): then None, since it cannot be served,
    and some are beyond what the JSON decoder itself can read."""
    try:
        decoded = json.loads(text)
    except RecursionError:
        return None, True
    # Nesting deeper than the limit takes more brackets than it: counting them (in C)
    # spares almost every read the walk over the value.
    too_deep = text.count("[") + text.count("{") > MAX_DEPTH and not depth_ok(decoded)
    return (None if too_deep else decoded), too_deep


def check_limit(
    limit: object, *, name: str = "limit", default: int = DEFAULT_PAGE, maximum: int = MAX_PAGE
) -> int:
    if limit is None:
        return default
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise InvalidInput(f"{name} must be an integer, got {limit!r}")
    if not 1 <= limit <= maximum:
        raise InvalidInput(f"{name} must be between 1 and {maximum}, got {limit}")
    return limit


def check_top_k(top_k: object) -> int:
    return check_limit(top_k, name="top_k", default=DEFAULT_TOP_K, maximum=MAX_TOP_K)


def check_content(content: object, *, name: str = "content") -> str:
    """Fact text, stripped; refuses empty text and text over 2000 characters."""
    return check_text(content, name, max_chars=MAX_FACT_CHARS, strip=True)


def check_context(context: object) -> str | None:
    """Optional text that helps find a fact; at most 8000 characters."""
    if context is None:
        return None
    return (
        check_text(context, "context", max_chars=MAX_CONTEXT_CHARS, strip=True, empty=True) or None
    )


def normalize_for_hash(text: str) -> str:
    """What two texts must share to count as the same fact: NFC, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFC", text).split())


def check_query(query: object) -> str:
    return check_text(query, "query", max_chars=MAX_QUERY_CHARS, strip=True)


def check_label(value: object, name: str) -> str:
    return check_text(value, name, max_chars=MAX_LABEL_CHARS, strip=True)


def check_tags(tags: object) -> tuple[str, ...]:
    if tags is None:
        return ()
    if isinstance(tags, str) or not isinstance(tags, list | tuple | set | frozenset):
        raise InvalidInput("tags must be a list of strings")
    if len(tags) > MAX_TAGS:
        raise InvalidInput(f"{len(tags)} tags given; the limit is {MAX_TAGS}")
    return tuple(sorted({check_label(tag, "tag") for tag in tags}))


def check_metadata(metadata: object) -> dict[str, JSONValue]:
    if metadata is None:
        return {}
    encode_metadata(metadata)
    checked: dict[str, JSONValue] = metadata  # type: ignore[assignment]
    return dict(checked)


def encode_metadata(metadata: object) -> str:
    """The compact JSON text of ``metadata``, an object with string keys of at most
    ``MAX_METADATA_BYTES`` encoded."""
    if not isinstance(metadata, dict) or not all(isinstance(k, str) for k in metadata):
        raise InvalidInput("metadata must be an object with string keys")
    text = encode_value(metadata, "metadata")
    size = len(text.encode("utf-8"))
    if size > MAX_METADATA_BYTES:
        raise InvalidInput(f"metadata is {size} bytes encoded; the limit is {MAX_METADATA_BYTES}")
    return text


def check_source_ref(source_ref: object) -> SourceRef | None:
    if source_ref is None:
        return None
    if not isinstance(source_ref, SourceRef):
        raise InvalidInput("source_ref must be a SourceRef(sandbox_id, entry_index)")
    check_label(source_ref.sandbox_id, "source_ref.sandbox_id")
    index = source_ref.entry_index
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index <= MAX_COUNT:
        raise InvalidInput(
            f"source_ref.entry_index must be an integer from 0 to {MAX_COUNT}, got {index!r}"
        )
    return source_ref


def check_time(value: object, name: str) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, datetime) or value.utcoffset() is None:
        raise InvalidInput(f"{name} must be a timezone-aware datetime")
    try:
        value.astimezone(UTC)  # stored as UTC: it must exist there (years 1 to 9999)
    except (OverflowError, ValueError) as exc:
        raise InvalidInput(f"{name} is outside the years 1 to 9999 in UTC") from exc
    return value


def check_max_facts(value: object) -> int:
    return check_count(value, "max_facts")


def check_strength(value: object, name: str = "strength") -> float:
    """A strength: a finite number from 0 to 10."""
    return _check_number(value, name, MAX_STRENGTH)


def _check_number(value: object, name: str, maximum: float) -> float:
    """A number from 0 to ``maximum`` (not a bool, not NaN)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidInput(f"{name} must be a number from 0 to {maximum:g}, got {value!r}")
    if not 0.0 <= float(value) <= maximum:  # NaN fails this too
        raise InvalidInput(f"{name} must be a number from 0 to {maximum:g}, got {value!r}")
    return float(value)


def check_count(value: object, name: str) -> int:
    """A non-negative integer small enough for storage (at most 2**53)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_COUNT:
        raise InvalidInput(f"{name} must be an integer from 0 to {MAX_COUNT}, got {value!r}")
    return value


def check_max_age(value: object, name: str = "max_age") -> int:
    """A max age as microseconds; 0 means facts never expire."""
    if value is None:
        return 0
    if not isinstance(value, timedelta):
        raise InvalidInput(
            f"{name} must be a datetime.timedelta, got {type(value).__name__} {value!r}",
            hint=f"e.g. {name}=timedelta(days=30)",
        )
    if not timedelta(0) <= value <= MAX_TTL:
        raise InvalidInput(
            f"{name} must be from 0 to {seconds(MAX_TTL)} seconds (a million days), "
            f"got {seconds(value)} seconds"
        )
    return value // timedelta(microseconds=1)


def check_version(value: object, name: str = "expected_version") -> int:
    """A working-memory version to compare with (0: the key must be unset)."""
    return check_count(value, name)


def check_ttl(value: object) -> timedelta:
    """A positive time to live, at most MAX_TTL; refused in seconds, as a timedelta is
    written (``timedelta(seconds=…)``), never in its own repr."""
    if not isinstance(value, timedelta):
        raise InvalidInput(
            f"ttl must be a datetime.timedelta, got {type(value).__name__} {value!r}",
            hint="e.g. ttl=timedelta(seconds=60)",
        )
    if not timedelta(0) < value <= MAX_TTL:
        raise InvalidInput(
            f"ttl must be more than 0 seconds and at most {seconds(MAX_TTL)} seconds "
            f"(a million days), got {seconds(value)} seconds"
        )
    return value


def seconds(value: timedelta) -> str:
    """A span as a number of seconds, as a person writes it: 60, 0.5, -5, 86400000000."""
    whole, micros = divmod(value // timedelta(microseconds=1), 1_000_000)
    if micros == 0:
        return str(whole)
    return f"{whole + micros / 1_000_000:.6f}".rstrip("0")


MAX_IDS = 1000
MAX_ID_CHARS = 64  # an id as engram gives them


def check_id(value: object, what: str = "fact id") -> str:
    """An id as engram gives them: text without NUL, at most 64 characters."""
    return check_text(value, what, max_chars=MAX_ID_CHARS)


def check_ids(ids: object, name: str = "ids") -> list[str]:
    """A list of 1 to 1,000 fact ids (duplicates dropped, order kept)."""
    if isinstance(ids, str) or not isinstance(ids, (list, tuple)):
        raise InvalidInput(f"{name} must be a list of fact ids")
    if not ids:
        raise InvalidInput(f"{name} must name at least one fact")
    if len(ids) > MAX_IDS:
        raise InvalidInput(f"{name} may name at most {MAX_IDS} facts, got {len(ids)}")
    return list(dict.fromkeys(check_id(i) for i in ids))


def check_share(value: object, name: str) -> float:
    """A number from 0 to 1 (a relevance to filter by)."""
    return _check_number(value, name, 1.0)
