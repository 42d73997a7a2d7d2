"""A multi-stream wide table through Airflow: two sources write their own groups of columns
of the same rows (source `profile_names`: uuid, name, _ts1; source `ages`: uuid, age, _ts2;
precombine field `_ts1:name;_ts2:age`, PartialUpdateAvroPayload, bucket index) through their
own `<table>_ingest_<source>` DAGs, run interleaved with dag.test(), then the table's one
compaction DAG. The rows read back (hudi_core's snapshot and read-optimized reads, and after
the compaction hudi-rs's read-optimized read) equal a model computed here: per key, per
group, the row with the largest ordering value wins that group's columns, a tie goes to the
later drop, and columns no source wrote stay null. Each source's checkpoint, kept in the
commits it writes, moves with its own runs only.

The quicker tests at the end check the checkpoint lookup on a table hudi_core writes (no
Spark) and the ingest job's source arguments."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from hudi_airflow import local_run
from hudi_core import HudiTable, InvalidOptionError
from spark_jobs import ingest
from tests import oracle

REPO = Path(__file__).resolve().parents[2]
T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z in epoch milliseconds: the ordering values
DROPPED_AT = 1_767_225_600  # drop files' modification times start here (epoch seconds)
PRECOMBINE = "_ts1:name;_ts2:age"
NAMES, AGES = "profile_names", "ages"  # the sources
GROUPS = {NAMES: ("_ts1", ("name",)), AGES: ("_ts2", ("age",))}  # ordering field, columns
COLUMNS = ["uuid", "name", "_ts1", "age", "_ts2"]
READ_OPTIMIZED = {"hoodie.read.use.read_optimized.mode": "true"}
LOG_SUFFIX = {NAMES: "profile-names", AGES: "ages"}

# The drops in landing order (ingest DAG runs alternate: names, ages, names, ages...). Names
# drops carry a `debug` column the source's `columns` leave out of the table.
DROPS: list[tuple[str, list[dict[str, Any]]]] = [
    (
        NAMES,
        [
            {"uuid": "k1", "name": "a1-k1-older", "_ts1": T0 + 10, "debug": "x"},
            {"uuid": "k1", "name": "a1-k1", "_ts1": T0 + 20, "debug": "x"},  # a dup: the newer
            {"uuid": "k2", "name": "a1-k2", "_ts1": T0 + 10, "debug": "x"},
            {"uuid": "k3", "name": "a1-k3", "_ts1": T0 + 10, "debug": "x"},
            {"uuid": "k4", "name": "a1-k4", "_ts1": T0 + 10, "debug": "x"},
            {"uuid": "k5", "name": "a1-k5", "_ts1": T0 + 10, "debug": "x"},
        ],
    ),
    (
        AGES,
        [
            {"uuid": "k3", "age": 30, "_ts2": T0 + 100},
            {"uuid": "k4", "age": 40, "_ts2": T0 + 100},
            {"uuid": "k6", "age": 60, "_ts2": T0 + 100},
            {"uuid": "k6", "age": 61, "_ts2": T0 + 50},  # a dup: older, loses
            {"uuid": "k7", "age": 70, "_ts2": T0 + 100},
        ],
    ),
    (
        NAMES,
        [
            {"uuid": "k1", "name": "a2-k1-stale", "_ts1": T0 + 15, "debug": "x"},  # out of order
            {"uuid": "k2", "name": "a2-k2", "_ts1": T0 + 30, "debug": "x"},
            {"uuid": "k3", "name": "a2-k3-tie", "_ts1": T0 + 10, "debug": "x"},  # tie: later
            {"uuid": "k6", "name": "a2-k6", "_ts1": T0 + 5, "debug": "x"},  # a key ages wrote
            {"uuid": "k8", "name": "a2-k8", "_ts1": T0 + 40, "debug": "x"},  # a new key
        ],
    ),
    (
        AGES,
        [
            {"uuid": "k1", "age": 11, "_ts2": T0 + 100},  # a key only names wrote
            {"uuid": "k4", "age": 44, "_ts2": T0 + 90},  # out of order: loses
            {"uuid": "k3", "age": 33, "_ts2": T0 + 100},  # tie: the later drop wins
            {"uuid": "k7", "age": 77, "_ts2": T0 + 200},
            {"uuid": "k9", "age": 90, "_ts2": T0 + 1},  # a new key
        ],
    ),
    (
        NAMES,
        [
            {"uuid": "k2", "name": "a3-k2-stale", "_ts1": T0 + 29, "debug": "x"},
            {"uuid": "k5", "name": "a3-k5", "_ts1": T0 + 11, "debug": "x"},
            {"uuid": "k9", "name": "a3-k9", "_ts1": T0 + 1, "debug": "x"},
        ],
    ),
]
# After the compaction: names for a key only ages wrote, and a stale one.
LATE_DROP = (
    NAMES,
    [
        {"uuid": "k7", "name": "a4-k7", "_ts1": T0 + 1, "debug": "x"},
        {"uuid": "k3", "name": "a4-k3-stale", "_ts1": T0 + 9, "debug": "x"},
    ],
)


def model(drops: list[tuple[str, list[dict[str, Any]]]]) -> dict[str, dict[str, Any]]:
    """The rows the table must hold after `drops`: per key and group, the row with the
    largest ordering value (a tie: the later drop) sets the group's columns."""
    rows: dict[str, dict[str, Any]] = {}
    for source, batch in drops:
        ordering, columns = GROUPS[source]
        for record in batch:  # within a drop no key repeats an ordering value
            row = rows.setdefault(record["uuid"], dict.fromkeys(COLUMNS) | {"uuid": record["uuid"]})
            if row[ordering] is None or record[ordering] >= row[ordering]:
                row.update({name: record[name] for name in (ordering, *columns)})
    return rows


