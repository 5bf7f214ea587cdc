"""The times a question asks about: "in June", "in 2023", "on October 13, 2023",
"between August 11 and 15, 2023", "the week before 16 November 2023", "last Friday".

Recall favours the candidates that happened in a period the question names
(:mod:`engram.core.signals`). Read from a question: a day with its month and year, a month
with its year, a month or a year after "in", "during" or "of", ISO dates (``2023-10-13``,
``2023-10``), a range of days between two of them with a year ("between August 11 and
August 15 2023", "from 28 December to 3 January 2024"), and relative times: against a day
the question names ("the week before 16 November 2023", "two weeks before August 11,
2023", "the Sunday after ...", "last Friday on 23 January 2022"), else against when it
is asked ("what did I do yesterday?", "last week"), where recall passes that time. A
month alone holds in that month of every year. In a memory's words relative times are
read against when it was said (:func:`referred`: "I went yesterday", said on 8 May,
happened on the 7th), so a question about the 7th finds it. Periods are calendar periods
in UTC, the zone facts' times are kept in.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
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
_MONTH_NAMES = "|".join(sorted(_MONTHS, key=len, reverse=True))
_MONTH = rf"({_MONTH_NAMES})\.?"
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
_UNIT = r"(?P<unit>days?|weeks?|months?|years?)"
_COUNTS = r"(?P<count>\d{1,2}|" + "|".join(c.replace(" ", r"\s+") for c in _COUNT) + r")"
_RELATIVE = re.compile(
    r"\b(?:yesterday|tomorrow|last\s+night"
    r"|(?:last|next)\s+(?:week|weekend|month|year|" + "|".join(_WEEKDAYS) + r")"
    rf"|{_COUNTS}\s+{_UNIT}\s+(?P<dir>ago|from\s+now))\b",
    re.IGNORECASE,
)
# "the week before", "two weeks after": a day the question names follows.
_BEFORE = re.compile(
    r"\b(?:the\s+)?(?:(?P<what>week|weekend|month|year|" + "|".join(_WEEKDAYS) + r")"
    rf"|{_COUNTS}\s+{_UNIT})\s+(?P<dir>before|after)\s+",
    re.IGNORECASE,
)
_LEAD = re.compile(r"(?:the\s+|on\s+)+", re.IGNORECASE)
# One end of a range: a day with its month or alone, its year or not.
_END = re.compile(
    rf"(?:(?P<m1>{_MONTH_NAMES})\.?\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?"
    rf"|(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m2>{_MONTH_NAMES})\.?"
    r"|(?P<d3>\d{1,2})(?:st|nd|rd|th)?)(?:,?\s+(?P<y>\d{4}))?",
    re.IGNORECASE,
)
_END_TEXT = re.sub(r"\?P<\w+>", "?:", _END.pattern)  # the same, its groups unnamed
_RANGE = re.compile(
    rf"\b(?:between|from)\s+(?:the\s+)?(?P<a>{_END_TEXT})\s+(?:and|to|until|till|through)"
    rf"\s+(?:the\s+)?(?P<b>{_END_TEXT})\b",
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


@dataclass(frozen=True, slots=True)
class Days:
    """Every day from ``first`` to ``last``, both included: a range a question states, or
    a time it states relative to a day."""

    first: date
    last: date

    def holds(self, at: datetime) -> bool:
        """Whether ``at`` lies in the days (in UTC)."""
        return self.first <= at.astimezone(UTC).date() <= self.last

    def meets(self, first: date, last: date) -> bool:
        """Whether any day from ``first`` to ``last`` (both included) is one of them."""
        return first <= self.last and self.first <= last


def periods(question: str, asked: datetime | None = None) -> list[Period | Days]:
    """The periods ``question`` names: the calendar ones in the order found (a span read
    as a longer form, a day or what only looks like one, is not read again as a shorter
    one), then the ranges and relative times, in the order found. Relative times are read
    against a day the question names, else against ``asked`` (when it was asked; not read
    without one)."""
    found: list[tuple[int, Period]] = []
    taken: list[tuple[int, int]] = []
    days: list[tuple[int, date]] = []  # the whole days named, where each begins
    for pattern, shape in _PATTERNS:
        for match in pattern.finditer(question):
            start, end = match.span()
            if any(start < b and a < end for a, b in taken):
                continue
            taken.append((start, end))  # no day or month there: nothing shorter either
            period = _period(shape, match.groups())
            if period is not None:
                found.append((start, period))
                if period.day is not None:
                    assert period.year is not None and period.month is not None
                    days.append((start, date(period.year, period.month, period.day)))
    found.sort(key=lambda pair: pair[0])
    days.sort()
    spans = [*_ranges(question), *_relative(question, days, asked)]
    spans.sort(key=lambda pair: pair[0])
    calendar: list[Period | Days] = [period for _, period in found]
    return list(dict.fromkeys(calendar + [Days(*span) for _, span in spans]))


def _ranges(question: str) -> Iterator[tuple[int, tuple[date, date]]]:
    """The ranges of days ``question`` states, where each begins: "between August 11 and
    August 15 2023", "from 28 December to 3 January 2024", "between 11 and 15 August 2023";
    the year said once serves both ends (the first a year earlier when its month comes
    after the last's), a month said once likewise. None without a year, nor backwards."""
    for match in _RANGE.finditer(question):
        first, last = _loose(match.group("a")), _loose(match.group("b"))
        if first is None or last is None:
            continue
        (m1, d1, y1), (m2, d2, y2) = first, last
        month2 = m2 if m2 is not None else m1
        month1 = m1 if m1 is not None else m2
        year2 = y2 if y2 is not None else y1
        if month1 is None or month2 is None or year2 is None:
            continue
        year1 = y1 if y1 is not None else year2 - (1 if month1 > month2 else 0)
        if not (_real(year1, month1, d1) and _real(year2, month2, d2)):
            continue
        begin, until = date(year1, month1, d1), date(year2, month2, d2)
        if begin <= until:
            yield match.start(), (begin, until)


def _loose(text: str) -> tuple[int | None, int, int | None] | None:
    """A range's end: its month (None when not said), day and year (None likewise)."""
    match = _END.fullmatch(text.strip())
    if match is None:
        return None
    month = match.group("m1") or match.group("m2")
    day = match.group("d1") or match.group("d2") or match.group("d3")
    year = match.group("y")
    return (
        None if month is None else _MONTHS[month.lower()],
        int(day),
        None if year is None else int(year),
    )


def _relative(
    question: str, days: Sequence[tuple[int, date]], asked: datetime | None
) -> Iterator[tuple[int, tuple[date, date]]]:
    """The relative times ``question`` states: "X before/after <day>" against the day
    named right after; "last week", "yesterday", "two days ago" against the first day
    the question names, else against ``asked``."""
    for match in _BEFORE.finditer(question):
        lead = _LEAD.match(question, match.end())
        begins = match.end() if lead is None else lead.end()
        named = next((day for at, day in days if at == begins), None)
        if named is None:  # "the week before the wedding": no day to count from
            continue
        step = -1 if match.group("dir").lower() == "before" else 1
        try:
            if match.group("unit") is not None:
                yield match.start(), _counted(match, named, step)
            else:
                yield match.start(), _shift(match.group("what").lower(), named, step)
        except (ValueError, OverflowError):  # before year 1 or after 9999: no such day
            continue
    anchor = days[0][1] if days else None if asked is None else asked.astimezone(UTC).date()
    if anchor is None:
        return
    for match in _RELATIVE.finditer(question):
        try:
            yield match.start(), _referred(match, anchor)
        except (ValueError, OverflowError):
            continue


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
    if match.group("unit") is not None:
        return _counted(match, day, -1 if match.group("dir").lower() == "ago" else 1)
    if word in ("yesterday", "last night"):
        return _unit("day", day, -1)
    if word == "tomorrow":
        return _unit("day", day, 1)
    return _shift(word.split()[-1], day, -1 if word.startswith("last") else 1)


def _counted(match: re.Match[str], day: date, step: int) -> tuple[date, date]:
    """The unit a match counts ("three days", "two weeks"), that many of them from
    ``day``'s, back (``step`` -1) or on (1)."""
    said = " ".join(match.group("count").lower().split())
    count = _COUNT.get(said) or int(said)
    return _unit(match.group("unit").lower().rstrip("s"), day, step * count)


def _shift(what: str, day: date, step: int) -> tuple[date, date]:
    """The weekday (the latest before ``day``, or the first after), weekend, calendar
    week, month or year before (``step`` -1) or after (1) ``day``'s."""
    if what in _WEEKDAYS:
        target = _WEEKDAYS[what]
        moved = (
            day - timedelta(days=(day.weekday() - target) % 7 or 7)
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
