"""Names of base files and log files, and the ids and tokens inside them."""

from __future__ import annotations

import re
import uuid
import zlib
from dataclasses import dataclass

from hudi_core.errors import InvalidOptionError

BASE_FILE_EXTENSION = ".parquet"
PARTITION_METAFILE = ".hoodie_partition_metadata"

_BASE_FILE = re.compile(r"^(?P<file_id>.+)_(?P<token>\d+-\d+-\d+)_(?P<instant>\d{14,17})\.parquet$")
# A writer's log suffix (hoodie.write.log.suffix) follows the write token after a '-': Apache
# Hudi's pattern has no end anchor, so it sees the three-number token; hudi-rs takes the text
# after the last '_' as the token and the middle of the name must not hold another '.'.
LOG_SUFFIX_CHARS = "A-Z, a-z, 0-9 and '-'"
_LOG_SUFFIX = re.compile(r"[A-Za-z0-9-]+")
_LOG_FILE = re.compile(
    r"^\.(?P<file_id>.+)_(?P<instant>\d{14,17})\.log\.(?P<version>\d+)"
    r"(?:_(?P<token>\d+-\d+-\d+)(?:-(?P<suffix>[A-Za-z0-9-]+))?)?$"
)


def new_file_id(index: int = 0) -> str:
    """A new file group id: a random UUID with the '-<n>' suffix Apache Hudi appends."""
    return f"{uuid.uuid4()}-{index}"


def write_token(task_partition_id: int, stage_id: int, attempt_id: int) -> str:
    return f"{task_partition_id}-{stage_id}-{attempt_id}"


def base_file_name(file_id: str, token: str, instant_time: str) -> str:
    return f"{file_id}_{token}_{instant_time}{BASE_FILE_EXTENSION}"


def is_log_suffix(suffix: str) -> bool:
    """Whether `suffix` may end a log file's name (see hoodie.write.log.suffix)."""
    return _LOG_SUFFIX.fullmatch(suffix) is not None


def log_suffix_stage_id(suffix: str | None) -> int:
    """The stage id in the write tokens of a writer with this log suffix: 0 without one, else
    a stable number in [1, 2^31) derived from it. Apache Hudi sees only the three numbers of a
    token, and keeps a slice's log files in a set ordered by (version, token): two writers'
    files of one version must differ there, not just in their suffixes."""
    if not suffix:
        return 0
    return (zlib.crc32(suffix.encode()) & 0x7FFFFFFF) or 1


def log_file_name(
    file_id: str, base_instant_time: str, version: int, token: str, suffix: str | None = None
) -> str:
    """A log file's name; a writer's `suffix` follows the write token after a '-'."""
    if suffix:
        if not is_log_suffix(suffix):
            raise InvalidOptionError(f"log file suffix {suffix!r} may hold only {LOG_SUFFIX_CHARS}")
        token = f"{token}-{suffix}"
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
    write_token: str | None  # the three numbers task-stage-attempt, without the suffix
    suffix: str | None = None  # the writer's hoodie.write.log.suffix, if it had one

    @classmethod
    def parse(cls, name: str) -> LogFileName | None:
        match = _LOG_FILE.match(name)
        if not match:
            return None
        return cls(
            match["file_id"],
            match["instant"],
            int(match["version"]),
            match["token"],
            match["suffix"],
        )

    @property
    def name_suffix(self) -> str:
        """What the name carries after its write token: '-<suffix>', or '' without a suffix."""
        return f"-{self.suffix}" if self.suffix else ""
