"""A Structured Streaming sink: each micro-batch written into a Hudi table as one commit,
exactly once, with Apache Hudi's HoodieStreamingSink checkpoint in the commit.

    query = (
        stream_df.writeStream.foreachBatch(spark_jobs.streaming.hudi_sink(path, options))
        .option("checkpointLocation", checkpoint)
        .start()
    )

A batch goes through the path of `spark_jobs.write(df, path, mode="append")`: the table is
created by the first batch from the same options, and the write is the SparkWriter's (the
table's lock and concurrency control apply), so table services run beside the stream as
beside any writer. Each commit's extraMetadata records `_hudi_streaming_sink_checkpoint`
(`{"<identifier>":"<batchId>"}`, as Apache Hudi records it), `_hudi_streaming_sink_query_id`
and `_hudi_streaming_sink_application_id`.

Exactly once: Spark replays a batch whose end it did not log (the query died after the commit,
before its commit log entry). Before writing, the sink reads the newest completed write whose
checkpoint holds its identifier (hoodie.datasource.write.streaming.checkpoint.identifier); a
batch id at or below that one's is skipped, as Apache Hudi does, but only when that commit was
made by the same query (the query id Spark keeps in the checkpoint location). Apache Hudi
compares batch ids alone, so a new query (a new checkpoint location restarts batch ids at 0)
on a table an older query wrote has its batches silently skipped until it passes the old batch
id; here they are written. When the query id cannot be known (PYSPARK_PIN_THREAD=false, where
the callback does not run on the query's JVM thread), batch ids alone decide, as in Apache
Hudi. Delete batches are never skipped (Apache Hudi's rule); empty batches write nothing.

`writeStream.format("hudi")` through PySpark's DataSourceStreamWriter is not offered: its
`write` runs per input partition on the executors and its `commit` in a Python worker with no
SparkSession, while a Hudi write must first move every row to its file group's task, a
shuffle a Python stream writer cannot ask for.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from hudi_core import HudiTable, WriteOperation
from hudi_core.config import Options
from hudi_core.config import write_options as W
from hudi_core.errors import InvalidOptionError
from spark_jobs.datasource import session_fs_options
from spark_jobs.save import BOOTSTRAP, check_creatable, create_table, existing_table, option_value
from spark_jobs.writer import SparkWriter

CHECKPOINT_KEY = "_hudi_streaming_sink_checkpoint"  # Apache Hudi's SINK_CHECKPOINT_KEY
QUERY_ID_KEY = "_hudi_streaming_sink_query_id"
APPLICATION_ID_KEY = "_hudi_streaming_sink_application_id"
# Where Spark's stream execution thread keeps its query's id (StreamExecution.QUERY_ID_KEY).
_QUERY_ID_PROPERTY = "sql.streaming.queryId"

_LOG = logging.getLogger(__name__)


def sink_options(options: Mapping[str, Any] | None) -> dict[str, str]:
    """Options as `writeStream.options(...)` takes them, as the strings a write reads
    (booleans become "true"/"false")."""
    return {key: option_value(value) for key, value in (options or {}).items()}


def hudi_sink(path: str, options: Mapping[str, Any] | None = None) -> HudiStreamingSink:
    """The function for `df.writeStream.foreachBatch(...)` writing each micro-batch into the
    Hudi table at `path` as one commit, exactly once (see the module doc). `options` are
    `spark_jobs.write`'s; hoodie.datasource.write.operation defaults to upsert.

    Bad options (an unknown operation; no table name or record key while there is no table
    to write) raise InvalidOptionError here, before the query starts."""
    given = sink_options(options)
    operation = _operation(given)
    active = SparkSession.getActiveSession()  # its file system settings reach the table
    reachable = {**(session_fs_options(active) if active else {}), **given}
    if existing_table(path, reachable) is None:
        check_creatable(given)
    return HudiStreamingSink(
        path, given, operation, Options(given).get_option(W.STREAMING_CHECKPOINT_IDENTIFIER)
    )


@dataclass(frozen=True)
class HudiStreamingSink:
    """Writes micro-batches into one table; called by Spark as `sink(df, batch_id)`."""

    path: str
    options: Mapping[str, str]
    operation: WriteOperation
    identifier: str

    def __call__(self, df: DataFrame, batch_id: int) -> str | None:
        """Writes the batch; returns its instant time, None when nothing was written (a
        batch this query committed already, or an empty one)."""
        session = df.sparkSession
        given = {**session_fs_options(session), **self.options}
        query_id = streaming_query_id(session)
        table = existing_table(self.path, given)
        if table is not None and self._written_before(table, batch_id, query_id):
            return None
        if df.isEmpty():
            _LOG.info("batch %d of query %s is empty: nothing written", batch_id, query_id)
            return None
        table = table or create_table(self.path, given)
        extra = self._extra_metadata(session, batch_id, query_id)
        writer = SparkWriter(session, table)
        return writer.write(df, self.operation, given, extra_metadata=extra)

    def _written_before(self, table: HudiTable, batch_id: int, query_id: str | None) -> bool:
        """Whether this batch was committed already, by this query (see the module doc)."""
        if self.operation is WriteOperation.DELETE:
            return False  # Apache Hudi never skips deletes: writing them again changes nothing
        last = last_sink_checkpoint(table, self.identifier)
        if last is None or last.batch_id < batch_id:
            return False
        if query_id is not None and last.query_id != query_id:
            return False  # a new query: its batch ids started again at 0
        _LOG.warning(
            "skipping batch %d of query %s: instant %s of the table at %s committed batch %d "
            "for %s",
            batch_id,
            query_id,
            last.instant_time,
            self.path,
            last.batch_id,
            self.identifier,
        )
        return True

    def _extra_metadata(
        self, session: SparkSession, batch_id: int, query_id: str | None
    ) -> dict[str, str]:
        # Compact JSON, as Apache Hudi's Jackson writes it: {"default_single_writer":"3"}
        checkpoint = json.dumps({self.identifier: str(batch_id)}, separators=(",", ":"))
        extra = {CHECKPOINT_KEY: checkpoint}
        if query_id is not None:
            extra[QUERY_ID_KEY] = query_id
        application_id = _application_id(session)
        if application_id is not None:
            extra[APPLICATION_ID_KEY] = application_id
        return extra


@dataclass(frozen=True)
class SinkCheckpoint:
    """A streaming sink's commit: the batch it wrote, and the query that wrote it."""

    instant_time: str
    batch_id: int
    query_id: str | None


