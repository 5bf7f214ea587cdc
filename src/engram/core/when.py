"""The times a question asks about: "in June", "in 2023", "on October 13, 2023".

Recall favours the candidates that happened in a period the question names
(:mod:`engram.core.signals`). Only periods the question states are read: a day with its
month and year, a month with its year, a month or a year after "in", "during" or "of",
and ISO dates (``2023-10-13``, ``2023-10``). A month alone holds in that month of every
year. Relative times in a question ("last week") need the time it was asked, which
recall does not know, and are not read; in a memory's words they are read against the
time it was said (:func:`referred`: "I went yesterday", said on 8 May, happened on the
7th), so a question about the 7th finds it. Periods are calendar periods in UTC, the
zone facts' times are kept in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

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


_WEEKDAYS = {
    name: number
    for number, name in enumerate(
        "monday tuesday wednesday thursday friday saturday sunday".split()
    )
}
_COUNT = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "a couple of": 2,
}  # fmt: skip
_RELATIVE = re.compile(
    r"\b(?:yesterday|tomorrow|last\s+night"
    r"|(?:last|next)\s+(?:week|weekend|month|year|" + "|".join(_WEEKDAYS) + r")"
    r"|(?P<count>\d{1,2}|" + "|".join(c.replace(" ", r"\s+") for c in _COUNT) + r")\s+"
    r"(?P<unit>days?|weeks?|months?|years?)\s+(?P<dir>ago|from\s+now))\b",
    re.IGNORECASE,
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

    def meets(self, first: date, last: date) -> bool:
        """Whether any day from ``first`` to ``last`` (both included) lies in the period."""
        if self.year is not None and self.month is not None and self.day is not None:
            return first <= date(self.year, self.month, self.day) <= last
        if self.month is None:
            assert self.year is not None  # a period names a year, a month or both
            return first.year <= self.year <= last.year
        year, month = first.year, first.month
        while (year, month) <= (last.year, last.month):
            if month == self.month and (self.year is None or year == self.year):
                return True
            year, month = (year + 1, 1) if month == 12 else (year, month + 1)
        return False


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


def referred(text: str, at: datetime) -> list[tuple[date, date]]:
    """The days a memory's words refer to relative to when it was said (``at``, in UTC),
    each a range of days both included: "yesterday" or "last night" the day before,
    "last week" the calendar week (Monday to Sunday) before ``at``'s, "last weekend" the
    Saturday and Sunday before, "last month" and "last year" the calendar ones before,
    "last Friday" the latest Friday before ``at``'s day, "three days ago" that day, "two
    weeks ago" that day's week, "a month ago" that month; "tomorrow" and "next week",
    "next month", "next year" likewise after. What says no more than ``at``'s own day
    ("today", "tonight") is not read: ``at`` holds it."""
    day = at.astimezone(UTC).date()
    found: list[tuple[date, date]] = []
    for match in _RELATIVE.finditer(text):
        try:
            found.append(_referred(match, day))
        except (ValueError, OverflowError):  # before year 1 or after 9999: no such day
            continue
    return found


def _referred(match: re.Match[str], day: date) -> tuple[date, date]:
    word = " ".join(match.group(0).lower().split())
    if (unit := match.group("unit")) is not None:
        said = " ".join(match.group("count").lower().split())
        count = _COUNT.get(said) or int(said)
        back = -count if match.group("dir").lower() == "ago" else count
        return _unit(unit.lower().rstrip("s"), day, back)
    if word in ("yesterday", "last night"):
        return _unit("day", day, -1)
    if word == "tomorrow":
        return _unit("day", day, 1)
    step = -1 if word.startswith("last") else 1
    what = word.split()[-1]
    if what in _WEEKDAYS:
        target = _WEEKDAYS[what]
        offset = (day.weekday() - target) % 7 or 7
        moved = (
            day - timedelta(days=offset)
            if step < 0
            else day + timedelta(days=(target - day.weekday()) % 7 or 7)
        )
        return moved, moved
    if what == "weekend":
        saturday = _unit("week", day, step)[0] + timedelta(days=5)
        return saturday, saturday + timedelta(days=1)
    return _unit(what, day, step)


def _unit(unit: str, day: date, step: int) -> tuple[date, date]:
    """The day, calendar week, month or year ``step`` of them from ``day``'s."""
    if unit == "day":
        moved = day + timedelta(days=step)
        return moved, moved
    if unit == "week":
        monday = day - timedelta(days=day.weekday()) + timedelta(weeks=step)
        return monday, monday + timedelta(days=6)
    if unit == "month":
        index = day.year * 12 + day.month - 1 + step
        year, month = divmod(index, 12)
        first = date(year, month + 1, 1)
        following = date(year + (month + 1) // 12, (month + 1) % 12 + 1, 1)
        return first, following - timedelta(days=1)
    return date(day.year + step, 1, 1), date(day.year + step, 12, 31)
