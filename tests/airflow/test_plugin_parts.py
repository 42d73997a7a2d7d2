"""The provider's parts on real tables, without Spark: the table hook (parameters,
connections, the default lock), the sensors and the deferrable trigger, the
compaction planner's skip and FIFO/LIFO choice, the operators' job arguments and the task
instance they record in commits, and the ingest job's backfill window."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import threading
import time
from datetime import UTC, datetime

import pytest
from airflow.sdk.bases.sensor import PokeReturnValue
from airflow.sdk.exceptions import AirflowSkipException, TaskDeferred

from hudi_airflow.hooks import HudiTableHook
from hudi_airflow.operators import (
    HudiBootstrapOperator,
    HudiCleanOperator,
    HudiCompactionOperator,
    HudiHiveSyncOperator,
    HudiIngestOperator,
    HudiScheduleCompactionOperator,
)
from hudi_airflow.sensors import HudiCompactionDueSensor, HudiInstantSensor
from hudi_airflow.triggers import HudiInstantTrigger
from hudi_core.config.lock_options import DATABASE, FILE_SYSTEM, STORAGE_BASED
from hudi_core.config.option import Options
from hudi_core.errors import InvalidOptionError
from hudi_core.lock import FileSystemLockProvider, lock_provider
from hudi_core.storage import Storage
from spark_jobs.cli import hoodie_options
from spark_jobs.hive_sync import parse_watermark
from spark_jobs.sources import Window, new_files
from tests.datagen import trips
from tests.tables import create_trips_table

PLAN_AFTER_TWO = {"hoodie.compact.inline.max.delta.commits": "2"}


class FakeTaskInstance:
    """What operators use of the task instance: XCom pushes."""

    def __init__(self) -> None:
        self.pushed: dict[str, object] = {}

    def xcom_push(self, key: str, value: object) -> None:
        self.pushed[key] = value


@pytest.fixture
def lock_db(tmp_path, monkeypatch):
    """The platform's default lock is the database lock: give it a SQLite file."""
    monkeypatch.setenv("HUDI_LOCK_DB_URL", f"sqlite:///{tmp_path / 'locks.db'}")


@pytest.fixture
def mor_table(tmp_path):
    path, table = create_trips_table(tmp_path, "MERGE_ON_READ", PLAN_AFTER_TWO)
    table.write(trips(list(range(0, 200)), seed=1, ts=1), "upsert")
    return path, table


def test_hook_takes_base_path_and_options_from_a_connection(monkeypatch, tmp_path):
    monkeypatch.delenv("HUDI_LOCK_DB_URL", raising=False)
    connection = {
        "conn_type": "hudi",
        "host": str(tmp_path / "t"),
        "extra": {"options": {"hoodie.cleaner.commits.retained": 5}},
    }
    monkeypatch.setenv("AIRFLOW_CONN_HUDI_TRIPS", json.dumps(connection))
    hook = HudiTableHook("hudi_trips", options={"hoodie.keep.min.commits": "7"})
    assert hook.base_path == str(tmp_path / "t")
    assert hook.options["hoodie.cleaner.commits.retained"] == "5"
    assert hook.options["hoodie.keep.min.commits"] == "7"
    # No lock configured (HUDI_LOCK_DB_URL unset): the lock follows the local storage.
    assert hook.options["hoodie.write.lock.provider"] == FILE_SYSTEM
    assert HudiTableHook("hudi_trips", base_path="/elsewhere").base_path == "/elsewhere"
    with pytest.raises(InvalidOptionError, match="no Hudi table given"):
        _ = HudiTableHook().base_path


def test_hook_takes_the_lock_settings_from_the_connections_form_fields(monkeypatch):
    connection = {
        "conn_type": "hudi",
        "host": "/lake/t",
        "extra": {
            "options": {"hoodie.write.lock.provider": "in_process"},
            "lock_provider": "file_system",
            "lock_database_url": "",  # an empty form field sets nothing
        },
    }
    monkeypatch.setenv("AIRFLOW_CONN_HUDI_T", json.dumps(connection))
    options = HudiTableHook("hudi_t").options
    assert options["hoodie.write.lock.provider"] == "file_system"
    assert "hoodie.write.lock.database.url" not in options


