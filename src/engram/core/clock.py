"""Time as engram stores it: integer microseconds since the Unix epoch, UTC."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

Clock = Callable[[], int]
"""What the core asks for the time: microseconds now. Tests pass their own."""


def now_us() -> int:
    return time.time_ns() // 1000


def to_us(moment: datetime) -> int:
    delta = moment - _EPOCH
    return delta.days * 86_400_000_000 + delta.seconds * 1_000_000 + delta.microseconds


def from_us(micros: int) -> datetime:
    return _EPOCH + timedelta(microseconds=micros)  # half the time of fromtimestamp()
