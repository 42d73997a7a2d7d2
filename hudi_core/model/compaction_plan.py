"""The compaction plan: which file slices one compaction merges, as Apache Hudi records it.

A plan is the Avro `HoodieCompactionPlan` in `<ts>.compaction.requested`, one operation per
file slice: its file group, base instant, base file and log files (names, relative to the
partition, as version 2 plans hold them) and the strategy's metrics.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hudi_core.config.table_config import METAFOLDER
from hudi_core.errors import MissingInstantFileError
from hudi_core.model.file_group import BaseFile, FileSlice, LogFile, bootstrap_uri
from hudi_core.storage import Storage
from hudi_core.timeline import ActiveTimeline, Instant, State, avro_metadata
from hudi_core.timeline.content import corrupt, repair_hint
from hudi_core.timeline.instant import COMPACTION

PLAN_VERSION = 2  # file names relative to the partition


@dataclass(frozen=True)
class CompactionOperation:
    partition_path: str
    file_id: str
    base_instant_time: str
    base_file: str | None  # file name
    log_files: tuple[str, ...]  # file names, in log order
    metrics: dict[str, float] = field(default_factory=dict, compare=False)
    # The bootstrap source file a skeleton base file stands for (its URI), as Apache Hudi's
    # compactor needs it to read the slice; None for other base files.
    bootstrap_file: str | None = None

    @classmethod
    def of(cls, file_slice: FileSlice, metrics: dict[str, float]) -> CompactionOperation:
        base = file_slice.base_file
        return cls(
            file_slice.partition_path,
            file_slice.file_id,
            file_slice.base_instant_time,
            base.name if base is not None else None,
            tuple(log.name for log in file_slice.log_files),
            metrics,
            bootstrap_uri(base),
        )

    def file_slice(self, storage: Storage) -> FileSlice:
        """The slice to compact, with its files' current sizes."""
        base = None
        if self.base_file is not None:
            path = self._path(self.base_file)
            base = BaseFile(path, storage.file_size(path))
        logs = [LogFile(self._path(n), storage.file_size(self._path(n))) for n in self.log_files]
        slice_ = FileSlice(self.partition_path, self.file_id, self.base_instant_time, base)
        return slice_.with_log_files(logs)

    @property
    def base_file_path(self) -> str | None:
        """The planned base file, relative to the base path."""
        return self._path(self.base_file) if self.base_file is not None else None

    def _path(self, name: str) -> str:
        return f"{self.partition_path}/{name}" if self.partition_path else name

    def to_avro(self) -> dict[str, Any]:
        return {
            "baseInstantTime": self.base_instant_time,
            "deltaFilePaths": list(self.log_files),
            "dataFilePath": self.base_file,
            "fileId": self.file_id,
            "partitionPath": self.partition_path,
            "metrics": dict(self.metrics),
            "bootstrapFilePath": self.bootstrap_file,
        }

    @classmethod
    def from_avro(cls, record: dict[str, Any]) -> CompactionOperation:
        return cls(
            record.get("partitionPath") or "",
            record["fileId"],
            record["baseInstantTime"],
            _file_name(record.get("dataFilePath")),
            tuple(_name(p) for p in record.get("deltaFilePaths") or []),
            dict(record.get("metrics") or {}),
            record.get("bootstrapFilePath") or None,
        )


@dataclass
class CompactionPlan:
    operations: list[CompactionOperation]
    extra_metadata: dict[str, str] = field(default_factory=dict)

    def file_groups(self) -> set[tuple[str, str]]:
        return {(op.partition_path, op.file_id) for op in self.operations}

    def to_avro_bytes(self) -> bytes:
        return avro_metadata.serialize(
            "HoodieCompactionPlan",
            {
                "operations": [op.to_avro() for op in self.operations],
                "extraMetadata": self.extra_metadata or None,
                "version": PLAN_VERSION,
                "strategy": None,
                "preserveHoodieMetadata": True,
            },
        )

    @classmethod
    def from_avro_bytes(cls, data: bytes, source: str | None = None) -> CompactionPlan:
        record = avro_metadata.deserialize(data, source)
        try:
            ops = [CompactionOperation.from_avro(op) for op in record.get("operations") or []]
        except (KeyError, TypeError, AttributeError) as exc:
            problem = f"a compaction operation lacks a file id or base instant ({exc!r})"
            raise corrupt(data, problem, source) from exc
        return cls(ops, dict(record.get("extraMetadata") or {}))


def read_plan(timeline: ActiveTimeline, instant_time: str) -> CompactionPlan:
    """The plan of the compaction at `instant_time`; a CorruptFileError naming the plan
    file when it is missing or cannot be read."""
    requested = Instant(instant_time, COMPACTION, State.REQUESTED)
    try:
        data = timeline.read_bytes(requested)
    except MissingInstantFileError as exc:
        raise MissingInstantFileError(
            f"{METAFOLDER}/{requested.file_name} does not exist, so the plan of compaction "
            f"{instant_time} is lost; {repair_hint(requested)}"
        ) from exc
    return CompactionPlan.from_avro_bytes(data)


def _file_name(path: str | None) -> str | None:
    """Plans of version 1 hold full paths; later ones names. Either way, the name."""
    return _name(path) if path else None


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]