def test_hook_never_reads_airflows_database_for_the_lock(monkeypatch, tmp_path):
    """Airflow 3 forbids task code its metadata database (the task supervisor sets
    sql_alchemy_conn to `airflow-db-not-allowed:///`): without a lock configured, the lock
    follows the table's storage, and nothing reads Airflow's settings."""
    monkeypatch.delenv("HUDI_LOCK_DB_URL", raising=False)
    monkeypatch.setenv("AIRFLOW__DATABASE__SQL_ALCHEMY_CONN", "airflow-db-not-allowed:///")
    local = HudiTableHook(base_path=str(tmp_path / "t"))
    assert local.options["hoodie.write.lock.provider"] == FILE_SYSTEM
    assert "hoodie.write.lock.database.url" not in local.in_process_options()
    assert local.spark_env() == {}
    assert isinstance(
        lock_provider(Storage(str(tmp_path / "t")), Options(local.options)),
        FileSystemLockProvider,
    )
    on_s3 = HudiTableHook(base_path="s3a://lake/t")
    assert on_s3.options["hoodie.write.lock.provider"] == STORAGE_BASED
    # What the table's settings name wins; an empty form field names nothing.
    chosen = HudiTableHook(base_path="/t", options={"hoodie.write.lock.provider": "in_process"})
    assert chosen.options["hoodie.write.lock.provider"] == "in_process"
    empty = HudiTableHook(base_path="/t", options={"hoodie.write.lock.provider": ""})
    assert empty.options["hoodie.write.lock.provider"] == FILE_SYSTEM


def test_a_configured_lock_database_is_the_default_lock(monkeypatch):
    monkeypatch.setenv("HUDI_LOCK_DB_URL", "postgresql://locks@db/hudi")
    assert HudiTableHook(base_path="/t").options["hoodie.write.lock.provider"] == DATABASE
    monkeypatch.delenv("HUDI_LOCK_DB_URL")
    own = HudiTableHook(base_path="/t", options={"hoodie.write.lock.database.url": "sqlite://"})
    assert own.options["hoodie.write.lock.provider"] == DATABASE
    assert own.in_process_options()["hoodie.write.lock.database.url"] == "sqlite://"


def test_hook_hands_the_lock_database_to_spark_jobs_by_environment(monkeypatch):
    monkeypatch.setenv("HUDI_LOCK_DB_URL", "postgresql://locks@db/airflow")
    hook = HudiTableHook(base_path="/t")
    assert hook.spark_env() == {"HUDI_LOCK_DB_URL": "postgresql://locks@db/airflow"}
    # In the worker, hudi_core reads HUDI_LOCK_DB_URL itself.
    assert hook.in_process_options()["hoodie.write.lock.provider"] == DATABASE
    file_lock = HudiTableHook(base_path="/t", options={"hoodie.write.lock.provider": "file_system"})
    assert file_lock.spark_env() == {}
    # A URL given as an option (it may hold a password) goes by environment too, not argv.
    secret = "postgresql://hudi:s3cret@db/locks"
    explicit = HudiTableHook(base_path="/t", options={"hoodie.write.lock.database.url": secret})
    assert explicit.spark_env() == {"HUDI_LOCK_DB_URL": secret}
    assert "hoodie.write.lock.database.url" not in explicit.spark_options()


