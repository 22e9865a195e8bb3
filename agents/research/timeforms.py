"""Time columns in the forms real data stores them, read from the values (not from the names).

A column is a time column when its values read, nearly all, as one of these forms:

==============  ===================================  ==========================================
form            values                               needs besides the values
==============  ===================================  ==========================================
iso             ``2023-01-15``, ``2023-01-15 08:30``  -
iso_slash       ``2023/01/15``                       -
year_month      ``2023-01``, ``2023/01``             -
quarter         ``2023Q1``, ``2023-Q1``, ``Q1 2023``  -
month_name      ``Jan 2023``, ``January 2023``        -
month_day_year  ``01/15/2023`` (US order)            no first field over 12
day_month_year  ``15/01/2023``                       a first field over 12, no second one
yyyymmdd        ``20230115`` (number or text)        a time-like name, or ordered unique values
year            ``2023`` (number or text)            a time-like name, or ordered unique values
decimal_year    ``1949.0833`` (February 1949)        a time-like name, or a regular step
epoch_s         Unix seconds (1973-2096)             a time-like name, or ordered unique values
epoch_ms        Unix milliseconds                    a time-like name, or ordered unique values
excel           Excel serial days (1954-2064)        a time-like name
==============  ===================================  ==========================================

A date written ``NN/NN/YYYY`` is read month first unless some value's first field is over 12
(then day first); a column that needs both orders (a first field over 12 in one value, a second
in another) is no time column; :func:`slash_order` tells which way a column was read and why.
Numbers that only look like times (a price of 2019, a count of 45000) need the second column's
evidence too. Each form converts a value to a day (:meth:`TimeForm.day`, proleptic Gregorian
ordinal) in Python and to a Julian day number in SQL (:meth:`TimeForm.sql`), which SQLite's
``date()``, ``strftime()`` and ``julianday()`` accept as they are, so that every evidence
query works on any form.

>>> form = detect_time(["1949.0", "1949.0833", "1949.1667"], name="time")
>>> form.name, str(date.fromordinal(int(form.day(1949.0833))))
('decimal_year', '1949-02-01')
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

__all__ = ["TIME_FORMS", "TimeForm", "detect_time", "slash_order", "time_like_name"]

# Julian day number of proleptic Gregorian ordinal 0 (SQLite's julianday('0001-01-01') is
# 1721425.5 and that day is ordinal 1).
_JD_OF_ORDINAL_0 = 1721424.5
_UNIX_JD = 2440587.5
_EXCEL_JD = 2415018.5  # Excel's day 0 is 1899-12-30 (its 1900 leap-year bug included)
_MONTHS = "janfebmaraprmayjunjulaugsepoctnovdec"

_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$")
_ISO_SLASH = re.compile(r"^\d{4}/\d{1,2}/\d{1,2}$")
_YEAR_MONTH = re.compile(r"^(\d{4})[-/](\d{1,2})$")
_QUARTER = re.compile(r"^(\d{4})\s*-?\s*[Qq]([1-4])$")
_QUARTER_FIRST = re.compile(r"^[Qq]([1-4])\s*-?\s*(\d{4})$")
_MONTH_NAME = re.compile(r"^([A-Za-z]{3,9})\.?[\s\-,]*(\d{4})$")
_SLASH_DATE = re.compile(r"^(\d{1,2})/(\d{1,2})/(\d{4})$")
_YEAR_TEXT = re.compile(r"^\d{4}$")
_TIME_NAME = re.compile(
    r"(date|time|year|yr|month|period|quarter|week|day|epoch|stamp|when|created|updated|"
    r"^ts$|_ts$|_at$|^t$|^dt$)",
    re.IGNORECASE,
)


def slash_order(form: TimeForm, values: Sequence[Any]) -> str:
    """Why a ``NN/NN/YYYY`` column reads in ``form``'s order (empty for the other forms):
    ``'month first: no first field over 12'`` or ``'day first: first fields up to 31'``."""
    if form.name not in _SLASH_FORMS:
        return ""
    if form.name == "month_day_year":
        return "month first: no first field over 12"
    fields = [m for m in (_SLASH_DATE.match(str(v).strip()) for v in values) if m is not None]
    return f"day first: first fields up to {max((int(m[1]) for m in fields), default=0)}"


def time_like_name(name: str) -> bool:
    """Whether a column's name suggests time (``date``, ``year``, ``created_at``, ``ts``...)."""
    return bool(_TIME_NAME.search(name))


