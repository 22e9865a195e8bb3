"""Dates in conversation: session time stamps read, relative expressions resolved.

``resolve_dates(text, when)`` finds "yesterday", "last week", "two days ago", "last Friday",
"next month", "in 2022"... and returns the text with each resolved date added in brackets, plus
the dates found, so that "When did Caroline go to the support group?" can be answered from a
fact said a day later.

>>> from datetime import datetime
>>> text, found = resolve_dates("I went there yesterday.", datetime(2023, 5, 8, 13, 56))
>>> text
'I went there yesterday (7 May 2023).'
>>> found
['2023-05-07']
>>> parse_timestamp("1:56 pm on 8 May, 2023").isoformat()
'2023-05-08T13:56:00'
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

__all__ = ["parse_timestamp", "resolve_dates"]

_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "a few": 3,
    "few": 3,
    "a couple of": 2,
    "couple of": 2,
    "several": 3,
}
_NUM = r"(?P<num>\d+|a couple of|couple of|a few|few|several|an?|one|two|three|four|five|six|seven|eight|nine|ten)"
_PATTERN = re.compile(
    r"\b(?:"
    r"(?P<day>yesterday|today|tonight|tomorrow|last night|this morning|this afternoon|this evening)"
    r"|(?P<rel>(?:last|this|next|past) (?:week|weekend|month|year|summer|winter|spring|fall|autumn))"
    r"|(?P<wd>(?:last|this|next|on) (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))"
    rf"|(?P<ago>{_NUM} (?P<unit>day|week|month|year)s? ago)"
    r"|(?P<year>in (?:19|20)\d\d)"
    r")\b",
    re.I,
)
_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


def _fmt(d: date) -> str:
    return f"{d.day} {_MONTHS[d.month - 1]} {d.year}"


def _month_shift(d: date, months: int) -> date:
    y, m = divmod(d.month - 1 + months, 12)
    return date(d.year + y, m + 1, 1)


def _resolve(m: re.Match[str], now: datetime) -> tuple[str, str] | None:
    """(text to show, ISO key) for one match."""
    today = now.date()
    g = m.group(0).lower()
    if m.group("day"):
        if g == "yesterday":
            d = today - timedelta(days=1)
        elif g == "tomorrow":
            d = today + timedelta(days=1)
        else:
            d = today
        return _fmt(d), d.isoformat()
    if m.group("wd"):
        which, name = g.split()
        target = _WEEKDAYS.index(name)
        delta = (today.weekday() - target) % 7
        if which == "next":
            d = today + timedelta(days=(target - today.weekday()) % 7 or 7)
        elif which == "this":
            d = today - timedelta(days=delta)
        else:  # "last Friday", "on Friday": the most recent one before today
            d = today - timedelta(days=delta or 7)
        return _fmt(d), d.isoformat()
    if m.group("ago"):
        n = _NUMBERS.get(m["num"].lower()) or int(m["num"])
        unit = m.group("unit").lower()
        if unit == "day":
            d = today - timedelta(days=n)
            return _fmt(d), d.isoformat()
        if unit == "week":
            d = today - timedelta(weeks=n)
            return f"the week of {_fmt(d)}", d.isoformat()
        if unit == "month":
            d = _month_shift(today, -n)
            return f"{_MONTHS[d.month - 1]} {d.year}", f"{d.year:04d}-{d.month:02d}"
        return str(today.year - n), str(today.year - n)
    if m.group("rel"):
        which, unit = g.split()
        step = {"last": -1, "past": -1, "this": 0, "next": 1}[which]
        if unit in ("week", "weekend"):
            d = today + timedelta(weeks=step)
            if unit == "weekend":
                d = d + timedelta(days=(5 - d.weekday()) % 7) if step >= 0 else d
            label = "weekend" if unit == "weekend" else "week"
            return f"the {label} of {_fmt(d)}", d.isoformat()
        if unit == "month":
            d = _month_shift(today, step)
            return f"{_MONTHS[d.month - 1]} {d.year}", f"{d.year:04d}-{d.month:02d}"
        if unit == "year":
            return str(today.year + step), str(today.year + step)
        return f"{unit} {today.year + step}", str(today.year + step)
    if m.group("year"):
        return None  # already absolute: kept as it is, but still a date key
    return None


def resolve_dates(text: str, when: datetime | None) -> tuple[str, list[str]]:
    """``text`` with each relative date followed by its resolved form, and the ISO dates.

    Absolute years ("in 2022") are not rewritten but are returned as dates. Without ``when``
    nothing is resolved.
    """
    found: list[str] = []
    if when is None:
        return text, found
    out: list[str] = []
    last = 0
    for m in _PATTERN.finditer(text):
        if m.group("year"):
            found.append(m.group(0)[-4:])
            continue
        resolved = _resolve(m, when)
        if resolved is None:
            continue
        shown, key = resolved
        out.append(text[last : m.end()])
        out.append(f" ({shown})")
        last = m.end()
        found.append(key)
    out.append(text[last:])
    return "".join(out), found


_TS_FORMATS = (
    "%I:%M %p on %d %B, %Y",
    "%I:%M %p on %d %b, %Y",
    "%I:%M %p on %B %d, %Y",
    "%d %B %Y",
    "%d %B, %Y",
    "%B %d, %Y",
)


def parse_timestamp(value: str | datetime | date | None) -> datetime | None:
    """A session time stamp as a naive ``datetime``: ISO 8601, or LoCoMo's "1:56 pm on 8 May,
    2023". Raises ``ValueError`` naming the value when it is not a date."""
    if value is None or isinstance(value, datetime):
        return value
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day)
    text = " ".join(str(value).split())
    if not text:
        return None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
        return parsed.replace(tzinfo=None) if parsed.tzinfo else parsed
    except ValueError:
        pass
    for fmt in _TS_FORMATS:
        try:
            return datetime.strptime(text, fmt)
        except ValueError:
            continue
    raise ValueError(
        f"{value!r} is not a date: use ISO 8601 (2023-05-08T13:56) or '1:56 pm on 8 May, 2023'"
    )
