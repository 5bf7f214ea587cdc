"""The times a question asks about: "in June", "in 2023", "on October 13, 2023".

Recall favours the candidates that happened in a period the question names
(:mod:`engram.core.signals`). Only periods the question states are read: a day with its
month and year, a month with its year, a month or a year after "in", "during" or "of",
and ISO dates (``2023-10-13``, ``2023-10``). A month alone holds in that month of every
year. Relative times ("last week", "yesterday") need the time the question was asked,
which recall does not know, and are not read. Periods are calendar periods in UTC, the
zone facts' times are kept in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_MONTH = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
# Full month names only where a month stands alone: "may", "mar" and "dec" are words too.
_FULL_MONTH = "(" + "|".join(n for n in _MONTHS if len(n) > 3 or n == "may") + ")"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(\d{4})"

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), shape)
    for pattern, shape in (
        (rf"\b{_YEAR}-(\d{{2}})-(\d{{2}})\b", "ymd"),
        (rf"\b{_YEAR}-(\d{{2}})\b", "ym"),
        (rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", "dmy"),
        (rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", "mdy"),
        (rf"\b{_MONTH},?\s+{_YEAR}\b", "my"),
        (rf"\b(?:in|during|of)\s+{_FULL_MONTH}\b", "m"),
        (rf"\b(?:in|during|of)\s+{_YEAR}\b", "y"),
    )
)


@dataclass(frozen=True, slots=True)
class Period:
    """A calendar year, a month (of one year, or of any when ``year`` is None) or a day."""

    year: int | None
    month: int | None = None
    day: int | None = None

    def holds(self, at: datetime) -> bool:
        """Whether ``at`` lies in the period (in UTC)."""
        at = at.astimezone(UTC)
        return (
            (self.year is None or at.year == self.year)
            and (self.month is None or at.month == self.month)
            and (self.day is None or at.day == self.day)
        )


def periods(question: str) -> list[Period]:
    """The periods ``question`` names, in the order found; a span read as a longer form
    (a day, or what only looks like one) is not read again as a shorter one."""
    found: list[tuple[int, Period]] = []
    taken: list[tuple[int, int]] = []
    for pattern, shape in _PATTERNS:
        for match in pattern.finditer(question):
            start, end = match.span()
            if any(start < b and a < end for a, b in taken):
                continue
            taken.append((start, end))  # no day or month there: nothing shorter either
            period = _period(shape, match.groups())
            if period is not None:
                found.append((start, period))
    found.sort(key=lambda pair: pair[0])
    return list(dict.fromkeys(period for _, period in found))


def _period(shape: str, groups: tuple[str, ...]) -> Period | None:
    day: int | None
    match shape:
        case "ymd":
            year, month, day = int(groups[0]), int(groups[1]), int(groups[2])
        case "ym":
            year, month, day = int(groups[0]), int(groups[1]), None
        case "dmy":
            year, month, day = int(groups[2]), _MONTHS[groups[1].lower()], int(groups[0])
        case "mdy":
            year, month, day = int(groups[2]), _MONTHS[groups[0].lower()], int(groups[1])
        case "my":
            year, month, day = int(groups[1]), _MONTHS[groups[0].lower()], None
        case "m":
            return Period(None, _MONTHS[groups[0].lower()])
        case _:
            return Period(int(groups[0]))
    if not 1 <= month <= 12 or not _real(year, month, day):
        return None
    return Period(year, month, day)


def _real(year: int, month: int, day: int | None) -> bool:
    if day is None:
        return 1 <= year <= 9999
    try:
        datetime(year, month, day, tzinfo=UTC)
    except ValueError:
        return False
    return True
