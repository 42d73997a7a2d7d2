"""Operators: each table service as its own Airflow task.

Work that needs Spark (ingestion, compaction and clustering execution, cleaning's deletes,
bootstrap, Hive sync into spark mode's embedded metastore) runs the matching
`spark_jobs/<job>.py` through the Spark provider's SparkSubmitOperator. What needs no Spark
runs in the worker itself, starting no JVM: planning a compaction, clustering or clean (a
quick timeline change, which also tells when there is nothing to do: the task then skips,
saying why), small cleans and compactions, archival (timeline files only), and Hive sync in
hms and jdbc modes (thrift or JDBC clients in Python). Every operator pushes the instant time
it produced or worked on to XCom (key `instant_time`; the Hive sync's: the commit the
metastore is synced to) and returns the job's result, which a Spark job hands over in its
result file (see `job_result`) and the worker makes the same.

The ingest, compaction, clustering and bootstrap operators record their task instance in the
commits they make (`hudi_airflow.ui.airflow_links`: three options under the commit metadata
prefix, which the Hudi view reads back to link each instant to its task).
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import BaseOperator
from airflow.sdk.exceptions import AirflowException, AirflowSkipException

import spark_jobs
from hudi_airflow.hooks import HudiTableHook
from hudi_airflow.job_result import job_result_file
from hudi_airflow.task_summary import log_skip, log_summary, planning_result
from hudi_airflow.ui.airflow_links import commit_options
from hudi_core import CompactionOrder, InvalidOptionError, TableType, WriteOperation
from hudi_core.config import Options, check_options
from spark_jobs import archive as archive_job
from spark_jobs import clean as clean_job
from spark_jobs import compact as compact_job
from spark_jobs import hive_sync as hive_sync_job
from spark_jobs.cli import submit_env

SPARK_JOBS_DIR = Path(spark_jobs.__file__).resolve().parent
# A clean of at most this many files runs in the worker (HudiCleanOperator); a compaction
# of at most this many file groups reading at most this many MB too (HudiCompactionOperator).
MAX_FILES_IN_WORKER = 1000
MAX_FILE_GROUPS_IN_WORKER = 8
MAX_MB_IN_WORKER = 64
# A driver JVM that runs for seconds and moves only metadata starts faster with the client
# compiler alone and the serial collector: about half a spark-mode Hive sync's time here.
LEAN_JVM_OPTIONS = {"GC": "-XX:+UseSerialGC", "TieredStopAtLevel": "-XX:TieredStopAtLevel=1"}


class HudiSparkJobOperator(SparkSubmitOperator):
    """Runs one of spark_jobs' entry points on a table and returns its result.

    `result_dir` (templated): the folder, a path or URI (s3://..., gs://..., hdfs://...), the
    job writes its result file to and this operator reads it from; both the Spark driver and
    the Airflow worker must reach it. Default: a temporary folder on the worker, which does for
    a driver in client mode (spark-submit's default); a driver in cluster mode needs one.
    """

    template_fields: Sequence[str] = (
        *SparkSubmitOperator.template_fields,
        "base_path",
        "hoodie_options",
        "result_dir",
    )
    ui_color = "#e8f0fe"
    # Whether the job's commits record the task instance (jobs that make commits).
    records_task_instance = False
    # Whether the job writes rows, and so waits for the table's writer turn (services do not:
    # they overlap writes under optimistic concurrency).
    takes_writer_turn = False
    # Whether the job's JVM only moves metadata (metastore calls, lists of file paths), so it
    # starts lean (LEAN_JVM_OPTIONS); jobs whose rows pass through the JVM keep its defaults.
    lean_jvm = False

    def __init__(
        self,
        *,
        job: str,
        base_path: str | None = None,
        hoodie_options: dict[str, Any] | None = None,
        hudi_conn_id: str | None = None,
        result_dir: str | None = None,
        **kwargs: Any,
    ) -> None:
        if not (SPARK_JOBS_DIR / f"{job}.py").is_file():
            raise InvalidOptionError(f"there is no Spark job named {job!r} in {SPARK_JOBS_DIR}")
        kwargs.setdefault("name", f"hudi-{job}")
        super().__init__(application=str(SPARK_JOBS_DIR / f"{job}.py"), **kwargs)
        self.job = job
        self.base_path = base_path
        self.hoodie_options = dict(hoodie_options or {})
        if self.records_task_instance:  # templated; the caller's options win
            self.hoodie_options = {**commit_options(self.hoodie_options), **self.hoodie_options}
        self.hudi_conn_id = hudi_conn_id
        self.result_dir = result_dir

    def job_arguments(self, context: Any) -> list[str]:
        """The job's own arguments, after --base-path and the options."""
        return []

    def execute(self, context: Any) -> dict[str, Any]:
        table = HudiTableHook(self.hudi_conn_id, self.base_path, self.hoodie_options)
        result = self.run_in_worker(table, context)
        if result is None:
            result = self._submit(table, context)
        log_summary(self.log, self.job, result)  # what the job did, in words
        context["ti"].xcom_push(key="instant_time", value=result.get("instant_time"))
        return result

    def run_in_worker(self, table: HudiTableHook, context: Any) -> dict[str, Any] | None:
        """The task's result when this worker does the task itself, without Spark (what has
        no distributed part, or finds nothing to do); None to run the Spark job. Raises
        AirflowSkipException when there is nothing to do."""
        return None

    def _submit(self, table: HudiTableHook, context: Any) -> dict[str, Any]:
        """Runs the Spark job through spark-submit; its result (its result file)."""
        self.application_args = [
            "--base-path",
            table.base_path,
            *_hoodie_conf(table.spark_options()),
            *self.job_arguments(context),
        ]
        # submit_env: Spark's start-up logging at the task's level too (HUDI_SPARK_LOG_LEVEL).
        env = {**_python_env(), **table.spark_env(), **(self.env_vars or {})}
        self.env_vars = submit_env(_lean_jvm(env) if self.lean_jvm else env)
        with job_result_file(self.result_dir) as result_file, self._turn(table):
            self.application_args += ["--result-file", result_file.location]
            try:
                super().execute(context)
            except AirflowException as exc:
                # spark-submit failed: the job's own error, if it got to write one, says why.
                raise AirflowException(self._failure(result_file.read(), exc)) from exc
            result = result_file.read()
        if result is None or result.get("status") != "SUCCEEDED":
            raise AirflowException(self._failure(result, None))
        return result

    def _skip_without_table(self, table: HudiTableHook, what: str) -> None:
        """Skips (logging why) while the table does not exist yet."""
        if not table.exists():
            reason = f"no table at {table.base_path} yet: {what}"
            log_skip(self.log, self.job, reason)
            raise AirflowSkipException(reason)

    @contextmanager
    def _turn(self, table: HudiTableHook) -> Iterator[None]:
        """The table's writer turn for jobs that write (see HudiTableHook.writer_turn), held
        from before spark-submit starts until it ends; nothing for the services."""
        if not self.takes_writer_turn:
            yield
            return
        self.log.info("waiting for the writer turn of %s", table.base_path)
        asked = time.monotonic()
        with table.writer_turn(self.execution_timeout):
            self.log.info("took the writer turn after %.1f s", time.monotonic() - asked)
            yield

    def _failure(self, result: dict[str, Any] | None, submit_error: Exception | None) -> str:
        if result is not None and result.get("error"):
            reason = result["error"]
        elif submit_error is not None:
            reason = str(submit_error)
        else:
            reason = "it wrote no result file"
        return f"spark_jobs/{self.job}.py failed: {reason}"


class HudiIngestOperator(HudiSparkJobOperator):
    """Ingests the source files that arrived since the last checkpoint (or, for a backfill,
    those modified in [modified_since, modified_until)); creates the table on first use.
    A run made by an Airflow backfill ingests the files modified in its data interval and
    leaves the checkpoint alone (modified_since/until, when given, win).

    One of several sources of a table: `source_id` names it (its checkpoint is its own, see
    spark_jobs/ingest.py), `source_columns` the columns its batches keep beside the record
    key and partition fields (None: all).

    `source_format="hudi"`: `source_path` is an upstream Hudi table, whose commits since the
    checkpoint are ingested (Apache Hudi's HoodieIncrSource). `transformer_sql` (templated)
    rewrites each round's rows, `<SRC>` standing for them (SqlQueryBasedTransformer)."""

    template_fields: Sequence[str] = (
        *HudiSparkJobOperator.template_fields,
        "source_path",
        "source_format",
        "operation",
        "modified_since",
        "modified_until",
        "transformer_sql",
    )
    records_task_instance = True
    takes_writer_turn = True

    def __init__(
        self,
        *,
        source_path: str,
        source_format: str,
        operation: WriteOperation | str = WriteOperation.UPSERT,
        table_name: str | None = None,
        table_type: TableType | str = TableType.COPY_ON_WRITE,
        record_key_field: str | None = None,
        partition_path_field: str | None = None,
        precombine_field: str | None = None,
        modified_since: str | None = None,
        modified_until: str | None = None,
        source_id: str | None = None,
        source_columns: Sequence[str] | None = None,
        transformer_sql: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(job="ingest", **kwargs)
        self.source_path = source_path
        self.source_format = source_format
        self.operation = operation
        self.table_name = table_name
        self.table_type = table_type
        self.record_key_field = record_key_field
        self.partition_path_field = partition_path_field
        self.precombine_field = precombine_field
        self.modified_since = modified_since
        self.modified_until = modified_until
        self.source_id = source_id
        self.source_columns = list(source_columns) if source_columns else None
        self.transformer_sql = transformer_sql

    def job_arguments(self, context: Any) -> list[str]:
        since, until = self.modified_since, self.modified_until
        window = backfill_window(context) if self.source_format != "hudi" else None
        if since or until:
            window = None  # a window given by hand (the run's params) wins
        if window is not None:
            since, until = window
            self.log.info(
                "backfill run: ingesting the files modified in [%s, %s); the checkpoint stays",
                since,
                until,
            )
        flags = {
            "--source-path": self.source_path,
            "--source-format": self.source_format,
            "--op": self.operation,
            "--table-name": self.table_name,
            "--table-type": self.table_type,
            "--record-key-field": self.record_key_field,
            "--partition-path-field": self.partition_path_field,
            "--precombine-field": self.precombine_field,
            "--modified-since": since,
            "--modified-until": until,
            "--source-id": self.source_id,
            "--source-columns": ",".join(self.source_columns or []),
            "--transformer-sql": self.transformer_sql,
        }
        return _flags(flags) + (["--keep-checkpoint"] if window is not None else [])


class _HudiExecutePlanOperator(HudiSparkJobOperator):
    """Executes a planned table service (`job`: compact or cluster): `instant_time`
    (templated, e.g. pulled from the planning task's XCom), else the oldest (FIFO) or newest
    (LIFO) pending plan. A retry of an attempt that died rolls back that attempt's files and
    runs the same instant again."""

    template_fields: Sequence[str] = (*HudiSparkJobOperator.template_fields, "instant_time")
    records_task_instance = True
    job: str

    def __init__(
        self,
        *,
        instant_time: str | None = None,
        seq: CompactionOrder | str = CompactionOrder.FIFO,
        **kwargs: Any,
    ):
        super().__init__(job=self.job, **kwargs)
        self.instant_time = instant_time
        self.seq = CompactionOrder.parse(seq, "seq")

    def job_arguments(self, context: Any) -> list[str]:
        flags = {"--mode": "execute", "--instant-time": self.instant_time, "--seq": self.seq}
        return _flags(flags)


class HudiCompactionOperator(_HudiExecutePlanOperator):
    """Executes a planned compaction (see _HudiExecutePlanOperator). A small plan (at most
    `max_file_groups_in_worker` file groups, reading at most `max_mb_in_worker` MB in all by
    the plan's TOTAL_IO_READ_MB) is executed here, in the worker, by hudi_core on local
    threads, as a Spark task would execute each file group; larger ones by the Spark job."""

    job = "compact"

    def __init__(
        self,
        *,
        max_file_groups_in_worker: int = MAX_FILE_GROUPS_IN_WORKER,
        max_mb_in_worker: int = MAX_MB_IN_WORKER,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.max_file_groups_in_worker = max_file_groups_in_worker
        self.max_mb_in_worker = max_mb_in_worker

    def run_in_worker(self, table: HudiTableHook, context: Any) -> dict[str, Any] | None:
        hudi_table = table.get_conn()
        pending = hudi_table.compaction.pending()
        chosen = self.instant_time or None  # a template may render as ''
        if chosen is None and pending:
            chosen = pending[0] if self.seq is CompactionOrder.FIFO else pending[-1]
        if chosen is None or chosen not in pending:
            return None  # the job says what is wrong (or that nothing is planned)
        plan = hudi_table.inspect.compaction(chosen)
        groups, read_mb = len(plan.file_groups), plan.io_read_mb
        small = groups <= self.max_file_groups_in_worker and read_mb <= self.max_mb_in_worker
        self.log.info(
            "compaction %s: %d file groups, %.0f MB to read: executing %s",
            chosen,
            groups,
            read_mb,
            "here" if small else "in the Spark job",
        )
        if not small:
            return None
        return _timed(
            lambda: compact_job.describe(hudi_table, hudi_table.compaction.run(chosen) or chosen)
        )


class HudiClusteringOperator(_HudiExecutePlanOperator):
    """Executes a planned clustering (see _HudiExecutePlanOperator)."""

    job = "cluster"


class HudiCleanOperator(HudiSparkJobOperator):
    """Deletes the file slices the cleaner policy no longer keeps (rolling back failed writes
    first under the lazy policy).

    The clean is planned here, in the worker, under the table's lock (a timeline change, as
    the compaction's planning is). Nothing to do (no plan to execute, and, under the lazy
    failed-writes policy, no pending write or rollback that may be a dead writer's): the task
    skips, saying why; the archive after it runs all the same (dag_factory). Plans of at most
    `max_files_in_worker` files in all are executed here too (deleting a few files needs no
    Spark; rolling back dead writes runs in Python in the job's driver as well); larger ones
    by the Spark job, its executors deleting."""

    lean_jvm = True  # the executors delete files; the JVM passes their paths

    def __init__(self, *, max_files_in_worker: int = MAX_FILES_IN_WORKER, **kwargs: Any) -> None:
        super().__init__(job="clean", **kwargs)
        self.max_files_in_worker = max_files_in_worker

    def run_in_worker(self, table: HudiTableHook, context: Any) -> dict[str, Any] | None:
        self._skip_without_table(table, "nothing to clean")
        hudi_table = table.get_conn()
        backlog = hudi_table.plan_clean()  # fails, as the job's clean would, mid-restore
        if backlog.idle:
            kept = clean_job.retention(hudi_table)
            reason = (
                f"the cleaner policy {kept['policy']} (the latest {kept['retained']} "
                f"{kept['retained_unit']} kept) lets no file go now, and no clean is pending"
            )
            log_skip(self.log, self.job, reason)
            raise AirflowSkipException(reason)
        where = "here" if backlog.files <= self.max_files_in_worker else "in the Spark job"
        self.log.info(
            "clean: %d files to delete (cleans %s), pending writes or rollbacks %s: cleaning %s",
            backlog.files,
            [instant for instant, _ in backlog.planned] or "none",
            list(backlog.unfinished_writes) or "none",
            where,
        )
        if where != "here":
            return None
        return _timed(lambda: clean_job.clean(hudi_table, table.base_path))


class HudiArchiveOperator(HudiSparkJobOperator):
    """Moves old completed instants to the archived timeline.

    Archival moves timeline files and nothing else (hudi_core's archiver never uses the
    engine), so it runs here, in the worker, as it would in a Spark driver; the Spark
    settings this operator takes are not used."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(job="archive", **kwargs)

    def run_in_worker(self, table: HudiTableHook, context: Any) -> dict[str, Any] | None:
        self._skip_without_table(table, "nothing to archive")
        return _timed(lambda: archive_job.archive(table.get_conn(), table.base_path))


class HudiBootstrapOperator(HudiSparkJobOperator):
    """Makes the table of an existing parquet dataset (`source_path`, templated), as Apache
    Hudi's bootstrap does: each source partition referenced where it lies (skeleton files,
    instant 00000000000001) or rewritten (instant 00000000000002), as the options'
    hoodie.bootstrap.mode.selector says; the skeleton files are written by the executors. The
    table is created from `table_name`, `table_type` and the fields unless it exists without
    commits (a failed bootstrap's attempt is rolled back and the bootstrap starts over); a
    table with commits fails the task. Pushes the newest instant committed; the job's result
    lists them all (`counts.instants`)."""

    template_fields: Sequence[str] = (*HudiSparkJobOperator.template_fields, "source_path")
    records_task_instance = True
    takes_writer_turn = True

    def __init__(
        self,
        *,
        source_path: str,
        table_name: str | None = None,
        table_type: TableType | str = TableType.COPY_ON_WRITE,
        record_key_field: str | None = None,
        partition_path_field: str | None = None,
        precombine_field: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(job="bootstrap", **kwargs)
        self.source_path = source_path
        self.table_name = table_name
        self.table_type = table_type
        self.record_key_field = record_key_field
        self.partition_path_field = partition_path_field
        self.precombine_field = precombine_field

    def job_arguments(self, context: Any) -> list[str]:
        flags = {
            "--source-path": self.source_path,
            "--table-name": self.table_name,
            "--table-type": self.table_type,
            "--record-key-fields": self.record_key_field,
            "--partition-fields": self.partition_path_field,
            "--precombine-field": self.precombine_field,
        }
        return _flags(flags)


class HudiHiveSyncOperator(HudiSparkJobOperator):
    """Syncs the table to the Hive metastore and commits its finished partitions, as the
    table's options ask (Apache Hudi's hoodie.datasource.hive_sync.*, the partition commit
    options sink.partition-commit.*); pushes the commit the metastore is synced to. In hms
    and jdbc modes the sync runs in the worker (no JVM; the same lock, result and XCom as the
    Spark job's); spark mode runs spark_jobs/hive_sync.py.

    `metastore_dir` (templated): in spark mode, the folder of the Derby metastore embedded in
    the job's driver (default: Spark's own, metastore_db in the driver's working directory).
    An embedded Derby metastore opens in one JVM at a time: its syncs must not overlap (use
    hms mode where several tables or DAGs sync at once).
    `watermark` (templated; an ISO date-time or epoch millis, empty: none): the event time up
    to which the data is complete, for the partition-time commit trigger; it never moves back.
    Skips while the table does not exist yet (a scheduled sync before the first write).
    """

    template_fields: Sequence[str] = (
        *HudiSparkJobOperator.template_fields,
        "metastore_dir",
        "watermark",
    )
    lean_jvm = True  # metastore calls only

    def __init__(
        self,
        *,
        metastore_dir: str | None = None,
        watermark: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(job="hive_sync", **kwargs)
        self.metastore_dir = metastore_dir
        self.watermark = watermark

    def run_in_worker(self, table: HudiTableHook, context: Any) -> dict[str, Any] | None:
        """hms and jdbc modes (and partition commit without the metastore) sync from here,
        under the table's lock as the Spark job does; spark mode's embedded metastore lives
        in a Spark driver, so that mode runs the Spark job."""
        self._skip_without_table(table, "nothing to sync")
        options = table.in_process_options()
        check_options(options)
        if hive_sync_job.needs_jvm(Options(options)):
            return None
        watermark_ms = hive_sync_job.parse_watermark(self.watermark) if self.watermark else None
        return _timed(lambda: hive_sync_job.locked_sync(table.base_path, options, watermark_ms))

    def job_arguments(self, context: Any) -> list[str]:
        return _flags({"--metastore-dir": self.metastore_dir, "--watermark": self.watermark})


class _HudiScheduleServiceOperator(BaseOperator):
    """Plans a table service (`service`) if one is due, under the table's lock; hands the plan
    to execute (the new one, or the oldest/newest left pending by `seq`) through XCom. Skips,
    and so skips the execution after it, when nothing is due and nothing is pending."""

    template_fields: Sequence[str] = ("base_path", "hoodie_options")
    ui_color = "#fef7e0"
    service: str  # "compaction" or "clustering"

    def __init__(
        self,
        *,
        base_path: str | None = None,
        hoodie_options: dict[str, Any] | None = None,
        hudi_conn_id: str | None = None,
        seq: CompactionOrder | str = CompactionOrder.FIFO,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.base_path = base_path
        self.hoodie_options = hoodie_options or {}
        self.hudi_conn_id = hudi_conn_id
        self.seq = CompactionOrder.parse(seq, "seq")

    def execute(self, context: Any) -> str:
        table = HudiTableHook(self.hudi_conn_id, self.base_path, self.hoodie_options)
        if not table.exists():
            reason = f"no table at {table.base_path} yet: no {self.service}"
            log_skip(self.log, self.service, reason)
            raise AirflowSkipException(reason)
        hudi_table = table.get_conn()
        planned = getattr(hudi_table, self.service).schedule()
        pending = table.pending_plans(self.service)
        chosen = None
        if pending:
            chosen = pending[0] if self.seq is CompactionOrder.FIFO else pending[-1]
        outcome = planning_result(hudi_table, self.service, planned, pending, chosen, self.seq)
        # What was planned, or why not, logged before a skip (its message shows poorly).
        lines = log_summary(self.log, f"schedule_{self.service}", outcome)
        if chosen is None:
            raise AirflowSkipException(lines[-1])
        context["ti"].xcom_push(key="instant_time", value=chosen)
        return chosen


class HudiScheduleCompactionOperator(_HudiScheduleServiceOperator):
    """Plans a compaction if the trigger says one is due (see _HudiScheduleServiceOperator)."""

    service = "compaction"


class HudiScheduleClusteringOperator(_HudiScheduleServiceOperator):
    """Plans a clustering if some file slices qualify (see _HudiScheduleServiceOperator)."""

    service = "clustering"


def backfill_window(context: Any) -> tuple[str, str] | None:
    """The data interval of a run made by a backfill (`airflow backfill create`, or Backfill
    in the UI), as ISO times; None for scheduled, manual and asset-triggered runs, which
    follow the checkpoint. Backfills are of intervals: a run without one has no window."""
    dag_run = context.get("dag_run")
    run_type = getattr(getattr(dag_run, "run_type", None), "value", None) or str(
        getattr(dag_run, "run_type", "")
    )
    start, end = context.get("data_interval_start"), context.get("data_interval_end")
    if run_type != "backfill" or start is None or end is None or start >= end:
        return None
    return start.isoformat(), end.isoformat()


def _timed(work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """A job's result made in the worker, with its duration as a Spark job's carries it."""
    started = time.monotonic()
    result = work()
    return {**result, "duration_s": round(time.monotonic() - started, 1)}


def _lean_jvm(env: dict[str, str]) -> dict[str, str]:
    """`env` with LEAN_JVM_OPTIONS in SPARK_SUBMIT_OPTS (which reaches the driver JVM that
    spark-submit starts), each unless the deployment's options already choose it."""
    options = env.get("SPARK_SUBMIT_OPTS", os.environ.get("SPARK_SUBMIT_OPTS", ""))
    chosen = {"GC": "GC" in options, "TieredStopAtLevel": "TieredStopAtLevel" in options}
    lean = [flag for key, flag in LEAN_JVM_OPTIONS.items() if not chosen[key]]
    return {**env, "SPARK_SUBMIT_OPTS": " ".join([*lean, options]).strip()}


def _flags(flags: dict[str, str | None]) -> list[str]:
    """--flag value pairs for the values that are set (templates may render as '')."""
    return [part for flag, value in flags.items() if value for part in (flag, str(value))]


def _hoodie_conf(options: dict[str, Any]) -> list[str]:
    return [part for key, value in options.items() for part in ("--hoodie-conf", f"{key}={value}")]


def _python_env() -> dict[str, str]:
    """Spark's Python workers and spark-submit from this interpreter's environment unless the
    deployment says otherwise (a venv's bin is not on PATH when its python runs directly)."""
    env = {}
    if "PYSPARK_PYTHON" not in os.environ:
        env["PYSPARK_PYTHON"] = sys.executable
    if shutil.which("spark-submit") is None:
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    return env