def test_object_store_credentials_reach_spark_jobs_by_environment_only(monkeypatch):
    """fs.s3a.* options from tables.yaml: the endpoint goes on the command line, the keys
    travel in HUDI_SECRET_OPTIONS, which the job reads back into its options."""
    monkeypatch.delenv("HUDI_LOCK_DB_URL", raising=False)
    options = {
        "hoodie.write.lock.provider": "file_system",
        "fs.s3a.endpoint": "http://127.0.0.1:9000",
        "fs.s3a.access.key": "minio",
        "fs.s3a.secret.key": "s3cret",
        "fs.s3a.session.token": "t0ken",
    }
    hook = HudiTableHook(base_path="s3a://lake/t", options=options)
    secrets = {k: options[k] for k in ("fs.s3a.access.key", "fs.s3a.secret.key")}
    secrets["fs.s3a.session.token"] = "t0ken"
    on_command_line = hook.spark_options()
    assert on_command_line["fs.s3a.endpoint"] == "http://127.0.0.1:9000"
    assert not set(secrets) & set(on_command_line)
    assert json.loads(hook.spark_env()["HUDI_SECRET_OPTIONS"]) == secrets
    monkeypatch.setenv("HUDI_SECRET_OPTIONS", hook.spark_env()["HUDI_SECRET_OPTIONS"])
    arguments = argparse.Namespace(props=None, hoodie_conf=["fs.s3a.endpoint=http://x:9000"])
    assert hoodie_options(arguments) == {
        **secrets,
        "fs.s3a.endpoint": "http://x:9000",
    }


def test_instant_sensor_pokes_until_the_instant_exists(mor_table, lock_db):
    path, table = mor_table
    sensor = HudiInstantSensor(
        task_id="wait", base_path=path, action="compaction", state="REQUESTED"
    )
    assert sensor.poke({}) is False
    planned = table.compaction.schedule()
    assert planned is None  # one deltacommit: not due yet
    table.write(trips(list(range(0, 50)), seed=2, ts=2), "upsert")
    planned = table.compaction.schedule()
    found = sensor.poke({})
    assert isinstance(found, PokeReturnValue) and found.xcom_value == planned
    with pytest.raises(InvalidOptionError, match="state must be one of"):
        HudiInstantSensor(task_id="bad", base_path=path, state="DONE")


def test_deferrable_instant_sensor_defers_to_a_trigger_that_fires(mor_table, lock_db):
    path, table = mor_table
    sensor = HudiInstantSensor(
        task_id="wait",
        base_path=path,
        action="deltacommit",
        state="COMPLETED",
        instant_time="29991231000000000",
        deferrable=True,
        poke_interval=0.1,
    )
    with pytest.raises(TaskDeferred) as deferred:
        sensor.execute({})
    trigger = deferred.value.trigger
    assert isinstance(trigger, HudiInstantTrigger)
    classpath, kwargs = trigger.serialize()
    assert classpath == "hudi_airflow.triggers.HudiInstantTrigger"
    assert kwargs["base_path"] == path and kwargs["instant_time"] == "29991231000000000"

    waiting = HudiInstantTrigger(path, "deltacommit", "COMPLETED", poll_interval=0.05)
    written: list[str] = []

    def write_later() -> None:
        time.sleep(0.5)
        written.append(table.write(trips([500], seed=3, ts=3), "upsert"))

    # The newest completed deltacommit is there already; wait for one after it instead.
    latest = HudiTableHook(base_path=path).find_instant("deltacommit", "COMPLETED")
    assert latest is not None
    writer = threading.Thread(target=write_later)
    writer.start()
    event = asyncio.run(_event_after(waiting, latest.timestamp))
    writer.join()
    assert event.payload["instant_time"] == written[0]
    assert sensor.execute_complete({}, {"instant_time": written[0]}) == written[0]


async def _event_after(trigger: HudiInstantTrigger, previous: str):
    """The trigger's first event naming an instant other than `previous`."""
    while True:
        event = await anext(trigger.run())
        if event.payload["instant_time"] != previous:
            return event
        await asyncio.sleep(0.05)


def test_compaction_due_sensor_follows_the_trigger_strategy(mor_table, lock_db):
    path, table = mor_table
    sensor = HudiCompactionDueSensor(task_id="due", base_path=path, hoodie_options=PLAN_AFTER_TWO)
    assert sensor.mode == "reschedule"
    assert sensor.poke({}) is False
    table.write(trips(list(range(0, 50)), seed=2, ts=2), "upsert")
    assert sensor.poke({}) is True


def test_schedule_compaction_skips_when_nothing_is_due_or_pending(mor_table, lock_db):
    path, _ = mor_table
    planner = HudiScheduleCompactionOperator(
        task_id="schedule_compaction", base_path=path, hoodie_options=PLAN_AFTER_TWO
    )
    with pytest.raises(AirflowSkipException, match="no compaction is due"):
        planner.execute({"ti": FakeTaskInstance()})
    missing = HudiScheduleCompactionOperator(task_id="s", base_path=f"{path}-missing")
    with pytest.raises(AirflowSkipException, match="no table"):
        missing.execute({"ti": FakeTaskInstance()})


