"""Names of base files and log files, and the ids and tokens inside them."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

BASE_FILE_EXTENSION = ".parquet"
PARTITION_METAFILE = ".hoodie_partition_metadata"

_BASE_FILE = re.compile(r"^(?P<file_id>.+)_(?P<token>\d+-\d+-\d+)_(?P<instant>\d{14,17})\.parquet$")
_LOG_FILE = re.compile(
    r"^\.(?P<file_id>.+)_(?P<instant>\d{14,17})\.log\.(?P<version>\d+)(?:_(?P<token>\d+-\d+-\d+))?$"
)


def new_file_id(index: int = 0) -> str:
    """A new file group id: a random UUID with the '-<n>' suffix Apache Hudi appends."""
    return f"{uuid.uuid4()}-{index}"


def write_token(task_partition_id: int, stage_id: int, attempt_id: int) -> str:
    return f"{task_partition_id}-{stage_id}-{attempt_id}"


def base_file_name(file_id: str, token: str, instant_time: str) -> str:
    return f"{file_id}_{token}_{instant_time}{BASE_FILE_EXTENSION}"


def log_file_name(file_id: str, base_instant_time: str, version: int, token: str) -> str:
    return f".{file_id}_{base_instant_time}.log.{version}_{token}"


@dataclass(frozen=True)
class BaseFileName:
    file_id: str
    write_token: str
    instant_time: str

    @classmethod
    def parse(cls, name: str) -> BaseFileName | None:
        match = _BASE_FILE.match(name)
        if not match:
            return None
        return cls(match["file_id"], match["token"], match["instant"])


@dataclass(frozen=True)
class LogFileName:
    file_id: str
    base_instant_time: str
    version: int
    write_token: str | None

    @classmethod
    def parse(cls, name: str) -> LogFileName | None:
        match = _LOG_FILE.match(name)
        if not match:
            return None
        return cls(match["file_id"], match["instant"], int(match["version"]), match["token"])