def _entry(tmp_path: Path) -> dict[str, Any]:
    return {
        "name": "profiles",
        "base_path": str(tmp_path / "profiles"),
        "table_type": "MERGE_ON_READ",
        "record_key_field": "uuid",  # non-partitioned
        "precombine_field": PRECOMBINE,
        "retries": 0,  # a failure shows at once
        "options": {
            "hoodie.index.type": "BUCKET",
            "hoodie.bucket.index.num.buckets": "4",
            "hoodie.datasource.write.payload.class": (
                "org.apache.hudi.common.model.PartialUpdateAvroPayload"
            ),
            "hoodie.compact.inline.max.delta.commits": "1",
        },
        "sources": [
            {
                "name": NAMES,
                "source_path": str(tmp_path / "landing" / NAMES),
                "source_format": "json",
                "columns": ["name", "_ts1"],
            },
            {
                "name": AGES,
                "source_path": str(tmp_path / "landing" / AGES),
                "source_format": "json",
            },
        ],
    }


def _land(tmp_path: Path, number: int, source: str, records: list[dict[str, Any]]) -> int:
    """Drop `number` of `source` as JSON lines, modified `number` minutes after DROPPED_AT
    (each source's files newer than its last ones); its modification time in epoch ms."""
    folder = tmp_path / "landing" / source
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"drop-{number:02d}.json"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    moment = DROPPED_AT + 60 * number
    os.utime(path, (moment, moment))
    return moment * 1000


def _rows(table: pa.Table) -> dict[str, dict[str, Any]]:
    """The rows by key; a column no source has written yet (the table has none before a
    source's first write: its type is unknown until then) reads as null."""
    rows = [
        {name: row.get(name) for name in COLUMNS}
        for row in table.select([c for c in COLUMNS if c in table.schema.names]).to_pylist()
    ]
    by_key = {row["uuid"]: row for row in rows}
    assert len(by_key) == len(rows), "a key read twice"
    return by_key


def _run(dag_id: str):
    run = local_run.run_dag(dag_id)
    assert str(run.state) == "success", local_run.task_states(run)
    return run


def _checkpoints(base_path: str) -> dict[str | None, str | None]:
    table = HudiTable.open(base_path)
    return {source: ingest.last_checkpoint(table, source) for source in (NAMES, AGES, None)}


def _writes(base_path: str) -> list[str]:
    return [i.timestamp for i in HudiTable.open(base_path).inspect.timeline() if i.is_write]