def test_schedule_compaction_hands_over_pending_plans_fifo_or_lifo(mor_table, lock_db):
    path, table = mor_table
    plans = []
    for round_number in (2, 3):  # two plans on different file groups, both left pending
        cities = ["chennai"] if round_number == 2 else ["sao_paulo"]
        table.write(
            trips(list(range(300, 320)), seed=round_number, ts=round_number, cities=cities),
            "upsert",
        )
        table.write(trips(list(range(300, 320)), seed=9, ts=9, cities=cities), "upsert")
        plans.append(table.compaction.schedule())
    assert None not in plans
    for seq, expected in (("FIFO", plans[0]), ("LIFO", plans[-1])):
        ti = FakeTaskInstance()
        planner = HudiScheduleCompactionOperator(
            task_id="schedule_compaction", base_path=path, hoodie_options=PLAN_AFTER_TWO, seq=seq
        )
        assert planner.execute({"ti": ti}) == expected
        assert ti.pushed["instant_time"] == expected


def test_operators_build_the_job_arguments():
    ingest = HudiIngestOperator(
        task_id="ingest",
        base_path="/lake/t",
        source_path="/landing/t",
        source_format="parquet",
        operation="insert",
        table_name="t",
        table_type="MERGE_ON_READ",
        record_key_field="uuid",
        modified_since="",  # an empty template: no flag
        modified_until="2026-11-02",
    )
    assert ingest.application.endswith("spark_jobs/ingest.py")
    assert ingest.job_arguments({}) == [
        "--source-path",
        "/landing/t",
        "--source-format",
        "parquet",
        "--op",
        "insert",
        "--table-name",
        "t",
        "--table-type",
        "MERGE_ON_READ",
        "--record-key-field",
        "uuid",
        "--modified-until",
        "2026-11-02",
    ]
    compaction = HudiCompactionOperator(
        task_id="c", base_path="/t", instant_time="20261101000000000"
    )
    assert compaction.job_arguments({}) == [
        "--mode",
        "execute",
        "--instant-time",
        "20261101000000000",
        "--seq",
        "FIFO",
    ]
    with pytest.raises(InvalidOptionError, match="seq .RANDOM. is not one of FIFO, LIFO"):
        HudiCompactionOperator(task_id="c", base_path="/t", seq="RANDOM")
    assert {"instant_time", "base_path", "hoodie_options"} <= set(compaction.template_fields)


AIRFLOW_KEYS = ("_hoodie.airflow.dag_id", "_hoodie.airflow.run_id", "_hoodie.airflow.task_id")


class FakeRuntimeTaskInstance(FakeTaskInstance):
    dag_id, run_id, task_id = "trips_ingest", "manual__2026-11-24T10:00:00+00:00", "ingest"


def test_ingest_and_compaction_record_their_task_instance_in_commits():
    ingest = HudiIngestOperator(
        task_id="ingest",
        base_path="/lake/t",
        source_path="/landing/t",
        source_format="parquet",
        hoodie_options={"hoodie.x": "1"},
    )
    compaction = HudiCompactionOperator(task_id="c", base_path="/t")
    ti = FakeRuntimeTaskInstance()
    for operator in (ingest, compaction):
        rendered = operator.render_template(operator.hoodie_options, {"ti": ti})
        assert [rendered[key] for key in AIRFLOW_KEYS] == [ti.dag_id, ti.run_id, ti.task_id]
    assert rendered.keys() == set(AIRFLOW_KEYS)  # the compaction had no options of its own
    # What spark-submit gets: the commit metadata prefix copies them into the commits.
    hook = HudiTableHook(None, "/lake/t", ingest.render_template(ingest.hoodie_options, {"ti": ti}))
    assert hook.spark_options()["_hoodie.airflow.run_id"] == ti.run_id

    custom = {"hoodie.datasource.write.commitmeta.key.prefix": "meta."}
    ingest = HudiIngestOperator(
        task_id="i", base_path="/t", source_path="/s", source_format="json", hoodie_options=custom
    )
    assert "meta.hoodie.airflow.dag_id" in ingest.hoodie_options
    off = {"hoodie.datasource.write.commitmeta.key.prefix": ""}
    assert (
        HudiCompactionOperator(task_id="c", base_path="/t", hoodie_options=off).hoodie_options
        == off
    )
    mine = {"_hoodie.airflow.task_id": "mine"}  # the caller's options win
    assert (
        HudiCompactionOperator(task_id="c", base_path="/t", hoodie_options=mine).hoodie_options[
            "_hoodie.airflow.task_id"
        ]
        == "mine"
    )
    # Services that make no commits get none.
    assert HudiCleanOperator(task_id="clean", base_path="/t").hoodie_options == {}


