"""Compaction of merge-on-read tables: when it is due, what a plan holds and picks, what running
it writes, and how it behaves next to writers, crashes and a second runner."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from hudi_core import HudiTable
from hudi_core.config.compaction_options import STRATEGY_PACKAGE
from hudi_core.config.index_options import (
    BLOOM_DYNAMIC_MAX_ENTRIES,
    BLOOM_FPP,
    BLOOM_NUM_ENTRIES,
)
from hudi_core.errors import ConcurrentServiceError, InvalidOptionError, ServiceError
from hudi_core.io.base_file import read_base_file, read_footer
from hudi_core.io.bloom_filter import (
    bloom_filter_footer,
    bloom_filter_from_footer,
    new_bloom_filter,
)
from hudi_core.model.file_group import FileSlice
from hudi_core.model.file_names import BaseFileName, LogFileName, new_file_id
from hudi_core.schema.meta_fields import RECORD_KEY_FIELD
from hudi_core.services import compaction as compaction_service
from hudi_core.storage import Storage
from hudi_core.timeline import ActiveTimeline, avro_metadata
from hudi_core.write import bucket_assigner, client
from hudi_core.write.append_task import AppendTask
from tests import datagen, oracle
from tests.killed_writer import ROOT, beating_elsewhere, kill_during_write
from tests.tables import create_trips_table, data_files, request_clustering

MB = 1024 * 1024
KEYS = list(range(40))  # ten keys per city: key k lives in datagen.CITIES[k % 4]
SF, NY, SP, CH = datagen.CITIES  # san_francisco, new york, sao_paulo, chennai
TRIGGER = "hoodie.compact.inline.trigger.strategy"
MAX_COMMITS = "hoodie.compact.inline.max.delta.commits"
MAX_SECONDS = "hoodie.compact.inline.max.delta.seconds"
STRATEGY = "hoodie.compaction.strategy"
REGEX = "hoodie.compaction.partition.path.regex"
TARGET_IO = "hoodie.compaction.target.io"
# Dead heartbeats are recognised after 200 ms, so crash tests wait a little, not minutes.
HEARTBEAT = {
    "hoodie.client.heartbeat.interval_in_ms": 100,
    "hoodie.client.heartbeat.tolerable.misses": 2,
}
PLAN_FIELDS = ["operations", "extraMetadata", "version", "strategy", "preserveHoodieMetadata"]
OPERATION_FIELDS = [
    "baseInstantTime",
    "deltaFilePaths",
    "dataFilePath",
    "fileId",
    "partitionPath",
    "metrics",
    "bootstrapFilePath",
]


# ---- helpers


def _create(
    tmp_path: Path, table_type: str = "MERGE_ON_READ", options: dict | None = None
) -> tuple[str, HudiTable]:
    return create_trips_table(tmp_path, table_type, options)


def _deltas(table: HudiTable, count: int, start: int = 1) -> None:
    """Writes number `start` .. `start + count - 1`: the first inserts KEYS, later ones update
    a third of them (every city each time), so every file group gets a log file per write."""
    for n in range(start, start + count):
        if n == 1:
            table.write(datagen.trips(KEYS, seed=1, ts=1), operation="insert")
        else:
            table.write(datagen.trips(KEYS[n % 3 :: 3], seed=n, ts=n), operation="upsert")


def _plan(path: str, instant: str) -> dict:
    data = (Path(path) / ".hoodie" / f"{instant}.compaction.requested").read_bytes()
    return avro_metadata.deserialize(data)


def _planned_partitions(path: str, instant: str) -> list[str]:
    return [op["partitionPath"] for op in _plan(path, instant)["operations"]]


def _commit(path: str, instant: str, action: str = "commit") -> dict:
    return json.loads((Path(path) / ".hoodie" / f"{instant}.{action}").read_text())


def _all_files(path: str) -> dict[str, int | None]:
    """Every file (with its size) and folder under the table, metadata folder included."""
    root = Path(path)
    return {
        str(p.relative_to(root)): p.stat().st_size if p.is_file() else None for p in root.rglob("*")
    }


def _states(table: HudiTable) -> list[tuple[str, str]]:
    return [(i.action, i.state.value) for i in table.timeline()]


def _without_file_name(rows: pa.Table) -> pa.Table:
    return rows.drop_columns(["_hoodie_file_name"])


def _data_columns(rows: pa.Table) -> pa.Table:
    return rows.select(datagen.SCHEMA.names)


def _assert_compacted_like_before(path: str, table: HudiTable, before: pa.Table, context: str):
    """Compaction changes where rows live, not which rows there are: the snapshot is the same
    but for `_hoodie_file_name`, and Apache Hudi's reader (hudi-rs) reads the same table."""
    after = table.read()
    oracle.assert_same_table(_without_file_name(after), _without_file_name(before), context)
    oracle.assert_same_table(after, oracle.snapshot(path), f"{context}: hudi-rs")


def _timeline(path: str) -> ActiveTimeline:
    return ActiveTimeline.load(Storage(path))


# ---- triggers


def test_num_commits_is_due_at_the_fifth_delta_commit_and_restarts_after_a_compaction(tmp_path):
    path, table = _create(tmp_path)
    _deltas(table, 4)
    assert table.compaction.schedule() is None
    assert table.compaction.pending() == []

    _deltas(table, 1, start=5)
    first = table.compaction.schedule()
    assert first is not None and table.compaction.pending() == [first]
    assert table.compaction.run() == first

    _deltas(table, 4, start=6)
    assert table.compaction.schedule() is None, "four delta commits since the compaction"
    _deltas(table, 1, start=10)
    second = table.compaction.schedule()
    assert second is not None and second > first


