"""Joda-Time date patterns, the ones Hudi's TimestampBasedKeyGenerator takes, on Arrow columns.

Hudi hands its `input.dateformat` / `output.dateformat` to Joda's `DateTimeFormat.forPattern`,
not to java.text.SimpleDateFormat or java.time, so the letters mean what Joda says: `Z` is an
offset printed `+0000` (parsed from `Z`, `+0530` or `+05:30`), `ZZ` is `+00:00`, `ZZZ` the zone
id; `S...` is the fraction of second; `X`, `u`, `L`... do not exist. Quoted text ('T', 'at')
and non-letters are literals, matched case-insensitively when parsing, as Joda does.

Formatting builds each token's text from Arrow temporal kernels and joins them. Parsing turns
the pattern into an anchored RE2 expression with one group per field (Joda parses greedily,
field by field, with the digit limits used here), then assembles the wall-clock time with
numpy. Joda's `pivot` for two-digit years is the current year minus 30, as in Hudi.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.errors import InvalidOptionError

_JODA_LETTERS = frozenset("GCxyYMdahHkKmsSeEDwzZ")
_FORMAT_LETTERS = frozenset("xyYMdDeEwahHkKmsSZ")
_PARSE_LETTERS = frozenset("yYMdahHkKmsSZ")
_NUMERIC_LETTERS = frozenset("cCxyYdhHmsSeDFwWkK")

MONTHS = [
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
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MS_PER_DAY = 86_400_000
# Joda's ISO chronology year range.
_MIN_YEAR, _MAX_YEAR = -292_275_054, 292_278_993


@dataclass(frozen=True)
class Token:
    """A run of one pattern letter (`letter`, `count`) or literal `text` (letter "")."""

    letter: str
    count: int = 0
    text: str = ""

    @property
    def numeric(self) -> bool:
        return self.letter in _NUMERIC_LETTERS or (self.letter == "M" and self.count <= 2)


def tokenize(pattern: str, option_key: str) -> list[Token]:
    """Split a pattern the way Joda's DateTimeFormat.parsePatternTo does."""
    if not pattern:
        raise InvalidOptionError(f"option {option_key} needs a Joda-Time date pattern; it is empty")
    tokens: list[Token] = []
    i = 0
    while i < len(pattern):
        if _is_letter(pattern[i]):
            end = i
            while end + 1 < len(pattern) and pattern[end + 1] == pattern[i]:
                end += 1
            tokens.append(_letter_token(pattern, pattern[i], end - i + 1, option_key))
            i = end + 1
        else:
            text, i = _literal(pattern, i)
            if text:
                tokens.append(Token("", text=text))
    return tokens


def _is_letter(char: str) -> bool:
    return "A" <= char <= "Z" or "a" <= char <= "z"


def _letter_token(pattern: str, letter: str, count: int, option_key: str) -> Token:
    if letter not in _JODA_LETTERS:
        raise InvalidOptionError(
            f"option {option_key}={pattern!r}: '{letter * count}' is not a Joda-Time pattern "
            "letter (Hudi reads these patterns with Joda-Time; offsets are Z, ZZ or ZZZ, "
            "literal text goes in single quotes)"
        )
    return Token(letter, count)


def _literal(pattern: str, i: int) -> tuple[str, int]:
    """Literal text from i: quotes toggle quoting, '' is a quote; stops at an unquoted letter."""
    chars: list[str] = []
    quoted = False
    while i < len(pattern):
        char = pattern[i]
        if char == "'":
            if i + 1 < len(pattern) and pattern[i + 1] == "'":
                chars.append("'")
                i += 1
            else:
                quoted = not quoted
        elif not quoted and _is_letter(char):
            break
        else:
            chars.append(char)
        i += 1
    return "".join(chars), i


def _unsupported(pattern: str, token: Token, option_key: str, use: str) -> InvalidOptionError:
    return InvalidOptionError(
        f"option {option_key}={pattern!r}: pattern letter '{token.letter * token.count}' is "
        f"not supported for {use} by hudi_core"
    )


