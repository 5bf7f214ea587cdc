"""The command line's argument types: every number, time and source is checked here,
as the parser reads it, before the library or the store is opened (exit 2)."""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import NoReturn

from engram.core.errors import InvalidInput
from engram.core.graph.walks import MAX_DEPTH, MAX_LIMIT
from engram.core.limits import MAX_COUNT, MAX_PAGE, MAX_STRENGTH, MAX_TOP_K
from engram.core.models import SourceRef
from engram.settings import parse_integer

MAX_SECONDS = 86_400 * 10**6  # a million days, as the library's max_age


class Parser(argparse.ArgumentParser):
    """Reports argument errors as InvalidInput (exit 2), like every other error."""

    def error(self, message: str) -> NoReturn:
        raise InvalidInput(message, hint=f"see '{self.prog} --help'")


def integer_in(minimum: int, maximum: int) -> Callable[[str], int]:
    def integer(text: str) -> int:
        try:
            return parse_integer(text, "the value", minimum=minimum, maximum=maximum)
        except InvalidInput as exc:
            raise argparse.ArgumentTypeError(
                f"expected an integer from {minimum} to {maximum}, got {text!r}"
            ) from exc

    return integer


def seconds(text: str) -> timedelta:
    """A number of seconds (a fraction allowed), from 0 to a million days."""
    try:
        seconds = float(text) if text.isascii() else math.nan
    except ValueError:
        seconds = math.nan
    if not 0 <= seconds <= MAX_SECONDS:  # also false for nan and inf
        raise argparse.ArgumentTypeError(
            f"expected a number of seconds from 0 to {MAX_SECONDS}, got {text!r}"
        )
    return timedelta(seconds=seconds)


def ttl(text: str) -> timedelta:
    """A time to live in seconds: more than 0 (at least a microsecond, the finest a
    store keeps) and at most a million days."""
    try:
        span = seconds(text)
    except argparse.ArgumentTypeError:
        span = timedelta(0)
    if span <= timedelta(0):
        raise argparse.ArgumentTypeError(
            f"expected a number of seconds above 0 (at least 0.000001), up to {MAX_SECONDS}, "
            f"got {text!r}"
        )
    return span


def source(text: str) -> SourceRef:
    sandbox, sep, index = text.rpartition(":")
    if not sep or not sandbox:
        raise argparse.ArgumentTypeError(f"expected SANDBOX_ID:ENTRY_INDEX, got {text!r}")
    try:
        entry = parse_integer(index, "ENTRY_INDEX", minimum=0, maximum=MAX_COUNT)
    except InvalidInput as exc:
        raise argparse.ArgumentTypeError(
            f"expected SANDBOX_ID:ENTRY_INDEX (an integer from 0 to {MAX_COUNT}), got {text!r}"
        ) from exc
    return SourceRef(sandbox, entry)


def time(text: str) -> datetime:
    """An ISO 8601 time with its UTC offset."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        moment = None
    if moment is None or moment.utcoffset() is None:
        raise argparse.ArgumentTypeError(
            f"expected an ISO 8601 time with its offset (2024-05-01T09:30:00Z), got {text!r}"
        )
    return moment


def json_value(text: str) -> object:
    """Any JSON value, as a command's argument gives it; InvalidInput (not a usage
    error) when it is not JSON, with how to write a text."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise InvalidInput(
            f"the value is not valid JSON: {exc}",
            hint="""quote text as a JSON string, e.g. '"draft"'""",
        ) from exc


def json_object(text: str) -> object:
    """A JSON object, as the option's text (the library holds it to its limits)."""
    try:
        found = json.loads(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a JSON object, got {text[:40]!r}") from None
    if not isinstance(found, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object, got {text[:40]!r}")
    return found


def decimal_in(maximum: float) -> Callable[[str], float]:
    """A plain decimal number from 0 to ``maximum``."""

    def decimal(text: str) -> float:
        digits = text.strip().replace(".", "", 1)
        if not (digits.isascii() and digits.isdigit()) or not 0 <= float(text) <= maximum:
            raise argparse.ArgumentTypeError(
                f"expected a number from 0 to {maximum:g}, got {text!r}"
            )
        return float(text)

    return decimal


strength, share = decimal_in(MAX_STRENGTH), decimal_in(1.0)


TOP_K, PAGE, COUNT = integer_in(1, MAX_TOP_K), integer_in(1, MAX_PAGE), integer_in(0, MAX_COUNT)
DEPTH, WALK = integer_in(1, MAX_DEPTH), integer_in(1, MAX_LIMIT)