def test_num_commits_after_last_request_counts_from_the_pending_plan(tmp_path):
    path, table = _create(tmp_path)
    _deltas(table, 5)
    chennai = table.compaction.schedule({REGEX: CH})
    assert _planned_partitions(path, chennai) == [CH]
    after_request = {TRIGGER: "NUM_COMMITS_AFTER_LAST_REQUEST"}

    _deltas(table, 4, start=6)
    assert table.compaction.schedule(after_request) is None, "four since the plan"
    copy = str(tmp_path / "copy")
    shutil.copytree(path, copy)
    # NUM_COMMITS counts from the last *completed* compaction (none): nine, so it is due.
    assert HudiTable.open(copy).compaction.schedule() is not None

    _deltas(table, 1, start=10)
    second = table.compaction.schedule(after_request)
    assert second is not None
    assert sorted(_planned_partitions(path, second)) == sorted([SF, NY, SP])


@pytest.mark.parametrize(
    ("strategy", "commits", "seconds", "due"),
    [
        ("TIME_ELAPSED", 100, 0, True),
        ("TIME_ELAPSED", 1, 10**6, False),
        ("NUM_AND_TIME", 2, 0, True),
        ("NUM_AND_TIME", 2, 10**6, False),
        ("NUM_AND_TIME", 3, 0, False),
        ("NUM_OR_TIME", 3, 0, True),
        ("NUM_OR_TIME", 2, 10**6, True),
        ("NUM_OR_TIME", 3, 10**6, False),
        ("NUM_COMMITS", 2, 10**6, True),
        ("NUM_COMMITS", 3, 0, False),
    ],
)
def test_time_and_count_triggers_combine_as_named(tmp_path, strategy, commits, seconds, due):
    """Two delta commits, just written: `commits` 2 is enough and 3 is not; 0 seconds have
    always elapsed and a million never have."""
    path, table = _create(tmp_path)
    _deltas(table, 2)
    planned = table.compaction.schedule(
        {TRIGGER: strategy, MAX_COMMITS: commits, MAX_SECONDS: seconds}
    )
    assert (planned is not None) is due
    assert table.compaction.pending() == ([planned] if due else [])


def test_copy_on_write_tables_refuse_compaction(tmp_path):
    path, table = _create(tmp_path, table_type="COPY_ON_WRITE")
    table.write(datagen.trips(KEYS, seed=1, ts=1), operation="insert")
    table.write(datagen.trips(KEYS[:5], seed=2, ts=2), operation="upsert")
    with pytest.raises(ServiceError, match="COPY_ON_WRITE"):
        table.compaction.schedule({MAX_COMMITS: 1})
    with pytest.raises(ServiceError):
        table.compaction.run()
    assert [a for a, _ in _states(table)] == ["commit", "commit"]


# ---- the plan


def test_plan_is_an_avro_hoodie_compaction_plan_of_file_names_in_log_order(tmp_path):
    path, table = _create(tmp_path, options={"hoodie.index.bloom.num_entries": 180000})
    table.write(datagen.trips(KEYS, seed=1, ts=1), operation="insert")
    sf_keys, ny_keys = KEYS[0::4], KEYS[1::4]
    for n in range(2, 12):  # ten log files in san_francisco: versions 1..10
        table.write(datagen.trips(sf_keys[n % 3 :: 2], seed=n, ts=n), operation="upsert")
    table.write(datagen.trips(ny_keys[:3], seed=20, ts=20), operation="upsert")
    planned = table.compaction.schedule()

    with open(Path(path) / ".hoodie" / f"{planned}.compaction.requested", "rb") as f:
        reader = fastavro.reader(f)
        schema = reader.writer_schema
        (record,) = list(reader)
    assert schema["name"] == "org.apache.hudi.avro.model.HoodieCompactionPlan"
    assert [field["name"] for field in schema["fields"]] == PLAN_FIELDS
    operation_schema = schema["fields"][0]["type"][1]["items"]
    assert [field["name"] for field in operation_schema["fields"]] == OPERATION_FIELDS
    assert record["version"] == 2
    # Only slices with log files: sao_paulo and chennai were never updated.
    operations = {op["partitionPath"]: op for op in record["operations"]}
    assert set(operations) == {SF, NY}
    for partition, op in operations.items():
        _assert_operation_names_the_latest_slice(path, partition, op)
    sf_logs = operations[SF]["deltaFilePaths"]
    assert len(sf_logs) == 10 and sf_logs != sorted(sf_logs), "version 10 sorts after 9"


