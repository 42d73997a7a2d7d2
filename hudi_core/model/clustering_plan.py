"""The clustering plan: which file slices one clustering rewrites, as Apache Hudi records it.

A plan is the Avro `HoodieRequestedReplaceMetadata` (operationType CLUSTER) in
`<ts>.replacecommit.requested`, holding a `HoodieClusteringPlan`: input groups, each a list
of `HoodieSliceInfo` (partition, file id, the base and log files' full locations, as Apache
Hudi's plan strategies write them), the number of file groups the group is rewritten into
and the strategy's metrics; the execution strategy's class and parameters (the sort columns,
say); and whether the rewritten records keep their commit metadata. Apache Hudi plans and
ours read the same way, so either side can execute the other's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hudi_core.errors import ServiceError
from hudi_core.model.commit_metadata import CLUSTER_OPERATION
from hudi_core.model.file_group import BaseFile, FileSlice, LogFile, bootstrap_uri
from hudi_core.storage import Storage
from hudi_core.timeline import avro_metadata
from hudi_core.timeline.content import corrupt

PLAN_VERSION = 1
# Apache Hudi's default execution strategy: sort (by the plan's sort columns) and size.
SORT_AND_SIZE_EXECUTION = (
    "org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy"
)


@dataclass(frozen=True)
class ClusteringSlice:
    """One input file slice: its file group and its files' names (relative to the partition)."""

    partition_path: str
    file_id: str
    base_file: str | None
    log_files: tuple[str, ...] = ()
    bootstrap_file: str | None = None  # URI of the bootstrap source a skeleton base stands for

    @classmethod
    def of(cls, file_slice: FileSlice) -> ClusteringSlice:
        base = file_slice.base_file
        return cls(
            file_slice.partition_path,
            file_slice.file_id,
            base.name if base is not None else None,
            tuple(log.name for log in file_slice.log_files),
            bootstrap_uri(base),
        )

    @property
    def file_group(self) -> tuple[str, str]:
        return self.partition_path, self.file_id

    def path_of(self, name: str) -> str:
        """A file of the slice, relative to the table's base path."""
        return f"{self.partition_path}/{name}" if self.partition_path else name

    def file_slice(self, storage: Storage) -> FileSlice:
        """The slice to rewrite, with its files' current sizes."""
        base = None
        if self.base_file is not None:
            path = self.path_of(self.base_file)
            base = BaseFile(path, storage.file_size(path))
        logs = [
            LogFile(self.path_of(n), storage.file_size(self.path_of(n))) for n in self.log_files
        ]
        if base is not None:
            base_instant = base.instant_time
        elif logs:
            base_instant = logs[0].parsed.base_instant_time
        else:
            raise ServiceError(f"clustering slice {self.file_id} names no file")
        return FileSlice(self.partition_path, self.file_id, base_instant, base).with_log_files(logs)

    def to_avro(self, storage: Storage) -> dict[str, Any]:
        base = storage.uri_of(self.path_of(self.base_file)) if self.base_file else ""
        return {
            "dataFilePath": base,
            "deltaFilePaths": [storage.uri_of(self.path_of(n)) for n in self.log_files],
            "fileId": self.file_id,
            "partitionPath": self.partition_path,
            "bootstrapFilePath": self.bootstrap_file or "",
            "version": PLAN_VERSION,
        }

    @classmethod
    def from_avro(cls, record: dict[str, Any]) -> ClusteringSlice:
        return cls(
            record.get("partitionPath") or "",
            record.get("fileId") or "",  # none: a corrupt plan (see from_requested_bytes)
            _name(record.get("dataFilePath") or "") or None,
            tuple(_name(path) for path in record.get("deltaFilePaths") or []),
            record.get("bootstrapFilePath") or None,
        )


@dataclass(frozen=True)
class ClusteringGroup:
    """Slices rewritten together into `num_output_file_groups` new file groups."""

    slices: tuple[ClusteringSlice, ...]
    num_output_file_groups: int = 1
    metrics: dict[str, float] = field(default_factory=dict, compare=False)
    extra_metadata: dict[str, str] = field(default_factory=dict)

    def to_avro(self, storage: Storage) -> dict[str, Any]:
        return {
            "slices": [s.to_avro(storage) for s in self.slices],
            "metrics": dict(self.metrics),
            "numOutputFileGroups": self.num_output_file_groups,
            "extraMetadata": dict(self.extra_metadata) or None,
            "version": PLAN_VERSION,
        }

    @classmethod
    def from_avro(cls, record: dict[str, Any]) -> ClusteringGroup:
        return cls(
            tuple(ClusteringSlice.from_avro(s) for s in record.get("slices") or []),
            int(record.get("numOutputFileGroups") or 1),
            dict(record.get("metrics") or {}),
            dict(record.get("extraMetadata") or {}),
        )


@dataclass
class ClusteringPlan:
    groups: list[ClusteringGroup]
    strategy_class: str = SORT_AND_SIZE_EXECUTION
    strategy_params: dict[str, str] = field(default_factory=dict)
    extra_metadata: dict[str, str] = field(default_factory=dict)
    preserve_hoodie_metadata: bool = True  # rewritten records keep their commit times

    def file_groups(self) -> set[tuple[str, str]]:
        return {s.file_group for group in self.groups for s in group.slices}

    def to_requested_bytes(self, storage: Storage) -> bytes:
        """The `<ts>.replacecommit.requested` content: requested replace metadata holding
        this plan."""
        plan = {
            "inputGroups": [group.to_avro(storage) for group in self.groups],
            "strategy": {
                "strategyClassName": self.strategy_class,
                "strategyParams": dict(self.strategy_params),
                "version": PLAN_VERSION,
            },
            "extraMetadata": dict(self.extra_metadata),
            "version": PLAN_VERSION,
            "preserveHoodieMetadata": self.preserve_hoodie_metadata,
        }
        requested = {
            "operationType": CLUSTER_OPERATION,
            "clusteringPlan": plan,
            "extraMetadata": {},
            "version": PLAN_VERSION,
        }
        return avro_metadata.serialize("HoodieRequestedReplaceMetadata", requested)

    @classmethod
    def from_requested_bytes(cls, data: bytes, source: str | None = None) -> ClusteringPlan | None:
        """The plan in a `<ts>.replacecommit.requested`; None when the replace is no
        clustering (an insert_overwrite, say) or names no input group."""
        record = avro_metadata.deserialize(data, source)
        plan = record.get("clusteringPlan")
        if record.get("operationType") not in (CLUSTER_OPERATION, None) or not plan:
            return None
        try:
            groups = [ClusteringGroup.from_avro(g) for g in plan.get("inputGroups") or []]
        except (TypeError, AttributeError, ValueError) as exc:
            raise corrupt(data, f"a clustering input group is malformed ({exc!r})", source) from exc
        if any(not s.file_id for group in groups for s in group.slices):
            raise corrupt(data, "a clustering input slice has no file id", source)
        if not groups:
            return None
        strategy = plan.get("strategy") or {}
        preserve = plan.get("preserveHoodieMetadata")
        return cls(
            groups,
            strategy.get("strategyClassName") or SORT_AND_SIZE_EXECUTION,
            dict(strategy.get("strategyParams") or {}),
            dict(plan.get("extraMetadata") or {}),
            bool(preserve),  # absent from old plans: not kept, as Apache Hudi reads them
        )


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]