@pytest.mark.spark
@pytest.mark.slow
def test_two_sources_ingest_interleaved_then_compact(airflow_db, tables_file, tmp_path):
    tables_file([_entry(tmp_path)])
    base_path = str(tmp_path / "profiles")
    landed: list[tuple[str, list[dict[str, Any]]]] = []
    moved = {NAMES: None, AGES: None}
    logged: set[str] = set()  # the sources whose writes appended to log files
    sequence: list[tuple[str, list[dict[str, Any]] | None]] = [
        DROPS[0],
        DROPS[1],
        DROPS[2],
        (AGES, None),  # a run of `ages` with no new file of its own
        DROPS[3],
        DROPS[4],
    ]
    for number, (source, records) in enumerate(sequence):
        before = _writes(base_path) if landed else []
        if records is not None:
            moved[source] = str(_land(tmp_path, number, source, records))
            landed.append((source, records))
        run = _run(f"profiles_ingest_{source}")
        instant_time = local_run.task_xcom(run, "ingest", "instant_time")
        table = HudiTable.open(base_path)

        # Each source's checkpoint is its own: only this run's moved, if it wrote.
        assert _checkpoints(base_path) == {**moved, None: None}, f"after run {number}"
        if records is None:
            assert instant_time is None and _writes(base_path) == before  # nothing written
            continue
        commit = table.inspect.commit(instant_time)
        assert commit.instant.action == "deltacommit"
        recorded = json.loads(commit.extra_metadata[ingest.CHECKPOINT_KEY])
        assert recorded == {source: moved[source]}
        assert commit.extra_metadata["_hoodie.airflow.dag_id"] == f"profiles_ingest_{source}"
        # Its log files carry its own suffix (hoodie.write.log.suffix).
        logs = [f.path for p in commit.partitions for f in p.files if ".log." in f.path]
        assert all(path.endswith(f"-{LOG_SUFFIX[source]}") for path in logs), logs
        logged |= {source} if logs else set()

        assert "debug" not in table.schema().names  # narrowed to the source's columns
        assert _rows(table.read()) == model(landed), f"after run {number}"

    assert logged == {NAMES, AGES}  # both sources' updates went to log files

    compaction = _run("profiles_compaction")
    assert local_run.task_states(compaction) == {
        "schedule_compaction": "success",
        "execute_compaction": "success",
    }
    compacted = local_run.task_xcom(compaction, "execute_compaction", "instant_time")
    table = HudiTable.open(base_path)
    assert table.inspect.instant(compacted).action == "commit"
    assert not table.inspect.pending_compactions()
    expected = model(landed)
    assert _rows(table.read()) == expected
    assert _rows(table.read(query_type="read_optimized")) == expected
    theirs = oracle.snapshot(base_path, hudi_options=READ_OPTIMIZED)
    assert _rows(theirs) == expected  # Apache Hudi's reader on the compacted base files
    assert _checkpoints(base_path) == {**moved, None: None}  # a compaction moves none

    # A names drop after the compaction merges onto the compacted rows, ages untouched.
    source, records = LATE_DROP
    moved[source] = str(_land(tmp_path, len(sequence), source, records))
    _run(f"profiles_ingest_{source}")
    landed.append(LATE_DROP)
    table = HudiTable.open(base_path)
    assert _rows(table.read()) == model(landed)
    assert _rows(table.read(query_type="read_optimized")) == expected
    assert _checkpoints(base_path) == {**moved, None: None}


@pytest.mark.spark
@pytest.mark.slow
def test_a_drop_without_a_column_of_the_source_fails_naming_it(tmp_path):
    """The ingest job as spark-submit runs it: a drop lacking a column of --source-columns
    fails before anything is written, naming the column."""
    landing = tmp_path / "landing"
    _land(tmp_path, 0, "names", [{"uuid": "k1", "name": "n", "_ts1": T0}])
    result_file = tmp_path / "result.json"
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "spark_jobs" / "ingest.py"),
            *("--base-path", str(tmp_path / "profiles"), "--table-name", "profiles"),
            *("--source-path", str(landing / "names"), "--source-format", "json"),
            *("--table-type", "MERGE_ON_READ", "--record-key-field", "uuid"),
            *("--precombine-field", PRECOMBINE, "--source-id", "names"),
            *("--source-columns", "name,nickname,_ts1", "--spark-master", "local[1]"),
            *("--result-file", str(result_file)),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable},
    )
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    result = json.loads(result_file.read_text())
    assert result["status"] == "FAILED"
    assert "has no column 'nickname'" in result["error"], result["error"]
    assert str(landing / "names") in result["error"]
    assert not HudiTable.open(str(tmp_path / "profiles")).inspect.timeline()  # nothing written