def _assert_operation_names_the_latest_slice(path: str, partition: str, op: dict) -> None:
    folder = Path(path) / partition
    assert "/" not in op["dataFilePath"] and (folder / op["dataFilePath"]).is_file()
    base = BaseFileName.parse(op["dataFilePath"])
    assert (base.file_id, base.instant_time) == (op["fileId"], op["baseInstantTime"])
    logs = [p.name for p in folder.glob(f".{op['fileId']}_*.log.*")]
    assert op["deltaFilePaths"] == sorted(logs, key=lambda n: LogFileName.parse(n).version)
    versions = [LogFileName.parse(n).version for n in op["deltaFilePaths"]]
    assert versions == list(range(1, len(logs) + 1))
    log_bytes = sum((folder / n).stat().st_size for n in op["deltaFilePaths"])
    base_bytes = (folder / op["dataFilePath"]).stat().st_size
    assert base_bytes > MB, "the bloom filter makes base files above a megabyte"
    read_mb, write_mb = (base_bytes + log_bytes) // MB, base_bytes // MB
    assert op["metrics"] == {
        "TOTAL_LOG_FILES": float(len(logs)),
        "TOTAL_LOG_FILES_SIZE": float(log_bytes),
        "TOTAL_IO_READ_MB": float(read_mb),
        "TOTAL_IO_WRITE_MB": float(write_mb),
        "TOTAL_IO_MB": float(read_mb + write_mb),
    }


def test_file_groups_of_pending_compactions_and_clusterings_are_not_planned(tmp_path):
    path, table = _create(tmp_path)
    _deltas(table, 5)
    chennai = table.compaction.schedule({REGEX: CH})
    assert _planned_partitions(path, chennai) == [CH]
    request_clustering(path, NY)

    rest = table.compaction.schedule()
    assert sorted(_planned_partitions(path, rest)) == sorted([SF, SP])
    assert table.compaction.pending() == [chennai, rest]
    # Still due, but every file group with log files is taken.
    assert table.compaction.schedule() is None


# ---- strategies


@pytest.fixture(scope="module")
def strategy_table(tmp_path_factory) -> str:
    """Four file groups, one per city, whose logs differ in size and number (checked here, so
    the expected orders below follow from the layout): sao_paulo one big log, san_francisco
    three small ones, new york two, chennai one; base files between one and two megabytes
    (a large bloom filter)."""
    path, table = _create(
        tmp_path_factory.mktemp("strategies"), options={"hoodie.index.bloom.num_entries": 180000}
    )
    keys = list(range(200))
    table.write(datagen.trips(keys, seed=1, ts=1), operation="insert")
    table.write(datagen.trips(keys[2::4], seed=2, ts=2), operation="upsert")
    for n, batch in enumerate(([0, 1], [4, 5], [8, 3]), start=3):
        table.write(datagen.trips(batch, seed=n, ts=n), operation="upsert")
    sizes = {city: _log_sizes(path, city) for city in datagen.CITIES}
    assert [len(sizes[c]) for c in (SF, NY, SP, CH)] == [3, 2, 1, 1]
    totals = [sum(sizes[c]) for c in (SP, SF, NY, CH)]
    assert totals == sorted(totals, reverse=True) and len(set(totals)) == 4
    for city in datagen.CITIES:  # so each slice costs 1 MB read and 1 MB written
        base = next((Path(path) / city).glob("*.parquet")).stat().st_size
        assert MB < base < 2 * MB - sum(sizes[city])
    return path


def _log_sizes(path: str, partition: str) -> list[int]:
    return [p.stat().st_size for p in (Path(path) / partition).glob(".*.log.*")]


def _schedule_on_copy(source: str, tmp_path: Path, options: dict) -> list[str]:
    """The partitions a plan scheduled with `options` compacts, in plan order (on a copy of
    the table, so every strategy sees the same layout)."""
    copy = str(tmp_path / "copy")
    shutil.copytree(source, copy)
    planned = HudiTable.open(copy).compaction.schedule(options)
    assert planned is not None
    return _planned_partitions(copy, planned)


def _strategy(name: str) -> dict:
    return {STRATEGY: STRATEGY_PACKAGE + name}


def test_log_file_size_strategy_orders_by_log_bytes_and_drops_small_ones(strategy_table, tmp_path):
    assert _schedule_on_copy(strategy_table, tmp_path / "a", {}) == [SP, SF, NY, CH]
    threshold = sum(_log_sizes(strategy_table, NY))
    options = {
        **_strategy("LogFileSizeBasedCompactionStrategy"),
        "hoodie.compaction.logfile.size.threshold": threshold,
    }
    assert _schedule_on_copy(strategy_table, tmp_path / "b", options) == [SP, SF, NY]


def test_log_file_num_strategy_keeps_slices_with_enough_log_files(strategy_table, tmp_path):
    options = {
        **_strategy("LogFileNumBasedCompactionStrategy"),
        "hoodie.compaction.logfile.num.threshold": 2,
    }
    assert _schedule_on_copy(strategy_table, tmp_path, options) == [SF, NY]


@pytest.mark.parametrize(("target_io", "taken"), [(1, 1), (3, 2), (4, 2), (5, 3)])
def test_bounded_io_takes_slices_until_the_budget_is_spent(
    strategy_table, tmp_path, target_io, taken
):
    """Each slice costs 2 MB (1 read, 1 written); the slice that exhausts the budget is in."""
    everything = _schedule_on_copy(
        strategy_table, tmp_path / "all", _strategy("UnBoundedCompactionStrategy")
    )
    assert sorted(everything) == sorted(datagen.CITIES)
    bounded = {**_strategy("BoundedIOCompactionStrategy"), TARGET_IO: target_io}
    assert _schedule_on_copy(strategy_table, tmp_path / "bounded", bounded) == everything[:taken]
    by_size = {TARGET_IO: target_io}  # the default strategy bounds too, after ordering
    assert _schedule_on_copy(strategy_table, tmp_path / "size", by_size) == [SP, SF, NY, CH][:taken]