# --- formatting ---------------------------------------------------------------------------


class JodaFormatter:
    """Prints wall-clock times with a Joda pattern (DateTime.toString(pattern))."""

    def __init__(self, pattern: str, option_key: str) -> None:
        self.pattern = pattern
        self.tokens = tokenize(pattern, option_key)
        for token in self.tokens:
            if token.letter and token.letter not in _FORMAT_LETTERS:
                raise _unsupported(pattern, token, option_key, "formatting")

    def format(self, local_ms: pa.Array, offset_ms: pa.Array, zone_id: str | None) -> pa.Array:
        """Text of each wall-clock time; `offset_ms` and `zone_id` feed Z, ZZ and ZZZ.

        `zone_id` None means fixed-offset zones named after each row's offset, as Joda names
        the zone of a parsed offset.
        """
        fields = _LocalFields(local_ms)
        pieces = [self._piece(token, fields, offset_ms, zone_id) for token in self.tokens]
        if not any(isinstance(piece, pa.Array) for piece in pieces):
            return _repeat("".join(pieces), len(local_ms))
        if len(pieces) == 1:
            return pieces[0]
        return pc.binary_join_element_wise(*pieces, "")

    def _piece(
        self, token: Token, fields: _LocalFields, offset_ms: pa.Array, zone_id: str | None
    ) -> pa.Array | str:
        letter, count = token.letter, token.count
        if not letter:
            return token.text
        if letter == "Z":
            if count >= 3:
                return zone_id if zone_id is not None else offset_zone_ids(offset_ms)
            return offset_strings(offset_ms, colon=count == 2)
        if letter == "M" and count >= 3:
            return _names(MONTHS, pc.subtract(fields.get("month"), 1), count)
        if letter == "E":
            return _names(DAYS, pc.subtract(fields.get("weekday"), 1), count)
        if letter == "a":
            return pc.if_else(pc.less(fields.get("hour"), 12), "AM", "PM")
        if letter == "S":
            return _fraction(fields.get("millisecond"), count)
        if letter in "yYx" and count == 2:
            return padded(pc.abs(pc.remainder(_year_field(letter, fields), 100)), 2)
        if letter in "yYx":
            return padded(_year_field(letter, fields), count)
        return padded(_number_field(letter, fields), count)


class _LocalFields:
    """Calendar fields of wall-clock millis, computed on first use."""

    _KERNELS = {
        "year": pc.year,
        "month": pc.month,
        "day": pc.day,
        "hour": pc.hour,
        "minute": pc.minute,
        "second": pc.second,
        "millisecond": pc.millisecond,
        "day_of_year": pc.day_of_year,
        "iso_year": pc.iso_year,
        "iso_week": pc.iso_week,
    }

    def __init__(self, local_ms: pa.Array) -> None:
        self._times = local_ms.cast(pa.int64()).cast(pa.timestamp("ms"))
        self._cache: dict[str, pa.Array] = {}

    def get(self, name: str) -> pa.Array:
        if name not in self._cache:
            if name == "weekday":
                value = pc.day_of_week(self._times, count_from_zero=False, week_start=1)
            else:
                value = self._KERNELS[name](self._times)
            self._cache[name] = value.cast(pa.int64())
        return self._cache[name]


def _year_field(letter: str, fields: _LocalFields) -> pa.Array:
    if letter == "x":
        return fields.get("iso_year")
    year = fields.get("year")
    if letter == "Y":  # year of era: 1 BC is year 0
        return pc.if_else(pc.less_equal(year, 0), pc.subtract(1, year), year)
    return year