# ---- the checkpoints in the commits, and the job's source arguments (no Spark)


def _written(tmp_path: Path) -> HudiTable:
    """A table hudi_core writes: a plain checkpoint (a single-source ingest), then sources
    `rare` (once) and `busy` (six times), each commit recording its checkpoint."""
    table = HudiTable.create(
        str(tmp_path / "t"), "t", "COPY_ON_WRITE", ["uuid"], precombine_field="ts"
    )
    checkpoints = [(None, "100"), ("rare", "200")] + [("busy", str(300 + i)) for i in range(6)]
    for number, (source, checkpoint) in enumerate(checkpoints):
        extra = {ingest.CHECKPOINT_KEY: ingest.checkpoint_value(checkpoint, source)}
        table.write(pa.table({"uuid": [f"k{number}"], "ts": [number]}), extra_metadata=extra)
    return table


def test_a_source_resumes_from_its_own_newest_checkpoint_archived_or_not(tmp_path):
    table = _written(tmp_path)
    recorded = table.inspect.commit(table.inspect.timeline()[1].timestamp).extra_metadata
    assert recorded[ingest.CHECKPOINT_KEY] == '{"rare": "200"}'  # Apache Hudi's multi-writer form
    assert ingest.last_checkpoint(table) == "100"  # the plain one: sources' are not its
    assert ingest.last_checkpoint(table, "rare") == "200"
    assert ingest.last_checkpoint(table, "busy") == "305"
    assert ingest.last_checkpoint(table, "new") is None
    options = {
        "hoodie.keep.min.commits": "2",
        "hoodie.keep.max.commits": "3",
        "hoodie.cleaner.commits.retained": "1",
    }
    table.clean(options)
    table.archive(options)
    table = HudiTable.open(str(tmp_path / "t"))
    archived = {i.timestamp for i in table.inspect.archived_timeline() if i.is_write}
    assert len(archived) >= 2  # rare's only commit among them
    assert ingest.last_checkpoint(table, "rare") == "200"  # found in the archived timeline
    assert ingest.last_checkpoint(table, "busy") == "305"


def test_checkpoints_of_other_writers_forms_are_read_for_the_source_they_name():
    """A checkpoint object holding several sources (as a multi-writer streamer carrying the
    others' forward writes it) gives each its own; plain and unreadable values none."""
    both = json.dumps({"a": "10", "b": "20"})
    assert ingest._checkpoint_of(both, "a") == "10"
    assert ingest._checkpoint_of(both, "b") == "20"
    assert ingest._checkpoint_of(both, "c") is None
    assert ingest._checkpoint_of(both, None) is None
    assert ingest._checkpoint_of("123", "a") is None
    assert ingest._checkpoint_of("123", None) == "123"
    assert ingest._checkpoint_of('{"a": ', "a") is None
    assert ingest.checkpoint_value("123") == "123"
    assert ingest.checkpoint_value(None, "a") is None


def _arguments(tmp_path: Path, *extra: str) -> list[str]:
    return [
        *("--base-path", str(tmp_path / "t"), "--table-name", "t"),
        *("--source-path", str(tmp_path / "in"), "--source-format", "json"),
        *("--record-key-field", "uuid", "--precombine-field", "ts"),
        *extra,
    ]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ("--source-id", "a", "--hoodie-conf", f"{ingest.SOURCE_ID_OPTION}=b"),
            "name different sources",
        ),
        (("--source-id", " "), "must not be empty"),
        (("--checkpoint", '{"a": "1"}', "--source-id", "a"), "--checkpoint"),
    ],
)
def test_bad_source_arguments_fail_before_spark_starts(tmp_path, extra, message):
    with pytest.raises(InvalidOptionError, match=message):
        ingest.main(_arguments(tmp_path, *extra))


def test_the_source_id_may_come_as_apache_hudis_option(tmp_path):
    args = ingest._arguments(
        _arguments(tmp_path, "--hoodie-conf", f"{ingest.SOURCE_ID_OPTION}=orders")
    )
    assert ingest._source_id(args) == "orders"
    args = ingest._arguments(_arguments(tmp_path, "--source-id", "orders"))
    assert ingest._source_id(args) == "orders"
    assert ingest._source_id(ingest._arguments(_arguments(tmp_path))) is None