def test_partition_regex_limits_any_strategy_to_matching_partitions(strategy_table, tmp_path):
    assert _schedule_on_copy(strategy_table, tmp_path / "a", {REGEX: "^sa"}) == [SP, SF]
    options = {**_strategy("PartitionRegexBasedCompactionStrategy"), REGEX: "york"}
    assert _schedule_on_copy(strategy_table, tmp_path / "b", options) == [NY]


def test_unknown_strategy_is_an_invalid_option(strategy_table, tmp_path):
    copy = str(tmp_path / "copy")
    shutil.copytree(strategy_table, copy)
    table = HudiTable.open(copy)
    with pytest.raises(InvalidOptionError, match="NoSuchStrategy"):
        table.compaction.schedule({STRATEGY: "org.example.NoSuchStrategy"})
    assert table.compaction.pending() == []


def test_day_based_strategy_compacts_the_latest_date_partitions_newest_first(tmp_path):
    path = str(tmp_path / "days")
    table = HudiTable.create(
        path,
        name="days",
        table_type="MERGE_ON_READ",
        record_key_fields=["id"],
        partition_fields=["dt"],
        precombine_field="ts",
    )

    def batch(ts: int) -> pa.Table:
        ids = range(20)
        return pa.table(
            {
                "id": [f"k{i}" for i in ids],
                "dt": [f"2024/01/{i % 5 + 1:02d}" for i in ids],  # Hudi's yyyy/MM/dd layout
                "ts": [ts] * 20,
                "v": [i * ts for i in ids],
            }
        )

    table.write(batch(1), operation="insert")
    table.write(batch(2), operation="upsert")
    options = {
        **_strategy("DayBasedCompactionStrategy"),
        "hoodie.compaction.daybased.target.partitions": 2,
        MAX_COMMITS: 1,
    }
    planned = table.compaction.schedule(options)
    assert _planned_partitions(path, planned) == ["2024/01/05", "2024/01/04"]


# ---- execution

DELETED = [1, 6, 11, 16]  # one key in each city


def _history() -> list[tuple[str, list[int], int]]:
    """The writes after the insert: (operation, keys, seed); each touches every city once."""
    kept = [k for k in KEYS if k not in DELETED]
    return [
        ("upsert", KEYS[0::3], 2),
        ("delete", DELETED, 3),
        ("upsert", kept[1::3], 4),
        ("upsert", kept[2::3], 5),
    ]


def _city_index(city: str) -> int:
    return datagen.CITIES.index(city)


def test_run_merges_logs_into_new_base_files_and_keeps_the_snapshot(tmp_path):
    path, table = _create(tmp_path)
    table.write(datagen.trips(KEYS, seed=1, ts=1), operation="insert")
    for operation, keys, seed in _history():
        table.write(datagen.trips(keys, seed=seed, ts=seed), operation=operation)
    planned = table.compaction.schedule()
    before, files_before = table.read(), data_files(path)
    read_optimized_before = table.read(query_type="read_optimized")
    assert read_optimized_before.num_rows == len(KEYS), "base files still hold deleted keys"

    assert table.compaction.run() == planned

    _assert_compacted_like_before(path, table, before, "after compaction")
    read_optimized = table.read(query_type="read_optimized")
    oracle.assert_same_table(read_optimized, table.read(), "read-optimized sees merged rows")
    deleted = {f"key-{k:06d}" for k in DELETED}
    assert deleted.isdisjoint(read_optimized["uuid"].to_pylist())
    commit = _commit(path, planned)
    stats = [s for group in commit["partitionToWriteStats"].values() for s in group]
    assert {s["path"] for s in stats} == data_files(path) - files_before
    _assert_compaction_commit(path, planned, commit, read_optimized)
    _assert_log_stats(_plan(path, planned), stats)
    hoodie = Path(path) / ".hoodie"
    assert (hoodie / f"{planned}.compaction.requested").is_file()
    assert (hoodie / f"{planned}.compaction.inflight").stat().st_size == 0
    assert not (hoodie / ".temp" / planned).exists(), "markers go once the commit is in"
    assert not (hoodie / ".aux" / ".attempts" / planned).exists()


def _assert_compaction_commit(path: str, planned: str, commit: dict, rows: pa.Table) -> None:
    assert commit["compacted"] is True and commit["operationType"] == "COMPACT"
    schema = json.loads(commit["extraMetadata"]["schema"])
    assert [f["name"] for f in schema["fields"]] == datagen.SCHEMA.names
    file_names = rows["_hoodie_file_name"].to_pylist()
    for partition, partition_stats in commit["partitionToWriteStats"].items():
        (stat,) = partition_stats
        partition_folder, name = stat["path"].rsplit("/", 1)
        assert partition_folder == partition == stat["partitionPath"]
        assert re.fullmatch(rf"{re.escape(stat['fileId'])}_\d+-\d+-\d+_{planned}\.parquet", name)
        assert stat["numWrites"] == file_names.count(name) == 9
        assert (stat["numDeletes"], stat["numInserts"]) == (1, 0)
        assert stat["fileSizeInBytes"] == (Path(path) / stat["path"]).stat().st_size