def last_sink_checkpoint(table: HudiTable, identifier: str) -> SinkCheckpoint | None:
    """The newest completed write on the active timeline whose sink checkpoint holds
    `identifier` (Apache Hudi's getValidCheckpointForCurrentWriter), or None."""
    inspector = table.inspect
    for instant in reversed(inspector.timeline()):
        if not (instant.is_write and instant.is_completed):
            continue
        extra = inspector.commit(instant.timestamp).extra_metadata
        batch_id = _batch_of(extra.get(CHECKPOINT_KEY), identifier)
        if batch_id is not None:
            return SinkCheckpoint(instant.timestamp, batch_id, extra.get(QUERY_ID_KEY))
    return None


def streaming_query_id(session: SparkSession) -> str | None:
    """The id of the streaming query whose batch is being written, None when it cannot be
    known. Spark sets it as a local property of the query's stream execution thread; with
    pinned threads (PySpark's default) a foreachBatch callback's calls run on that thread."""
    try:
        return session.sparkContext.getLocalProperty(_QUERY_ID_PROPERTY) or None
    except (AttributeError, NotImplementedError):  # Spark Connect has no SparkContext
        return None


def _batch_of(recorded: str | None, identifier: str) -> int | None:
    """The batch id a recorded sink checkpoint holds for `identifier`."""
    try:
        checkpoints = json.loads(recorded) if recorded else None
        return int(checkpoints[identifier]) if isinstance(checkpoints, dict) else None
    except (KeyError, TypeError, ValueError):
        return None


def _operation(options: Mapping[str, str]) -> WriteOperation:
    """The write operation of every batch; InvalidOptionError for one a stream cannot do."""
    if options.get(W.OPERATION.key, "").strip().lower() == BOOTSTRAP:
        raise InvalidOptionError(
            f"{W.OPERATION.key}={BOOTSTRAP} makes a table of a parquet dataset once; it is no "
            "operation of a stream's batches: bootstrap with spark_jobs.write first"
        )
    return Options(options).get_option(W.OPERATION)


def _application_id(session: SparkSession) -> str | None:
    try:
        return session.sparkContext.applicationId
    except (AttributeError, NotImplementedError):
        return None
