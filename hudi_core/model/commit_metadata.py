"""Commit metadata: the JSON a completed commit, deltacommit or replacecommit holds.

Field names and their order follow what Apache Hudi writes, so its tools (and hudi-rs, which
reads the table schema from `extraMetadata.schema`) understand ours.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from hudi_core.timeline.content import corrupt, parse_json_object

NULL_COMMIT = "null"  # prevCommit of a file group's first version, as Apache Hudi writes it


@dataclass
class RuntimeStats:
    total_scan_time: int = 0
    total_upsert_time: int = 0
    total_create_time: int = 0

    def to_json(self) -> dict[str, int]:
        return {
            "totalScanTime": self.total_scan_time,
            "totalUpsertTime": self.total_upsert_time,
            "totalCreateTime": self.total_create_time,
        }


@dataclass
class CompactionStats:
    """What compacting one file slice read: its log records, files and blocks."""

    log_records: int = 0
    log_files: int = 0
    log_bytes: int = 0
    updated_records: int = 0
    log_blocks: int = 0
    corrupt_blocks: int = 0
    rollback_blocks: int = 0

    JSON_KEYS = (
        "totalLogRecords",
        "totalLogFilesCompacted",
        "totalLogSizeCompacted",
        "totalUpdatedRecordsCompacted",
        "totalLogBlocks",
        "totalCorruptLogBlock",
        "totalRollbackBlocks",
    )

    def to_json(self) -> dict[str, int]:
        values = (
            self.log_records,
            self.log_files,
            self.log_bytes,
            self.updated_records,
            self.log_blocks,
            self.corrupt_blocks,
            self.rollback_blocks,
        )
        return dict(zip(self.JSON_KEYS, values, strict=True))

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CompactionStats | None:
        if not any(data.get(key) for key in cls.JSON_KEYS):
            return None
        return cls(*(int(data.get(key) or 0) for key in cls.JSON_KEYS))


@dataclass
class WriteStat:
    """What one write did to one file group (a new base file version, or a log append)."""

    file_id: str
    partition_path: str
    path: str  # relative to the base path
    prev_commit: str = NULL_COMMIT
    num_writes: int = 0  # records in the written file
    num_deletes: int = 0
    num_update_writes: int = 0
    num_inserts: int = 0
    total_write_bytes: int = 0
    file_size_in_bytes: int = 0
    total_write_errors: int = 0
    runtime_stats: RuntimeStats | None = None
    compaction: CompactionStats | None = None  # compaction commits only
    # Log-append fields (merge-on-read deltacommits); None on base-file writes.
    log_version: int | None = None
    log_offset: int | None = None
    base_file: str | None = None
    log_files: list[str] | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # keys we read but do not model

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "fileId": self.file_id,
            "path": self.path,
            "cdcStats": None,
            "prevCommit": self.prev_commit,
            "numWrites": self.num_writes,
            "numDeletes": self.num_deletes,
            "numUpdateWrites": self.num_update_writes,
            "numInserts": self.num_inserts,
            "totalWriteBytes": self.total_write_bytes,
            "totalWriteErrors": self.total_write_errors,
            "tempPath": None,
            "partitionPath": self.partition_path,
            **(self.compaction or CompactionStats()).to_json(),
            "fileSizeInBytes": self.file_size_in_bytes,
            "minEventTime": None,
            "maxEventTime": None,
            "runtimeStats": self.runtime_stats.to_json() if self.runtime_stats else None,
        }
        if self.log_version is not None:
            out.update(
                logVersion=self.log_version,
                logOffset=self.log_offset or 0,
                baseFile=self.base_file or "",
                logFiles=list(self.log_files or []),
                recordsStats={"val": None},
            )
        return {**out, **{k: v for k, v in self.extra.items() if k not in out}}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> WriteStat:
        modelled = {
            "fileId",
            "path",
            "prevCommit",
            "numWrites",
            "numDeletes",
            "numUpdateWrites",
            "numInserts",
            "totalWriteBytes",
            "fileSizeInBytes",
            "totalWriteErrors",
            "partitionPath",
            "logVersion",
            "logOffset",
            "baseFile",
            "logFiles",
            *CompactionStats.JSON_KEYS,
        }
        return cls(
            file_id=data.get("fileId") or "",
            partition_path=data.get("partitionPath") or "",
            path=data.get("path") or "",
            prev_commit=data.get("prevCommit") or NULL_COMMIT,
            num_writes=data.get("numWrites") or 0,
            num_deletes=data.get("numDeletes") or 0,
            num_update_writes=data.get("numUpdateWrites") or 0,
            num_inserts=data.get("numInserts") or 0,
            total_write_bytes=data.get("totalWriteBytes") or 0,
            file_size_in_bytes=data.get("fileSizeInBytes") or 0,
            total_write_errors=data.get("totalWriteErrors") or 0,
            log_version=data.get("logVersion"),
            log_offset=data.get("logOffset"),
            base_file=data.get("baseFile"),
            log_files=data.get("logFiles"),
            compaction=CompactionStats.from_json(data),
            extra={k: v for k, v in data.items() if k not in modelled},
        )


# operationType of the table services' commits, as Apache Hudi's WriteOperationType names them.
COMPACT_OPERATION = "COMPACT"
LOG_COMPACT_OPERATION = "LOG_COMPACT"
CLUSTER_OPERATION = "CLUSTER"


@dataclass
class CommitMetadata:
    """The content of a completed write instant; replacecommits also list replaced file ids."""

    partition_to_write_stats: dict[str, list[WriteStat]] = field(default_factory=dict)
    operation_type: str = "UNKNOWN"
    extra_metadata: dict[str, str] = field(default_factory=dict)
    compacted: bool = False
    partition_to_replace_file_ids: dict[str, list[str]] | None = None

    SCHEMA_KEY = "schema"

    @property
    def schema(self) -> str | None:
        return self.extra_metadata.get(self.SCHEMA_KEY) or None

    def write_stats(self) -> list[WriteStat]:
        return [stat for stats in self.partition_to_write_stats.values() for stat in stats]

    def add(self, stat: WriteStat) -> None:
        self.partition_to_write_stats.setdefault(stat.partition_path, []).append(stat)

    def replaced_file_ids(self) -> set[tuple[str, str]]:
        """(partition, fileId) pairs this replacecommit retires."""
        return {
            (partition, file_id)
            for partition, ids in (self.partition_to_replace_file_ids or {}).items()
            for file_id in ids
        }

    def to_json_bytes(self) -> bytes:
        out: dict[str, Any] = {
            "partitionToWriteStats": {
                partition: [s.to_json() for s in stats]
                for partition, stats in self.partition_to_write_stats.items()
            },
            "compacted": self.compacted,
            "extraMetadata": self.extra_metadata,
            "operationType": self.operation_type,
        }
        if self.partition_to_replace_file_ids is not None:
            out["partitionToReplaceFileIds"] = self.partition_to_replace_file_ids
        return json.dumps(out, indent=2).encode()

    @classmethod
    def from_json_bytes(cls, data: bytes, source: str | None = None) -> CommitMetadata:
        """Commit metadata from a commit file's JSON (empty content: none, as Apache Hudi
        reads it, except for a completed write). Damage raises a CorruptFileError naming the
        file: `source`, else the file `data` was read from (ActiveTimeline.read_bytes)."""
        raw = parse_json_object(data, source)
        try:
            stats = {
                partition: [WriteStat.from_json(s) for s in (entries or [])]
                for partition, entries in (raw.get("partitionToWriteStats") or {}).items()
            }
            return cls(
                partition_to_write_stats=stats,
                operation_type=raw.get("operationType") or "UNKNOWN",
                extra_metadata=dict(raw.get("extraMetadata") or {}),
                compacted=bool(raw.get("compacted")),
                partition_to_replace_file_ids=raw.get("partitionToReplaceFileIds"),
            )
        except (AttributeError, TypeError, ValueError) as exc:
            problem = f"JSON that is not commit metadata ({type(exc).__name__}: {exc})"
            raise corrupt(data, problem, source) from exc