def _assert_log_stats(plan: dict, stats: list[dict]) -> None:
    """The per-file counters Apache Hudi adds to a compaction's write stats, from the history
    of writes: one block per write, one record per written key."""
    operations = {op["fileId"]: op for op in plan["operations"]}
    for stat in stats:
        op = operations[stat["fileId"]]
        city = _city_index(op["partitionPath"])
        written = [[k for k in keys if k % 4 == city] for _, keys, _ in _history()]
        assert stat["prevCommit"] == op["baseInstantTime"]
        assert stat["totalLogFilesCompacted"] == len(op["deltaFilePaths"]) == len(written)
        assert stat["totalLogSizeCompacted"] == op["metrics"]["TOTAL_LOG_FILES_SIZE"]
        assert stat["totalLogRecords"] == sum(len(keys) for keys in written)
        assert stat["totalUpdatedRecordsCompacted"] == len({k for keys in written for k in keys})
        assert stat["totalLogBlocks"] == len(written)
        assert stat["numUpdateWrites"] == len({k for keys in written for k in keys} - set(DELETED))


class _NewLogOnlyGroup(AppendTask):
    """A new file group started with a log file, as Apache Hudi writers whose index can find
    keys in log files do: its slice's base instant is the write's own instant."""

    def run(self, settings):
        partition, file_id = self.file_slice.partition_path, self.file_slice.file_id
        self.file_slice = FileSlice(partition, file_id, settings.instant_time, None)
        return super().run(settings)


@pytest.fixture
def log_indexing_writer(monkeypatch):
    """Makes writes put inserts into new log-only file groups, and tag the keys given in the
    returned dict (record key -> file id) to those groups: our indexes read base files only."""
    tagged: dict[str, str] = {}
    original_tasks, original_tag = bucket_assigner.TaskPlan.tasks, client.WriteJob._tag

    def tasks(plan, match_keys=True):
        creates, plan._creates = plan._creates, []
        planned = original_tasks(plan, match_keys)
        for partition, rows, _, _ in creates:
            new_slice = FileSlice(partition, new_file_id(0), "", None)
            planned.append(_NewLogOnlyGroup(len(planned), new_slice, rows))
        return planned

    def tag(job, rows, slices):
        rows, found = original_tag(job, rows, slices)
        keys = rows[RECORD_KEY_FIELD].to_pylist()
        file_ids = [tagged.get(k, f) for k, f in zip(keys, found.to_pylist(), strict=True)]
        return rows, pa.array(file_ids, pa.string())

    monkeypatch.setattr(bucket_assigner.TaskPlan, "tasks", tasks)
    monkeypatch.setattr(client.WriteJob, "_tag", tag)
    return tagged


def test_log_only_file_groups_compact_into_base_files_or_vanish_when_all_deleted(
    tmp_path, log_indexing_writer
):
    path, table = _create(tmp_path, options={"hoodie.parquet.small.file.limit": 0})
    new_keys = list(range(100, 108))  # two per city, in new file groups
    first = table.write(datagen.trips(new_keys, seed=1, ts=1), operation="insert")
    groups = _log_only_groups(path)
    assert len(groups) == 4 and all(base == first for _, base in groups.values())
    for key in new_keys:
        log_indexing_writer[f"key-{key:06d}"] = groups[datagen.CITIES[key % 4]][0]
    table.write(datagen.trips([100], seed=2, ts=2), operation="upsert")
    table.write(datagen.trips([103, 107], seed=3, ts=3), operation="delete")  # all of chennai
    before = table.read()
    oracle.assert_same_table(before, oracle.snapshot(path), "log-only groups, hudi-rs")
    assert before.num_rows == len(new_keys) - 2

    planned = table.compaction.schedule({MAX_COMMITS: 1})
    operations = _plan(path, planned)["operations"]
    assert {op["dataFilePath"] for op in operations} == {None}
    log_counts = {op["partitionPath"]: len(op["deltaFilePaths"]) for op in operations}
    assert log_counts == {SF: 2, NY: 1, SP: 1, CH: 2}, "the update and the deletes were appended"
    assert {op["metrics"]["TOTAL_IO_WRITE_MB"] for op in operations} == {120.0}, (
        "without a base file, a compaction is expected to write hoodie.parquet.max.file.size"
    )
    table.compaction.run()

    _assert_compacted_like_before(path, table, before, "log-only groups compacted")
    stats = _commit(path, planned)["partitionToWriteStats"]
    assert sorted(stats) == sorted([SF, NY, SP]), "chennai merged to no rows: no file"
    assert not list((Path(path) / CH).glob("*.parquet"))
    for partition, (stat,) in stats.items():
        assert stat["fileId"] == groups[partition][0]
        assert stat["prevCommit"] == "null", "a new base file, as a create handle writes"
        assert stat["numInserts"] == stat["numWrites"] == 2


def _log_only_groups(path: str) -> dict[str, tuple[str, str]]:
    """partition -> (file id, base instant) of the file groups holding only log files."""
    groups = {}
    for log in Path(path).rglob(".*.log.*"):
        parsed = LogFileName.parse(log.name)
        if not list(log.parent.glob(f"{parsed.file_id}_*.parquet")):
            groups[log.parent.name] = (parsed.file_id, parsed.base_instant_time)
    return groups


