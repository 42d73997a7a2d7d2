"""DAGs generated per table from the tables file (see tables_config):

- `<table>_ingest`: ingest the source files that arrived since the last checkpoint; manual
  runs take params (source path, operation, a modification-date range for backfills);
  a table with `sources` gets `<table>_ingest_<source>` instead, one per source, each on
  the source's schedule with the same params, resuming from its own checkpoint
  (`--source-id`: the source's name), narrowed to its `columns` and writing its own log
  files (hoodie.write.log.suffix: `SourceEntry.log_suffix`);
- `<table>_ingest` of a table fed by another (`upstream_table`): `wait_for_upstream` (a
  deferrable HudiInstantSensor: a completed commit of the upstream table newer than the
  checkpoint of this table's last ingest; skipped, with the ingest, after
  UPSTREAM_TIMEOUT) -> `ingest` of the upstream's commits since that checkpoint
  (`--source-format hudi`, rewritten by the entry's `transformer_sql`); manual runs take the
  params `source_path` (the upstream's base path) and `operation`;
- `<table>_compaction` (merge-on-read tables): `schedule_compaction` -> `execute_compaction`,
  the plan's instant time handed over through XCom; skipped when nothing is due or pending;
- `<table>_clustering` (tables whose entry sets `clustering_schedule`):
  `schedule_clustering` -> `execute_clustering`, likewise;
- `<table>_maintenance`: `clean` -> `archive` (which runs after a skipped clean too);
- `<table>_bootstrap` (tables whose entry names a `bootstrap_source_path`): `bootstrap`
  (-> `hive_sync`), once, by hand (no schedule): the parquet dataset becomes the table
  (spark_jobs/bootstrap.py), created from the entry's name, type and fields. A run on a
  table with commits fails, saying so; a retry rolls the failed attempt back (once its
  heartbeat stops) and starts over.

Every Spark task of a table gets the entry's Spark settings (`spark_conf`, `executor_memory`,
...) as SparkSubmitOperator's `conf` and arguments; a table without partition fields is
ingested without `--partition-path-field` (non-partitioned).

Tables that sync to Hive (`TableEntry.syncs_to_hive`: their options enable Apache Hudi's Hive
sync, hoodie.datasource.hive_sync.*, or name partition commit policies,
sink.partition-commit.*) get a `hive_sync` task after every write, as Apache Hudi's writer
syncs after each commit:

- `<table>_ingest` (and every `<table>_ingest_<source>`): `ingest` -> `hive_sync`
  (`wait_for_upstream` -> `ingest` -> `hive_sync` for a table fed by another);
- `<table>_compaction`: `schedule_compaction` -> `execute_compaction` -> `hive_sync` (skipped
  with the compaction when there is none to run), and `<table>_clustering` likewise;
- `<table>_hive_sync`: `hive_sync` alone on `hive_sync_schedule`, passing the run's data
  interval end as the watermark of the partition-time commit trigger (the data up to it is
  complete; skipped until the table exists); the syncs after writes pass none, so only this
  DAG moves the watermark.

A bad entry of the tables file costs only its own DAGs: `build_dags` builds the others and
logs each bad entry; `check_tables_file`, called by a DAG file of its own
(dags/hudi_tables_check.py), raises the bad entries' messages, which Airflow shows as that
file's import error ("DAG Import Errors"). The error must come from a file without DAGs:
Airflow marks every DAG of a file with an import error stale (not scheduled).

Every DAG runs one run at a time (`max_active_runs=1`); the table lock keeps runs of
different DAGs from changing the timeline at once, and optimistic concurrency fails a write
that raced a compaction plan on the same file group (its retry writes again). Syncs of a
table take its lock too. An embedded (spark mode) metastore opens in one driver at a time:
a sync starting while another driver holds the same `metastore_dir` (the same table's, from
another DAG, or another table's) waits through Hive's connection retries, then fails and is
retried by Airflow; hms mode has no such limit.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from airflow.sdk import DAG, BaseOperator, CronDataIntervalTimetable, Param

from hudi_airflow.operators import (
    HudiArchiveOperator,
    HudiBootstrapOperator,
    HudiCleanOperator,
    HudiClusteringOperator,
    HudiCompactionOperator,
    HudiHiveSyncOperator,
    HudiIngestOperator,
    HudiScheduleClusteringOperator,
    HudiScheduleCompactionOperator,
)
from hudi_airflow.sensors import HudiInstantSensor
from hudi_airflow.tables_config import SourceEntry, TableEntry, TablesConfigError, read_tables
from hudi_core import WriteOperation

START_DATE = datetime(2026, 1, 1)
OPERATIONS = [operation.lower() for operation in WriteOperation]
PLANNED = "{{{{ ti.xcom_pull(task_ids='schedule_{}', key='instant_time') }}}}"
# The run's data interval end; runs without a logical date (manual runs may have none in
# Airflow 3) have no data interval, and then no watermark.
INTERVAL_END_WATERMARK = (
    "{{ data_interval_end.isoformat() "
    "if data_interval_end is defined and data_interval_end else '' }}"
)


# The option a source's writes name their log files with (hudi_core's write options).
LOG_SUFFIX_OPTION = "hoodie.write.log.suffix"
# A table fed by another waits for the upstream's writes (a compaction's commit too: it is
# read as nothing new, and recorded): checked every minute in the triggerer, for at most
# UPSTREAM_TIMEOUT, then the run's ingest is skipped (the next run waits again).
WRITE_ACTIONS = ["commit", "deltacommit", "replacecommit"]
UPSTREAM_POKE_INTERVAL = timedelta(minutes=1)
UPSTREAM_TIMEOUT = timedelta(hours=6)

_LOG = logging.getLogger(__name__)


def build_dags(entries: list[TableEntry] | None = None) -> dict[str, DAG]:
    """Every DAG of every table, by dag_id: of `entries`, else of the tables file's good
    entries (each bad one logged; `check_tables_file` reports them)."""
    if entries is None:
        tables = read_tables()
        entries = tables.entries
        for error in tables.errors:
            _LOG.error("skipped, its DAGs are not built: %s", error.message)
    dags: dict[str, DAG] = {}
    for entry in entries:
        for dag in table_dags(entry):
            dags[dag.dag_id] = dag
    return dags


def check_tables_file() -> None:
    """Raises a TablesConfigError naming every bad entry of the tables file, if any. A file
    that is no list of entries at all is left to `build_dags`, which fails on it."""
    try:
        errors = read_tables().errors
    except TablesConfigError:
        return
    if errors:
        count = f"{len(errors)} bad table entr{'y' if len(errors) == 1 else 'ies'}"
        messages = "\n".join(error.message for error in errors)
        raise TablesConfigError(
            f"{count}, whose DAGs are not built (the other tables' are):\n{messages}"
        )


def table_dags(entry: TableEntry) -> list[DAG]:
    if entry.has_sources:
        dags = [ingest_dag(entry, source) for source in entry.sources]
    else:
        dags = [ingest_dag(entry)]
    if entry.is_merge_on_read:
        dags.append(compaction_dag(entry))
    if entry.clustering_schedule is not None:
        dags.append(clustering_dag(entry))
    dags.append(maintenance_dag(entry))
    if entry.syncs_to_hive:
        dags.append(hive_sync_dag(entry))
    if entry.bootstrap_source_path is not None:
        dags.append(bootstrap_dag(entry))
    return dags


def ingest_dag(entry: TableEntry, source: SourceEntry | None = None) -> DAG:
    """`<table>_ingest` of a table's one source, or `<table>_ingest_<source>` of one of its
    `sources`: that source's files on its schedule, from its own checkpoint, narrowed to its
    columns, into log files of its own suffix. A table fed by another table waits for its
    new commits first."""
    if source is None:
        if entry.source_path is None or entry.source_format is None:
            raise TablesConfigError(f"table {entry.name} has sources: give the one to ingest")
        source = SourceEntry("", entry.source_path, entry.source_format, entry.schedule)
        arguments = {**_table_arguments(entry, spark=True), **_source_window(entry)}
        schedule = source.schedule if entry.has_upstream else _interval_schedule(source.schedule)
        dag = _dag(entry, "ingest", schedule, _ingest_params(source, entry.has_upstream))
    else:
        arguments = {
            **_table_arguments(entry, spark=True),
            **_source_window(entry),
            # The source's own suffix, whatever the table's options say: writers sharing
            # one would append to each other's log files.
            "hoodie_options": {**entry.hoodie_options(), LOG_SUFFIX_OPTION: source.log_suffix},
            "source_id": source.name,
            "source_columns": source.columns,
        }
        dag = _dag(
            entry,
            f"ingest_{source.name}",
            _interval_schedule(source.schedule),
            _ingest_params(source),
            tags=["ingest", source.name],
            about=f"ingest from source {source.name}",
        )
    with dag:
        ingest = HudiIngestOperator(
            task_id="ingest",
            source_path="{{ params.source_path }}",
            source_format=source.source_format,
            operation="{{ params.operation }}",
            transformer_sql=entry.transformer_sql,
            **_table_fields(entry),
            **arguments,
        )
        if entry.has_upstream:
            _wait_for_upstream(entry) >> ingest
        if entry.syncs_to_hive:
            ingest >> _hive_sync(entry)
    return dag


def _interval_schedule(schedule: str | None) -> str | CronDataIntervalTimetable | None:
    """A file source's cron schedule as runs with data intervals (a run at 11:00 covers
    [10:00, 11:00)), as Airflow 2 made them: Airflow 3 makes cron runs without one, and a
    backfill run ingests the files modified in its interval (HudiIngestOperator)."""
    if schedule is None or schedule in ("@once", "@continuous"):
        return schedule
    return CronDataIntervalTimetable(schedule, timezone="UTC")


def _source_window(entry: TableEntry) -> dict[str, str]:
    """A file source's backfill range, from a manual run's params (an upstream table's
    commits have none)."""
    if entry.has_upstream:
        return {}
    return {
        "modified_since": "{{ params.from_date or '' }}",
        "modified_until": "{{ params.to_date or '' }}",
    }


def _wait_for_upstream(entry: TableEntry) -> HudiInstantSensor:
    """Waits in the triggerer for a completed write of the upstream table newer than the
    checkpoint of this table's last ingest (any, before its first)."""
    return HudiInstantSensor(
        task_id="wait_for_upstream",
        base_path=entry.source_path,
        action=WRITE_ACTIONS,
        state="COMPLETED",
        after_checkpoint_of=entry.base_path,
        hoodie_options={k: v for k, v in entry.options.items() if k.startswith("fs.")},
        deferrable=True,
        poke_interval=UPSTREAM_POKE_INTERVAL.total_seconds(),
        timeout=UPSTREAM_TIMEOUT.total_seconds(),
        soft_fail=True,  # no new upstream commit in time: skip this run's ingest
    )