def test_hive_sync_operator_passes_the_metastore_folder_and_watermark_when_set():
    sync = HudiHiveSyncOperator(
        task_id="hive_sync",
        base_path="/lake/t",
        metastore_dir="/data/metastore",
        watermark="2026-11-21T01:00:00+00:00",
    )
    assert sync.application.endswith("spark_jobs/hive_sync.py")
    assert sync.job_arguments({}) == [
        "--metastore-dir",
        "/data/metastore",
        "--watermark",
        "2026-11-21T01:00:00+00:00",
    ]
    assert parse_watermark("2026-11-21T01:00:00+00:00") == 1_795_222_800_000  # the job reads it
    # No folder (Spark's default metastore) and an empty watermark template: no flags.
    bare = HudiHiveSyncOperator(task_id="hive_sync", base_path="/lake/t", watermark="")
    assert bare.job_arguments({}) == []
    only_watermark = HudiHiveSyncOperator(task_id="s", base_path="/t", watermark="1795222800000")
    assert only_watermark.job_arguments({}) == ["--watermark", "1795222800000"]
    assert {"metastore_dir", "watermark", "base_path", "hoodie_options"} <= set(
        sync.template_fields
    )


def test_a_backfill_run_ingests_its_data_interval_and_keeps_the_checkpoint():
    """A run made by `airflow backfill create` (run_type backfill) ingests the files modified
    in its data interval and records no checkpoint; scheduled and manual runs follow the
    checkpoint; a window given by hand (the run's params) wins over the interval."""
    from types import SimpleNamespace

    from airflow.utils.types import DagRunType

    def context(run_type: DagRunType) -> dict:
        return {
            "dag_run": SimpleNamespace(run_type=run_type),
            "data_interval_start": datetime(2026, 11, 1, tzinfo=UTC),
            "data_interval_end": datetime(2026, 11, 2, tzinfo=UTC),
        }

    ingest = HudiIngestOperator(
        task_id="ingest", base_path="/lake/t", source_path="/landing/t", source_format="json"
    )
    backfill = ingest.job_arguments(context(DagRunType.BACKFILL_JOB))
    assert backfill[-5:] == [
        "--modified-since",
        "2026-11-01T00:00:00+00:00",
        "--modified-until",
        "2026-11-02T00:00:00+00:00",
        "--keep-checkpoint",
    ]
    for run_type in (DagRunType.SCHEDULED, DagRunType.MANUAL):
        arguments = ingest.job_arguments(context(run_type))
        assert "--modified-since" not in arguments and "--keep-checkpoint" not in arguments
    by_hand = HudiIngestOperator(
        task_id="ingest",
        base_path="/lake/t",
        source_path="/landing/t",
        source_format="json",
        modified_since="2026-10-01",
    )
    arguments = by_hand.job_arguments(context(DagRunType.BACKFILL_JOB))
    assert arguments[-2:] == ["--modified-since", "2026-10-01"]
    upstream = HudiIngestOperator(
        task_id="ingest", base_path="/lake/t", source_path="/lake/up", source_format="hudi"
    )
    assert "--keep-checkpoint" not in upstream.job_arguments(context(DagRunType.BACKFILL_JOB))