def test_table_without_meta_fields_compacts_as_hudi_rs_reads_it(tmp_path):
    path, table = _create(tmp_path, options={"hoodie.populate.meta.fields": "false"})
    table.write(datagen.trips(KEYS, seed=1, ts=1), operation="insert")
    for operation, keys, seed in _history():
        table.write(datagen.trips(keys, seed=seed, ts=seed), operation=operation)
    before = table.read()
    assert "_hoodie_record_key" not in before.column_names
    oracle.assert_same_table(before, oracle.snapshot(path), "before, hudi-rs")

    planned = table.compaction.schedule()
    assert len(_plan(path, planned)["operations"]) == 4
    assert table.compaction.run() == planned

    after = table.read()
    oracle.assert_same_table(after, before, "no meta fields: rows kept")
    oracle.assert_same_table(after, oracle.snapshot(path), "no meta fields: hudi-rs")
    read_optimized = table.read(query_type="read_optimized")
    oracle.assert_same_table(read_optimized, after, "no meta fields: merged base files")


# ---- choosing what to run


def _two_pending_plans(tmp_path: Path) -> tuple[str, HudiTable, list[str]]:
    """chennai planned first, the three other cities second."""
    path, table = _create(tmp_path)
    _deltas(table, 5)
    plans = [table.compaction.schedule({REGEX: CH}), table.compaction.schedule()]
    assert [sorted(_planned_partitions(path, p)) for p in plans] == [[CH], sorted([SF, NY, SP])]
    return path, table, plans


@pytest.mark.parametrize(("order", "first"), [("FIFO", 0), ("LIFO", 1)])
def test_run_takes_the_oldest_or_newest_pending_plan(tmp_path, order, first):
    path, table, plans = _two_pending_plans(tmp_path)
    before = table.read()

    assert table.compaction.run(order=order) == plans[first]

    assert table.compaction.pending() == [plans[1 - first]]
    compacted = {
        f.split("/")[0] for f in data_files(path) if f.endswith(f"_{plans[first]}.parquet")
    }
    assert sorted(compacted) == sorted(_planned_partitions(path, plans[first]))
    assert not [f for f in data_files(path) if f.endswith(f"_{plans[1 - first]}.parquet")]
    # hudi-rs is not compared here: a plan is still pending (no logs on its slices, though).
    oracle.assert_same_table(_without_file_name(table.read()), _without_file_name(before))


def test_run_of_a_completed_compaction_returns_it_and_changes_nothing(tmp_path):
    path, table, plans = _two_pending_plans(tmp_path)
    assert table.compaction.run(order="FIFO") == plans[0]
    files = _all_files(path)

    assert table.compaction.run(instant=plans[0]) == plans[0]

    assert _all_files(path) == files
    assert table.compaction.pending() == [plans[1]]
    assert table.compaction.run() == plans[1]
    assert table.compaction.run() is None, "nothing left to run"
    assert table.compaction.run(order="LIFO") is None


def test_run_refuses_instants_that_are_no_compaction_and_unknown_orders(tmp_path):
    path, table, plans = _two_pending_plans(tmp_path)
    files = _all_files(path)
    deltacommit = table.timeline()[0]
    assert deltacommit.action == "deltacommit"
    with pytest.raises(ServiceError, match="no compaction"):
        table.compaction.run(instant="unknown")
    with pytest.raises(ServiceError, match="no compaction"):
        table.compaction.run(instant=deltacommit.timestamp)
    with pytest.raises(
        InvalidOptionError, match="compaction order 'RANDOM' is not one of FIFO, LIFO"
    ):
        table.compaction.run(order="RANDOM")
    assert _all_files(path) == files
    assert table.compaction.pending() == plans


# ---- writers and compaction


def test_writes_while_a_compaction_is_pending_land_on_its_slice_and_stay_visible(tmp_path):
    path, table = _create(tmp_path)
    _deltas(table, 5)
    planned = table.compaction.schedule()
    before = _data_columns(table.read())
    updated = KEYS[::5]
    batch = datagen.trips(updated, seed=50, ts=50)

    instant = table.write(batch, operation="upsert")

    stats = [
        s
        for g in _commit(path, instant, "deltacommit")["partitionToWriteStats"].values()
        for s in g
    ]
    assert len(stats) == 4
    for stat in stats:
        log = LogFileName.parse(stat["path"].rsplit("/", 1)[-1])
        assert log is not None and log.base_instant_time == planned and log.version == 1
        assert stat["prevCommit"] == planned
    untouched = before.filter(pc.invert(pc.is_in(before["uuid"], batch["uuid"])))
    expected = pa.concat_tables([untouched, batch])
    oracle.assert_same_table(_data_columns(table.read()), expected, "pending: ours shows the write")

    assert table.compaction.run() == planned

    after = table.read()
    oracle.assert_same_table(_data_columns(after), expected, "after: ours")
    oracle.assert_same_table(after, oracle.snapshot(path), "after: hudi-rs")
    # The compacted base files stop at the compaction instant: the later write is in logs only.
    read_optimized = _data_columns(table.read(query_type="read_optimized"))
    oracle.assert_same_table(read_optimized, before, "read-optimized: as planned")


# ---- crashes and concurrent runners

_CHILD_PRELUDE = """
import os, signal, sys, time
sys.path.insert(0, {root!r})
from hudi_core import HudiTable
"""

_KILLED_COMPACTION = """
from hudi_core.timeline import ActiveTimeline

original = ActiveTimeline.transition

def transition(self, instant, state, content=b""):
    if instant.action == "compaction" and state.value == "COMPLETED":
        os.kill(os.getpid(), signal.SIGKILL)
    return original(self, instant, state, content)

ActiveTimeline.transition = transition
HudiTable.open({path!r}).compaction.run(options={options!r})
"""