def _ingest_params(source: SourceEntry, upstream: bool = False) -> dict[str, Param]:
    """What a manual run of an ingest DAG may change (an upstream table's: no date range)."""
    params = {
        "source_path": Param(
            source.source_path,
            type="string",
            description="the upstream table's base path" if upstream else "folder to ingest",
        ),
        "operation": Param("upsert", enum=OPERATIONS, description="the write operation"),
    }
    if upstream:
        return params
    return {
        **params,
        "from_date": Param(
            None,
            type=["null", "string"],
            description="backfill: only files modified at or after this ISO date (or time)",
        ),
        "to_date": Param(
            None,
            type=["null", "string"],
            description="backfill: only files modified before this ISO date (or time)",
        ),
    }


def compaction_dag(entry: TableEntry) -> DAG:
    return _planned_service_dag(
        entry,
        "compaction",
        entry.compaction_schedule,
        HudiScheduleCompactionOperator,
        HudiCompactionOperator,
    )


def clustering_dag(entry: TableEntry) -> DAG:
    return _planned_service_dag(
        entry,
        "clustering",
        entry.clustering_schedule,
        HudiScheduleClusteringOperator,
        HudiClusteringOperator,
    )


def _planned_service_dag(
    entry: TableEntry,
    service: str,
    schedule: str | None,
    plan: type[BaseOperator],
    execute: type[BaseOperator],
) -> DAG:
    """`schedule_<service>` (in the worker) >> `execute_<service>` (a Spark job), the planned
    instant handed over through XCom; then the Hive sync of tables that sync."""
    with _dag(entry, service, schedule) as dag:
        planning = plan(task_id=f"schedule_{service}", **_table_arguments(entry, spark=False))
        in_worker = {}
        if execute is HudiCompactionOperator:
            in_worker = {"max_file_groups_in_worker": entry.max_file_groups_in_worker}
        execution = execute(
            task_id=f"execute_{service}",
            instant_time=PLANNED.format(service),
            **in_worker,
            **_table_arguments(entry, spark=True),
        )
        planning >> execution
        if entry.syncs_to_hive:
            execution >> _hive_sync(entry)  # skipped, as the execution is, when nothing is due
    return dag


