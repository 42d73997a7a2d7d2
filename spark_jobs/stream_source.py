"""`spark.readStream.format("hudi")`: a table's commits as a Structured Streaming source.

    spark_jobs.register(spark)                  # once per session
    stream = (
        spark.readStream.format("hudi")
        .option("hoodie.datasource.streaming.startOffset", "earliest")
        .load("/data/lake/trips")
    )
    stream.writeStream.trigger(processingTime="1 minute").option("checkpointLocation", cp)...

Offsets are completed commit instants (`{"instant": "20261125093000123"}` in the query's
checkpoint); each micro-batch is the incremental read of the commits after the last one
emitted, one Spark partition per file slice, read by hudi_core on the executors (see
hudi_core.read.streaming for what the offsets may pass and when a batch fails). The query's
trigger is the check interval: every trigger asks the timeline for new commits.
Options, as Apache Hudi names them:

- hoodie.datasource.streaming.startOffset (Flink's read.start-commit): latest (default),
  earliest, or an instant time (the stream starts with that commit);
- hoodie.datasource.read.changelog.enabled: every change with its `_hoodie_operation`
  (I, -U, U, D; deletes included) instead of each key's state at the batch's last commit;
- hoodie.datasource.read.streaming.skip_compaction / skip_clustering;
- hoodie.datasource.streaming.max.instants.per.trigger: commits per micro-batch at most
  (a Trigger.AvailableNow query respects it too; Trigger.Once reads everything);
- hoodie.datasource.read.incr.fallback.fulltablescan.enable.

The columns are the table's when the query starts; columns added later are left out (restart
the query to get them), columns dropped come back null.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxFiles,
    SupportsTriggerAvailableNow,
)

from hudi_core import HudiError, HudiTable
from hudi_core.distributed import CommitStream, ReadPlan
from hudi_core.schema import cast_batch_to_schema

OFFSET_KEY = "instant"


class HudiStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Plans each micro-batch on the driver (in the Python worker Spark keeps for the
    source); executors read the slices."""

    def __init__(self, options: Mapping[str, str], schema: pa.Schema) -> None:
        self.options = dict(options)
        self.schema = schema  # the source's (the table's when the query started)
        self.failure: HudiError | None = None
        try:
            self._commits: CommitStream | None = _commit_stream(self.options)
        except HudiError as exc:
            self._commits, self.failure = None, exc
        self.target: str | None = None  # the last offset of a Trigger.AvailableNow query

    @classmethod
    def failing(cls, failure: HudiError) -> HudiStreamReader:
        """A reader that raises `failure` on its first call. PySpark (4.x) reports an error
        raised while it creates the reader as an UnboundLocalError of its own (it then stops
        a reader it never got); one raised by the reader's first call reaches the query's
        StreamingQueryException as itself."""
        reader = cls.__new__(cls)
        reader.options, reader.schema, reader.target = {}, pa.schema([]), None
        reader._commits, reader.failure = None, failure
        return reader

    @property
    def stream(self) -> CommitStream:
        if self._commits is None:
            assert self.failure is not None
            raise self.failure
        return self._commits

    def initialOffset(self) -> dict:  # noqa: N802 (Spark's names)
        return {OFFSET_KEY: self.stream.initial_offset()}

    def getDefaultReadLimit(self) -> ReadLimit:  # noqa: N802
        """max.instants.per.trigger, as Spark's closest limit: a commit counts as a file."""
        if self.stream.max_instants:
            return ReadMaxFiles(self.stream.max_instants)
        return ReadAllAvailable()

    def latestOffset(self, start: dict, limit: ReadLimit) -> dict:  # noqa: N802
        begin = start[OFFSET_KEY]
        latest = self.stream.latest_offset(begin, limited=not isinstance(limit, ReadAllAvailable))
        if self.target is not None:
            latest = max(begin, min(latest, self.target))
        return {OFFSET_KEY: latest}

    def prepareForTriggerAvailableNow(self) -> None:  # noqa: N802
        self.target = self.stream.latest_offset("", limited=False)

    def partitions(self, start: dict, end: dict) -> list[InputPartition]:
        """One per file slice the micro-batch reads, each carrying its slice's plan."""
        if start[OFFSET_KEY] == end[OFFSET_KEY]:
            return []
        plan = self.stream.plan(start[OFFSET_KEY], end[OFFSET_KEY])
        if plan is None:
            return []
        return [InputPartition(plan.of_slice(file_slice)) for file_slice in plan.slices]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        plan: ReadPlan = partition.value
        rows = plan.read_slice(plan.slices[0])
        kept = [name for name in self.schema.names if name in rows.column_names]
        yield from cast_batch_to_schema(rows.select(kept), self.schema).to_batches()


def _commit_stream(options: dict[str, str]) -> CommitStream:
    table = HudiTable.open(options["path"], options)
    return CommitStream(table.storage, table.config, table.engine, options)
