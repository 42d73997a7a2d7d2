"""Hive metastore sync and partition commit.

    result = sync_table("/data/trips", options)                      # hms or jdbc mode
    result = sync_table("/data/trips", options, embedded=client)     # spark mode

`sync_table` runs what the options ask for: the Hive sync (hoodie.datasource.hive_sync.*)
and the partition commit policies (sink.partition-commit.*), in that order, holding back new
partitions from the metastore until partition commit says they are complete.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from hudi_core.config import hive_sync_options as HS
from hudi_core.config.option import Options
from hudi_core.errors import SyncError
from hudi_core.sync.hive_sync import HiveSyncTool, SyncResult
from hudi_core.sync.metastore import Metastore
from hudi_core.sync.partition_commit import (
    METASTORE,
    CommitRun,
    PartitionCommitter,
    commit_policies,
)
from hudi_core.table import HudiTable
from hudi_core.timeline import ActiveTimeline

__all__ = ["METASTORE", "SyncOutcome", "commit_policies", "open_metastore", "sync_table"]


@dataclass
class SyncOutcome:
    hive: SyncResult | None
    partition_commit: CommitRun | None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def open_metastore(options: Options, embedded: Any = None) -> Metastore:
    """The metastore the mode names; spark mode needs the Spark driver's embedded client."""
    mode = options.get_option(HS.MODE)
    batch = options.get_option(HS.BATCH_NUM)
    if mode == "hms":
        from hudi_core.sync.thrift_metastore import connect_hms

        return connect_hms(options.get_option(HS.METASTORE_URIS), batch)
    if mode == "jdbc":
        from hudi_core.sync.jdbc_metastore import connect_jdbc

        return connect_jdbc(
            options.get_option(HS.JDBC_URL),
            options.get_option(HS.USERNAME),
            options.get_option(HS.PASSWORD),
            batch,
        )
    if embedded is None:
        raise SyncError(
            f"{HS.MODE.key}=spark syncs into the metastore embedded in a Spark driver: run "
            "spark_jobs/hive_sync.py, or choose hms or jdbc"
        )
    from hudi_core.sync.thrift_metastore import ThriftMetastore

    return ThriftMetastore(embedded, batch)


def sync_table(
    base_path: str,
    options: Mapping[str, Any],
    embedded: Any = None,
    watermark_ms: int | None = None,
    clock: Callable[[], float] = time.time,
) -> SyncOutcome:
    """Syncs the table at `base_path` to the Hive metastore and/or commits its partitions,
    as the options ask; does nothing when neither is configured."""
    table = HudiTable.open(base_path, options=options)
    opts = Options(options)
    policies = commit_policies(opts)
    if not opts.get_option(HS.ENABLE) and METASTORE not in policies:
        if not policies:
            return SyncOutcome(None, None)
        committer = _committer(HiveSyncTool(table, opts, None), opts, clock)
        return SyncOutcome(None, committer.run(ActiveTimeline.load(table.storage), watermark_ms))
    metastore = open_metastore(opts, embedded)
    try:
        tool = HiveSyncTool(table, opts, metastore)
        if not policies:
            return SyncOutcome(tool.sync(), None)
        committer = _committer(tool, opts, clock)
        # New partitions wait for their commit before the metastore sees them.
        fresh = committer.collect(ActiveTimeline.load(table.storage))
        held = committer.pending() if METASTORE in policies else set()
        result = tool.sync(hold_back=held)
        run = committer.run(ActiveTimeline.load(table.storage), watermark_ms)
        run.collected = sorted(set(fresh) | set(run.collected))
        return SyncOutcome(result, run)
    finally:
        metastore.close()


def _committer(tool: HiveSyncTool, opts: Options, clock: Callable[[], float]) -> PartitionCommitter:
    return PartitionCommitter(
        tool.storage,
        opts,
        tool.partition_keys,
        tool.partition_values,
        register=tool.register_partitions if tool.metastore is not None else None,
        clock=clock,
    )
