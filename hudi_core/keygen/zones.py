"""Java time zone ids as Hudi's TimestampBasedKeyGenerator resolves them.

Hudi calls `DateTimeZone.forTimeZone(TimeZone.getTimeZone(id))`: Java accepts region ids,
`UTC`/`GMT`, custom `GMT+h[h][[:]mm]` offsets and old three-letter ids, and Joda then maps the
three-letter ids through its own alias table (so `EST` is America/New_York, with DST). Java
silently falls back to GMT for an id it does not know; here that is an error instead, so a
typo cannot quietly move every record into UTC partitions.
"""

from __future__ import annotations

import re
import zoneinfo
from dataclasses import dataclass

from hudi_core.errors import InvalidOptionError

# Joda-Time DateTimeZone's conversion table for Java's legacy three-letter ids.
_JODA_ALIASES = {
    "GMT": "UTC",
    "WET": "WET",
    "CET": "CET",
    "MET": "CET",
    "ECT": "CET",
    "EET": "EET",
    "MIT": "Pacific/Apia",
    "HST": "Pacific/Honolulu",
    "AST": "America/Anchorage",
    "PST": "America/Los_Angeles",
    "MST": "America/Denver",
    "PNT": "America/Phoenix",
    "CST": "America/Chicago",
    "EST": "America/New_York",
    "IET": "America/Indiana/Indianapolis",
    "PRT": "America/Puerto_Rico",
    "CNT": "America/St_Johns",
    "AGT": "America/Argentina/Buenos_Aires",
    "BET": "America/Sao_Paulo",
    "ART": "Africa/Cairo",
    "CAT": "Africa/Harare",
    "EAT": "Africa/Addis_Ababa",
    "NET": "Asia/Yerevan",
    "PLT": "Asia/Karachi",
    "IST": "Asia/Kolkata",
    "BST": "Asia/Dhaka",
    "VST": "Asia/Ho_Chi_Minh",
    "CTT": "Asia/Shanghai",
    "JST": "Asia/Tokyo",
    "ACT": "Australia/Darwin",
    "AET": "Australia/Sydney",
    "SST": "Pacific/Guadalcanal",
    "NST": "Pacific/Auckland",
}
# java.util.TimeZone's custom ids: GMT, sign, then h, hh, hmm, hhmm, h:mm or hh:mm.
_CUSTOM_ID = re.compile(r"GMT([+-])(?:(\d{1,2}):(\d{2})|(\d{1,4}))")


@dataclass(frozen=True)
class Zone:
    """A zone as Joda prints it (`joda_id`) and as pyarrow takes it (`arrow_tz`)."""

    joda_id: str
    arrow_tz: str
    fixed_offset_ms: int | None = None


UTC = Zone("UTC", "UTC", 0)


def fixed_zone(offset_ms: int) -> Zone:
    if offset_ms == 0:
        return UTC
    text = offset_text(offset_ms)
    return Zone(text, text, offset_ms)


def offset_text(offset_ms: int) -> str:
    sign = "-" if offset_ms < 0 else "+"
    minutes = abs(offset_ms) // 60_000
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def java_time_zone(zone_id: str, option_key: str) -> Zone:
    """The zone Hudi's Joda-Time ends up with for a Java time zone id."""
    custom = _CUSTOM_ID.fullmatch(zone_id)
    if custom:
        return fixed_zone(_custom_offset_ms(custom, zone_id, option_key))
    region = _JODA_ALIASES.get(zone_id, zone_id)
    if region == "UTC":
        return UTC
    try:
        zoneinfo.ZoneInfo(region)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
        raise InvalidOptionError(
            f"option {option_key}={zone_id!r} is not a time zone Java knows; use a region id "
            "such as UTC or Asia/Kolkata, or an offset such as GMT+05:30"
        ) from exc
    return Zone(region, region)


def _custom_offset_ms(match: re.Match[str], zone_id: str, option_key: str) -> int:
    sign, hours_text, minutes_text, compact = match.groups()
    if compact is not None:
        hours, minutes = (int(compact), 0) if len(compact) <= 2 else divmod(int(compact), 100)
    else:
        hours, minutes = int(hours_text), int(minutes_text)
    if hours > 23 or minutes > 59:
        raise InvalidOptionError(f"option {option_key}={zone_id!r} is not a valid GMT offset")
    offset = (hours * 60 + minutes) * 60_000
    return -offset if sign == "-" else offset
