"""What a command prints: an aligned table for people, one JSON document for scripts."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TextIO

from hudi_core.timeline.instant_time import parse_instant_time


@dataclass(frozen=True)
class Output:
    """A command's answer: `document` is printed as JSON; people see `rows` under `columns`
    (the whole document when there are no rows to show)."""

    document: Any
    columns: Sequence[str] = ()
    rows: Sequence[dict[str, Any]] = field(default_factory=list)
    title: str = ""


def write(output: Output, as_json: bool, out: TextIO) -> None:
    if as_json:
        out.write(json.dumps(output.document, indent=2, sort_keys=False) + "\n")
        return
    if output.title:
        out.write(output.title + "\n")
    if output.columns:
        out.write(table(output.columns, output.rows) + "\n")
    elif not output.title:
        out.write(json.dumps(output.document, indent=2) + "\n")


def table(columns: Sequence[str], rows: Sequence[dict[str, Any]]) -> str:
    """Rows under a header, each column as wide as its widest cell; numbers to the right."""
    cells = [[_cell(row.get(c)) for c in columns] for row in rows]
    widths = [max([len(c), *(len(r[i]) for r in cells)]) for i, c in enumerate(columns)]
    numeric = [
        all(isinstance(row.get(c), int | float) for row in rows) and bool(rows) for c in columns
    ]
    lines = [_line(list(columns), widths, [False] * len(columns))]
    lines.append("  ".join("-" * w for w in widths))
    lines += [_line(r, widths, numeric) for r in cells]
    if not rows:
        lines.append("(none)")
    return "\n".join(lines)


def _line(cells: list[str], widths: list[int], right: list[bool]) -> str:
    parts = [c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right, strict=True)]
    return "  ".join(parts).rstrip()


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def utc_time(timeline_time: str | None, timeline_zone: str) -> str | None:
    """A yyyyMMddHHmmssSSS time of the timeline (in UTC or the local zone) as ISO 8601 UTC."""
    if timeline_time is None:
        return None
    moment = parse_instant_time(timeline_time)
    aware = moment.replace(tzinfo=UTC) if timeline_zone == "UTC" else moment.astimezone()
    return aware.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def age_seconds(timeline_time: str, timeline_zone: str, now: datetime) -> int:
    """Whole seconds from a timeline time to `now` (an aware datetime)."""
    moment = datetime.fromisoformat(str(utc_time(timeline_time, timeline_zone)))
    return max(0, int((now - moment).total_seconds()))