def _ordinal(year: int, month: int = 1, day: int = 1) -> float:
    return float(date(year, month, day).toordinal())


def _month_of_name(text: str) -> int | None:
    low = text.lower()
    i = _MONTHS.find(low[:3])
    if i < 0 or i % 3:
        return None
    full = [
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
    ][i // 3]
    return i // 3 + 1 if full.startswith(low) else None


def _iso(v: Any) -> float | None:
    if not isinstance(v, str) or not _ISO.match(v):
        return None
    try:
        when = datetime.fromisoformat(v.replace("Z", "+00:00"))
    except ValueError:
        return None
    seconds = when.hour * 3600 + when.minute * 60 + when.second
    return float(when.toordinal()) + seconds / 86400


def _iso_slash(v: Any) -> float | None:
    if not isinstance(v, str) or not _ISO_SLASH.match(v):
        return None
    y, m, d = (int(p) for p in v.split("/"))
    try:
        return _ordinal(y, m, d)
    except ValueError:
        return None


def _year_month(v: Any) -> float | None:
    m = _YEAR_MONTH.match(v) if isinstance(v, str) else None
    if m is None or not 1 <= int(m[2]) <= 12:
        return None
    return _ordinal(int(m[1]), int(m[2]))


def _quarter(v: Any) -> float | None:
    if not isinstance(v, str):
        return None
    m = _QUARTER.match(v.strip())
    if m is not None:
        return _ordinal(int(m[1]), 3 * int(m[2]) - 2)
    m = _QUARTER_FIRST.match(v.strip())
    return _ordinal(int(m[2]), 3 * int(m[1]) - 2) if m is not None else None


def _month_name(v: Any) -> float | None:
    m = _MONTH_NAME.match(v.strip()) if isinstance(v, str) else None
    month = _month_of_name(m[1]) if m is not None else None
    return _ordinal(int(m[2]), month) if m is not None and month is not None else None


def _slash_date(month_first: bool) -> Callable[[Any], float | None]:
    def convert(v: Any) -> float | None:
        m = _SLASH_DATE.match(v.strip()) if isinstance(v, str) else None
        if m is None:
            return None
        a, b = int(m[1]), int(m[2])
        month, day = (a, b) if month_first else (b, a)
        try:
            return _ordinal(int(m[3]), month, day)
        except ValueError:
            return None

    return convert


def _number(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int | float):
        return float(v) if math.isfinite(v) else None
    if isinstance(v, str):
        try:
            f = float(v)
        except ValueError:
            return None
        return f if math.isfinite(f) else None
    return None


def _year(v: Any) -> float | None:
    if isinstance(v, str) and not _YEAR_TEXT.match(v.strip()):
        return None
    f = _number(v)
    if f is None or not f.is_integer() or not 1000 <= f <= 2999:
        return None
    return _ordinal(int(f))


def _yyyymmdd(v: Any) -> float | None:
    f = _number(v)
    if f is None or not f.is_integer() or not 10000101 <= f <= 29991231:
        return None
    n = int(f)
    try:
        return _ordinal(n // 10000, n // 100 % 100, n % 100)
    except ValueError:
        return None


def _decimal_year(v: Any) -> float | None:
    f = _number(v)
    if f is None or not 1000 <= f < 3000:
        return None
    year = math.floor(f)
    # Month precision, as monthly series store it (1949 + 1/12 is February 1949).
    month = min(12, int((f - year) * 12 + 1.01))
    return _ordinal(year, month)


def _epoch(scale: float, low: float, high: float) -> Callable[[Any], float | None]:
    def convert(v: Any) -> float | None:
        f = _number(v)
        if f is None or not low <= f <= high:
            return None
        return (f / scale + _UNIX_JD) - _JD_OF_ORDINAL_0

    return convert


def _excel(v: Any) -> float | None:
    f = _number(v)
    if f is None or not 20000 <= f <= 60000:
        return None
    return f + _EXCEL_JD - _JD_OF_ORDINAL_0


def _sql_iso(c: str) -> str:
    return c


def _sql_iso_slash(c: str) -> str:
    return f"julianday(replace({c}, '/', '-'))"


def _sql_year_month(c: str) -> str:
    return (
        f"julianday(printf('%04d-%02d-01', CAST(substr({c}, 1, 4) AS INTEGER), "
        f"CAST(substr({c}, 6) AS INTEGER)))"
    )


def _sql_quarter(c: str) -> str:
    # Either 2023Q1 / 2023-Q1 (year first) or Q1 2023 (quarter first).
    year = f"CASE WHEN upper(substr(trim({c}), 1, 1)) = 'Q' THEN substr(trim({c}), -4) ELSE substr(trim({c}), 1, 4) END"
    quarter = f"CASE WHEN upper(substr(trim({c}), 1, 1)) = 'Q' THEN substr(trim({c}), 2, 1) ELSE substr(trim({c}), -1) END"
    return (
        f"julianday(printf('%04d-%02d-01', CAST({year} AS INTEGER), "
        f"3 * CAST({quarter} AS INTEGER) - 2))"
    )


def _sql_month_name(c: str) -> str:
    month = f"(instr('{_MONTHS}', lower(substr(trim({c}), 1, 3))) + 2) / 3"
    return f"julianday(printf('%04d-%02d-01', CAST(substr(trim({c}), -4) AS INTEGER), {month}))"


def _sql_slash_date(month_first: bool) -> Callable[[str], str]:
    # SQLite's CAST reads a text's leading digits: the first field, and after the first slash
    # the second; the year is the last four characters.
    def to_sql(c: str) -> str:
        first = f"CAST(trim({c}) AS INTEGER)"
        second = f"CAST(substr(trim({c}), instr(trim({c}), '/') + 1) AS INTEGER)"
        month, day = (first, second) if month_first else (second, first)
        year = f"CAST(substr(trim({c}), -4) AS INTEGER)"
        return f"julianday(printf('%04d-%02d-%02d', {year}, {month}, {day}))"

    return to_sql


def _sql_year(c: str) -> str:
    return f"julianday(printf('%04d-01-01', CAST({c} AS INTEGER)))"


def _sql_yyyymmdd(c: str) -> str:
    n = f"CAST({c} AS INTEGER)"
    return f"julianday(printf('%04d-%02d-%02d', {n} / 10000, {n} / 100 % 100, {n} % 100))"


def _sql_decimal_year(c: str) -> str:
    v = f"CAST({c} AS REAL)"
    year = f"CAST({v} AS INTEGER)"
    month = f"min(12, CAST(({v} - {year}) * 12 + 1.01 AS INTEGER))"
    return f"julianday(printf('%04d-%02d-01', {year}, {month}))"


def _sql_epoch(scale: float) -> Callable[[str], str]:
    return lambda c: f"(CAST({c} AS REAL) / {scale!r} + {_UNIX_JD!r})"


def _sql_excel(c: str) -> str:
    return f"(CAST({c} AS REAL) + {_EXCEL_JD!r})"


@dataclass(frozen=True)
class TimeForm:
    """One way of writing a point in time; ``strict`` forms need no evidence beyond the values."""

    name: str
    parse: Callable[[Any], float | None]
    to_sql: Callable[[str], str]
    strict: bool

    def day(self, value: Any) -> float:
        """``value`` as a proleptic Gregorian ordinal day (fractional for a time of day); NaN
        when it does not read as this form."""
        if value is None:
            return math.nan
        try:
            day = self.parse(value)
        except (ValueError, OverflowError):
            return math.nan
        return math.nan if day is None else day

    def sql(self, column: str) -> str:
        """An SQL expression of the column's value as a Julian day number, which SQLite's date
        functions accept (an ISO column stays as it is)."""
        return self.to_sql(column)


TIME_FORMS: tuple[TimeForm, ...] = (
    TimeForm("iso", _iso, _sql_iso, True),
    TimeForm("iso_slash", _iso_slash, _sql_iso_slash, True),
    TimeForm("year_month", _year_month, _sql_year_month, True),
    TimeForm("quarter", _quarter, _sql_quarter, True),
    TimeForm("month_name", _month_name, _sql_month_name, True),
    TimeForm("month_day_year", _slash_date(True), _sql_slash_date(True), True),
    TimeForm("day_month_year", _slash_date(False), _sql_slash_date(False), True),
    TimeForm("yyyymmdd", _yyyymmdd, _sql_yyyymmdd, False),
    TimeForm("year", _year, _sql_year, False),
    TimeForm("decimal_year", _decimal_year, _sql_decimal_year, False),
    TimeForm("epoch_ms", _epoch(86_400_000.0, 1e11, 4.1e12), _sql_epoch(86_400_000.0), False),
    TimeForm("epoch_s", _epoch(86_400.0, 1e8, 4.1e9), _sql_epoch(86_400.0), False),
    TimeForm("excel", _excel, _sql_excel, False),
)
FORMS = {f.name: f for f in TIME_FORMS}
_SLASH_FORMS = ("month_day_year", "day_month_year")


def _regular(days: Sequence[float]) -> bool:
    """Unique values in a regular step (a series' periods: days, months, quarters, years)."""
    ordered = sorted(set(days))
    if len(ordered) < 6:
        return False
    steps = sorted(b - a for a, b in zip(ordered, ordered[1:], strict=False))
    median = steps[len(steps) // 2]
    return median > 0 and sum(abs(s - median) <= 0.1 * median + 3 for s in steps) >= 0.8 * len(
        steps
    )


def _stacked(nums: Sequence[float]) -> bool:
    """Numbers that run up and start again, block after block over much the same values (a
    panel in long form: each country's years, one block after another), each block at least
    six long."""
    runs: list[list[float]] = [[nums[0]]] if nums else []
    for a, b in zip(nums, nums[1:], strict=False):
        if b > a:
            runs[-1].append(b)
        else:
            runs.append([b])
    if len(runs) < 2 or min(len(r) for r in runs) < 6:
        return False
    first = set(runs[0])
    return all(len(set(r) & first) >= 0.8 * max(len(r), len(first)) for r in runs)


def detect_time(
    values: Sequence[Any], *, name: str = "", ordered: bool | None = None
) -> TimeForm | None:
    """The time form that at least 90% of ``values`` (non-empty) read as, with the evidence it
    needs (see the module's table); None when the column is not a time column.

    ``ordered`` says the values are unique and in row order (a series' index), or run up
    block after block over the same values (a panel's periods, stacked unit by unit); it is
    worked out from ``values`` when not given.
    """
    present = [v for v in values if v is not None and v != ""]
    if len(present) < 3:
        return None
    if ordered is None:
        nums = [_number(v) for v in present]
        numbers = [n for n in nums if n is not None]
        ordered = len(numbers) == len(nums) and (
            (
                len(set(numbers)) == len(numbers)
                and all(a < b for a, b in zip(numbers, numbers[1:], strict=False))
            )
            or _stacked(numbers)
        )
    named = time_like_name(name)
    for form in TIME_FORMS:
        days = [form.day(v) for v in present]
        good = [d for d in days if not math.isnan(d)]
        if len(good) < 0.9 * len(present) or len(set(good)) < 2:
            continue
        if form.name in _SLASH_FORMS and len(good) < sum(
            isinstance(v, str) and bool(_SLASH_DATE.match(v.strip())) for v in present
        ):
            # Every NN/NN/YYYY value reads one way: month first unless a first field is over
            # 12, day first unless a second one is; a column that needs both is neither.
            continue
        if form.strict:
            return form
        if form.name == "decimal_year" and all(
            float(_number(v) or 0).is_integer() for v in present
        ):
            continue  # whole numbers are the year form
        if named:
            return form
        # Without a name, only an index of the rows in a regular step (a series' periods).
        if ordered and form.name != "excel" and _regular(good):
            return form
    return None