def maintenance_dag(entry: TableEntry) -> DAG:
    with _dag(entry, "maintenance", entry.maintenance_schedule) as dag:
        clean = HudiCleanOperator(
            task_id="clean",
            max_files_in_worker=entry.max_files_in_worker,
            **_table_arguments(entry, spark=True),
        )
        # Archival runs after a clean that found nothing to delete (skipped) too.
        archive = HudiArchiveOperator(
            task_id="archive", trigger_rule="none_failed", **_table_arguments(entry, spark=True)
        )
        clean >> archive
    return dag


def bootstrap_dag(entry: TableEntry) -> DAG:
    """`<table>_bootstrap`: one manually triggered run makes the table of the entry's
    `bootstrap_source_path`."""
    if entry.bootstrap_source_path is None:
        raise TablesConfigError(f"table {entry.name} names no bootstrap_source_path")
    about = f"bootstrap from {entry.bootstrap_source_path}"
    with _dag(entry, "bootstrap", None, about=about) as dag:
        bootstrap = HudiBootstrapOperator(
            task_id="bootstrap",
            source_path=entry.bootstrap_source_path,
            **_table_fields(entry),
            **_table_arguments(entry, spark=True),
        )
        if entry.syncs_to_hive:
            bootstrap >> _hive_sync(entry)
    return dag


