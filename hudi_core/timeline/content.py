"""What a timeline file holds, and what to say when it cannot be read.

`ActiveTimeline.read_bytes` returns an `InstantContent`: the bytes of one instant file that
also know which file they came from. The parsers of the timeline's two formats (commit
metadata JSON, Avro plans and service metadata) turn any damage into a CorruptFileError that
names that file (relative to the table), says what is wrong with it, and what to do, so every
caller gets the same clear error without passing file names around.
"""

from __future__ import annotations

import json
from typing import Any

from hudi_core.errors import CorruptFileError
from hudi_core.timeline.instant import (
    CLEAN,
    COMPACTION,
    LOG_COMPACTION,
    REPLACE_COMMIT,
    RESTORE,
    ROLLBACK,
    SAVEPOINT,
    WRITE_ACTIONS,
    Instant,
)


class InstantContent(bytes):
    """The bytes of a timeline file, with the file's path (relative to the table) and the
    instant it stands for."""

    source: str
    instant: Instant | None

    def __new__(cls, data: bytes, source: str, instant: Instant | None = None) -> InstantContent:
        content = super().__new__(cls, data)
        content.source = source
        content.instant = instant
        return content

    def __reduce__(self) -> tuple[Any, ...]:
        return InstantContent, (bytes(self), self.source, self.instant)


def source_of(data: bytes, source: str | None = None) -> str:
    """The name to give `data` in an error: `source`, else where it was read from."""
    return source or getattr(data, "source", None) or "timeline metadata"


def instant_of(data: bytes) -> Instant | None:
    return getattr(data, "instant", None)


def corrupt(data: bytes, problem: str, source: str | None = None) -> CorruptFileError:
    """The error for `data` that cannot be read: the file, what is wrong, what to do."""
    hint = repair_hint(instant_of(data))
    return CorruptFileError(f"{source_of(data, source)} ({len(data)} bytes): {problem}; {hint}")


def repair_hint(instant: Instant | None) -> str:
    """What a user can do about a damaged file of `instant`."""
    if instant is None:
        return "restore the file from a backup"
    ts = instant.timestamp
    if instant.action in WRITE_ACTIONS and instant.is_completed:
        return (
            f"if {ts} is the table's latest write, roll it back with HudiTable.rollback('{ts}') "
            "(which deletes the files it wrote); otherwise restore the file from a backup"
        )
    if instant.action in (COMPACTION, LOG_COMPACTION) and not instant.is_completed:
        return (
            f"drop the compaction with HudiTable.rollback('{ts}') and schedule a new one, or "
            "restore the file from a backup"
        )
    if instant.action in WRITE_ACTIONS:
        return f"roll the unfinished write back with HudiTable.rollback('{ts}')"
    if instant.action == ROLLBACK and not instant.is_completed:
        return (
            "restore the file from a backup; a writer deletes a requested rollback whose plan "
            "cannot be read and rolls its write back anew, as Apache Hudi does"
        )
    return "restore the file from a backup"


# What an Avro timeline file holds, by action and whether the instant completed.
_AVRO_CONTENT = {
    (ROLLBACK, False): "rollback plan",
    (ROLLBACK, True): "rollback metadata",
    (COMPACTION, False): "compaction plan",
    (LOG_COMPACTION, False): "log compaction plan",
    (CLEAN, False): "cleaner plan",
    (CLEAN, True): "clean metadata",
    (SAVEPOINT, False): "savepoint metadata",
    (SAVEPOINT, True): "savepoint metadata",
    (RESTORE, False): "restore plan",
    (RESTORE, True): "restore metadata",
    (REPLACE_COMMIT, False): "requested replace metadata",
}


def avro_content_name(data: bytes) -> str:
    """What the Avro file `data` came from should hold ("compaction plan", ...)."""
    instant = instant_of(data)
    if instant is None:
        return "Avro timeline metadata"
    return _AVRO_CONTENT.get(
        (instant.action, instant.is_completed), f"Avro {instant.action} metadata"
    )


def parse_json_object(data: bytes, source: str | None = None) -> dict[str, Any]:
    """The JSON object a commit file holds; {} for empty content, as Apache Hudi reads it,
    except for a completed write, whose file always holds its commit metadata."""
    if not data.strip():
        instant = instant_of(data)
        if instant is not None and instant.is_completed and instant.action in WRITE_ACTIONS:
            problem = "empty, but a completed commit holds its commit metadata JSON"
            raise corrupt(data, problem, source)
        return {}
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise corrupt(data, f"not UTF-8 text, so not commit metadata JSON ({exc})", source) from exc
    try:
        parsed = json.loads(text)
    except json.JSONDecodeError as exc:
        raise corrupt(data, _json_problem(text, exc), source) from exc
    if not isinstance(parsed, dict):
        kind = type(parsed).__name__
        raise corrupt(data, f"holds a JSON {kind}, not the object commit metadata is", source)
    return parsed


def _json_problem(text: str, exc: json.JSONDecodeError) -> str:
    detail = f"{exc.msg.rstrip(':')}: line {exc.lineno} column {exc.colno}"
    if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string"):
        return f"truncated JSON ({detail}; the file ends before the JSON does)"
    return f"invalid JSON ({detail})"
