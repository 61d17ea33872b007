"""Time words in a message, as a window of dates, and the date a claim is about.

"in May", "May 2023", "in 2022", "last week", "two months ago", "yesterday", "last
summer" each become a window relative to the moment of recall; a claim whose stored
``date`` property (or, without one, the day it was said) falls in the window ranks
higher. Pure functions; English only."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

MONTHS = {name: number for number, name in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august",
     "september", "october", "november", "december"], start=1)}  # fmt: skip
SEASONS = {
    "spring": (3, 5),
    "summer": (6, 8),
    "autumn": (9, 11),
    "fall": (9, 11),
    "winter": (12, 2),
}
UNITS = {"day": 1, "week": 7, "month": 30, "year": 365}
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
           "few": 3, "couple of": 2, "several": 4}  # fmt: skip

Window = tuple[date, date]

_AGO = re.compile(rf"\b(\d+|{'|'.join(NUMBERS)})\s+(day|week|month|year)s?\s+ago\b")
_LAST = re.compile(r"\b(last|this|past)\s+(week|month|year|spring|summer|autumn|fall|winter)\b")
_MONTH = re.compile(r"\b(" + "|".join(MONTHS) + r")\b(?:\s+(?:of\s+)?(\d{4}))?")
_YEAR = re.compile(r"\b(19\d\d|20\d\d)\b")


def _month_window(year: int, month: int) -> Window:
    end = date(year + (month == 12), month % 12 + 1, 1) - timedelta(days=1)
    return date(year, month, 1), end


def _season(name: str, today: date, last: bool) -> Window:
    """This season's dates (the latest that has begun), or last one's (the latest
    that has ended)."""
    first, final = SEASONS[name]
    for year in (today.year, today.year - 1, today.year - 2):
        start = date(year, first, 1)
        end = _month_window(year + (first > final), final)[1]
        if (end < today) if last else (start <= today):
            return start, end
    return start, end


def window(message: str, now: datetime) -> Window | None:
    """The dates the message's time words point at, or None when it has none. May
    is a month only with "in", "of" or a year beside it (it is also a verb)."""
    text, today = message.lower(), now.date()
    if "yesterday" in text:
        day = today - timedelta(days=1)
        return day, day
    found = _AGO.search(text)
    if found:
        count = int(found[1]) if found[1].isdigit() else NUMBERS[found[1]]
        days = count * UNITS[found[2]]
        middle = today - timedelta(days=days)
        slack = timedelta(days=max(1, days // 4))
        return middle - slack, middle + slack
    found = _LAST.search(text)
    if found:
        which, unit = found[1], found[2]
        if unit in SEASONS:
            return _season(unit, today, which == "last")
        days = UNITS[unit]
        end = today if which != "last" else today - timedelta(days=1)
        return end - timedelta(days=days * (2 if which == "last" else 1)), end
    for found in _MONTH.finditer(text):
        if found[1] == "may" and not found[2] and not re.search(r"\b(in|of)\s+may\b", text):
            continue
        year = int(found[2]) if found[2] else today.year - (MONTHS[found[1]] > today.month)
        return _month_window(year, MONTHS[found[1]])
    found = _YEAR.search(text)
    if found:
        year = int(found[1])
        return date(year, 1, 1), date(year, 12, 31)
    return None


_ISO = re.compile(r"(\d{4})(?:-(\d{2}))?(?:-(\d{2}))?")


def claim_window(about: str, said: datetime) -> Window:
    """The dates a claim is about: its ``date`` property where it starts with an
    ISO date, month or year ("2023-05-07", "2023-05", "2022"), else the day it was
    said."""
    found = _ISO.search(about or "")
    if not found:
        return said.date(), said.date()
    year = int(found[1])
    if found[3]:
        day = date(year, int(found[2]), int(found[3]))
        return day, day
    if found[2]:
        return _month_window(year, int(found[2]))
    return date(year, 1, 1), date(year, 12, 31)


def overlaps(a: Window, b: Window) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]