def _number_field(letter: str, fields: _LocalFields) -> pa.Array:
    simple = {
        "M": "month",
        "d": "day",
        "D": "day_of_year",
        "e": "weekday",
        "w": "iso_week",
        "H": "hour",
        "m": "minute",
        "s": "second",
    }
    if letter in simple:
        return fields.get(simple[letter])
    hour = fields.get("hour")
    half = pc.remainder(hour, 12)
    if letter == "k":
        return pc.if_else(pc.equal(hour, 0), 24, hour)
    if letter == "K":
        return half
    return pc.if_else(pc.equal(half, 0), 12, half)  # "h": clock hour of half day


def padded(values: pa.Array, width: int) -> pa.Array:
    """Joda's appendPaddedInteger: '-' then the magnitude, zero-padded to `width` digits."""
    text = pc.abs(values).cast(pa.string())
    if width > 1:
        text = pc.utf8_lpad(text, width, "0")
    return pc.if_else(pc.less(values, 0), pc.binary_join_element_wise("-", text, ""), text)


def _fraction(millis: pa.Array, width: int) -> pa.Array:
    scaled = (
        pc.multiply(millis, 10 ** (width - 3))
        if width >= 3
        else pc.divide(millis, 10 ** (3 - width))
    )
    return pc.utf8_lpad(scaled.cast(pa.string()), width, "0")


def _names(names: list[str], index: pa.Array, count: int) -> pa.Array:
    table = pa.array(names if count >= 4 else [name[:3] for name in names])
    return table.take(index)


def offset_strings(offset_ms: pa.Array, colon: bool) -> pa.Array:
    """Joda's offset printing for Z (`+0530`) and ZZ (`+05:30`); zero prints as +0000."""
    minutes = pc.divide(pc.abs(offset_ms), 60_000)
    hours = padded(pc.divide(minutes, 60), 2)
    rest = padded(pc.remainder(minutes, 60), 2)
    sign = pc.if_else(pc.less(offset_ms, 0), "-", "+")
    return pc.binary_join_element_wise(sign, hours, ":" if colon else "", rest, "")


def offset_zone_ids(offset_ms: pa.Array) -> pa.Array:
    """Ids Joda gives fixed-offset zones: UTC for zero, else +hh:mm."""
    return pc.if_else(pc.equal(offset_ms, 0), "UTC", offset_strings(offset_ms, colon=True))


def _repeat(text: str, count: int) -> pa.Array:
    return pa.repeat(pa.scalar(text, pa.string()), count)


# --- parsing ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ParsedTimes:
    """What one pattern made of each string.

    `matched`: the pattern consumed the whole text; `valid`: and its fields are in range.
    `local_ms`: wall-clock millis (where valid). `offset_ms`: the parsed offset, or None when
    the pattern has no offset field.
    """

    matched: np.ndarray
    valid: np.ndarray
    local_ms: np.ndarray
    offset_ms: np.ndarray | None


class JodaParser:
    """Parses strings with one Joda pattern, like DateTimeFormatter.parseDateTime."""

    def __init__(self, pattern: str, option_key: str, today: datetime.date | None = None) -> None:
        self.pattern = pattern
        self.tokens = tokenize(pattern, option_key)
        for token in self.tokens:
            if token.letter and token.letter not in _PARSE_LETTERS:
                raise _unsupported(pattern, token, option_key, "parsing")
        # Joda pivots two-digit years on the current year minus 30 (SimpleDateFormat-like).
        self._two_digit_low = (today or datetime.date.today()).year - 80
        self._groups: list[tuple[str, Token, bool]] = []
        self.regex = "^" + "".join(self._token_regex(i) for i in range(len(self.tokens))) + "$"

    def _token_regex(self, index: int) -> str:
        token = self.tokens[index]
        if not token.letter:
            return "(?i:" + "".join(_escape(char) for char in token.text) + ")"
        following = self.tokens[index + 1] if index + 1 < len(self.tokens) else None
        next_numeric = following is not None and following.numeric
        name = f"g{len(self._groups)}"
        self._groups.append((name, token, next_numeric))
        return f"(?P<{name}>{_field_regex(token, next_numeric)})"

    def parse(self, text: pa.Array) -> ParsedTimes:
        parts = pc.extract_regex(text, self.regex)
        matched = parts.is_valid().to_numpy(zero_copy_only=False)
        fields = _ParsedFields(len(text), matched, self._two_digit_low)
        for name, token, next_numeric in self._groups:
            fields.take(token, pc.struct_field(parts, name), next_numeric)
        return fields.result()