_SLOW_COMPACTION = """
import hudi_core.services.compaction as compaction

original = compaction.run_compact_task

def held(task, settings):
    if not os.path.exists({ready!r}):  # hold the first task until the test lets it go
        open({ready!r}, "w").close()
        deadline = time.monotonic() + 60
        while not os.path.exists({release!r}) and time.monotonic() < deadline:
            time.sleep(0.01)
    return original(task, settings)

compaction.run_compact_task = held
HudiTable.open({path!r}).compaction.run(options={options!r})
"""


def _child(body: str, **values) -> list[str]:
    code = textwrap.dedent(_CHILD_PRELUDE + body).format(root=str(ROOT), **values)
    return [sys.executable, "-c", code]


def test_compaction_killed_before_its_commit_reads_unchanged_and_is_redone(tmp_path):
    path, table = _create(tmp_path)
    _deltas(table, 5)
    planned = table.compaction.schedule()
    before, files_before = table.read(), data_files(path)

    killed = subprocess.run(
        _child(_KILLED_COMPACTION, path=path, options=HEARTBEAT), capture_output=True, timeout=120
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr.decode()

    partial = data_files(path) - files_before
    assert len(partial) == 4 and all(f.endswith(f"_{planned}.parquet") for f in partial)
    assert _states(table)[-1] == ("compaction", "INFLIGHT")
    oracle.assert_same_table(table.read(), before, "ours ignores the partial base files")
    oracle.assert_same_table(oracle.snapshot(path), before, "hudi-rs ignores them too")
    attempt = next((Path(path) / ".hoodie" / ".aux" / ".attempts" / planned).iterdir())
    beating_elsewhere(attempt)  # by the default heartbeat, it may still run on another machine
    with pytest.raises(ConcurrentServiceError):
        table.compaction.run()

    time.sleep(0.3)  # the dead attempt's heartbeat (100 ms, 2 misses) has expired
    assert table.compaction.run(options=HEARTBEAT) == planned

    rollbacks = [i for i in table.timeline() if i.action == "rollback"]
    assert [i.state.value for i in rollbacks] == ["COMPLETED"]
    metadata = avro_metadata.deserialize(
        (Path(path) / ".hoodie" / rollbacks[0].file_name).read_bytes()
    )
    assert metadata["commitsRollback"] == [planned]
    deleted = {
        f"{partition}/{uri.rsplit('/', 1)[-1]}"
        for partition, entry in metadata["partitionMetadata"].items()
        for uri in entry["successDeleteFiles"]
    }
    assert deleted == partial
    assert table.compaction.pending() == []
    assert len(data_files(path) - files_before) == 4
    _assert_compacted_like_before(path, table, before, "after the retry")
    hoodie = Path(path) / ".hoodie"
    assert not (hoodie / ".temp" / planned).exists()
    assert not (hoodie / ".aux" / ".attempts" / planned).exists()


def test_failure_inside_a_run_rolls_its_files_back_and_keeps_the_plan(tmp_path, monkeypatch):
    path, table = _create(tmp_path)
    _deltas(table, 5)
    planned = table.compaction.schedule()
    before, files_before = table.read(), data_files(path)
    original = compaction_service.run_compact_task

    def fail_after_writing(task, settings):
        original(task, settings)
        raise OSError("disk gone")

    monkeypatch.setattr(compaction_service, "run_compact_task", fail_after_writing)
    with pytest.raises(OSError, match="disk gone"):
        table.compaction.run()

    assert data_files(path) == files_before
    assert table.compaction.pending() == [planned]
    assert [s for a, s in _states(table) if a == "rollback"] == ["COMPLETED"]
    assert not (Path(path) / ".hoodie" / f"{planned}.compaction.inflight").exists()
    oracle.assert_same_table(table.read(), before, "after the failed run")
    monkeypatch.undo()
    assert table.compaction.run() == planned
    _assert_compacted_like_before(path, table, before, "after the second run")


def test_second_runner_of_a_running_compaction_is_refused_and_changes_nothing(tmp_path):
    path, table = _create(tmp_path)
    _deltas(table, 5)
    planned = table.compaction.schedule()
    before = table.read()
    ready, release = tmp_path / "first-task-started", tmp_path / "let-it-finish"
    args = _child(
        _SLOW_COMPACTION, path=path, options=HEARTBEAT, ready=str(ready), release=str(release)
    )
    first = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _wait_for(ready, first)
        time.sleep(0.6)  # longer than the window below: only beats keep the attempt alive
        files = data_files(path)
        window = {**HEARTBEAT, "hoodie.client.heartbeat.tolerable.misses": 5}  # 500 ms
        with pytest.raises(ConcurrentServiceError, match="running in another process"):
            table.compaction.run(options=window)
        with pytest.raises(ConcurrentServiceError):
            table.compaction.run(instant=planned, options=window)
        assert data_files(path) == files
        assert list((Path(path) / ".hoodie" / ".aux" / ".attempts" / planned).iterdir()) == [
            Path(path) / ".hoodie" / ".aux" / ".attempts" / planned / "1"
        ]
        oracle.assert_same_table(table.read(), before, "while the first runner works")
    finally:
        release.touch()
        _, stderr = first.communicate(timeout=120)
    assert first.returncode == 0, stderr.decode()
    assert table.compaction.pending() == []
    assert _states(table)[-1] == ("commit", "COMPLETED")
    _assert_compacted_like_before(path, table, before, "after the first runner")


def _wait_for(ready: Path, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while not ready.exists():
        if process.poll() is not None:
            raise AssertionError(f"the child ended early: {process.stderr.read().decode()}")
        assert time.monotonic() < deadline, "the child never started its first task"
        time.sleep(0.02)


def test_scheduling_waits_for_a_live_write_and_rolls_back_a_dead_one(tmp_path):
    path, table = _create(tmp_path)
    _deltas(table, 5)
    before = table.read()
    kill_during_write(path, "deltacommit", "COMPLETED", KEYS[::2])
    (failed,) = [i for i in table.timeline() if not i.is_completed]
    heartbeat = Path(path) / ".hoodie" / ".heartbeat" / failed.timestamp
    beating_elsewhere(heartbeat)  # beating, as far as anyone can tell

    with pytest.raises(ConcurrentServiceError, match=failed.timestamp):
        table.compaction.schedule()  # alive for two minutes by the default heartbeat
    assert table.compaction.pending() == []
    assert [i for i in table.timeline() if not i.is_completed] == [failed]

    time.sleep(0.3)  # the writer's heartbeat stops counting
    planned = table.compaction.schedule(HEARTBEAT)

    assert planned is not None
    timeline = table.timeline()
    assert failed.timestamp not in {i.timestamp for i in timeline}
    rollback = next(i for i in timeline if i.action == "rollback")
    assert rollback.is_completed and rollback.timestamp < planned
    assert table.compaction.run() == planned
    _assert_compacted_like_before(path, table, before, "the dead write stays undone")


# ---- inline compaction


def test_inline_compaction_runs_after_the_write_that_makes_it_due(tmp_path):
    path, table = _create(tmp_path, options={"hoodie.compact.inline": "true", MAX_COMMITS: 2})
    first = table.write(datagen.trips(KEYS, seed=1, ts=1), operation="insert")
    assert _states(table) == [("deltacommit", "COMPLETED")]

    second = table.write(datagen.trips(KEYS[::3], seed=2, ts=2), operation="upsert")

    assert _states(table) == [("deltacommit", "COMPLETED")] * 2 + [("commit", "COMPLETED")]
    compaction = table.timeline()[-1].timestamp
    assert first < second < compaction
    assert _commit(path, compaction)["compacted"] is True
    after = table.read()
    oracle.assert_same_table(table.read(query_type="read_optimized"), after, "all compacted")
    oracle.assert_same_table(after, oracle.snapshot(path), "hudi-rs")


def test_inline_scheduling_only_plans(tmp_path):
    path, table = _create(
        tmp_path, options={"hoodie.compact.schedule.inline": "true", MAX_COMMITS: 2}
    )
    table.write(datagen.trips(KEYS, seed=1, ts=1), operation="insert")
    table.write(datagen.trips(KEYS[::3], seed=2, ts=2), operation="upsert")

    (planned,) = table.compaction.pending()
    assert _states(table)[-1] == ("compaction", "REQUESTED")
    assert len(_plan(path, planned)["operations"]) == 4
    assert table.compaction.run() == planned
    assert _states(table)[-1] == ("commit", "COMPLETED")


@pytest.mark.parametrize("with_deletes", [False, True])
def test_compacted_base_files_carry_the_bloom_filter_of_exactly_their_keys(
    tmp_path, monkeypatch, with_deletes
):
    """Without deletes the base file's filter is resumed and only new keys are added; the
    result must equal a filter built from scratch over the file's keys, as with deletes."""
    options = {"hoodie.index.type": "BLOOM", "hoodie.parquet.small.file.limit": 0}
    path, table = _create(tmp_path, options=options)
    table.write(datagen.trips(list(range(0, 60)), seed=1, ts=1), operation="insert")
    table.write(datagen.trips(list(range(0, 60, 2)), seed=2, ts=2))  # updates, into logs
    if with_deletes:
        table.write(datagen.trips(list(range(1, 60, 7)), 0, 0).select(["uuid", "city"]), "delete")
    planned = table.compaction.schedule({"hoodie.compact.inline.max.delta.commits": 1})
    resumed = []
    original = compaction_service.resume_bloom_filter
    monkeypatch.setattr(
        compaction_service,
        "resume_bloom_filter",
        lambda *args: resumed.append(original(*args)) or resumed[-1],
    )
    table.compaction.run(planned)
    assert bool(resumed) != with_deletes, "resumed exactly when nothing was deleted"
    assert all(r is not None for r in resumed)
    storage = Storage(path)
    compacted = [
        e.path
        for e in storage.list_files("", recursive=True)
        if e.name.endswith(f"{planned}.parquet")
    ]
    assert compacted
    for base in compacted:
        footer = read_footer(storage, base)
        stored = bloom_filter_from_footer(footer)
        fresh = new_bloom_filter(
            stored.type_code,
            BLOOM_NUM_ENTRIES.default,
            BLOOM_FPP.default,
            BLOOM_DYNAMIC_MAX_ENTRIES.default,
        )
        fresh.add_keys(read_base_file(storage, base, [RECORD_KEY_FIELD]).column(0))
        assert bloom_filter_footer(stored) == bloom_filter_footer(fresh), base
