"""Time as engram stores it: microseconds since the epoch and back, at every moment a
datetime can hold."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from engram.core.clock import from_us, to_us

FIRST = to_us(datetime(1, 1, 1, tzinfo=UTC))
LAST = to_us(datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC))


def test_a_moment_s_microseconds_read_back_as_that_moment() -> None:
    assert from_us(0) == datetime(1970, 1, 1, tzinfo=UTC)
    assert from_us(1_700_000_000_123_456) == datetime(2023, 11, 14, 22, 13, 20, 123456, tzinfo=UTC)
    assert from_us(-1) == datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
    assert from_us(FIRST) == datetime(1, 1, 1, tzinfo=UTC)
    assert from_us(LAST) == datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
    assert from_us(0).tzinfo is UTC


@given(st.integers(min_value=FIRST, max_value=LAST))
def test_microseconds_and_datetimes_are_one_to_one(micros: int) -> None:
    moment = from_us(micros)
    assert to_us(moment) == micros
    assert moment == datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=micros)