def _escape(char: str) -> str:
    return char if char.isascii() and char.isalnum() else f"\\x{{{ord(char):x}}}"


def _field_regex(token: Token, next_numeric: bool) -> str:
    letter, count = token.letter, token.count
    if letter in "yY" and count == 2:
        return "\\d{2}" if next_numeric else "[+-]?\\d{1,9}"
    if letter in "yY":
        sign = "[+-]?" if letter == "y" else ""
        return f"{sign}\\d{{1,{count if next_numeric else max(count, 9)}}}"
    if letter == "M" and count >= 3:
        return "|".join(_text_alternatives(MONTHS))
    if letter == "a":
        return "AM|am|PM|pm"
    if letter == "S":
        return f"\\d{{1,{count}}}"
    if letter == "Z":
        hours = "[+-](?:[01]\\d|2[0-3])"
        return f"[Zz]|{hours}(?::[0-5]\\d(?::[0-5]\\d)?|[0-5]\\d(?:[0-5]\\d)?)?"
    return f"\\d{{1,{max(count, 2)}}}"


def _text_alternatives(names: list[str]) -> list[str]:
    """Joda's text parser accepts full and short names, as written, lower or upper case."""
    forms = {
        form
        for name in names
        for text in (name, name[:3])
        for form in (text, text.lower(), text.upper())
    }
    return sorted(forms, key=lambda form: (-len(form), form))


class _ParsedFields:
    """Collects field values of matched rows and checks them as Joda's computeMillis does."""

    def __init__(self, num_rows: int, matched: np.ndarray, two_digit_low: int) -> None:
        self.matched = matched
        self.valid = matched.copy()
        self.two_digit_low = two_digit_low
        self.values: dict[str, np.ndarray] = {}
        self.offset: np.ndarray | None = None
        self.num_rows = num_rows

    def take(self, token: Token, group: pa.Array, next_numeric: bool) -> None:
        letter = token.letter
        if letter == "Z":
            self.offset = _offset_ms(group)
        elif letter == "M" and token.count >= 3:
            self.values["M"] = _month_from_text(group)
        elif letter == "a":
            self.values["a"] = _numbers(pc.equal(pc.utf8_lower(group), "pm").cast(pa.int64()))
        elif letter == "S":
            text = pc.utf8_slice_codeunits(pc.utf8_rpad(group, 3, "0"), 0, 3)
            self.values["S"] = _numbers(text)
        elif letter in "yY" and token.count == 2:
            self.values["y"] = self._two_digit_year(group, lenient=not next_numeric)
        elif letter == "Y":
            self.values["Y"] = _numbers(group)
        else:
            self.values[letter] = _numbers(group)

    def _two_digit_year(self, group: pa.Array, lenient: bool) -> np.ndarray:
        value = _numbers(group)
        literal_two = np.asarray(pc.fill_null(pc.match_substring_regex(group, "^\\d\\d$"), False))
        low = self.two_digit_low
        pivot = low % 100
        windowed = value + low + np.where(value < pivot, 100, 0) - pivot
        return np.where(literal_two | (not lenient), windowed, value)

    def result(self) -> ParsedTimes:
        year = self._year()
        month = self._field("M", 1, 1, 12)
        day = self._field("d", 1, 1, 31)
        self._check(day <= days_in_month(year, month))
        hour = self._hour()
        minute = self._field("m", 0, 0, 59)
        second = self._field("s", 0, 0, 59)
        millis = self.values.get("S", np.zeros(self.num_rows, np.int64))
        days = np.where(self.valid, days_from_civil(year, month, day), 0)
        local = days * MS_PER_DAY + ((hour * 60 + minute) * 60 + second) * 1000 + millis
        offset = None if self.offset is None else np.where(self.valid, self.offset, 0)
        return ParsedTimes(self.matched, self.valid, np.where(self.valid, local, 0), offset)

    def _check(self, ok: np.ndarray) -> None:
        self.valid &= ok | ~self.matched

    def _field(self, letter: str, default: int, low: int, high: int) -> np.ndarray:
        if letter not in self.values:
            return np.full(self.num_rows, default, np.int64)
        value = self.values[letter]
        self._check((value >= low) & (value <= high))
        return np.where(self.valid, value, default)

    def _year(self) -> np.ndarray:
        if "Y" in self.values:
            self._check(self.values["Y"] >= 1)
            self.values.setdefault("y", self.values["Y"])
        return self._field("y", 1970, _MIN_YEAR, _MAX_YEAR)

    def _hour(self) -> np.ndarray:
        """Hour of day from H, k (24 = midnight), or h/K with the AM/PM marker."""
        if "H" in self.values:
            return self._field("H", 0, 0, 23)
        if "k" in self.values:
            return self._field("k", 0, 1, 24) % 24
        pm = self.values.get("a", np.zeros(self.num_rows, np.int64)) * 12
        half_day = (
            self._field("h", 0, 1, 12) % 12 if "h" in self.values else self._field("K", 0, 0, 11)
        )
        hour: np.ndarray = half_day + pm
        return hour


