"""Date surrogates that keep the original's format: only the values change.

A date surface is cut into number runs, letter runs and everything else. Each number or
month-name token gets a role (day, month, year), the date moves by the note's shift, and
every token is written back in place with its width, zero padding (as the date shows it),
case and abbreviation: ``7/22`` stays month/day, ``19.3.`` stays day.month., ``1992`` stays
a year, ``2016-04-02`` stays ISO and ``3 de marzo de 2016`` keeps Spanish month names. Which
of two small numbers is the month follows the values (13 or more is a day), else the
corpus's own order (``corpus_month_first``: a UK clinic writes 13/03/2019 and never 03/13/2019,
whatever Faker locale it set), else the locale (``month_first`` for US notes). Times of day get
a new time in ``providers.date``.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


MONTHS: dict[str, tuple[str, ...]] = {
    "en": _words(
        "january february march april may june july august september october november december"
    ),
    "es": _words(
        "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre"
    ),
    "de": _words(
        "januar februar märz april mai juni juli august september oktober november dezember"
    ),
    "sv": _words(
        "januari februari mars april maj juni juli augusti september oktober november december"
    ),
}
_TOKEN = re.compile(r"\d+|[^\W\d_]+|\s+|[^\w\s]|_")
_TIME = re.compile(r"\d{1,2}:\d{2}(?::\d{2})?")
_ORDINAL = ("st", "nd", "rd", "th")
_LEAP_YEAR = 2000  # reference year of dates written without one (keeps 29 February valid)


@dataclass(frozen=True)
class MonthName:
    """Where a month name was found: its language, month number and whether abbreviated."""

    language: str
    month: int
    abbreviated: bool


def find_month(token: str, languages: tuple[str, ...]) -> MonthName | None:
    """The month that ``token`` names (full or abbreviated to 3-4 letters), languages in order.

    Three-letter tokens count as abbreviations (English ``May`` becomes ``Jun``, not ``June``).
    """
    word = token.lower()
    if len(word) < 3:
        return None
    for language in languages:
        for number, full in enumerate(MONTHS[language], start=1):
            if word == full and len(word) > 3:
                return MonthName(language, number, abbreviated=False)
            if full.startswith(word) and len(word) <= 4:
                return MonthName(language, number, abbreviated=True)
    return None


def _languages(preferred: str) -> tuple[str, ...]:
    return (
        (preferred, *[lang for lang in MONTHS if lang != preferred])
        if preferred in MONTHS
        else tuple(MONTHS)
    )


def _same_case(original: str, new: str) -> str:
    if original.isupper():
        return new.upper()
    if original[:1].isupper():
        return new[:1].upper() + new[1:]
    return new


def _zero_padded(tokens: list[str], roles: _Roles, months: dict[int, MonthName]) -> bool:
    """Whether the date writes day and month in two digits: a leading zero says so, and so do
    two two-digit numbers (``12/10/2016``); a lone ``15`` (``March 15``) is not padded."""
    numeric = [tokens[i] for i in (roles.day, roles.month) if i is not None and i not in months]
    if any(t.startswith("0") for t in numeric):
        return True
    return len(numeric) == 2 and all(len(t) == 2 for t in numeric)


def _number(value: int, padded: bool) -> str:
    return f"{value:02d}" if padded else str(value)


@dataclass
class _Roles:
    """Token indexes of the day, month and year of one date surface."""

    day: int | None = None
    month: int | None = None
    year: int | None = None


def _roles(tokens: list[str], months: dict[int, MonthName], month_first: bool) -> _Roles:
    numbers = [i for i, t in enumerate(tokens) if t.isdigit()]
    roles = _Roles()
    if months:
        roles.month = next(iter(months))
    years = [i for i in numbers if len(tokens[i]) == 4]
    if years:
        roles.year = years[0]
    rest = [i for i in numbers if i != roles.year]
    if roles.month is not None:
        if rest and int(tokens[rest[0]]) <= 31 and (roles.year is not None or len(rest) > 1):
            roles.day = rest[0]
            rest = rest[1:]
        elif rest and roles.year is None and len(rest) == 1 and int(tokens[rest[0]]) <= 31:
            roles.day = rest[0]
            rest = []
        if rest and roles.year is None:
            roles.year = rest[0]
        return roles
    if roles.year is not None:
        # 2016-04-02, 03/2016, 2016
        if len(rest) >= 2:
            roles.month, roles.day = rest[0], rest[1]
            if roles.year > rest[0]:  # D/M/YYYY or M/D/YYYY
                roles.month, roles.day = _order(tokens, rest[0], rest[1], month_first)
        elif rest:
            roles.month = rest[0]
        return roles
    if len(rest) == 3:
        roles.month, roles.day = _order(tokens, rest[0], rest[1], month_first)
        roles.year = rest[2]
    elif len(rest) == 2:
        roles.month, roles.day = _order(tokens, rest[0], rest[1], month_first)
    elif len(rest) == 1 and len(tokens[rest[0]]) <= 2:
        roles.day = rest[0]
    return roles


def _order(tokens: list[str], first: int, second: int, month_first: bool) -> tuple[int, int]:
    """(month, day) of two small numbers: a value over 12 is the day, else the locale's order."""
    a, b = int(tokens[first]), int(tokens[second])
    if a > 12 >= b:
        return second, first
    if b > 12 >= a:
        return first, second
    return (first, second) if month_first else (second, first)