def test_the_ingest_job_refuses_to_keep_the_checkpoint_without_a_window(tmp_path):
    from spark_jobs import ingest

    with pytest.raises(InvalidOptionError, match="--keep-checkpoint is for backfills"):
        ingest.main(
            ["--base-path", str(tmp_path / "t"), "--table-name", "t", "--source-path",
             str(tmp_path), "--source-format", "json", "--record-key-field", "uuid",
             "--keep-checkpoint"]
        )  # fmt: skip


def test_hive_sync_skips_until_the_table_exists(tmp_path):
    """A scheduled sync before the first ingest: skipped, without starting Spark."""
    sync = HudiHiveSyncOperator(task_id="hive_sync", base_path=str(tmp_path / "none-yet"))
    with pytest.raises(AirflowSkipException, match="no table"):
        sync.execute({"ti": FakeTaskInstance()})


def test_a_backfill_window_takes_only_its_files_and_keeps_the_checkpoint_honest(tmp_path):
    folder = tmp_path / "landing"
    folder.mkdir()
    times = {"a": 1_000_000, "b": 2_000_000, "c": 3_000_000}
    for name, modified_ms in times.items():
        path = folder / f"{name}.json"
        path.write_text("{}\n")
        os.utime(path, ns=(modified_ms * 1_000_000, modified_ms * 1_000_000))
    names = lambda drop: [f.path.rsplit("/", 1)[-1] for f in drop.files]  # noqa: E731
    # A window before the checkpoint: old files again, the checkpoint stays.
    old = new_files(str(folder), "json", "2500000", window=Window(0, 2_500_000))
    assert names(old) == ["a.json", "b.json"] and old.checkpoint == "2500000"
    # A window from before the checkpoint to past it covers everything after: it moves.
    covering = new_files(str(folder), "json", "1500000", window=Window(1_000_000, 10**13))
    assert names(covering) == ["a.json", "b.json", "c.json"] and covering.checkpoint == "3000000"
    # A window leaving a gap after the checkpoint must not move it past the gap.
    gap = new_files(str(folder), "json", "1000000", window=Window(2_500_000, 10**13))
    assert names(gap) == ["c.json"] and gap.checkpoint == "1000000"


def test_a_landing_folder_not_made_yet_holds_no_files(tmp_path):
    """A scheduled ingest before the first drop (the folder does not exist yet) finds
    nothing to ingest instead of failing."""
    drop = new_files(str(tmp_path / "not-yet"), "parquet", None)
    assert drop.files == [] and drop.checkpoint is None


def test_writers_take_turns_beside_the_table_lock(tmp_path, monkeypatch):
    """The writer turn is a second lock in the table lock's medium: held by one writer, another
    owner cannot take it, while the table lock (which services take) stays free."""
    from datetime import timedelta

    from hudi_core.lock import table_lock
    from hudi_core.lock.provider import now_ms

    monkeypatch.delenv("HUDI_LOCK_DB_URL", raising=False)
    base = tmp_path / "t"
    hook = HudiTableHook(base_path=str(base))
    turn = hook.writer_turn(timedelta(seconds=2))
    with turn:
        assert (base / ".hoodie" / "writer_turn.lock").exists()
        assert not turn.provider.try_acquire("another-worker", now_ms() + 10_000)
        with table_lock(Storage(str(base)), Options(hook.options)):
            assert (base / ".hoodie" / "lock").exists()
    assert not (base / ".hoodie" / "writer_turn.lock").exists()  # released
    assert turn.provider.try_acquire("another-worker", now_ms() + 10_000)

    url = f"sqlite:///{tmp_path / 'locks.db'}"
    on_db = HudiTableHook(base_path=str(base), options={"hoodie.write.lock.database.url": url})
    storage = Storage(str(base))
    table_key = lock_provider(storage, Options(on_db.options)).key
    assert on_db.writer_turn().provider.key == f"{table_key}#writer_turn"


def test_only_writing_jobs_wait_for_the_writer_turn():
    assert HudiIngestOperator.takes_writer_turn and HudiBootstrapOperator.takes_writer_turn
    for service in (HudiCompactionOperator, HudiCleanOperator, HudiHiveSyncOperator):
        assert not service.takes_writer_turn