def _table_fields(entry: TableEntry) -> dict[str, str | None]:
    """What the jobs that may create the table (ingest, bootstrap) create it from."""
    return {
        "table_name": entry.name,
        "table_type": entry.table_type,
        "record_key_field": entry.record_key_field,
        "partition_path_field": entry.partition_path_field,
        "precombine_field": entry.precombine_field,
    }


def hive_sync_dag(entry: TableEntry) -> DAG:
    with _dag(entry, "hive_sync", entry.hive_sync_schedule) as dag:
        _hive_sync(entry, watermark=INTERVAL_END_WATERMARK)
    return dag


def _hive_sync(entry: TableEntry, watermark: str | None = None) -> HudiHiveSyncOperator:
    return HudiHiveSyncOperator(
        task_id="hive_sync",
        metastore_dir=entry.metastore_dir,
        watermark=watermark,
        **_table_arguments(entry, spark=True),
    )


def _dag(
    entry: TableEntry,
    kind: str,
    schedule: str | CronDataIntervalTimetable | None,
    params: dict | None = None,
    tags: list[str] | None = None,
    about: str | None = None,
) -> DAG:
    return DAG(
        dag_id=f"{entry.name}_{kind}",
        description=f"Hudi table {entry.name}: {about or kind}",
        schedule=schedule,
        start_date=START_DATE,
        catchup=False,
        max_active_runs=1,
        tags=["hudi", entry.name, *(tags or [kind])],
        params=params or {},
        default_args={
            "owner": entry.owner,
            "retries": entry.retries,
            "retry_delay": timedelta(seconds=entry.retry_delay_seconds),
        },
        doc_md=f"`{entry.table_type}` table **{entry.name}** at `{entry.base_path}`.",
    )


def _table_arguments(entry: TableEntry, spark: bool) -> dict:
    arguments = {"base_path": entry.base_path, "hoodie_options": entry.hoodie_options()}
    if spark:
        arguments["conn_id"] = entry.spark_conn_id
        arguments["result_dir"] = entry.result_dir
        arguments.update(entry.spark_submit_arguments())
    return arguments