def _numbers(text: pa.Array) -> np.ndarray:
    """Integers of matched groups (null where the row did not match), as int64 zeros there."""
    if not pa.types.is_integer(text.type):
        text = pc.cast(pc.utf8_ltrim(pc.fill_null(text, "0"), "+"), pa.int64())
    return np.asarray(pc.fill_null(text, 0).cast(pa.int64()))


def _month_from_text(group: pa.Array) -> np.ndarray:
    lower = [name.lower() for name in MONTHS] + [name[:3].lower() for name in MONTHS]
    index = pc.index_in(pc.utf8_lower(group), value_set=pa.array(lower))
    return _numbers(pc.add(pc.remainder(index, 12), 1))


def _offset_ms(group: pa.Array) -> np.ndarray:
    group = pc.fill_null(group, "Z")
    zero = pc.equal(pc.utf8_upper(group), "Z")
    body = pc.utf8_slice_codeunits(pc.replace_substring(group, ":", ""), 1)
    body = pc.utf8_rpad(pc.if_else(zero, "000000", body), 6, "0")
    hours, minutes, seconds = (
        _numbers(pc.utf8_slice_codeunits(body, start, start + 2)) for start in (0, 2, 4)
    )
    negative = np.asarray(pc.starts_with(group, "-"))
    magnitude: np.ndarray = ((hours * 60 + minutes) * 60 + seconds) * 1000
    return np.where(negative, -magnitude, magnitude)


def days_in_month(year: np.ndarray, month: np.ndarray) -> np.ndarray:
    leap = ((year % 4 == 0) & (year % 100 != 0)) | (year % 400 == 0)
    lengths = np.array([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], np.int64)
    days: np.ndarray = lengths[np.clip(month, 1, 12) - 1] + ((month == 2) & leap)
    return days


def days_from_civil(year: np.ndarray, month: np.ndarray, day: np.ndarray) -> np.ndarray:
    """Days since 1970-01-01 of proleptic Gregorian dates (Joda's ISO chronology)."""
    shifted = year - (month <= 2)
    era = np.floor_divide(shifted, 400)
    year_of_era = shifted - era * 400
    day_of_year = (153 * ((month + 9) % 12) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    days: np.ndarray = era * 146_097 + day_of_era - 719_468
    return days
