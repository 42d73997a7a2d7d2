"""Partition value extractors: a partition path -> the values of the Hive partition columns,
under Apache Hudi's class names (org.apache.hudi.hive.*), so configs carry over unchanged."""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable

from hudi_core.errors import SyncError

_PACKAGE = "org.apache.hudi.hive."
_JAVA_INT = re.compile(r"[+-]?[0-9]+")


def _split(text: str, separator: str) -> list[str]:
    """Java's String.split: trailing empty pieces dropped ('k=' is one piece, not two)."""
    pieces = text.split(separator)
    while pieces and not pieces[-1]:
        pieces.pop()
    return pieces


def multi_part_keys(path: str) -> list[str]:
    """`a/b/c` or `k1=a/k2=b`: one value per folder level (the part after '=' if any)."""
    if not path:
        return []
    values = []
    for part in _split(path, "/"):
        if "=" in part:
            pieces = _split(part, "=")
            if len(pieces) != 2:
                raise SyncError(f"partition folder {part!r} of {path!r} is not key=value")
            part = pieces[1]
        values.append(part)
    return values


def single_part(path: str) -> list[str]:
    """The whole path is one value, its slashes turned into dashes."""
    return [path.replace("/", "-")]


def hive_style(path: str) -> list[str]:
    """`key=value`: one value."""
    pieces = _split(path, "=")
    if len(pieces) != 2:
        raise SyncError(f"partition path {path!r} is not in the form partition_key=partition_value")
    return [pieces[1]]


def _slash_encoded(path: str, levels: int, form: str, layout: str) -> list[str]:
    parts = _split(path, "/")
    if len(parts) != levels:
        raise SyncError(f"partition path {path!r} is not in the form {layout}")
    parts = [(_split(part, "=") + [""])[1] if "=" in part else part for part in parts]  # k=v: v
    if not all(_JAVA_INT.fullmatch(p) for p in parts):
        raise SyncError(
            f"partition path {path!r} is not a date {layout}: "
            f"{'/'.join(parts)!r} holds something other than numbers"
        )
    year, month, day, *hour = (int(p) for p in parts)
    try:
        moment = datetime.datetime(year, month, day, hour[0] if hour else 0)
    except ValueError as exc:
        raise SyncError(f"partition path {path!r} is not a date {layout}: {exc}") from exc
    return [moment.strftime(form)]


def slash_encoded_day(path: str) -> list[str]:
    """`yyyy/mm/dd` -> `yyyy-mm-dd`."""
    return _slash_encoded(path, 3, "%Y-%m-%d", "yyyy/mm/dd")


def slash_encoded_hour(path: str) -> list[str]:
    """`yyyy/mm/dd/hh` -> `yyyy-mm-dd-hh`."""
    return _slash_encoded(path, 4, "%Y-%m-%d-%H", "yyyy/mm/dd/hh")


def non_partitioned(path: str) -> list[str]:
    return []


EXTRACTORS: dict[str, Callable[[str], list[str]]] = {
    _PACKAGE + "MultiPartKeysValueExtractor": multi_part_keys,
    _PACKAGE + "SinglePartPartitionValueExtractor": single_part,
    _PACKAGE + "HiveStylePartitionValueExtractor": hive_style,
    _PACKAGE + "SlashEncodedDayPartitionValueExtractor": slash_encoded_day,
    _PACKAGE + "SlashEncodedHourPartitionValueExtractor": slash_encoded_hour,
    _PACKAGE + "NonPartitionedExtractor": non_partitioned,
}


def partition_value_extractor(
    class_name: str | None, partition_fields: list[str], hive_style: bool = False
) -> Callable[[str], list[str]]:
    """The extractor a class name names, else the one Apache Hudi infers from the partition
    fields: none -> NonPartitionedExtractor; one -> HiveStylePartitionValueExtractor when the
    table is hive-style partitioned, else SinglePartPartitionValueExtractor; several ->
    MultiPartKeysValueExtractor."""
    if not class_name:
        return EXTRACTORS[_PACKAGE + _inferred(partition_fields, hive_style)]
    extractor = EXTRACTORS.get(class_name) or EXTRACTORS.get(_PACKAGE + class_name)
    if extractor is None:
        known = ", ".join(sorted(n.removeprefix(_PACKAGE) for n in EXTRACTORS))
        raise SyncError(f"unknown partition value extractor {class_name!r}; known: {known}")
    return extractor


def _inferred(partition_fields: list[str], hive_style: bool) -> str:
    if not partition_fields:
        return "NonPartitionedExtractor"
    if len(partition_fields) > 1:
        return "MultiPartKeysValueExtractor"
    return "HiveStylePartitionValueExtractor" if hive_style else "SinglePartPartitionValueExtractor"
