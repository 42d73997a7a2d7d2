"""A partition's time, parsed from its values, as the filesystem connector's default
partition time extractor does: the timestamp pattern ('$dt $hour:00:00', default: the first
value) filled with the partition's values, then parsed with a Java date-time pattern."""

from __future__ import annotations

import datetime
import re
import zoneinfo

import pyarrow as pa

from hudi_core.config import partition_commit_options as PC
from hudi_core.config.option import Options
from hudi_core.errors import InvalidOptionError, SyncError
from hudi_core.keygen.joda import JodaParser

_DATE_ONLY = "yyyy-MM-dd"


class PartitionTimeExtractor:
    def __init__(self, keys: list[str], options: Options) -> None:
        self.keys = keys
        self.pattern = options.get_option(PC.TIMESTAMP_PATTERN)
        formatter = options.get_option(PC.TIMESTAMP_FORMATTER)
        self.parsers = [JodaParser(formatter, PC.TIMESTAMP_FORMATTER.key)]
        if not options.is_set(PC.TIMESTAMP_FORMATTER):  # the default also takes bare dates
            self.parsers.append(JodaParser(_DATE_ONLY, PC.TIMESTAMP_FORMATTER.key))
        zone = options.get_option(PC.WATERMARK_TIME_ZONE)
        try:
            self.zone = zoneinfo.ZoneInfo(zone)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError) as exc:
            raise InvalidOptionError(
                f"option {PC.WATERMARK_TIME_ZONE.key}={zone!r} is not a time zone"
            ) from exc

    def timestamp_text(self, values: list[str], partition: str = "") -> str:
        if not values:
            raise SyncError("a non-partitioned table has no partition time")
        if self.pattern is None:
            return values[0]
        by_key = dict(zip(self.keys, values, strict=False))

        def value_of(match: re.Match[str]) -> str:
            key = match.group(1)
            if key not in by_key:
                raise SyncError(
                    f"cannot read a time from partition {partition!r}: "
                    f"{PC.TIMESTAMP_PATTERN.key} names ${key}, not a partition field "
                    f"({', '.join(self.keys)})"
                )
            return by_key[key]

        return re.sub(r"\$([A-Za-z_][A-Za-z0-9_]*)", value_of, self.pattern)

    def epoch_ms(self, values: list[str], partition: str) -> int:
        """The partition's time as epoch millis, its wall-clock time read in the zone."""
        text = self.timestamp_text(values, partition)
        for parser in self.parsers:
            parsed = parser.parse(pa.array([text]))
            if parsed.valid[0]:
                local_ms = int(parsed.local_ms[0])
                return local_ms - _offset_ms(local_ms, self.zone)
        raise SyncError(
            f"cannot read a time from partition {partition!r}: {text!r} does not match "
            f"{self.parsers[0].pattern!r} ({PC.TIMESTAMP_FORMATTER.key})"
        )


def _offset_ms(local_ms: int, zone: zoneinfo.ZoneInfo) -> int:
    wall = datetime.datetime(1970, 1, 1) + datetime.timedelta(milliseconds=local_ms)
    offset = wall.replace(tzinfo=zone).utcoffset() or datetime.timedelta()
    return int(offset.total_seconds() * 1000)
