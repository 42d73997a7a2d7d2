"""Instant times: yyyyMMddHHmmssSSS, strictly increasing per table."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

from hudi_core.errors import InstantTimeError

_lock = threading.Lock()
_last_issued: dict[str, str] = {}


def format_instant_time(moment: datetime) -> str:
    return moment.strftime("%Y%m%d%H%M%S") + f"{moment.microsecond // 1000:03d}"


def parse_instant_time(timestamp: str) -> datetime:
    """Parses 17-digit (and legacy 14-digit, seconds) instant times as naive datetimes."""
    if len(timestamp) == 14:
        timestamp += "000"
    problem = f"'{timestamp}' is not an instant time (yyyyMMddHHmmssSSS)"
    if len(timestamp) != 17 or not timestamp.isdigit():
        raise InstantTimeError(problem)
    try:
        moment = datetime.strptime(timestamp[:14], "%Y%m%d%H%M%S")
    except ValueError as exc:  # digits, but no date (month 13, Apache Hudi's 000... instants)
        raise InstantTimeError(f"{problem}: {exc}") from exc
    return moment.replace(microsecond=int(timestamp[14:]) * 1000)


def new_instant_time(after: str | None, tz: str = "LOCAL", table_key: str = "") -> str:
    """A time later than `after` (the table's latest instant) and than any issued in-process.

    When the clock has not moved past the latest instant (fast writers, or a clock set back),
    the new time is the latest plus one millisecond, so time stays strictly increasing.
    """
    now = datetime.now(UTC) if tz == "UTC" else datetime.now()
    candidate = format_instant_time(now)
    with _lock:
        known = (after, _last_issued.get(table_key))
        floor = max((t.ljust(17, "0") for t in known if t), default=None)
        if floor is not None and candidate <= floor:
            candidate = format_instant_time(parse_instant_time(floor) + timedelta(milliseconds=1))
        _last_issued[table_key] = candidate
    return candidate