def _order_vote(surface: str) -> int:
    """+1 where ``surface`` shows month-first order (03/13/2019), -1 day-first (13/03/2019),
    0 where it cannot tell (both numbers up to 12, a month name, a time, year first as ISO)."""
    if _TIME.fullmatch(surface.strip()):
        return 0
    tokens = _TOKEN.findall(surface)
    if any(t.isalpha() and find_month(t, tuple(MONTHS)) is not None for t in tokens):
        return 0
    numbers = [t for t in tokens if t.isdigit()]
    if len(numbers) < 2 or len(numbers[0]) > 2 or len(numbers[1]) > 2:
        return 0
    first, second = int(numbers[0]), int(numbers[1])
    if first > 12 >= second >= 1 and first <= 31:
        return -1
    if second > 12 >= first >= 1 and second <= 31:
        return 1
    return 0


CLEAR_ORDER_SHARE = 0.9  # the share of telling dates one order needs to be the corpus's


def corpus_month_first(surfaces: Iterable[str]) -> bool | None:
    """The order a corpus writes its all-number dates in, from the dates that tell (one
    number over 12): True month-first, False day-first, None where none tell or they
    disagree (fewer than 90% one way); then the locale decides."""
    votes = [v for v in map(_order_vote, surfaces) if v]
    if not votes:
        return None
    month_first = sum(v > 0 for v in votes) / len(votes)
    if month_first >= CLEAR_ORDER_SHARE:
        return True
    if month_first <= 1 - CLEAR_ORDER_SHARE:
        return False
    return None


def _full_year(text: str) -> int:
    """Two-digit years: 00-29 are 20xx, the rest 19xx."""
    value = int(text)
    if len(text) > 2:
        return value
    return 2000 + value if value < 30 else 1900 + value


def _ordinal(day: int) -> str:
    if 10 <= day % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


def shift_date(surface: str, shift_days: int, *, month_first: bool, language: str) -> str | None:
    """``surface`` with its date moved by ``shift_days`` in the same format; None if no date."""
    if _TIME.fullmatch(surface.strip()):
        return None
    tokens = _TOKEN.findall(surface)
    languages = _languages(language)
    months = {
        i: found
        for i, t in enumerate(tokens)
        if t.isalpha() and (found := find_month(t, languages)) is not None
    }
    roles = _roles(tokens, months, month_first)
    if roles.day is None and roles.month is None and roles.year is None:
        return None
    try:
        year = _full_year(tokens[roles.year]) if roles.year is not None else _LEAP_YEAR
        month = (
            months[roles.month].month
            if roles.month in months
            else int(tokens[roles.month])
            if roles.month is not None
            else 7
        )
        day = int(tokens[roles.day]) if roles.day is not None else 15
        when = dt.date(year, month, day)
    except ValueError:
        return None
    if roles.month is None and roles.day is None:  # a year alone moves by whole years
        years = round(shift_days / 365) or (1 if shift_days > 0 else -1)
        moved = when.replace(year=when.year + years)
    else:
        moved = when + dt.timedelta(days=shift_days)
    out = list(tokens)
    padded = _zero_padded(tokens, roles, months)
    if roles.year is not None:
        out[roles.year] = f"{moved.year:04d}"[-len(tokens[roles.year]) :]
    if roles.month is not None and roles.month in months:
        found = months[roles.month]
        name = MONTHS[found.language][moved.month - 1]
        out[roles.month] = _same_case(tokens[roles.month], name[:3] if found.abbreviated else name)
    elif roles.month is not None:
        out[roles.month] = _number(moved.month, padded)
    if roles.day is not None:
        out[roles.day] = _number(moved.day, padded)
        after = roles.day + 1
        if after < len(out) and tokens[after].lower() in _ORDINAL:
            out[after] = _same_case(tokens[after], _ordinal(moved.day))
    return "".join(out)
