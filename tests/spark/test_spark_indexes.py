"""The Spark writer honours hoodie.index.type: SIMPLE, BLOOM, BUCKET, GLOBAL_SIMPLE and
GLOBAL_BLOOM writes through spark_jobs.write give the tables hudi_core's local writes give
(read by us and by hudi-rs); BLOOM reads the keys of fewer base files than SIMPLE; BUCKET keeps
every key in its bucket's one file group and reads no stored key (no base file is even opened
but by the merges that rewrite it, as the kernel reports every open); under a global index a
key is one record of the table: keys move partition, or stay where they are stored (late
events, update.partition.path=false), and deletes find them whatever partition they name."""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import struct
from collections import defaultdict
from pathlib import Path

import pyarrow as pa
import pytest

import spark_jobs
from hudi_core import HudiTable
from hudi_core.index.bucket_id import bucket_ids
from hudi_core.merge.record_merger import DEFAULT_PAYLOAD
from hudi_core.model.file_names import BaseFileName, LogFileName
from hudi_core.schema.meta_fields import is_meta_field
from spark_jobs import save
from spark_jobs.writer import SparkWriter
from tests import oracle
from tests.datagen import CITIES, trips
from tests.tables import create_trips_table, data_files

BUCKETS = 4
TABLE_OPTIONS = {
    "hoodie.table.name": "trips",
    "hoodie.datasource.write.recordkey.field": "uuid",
    "hoodie.datasource.write.partitionpath.field": "city",
    "hoodie.datasource.write.precombine.field": "ts",
    "hoodie.datasource.write.payload.class": DEFAULT_PAYLOAD,  # late events lose
}
INDEX_OPTIONS = {
    "SIMPLE": {"hoodie.index.type": "SIMPLE"},
    "BLOOM": {"hoodie.index.type": "BLOOM"},
    "BUCKET": {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": str(BUCKETS)},
    "GLOBAL_SIMPLE": {"hoodie.index.type": "GLOBAL_SIMPLE"},
    "GLOBAL_BLOOM": {"hoodie.index.type": "GLOBAL_BLOOM"},
    "GLOBAL_SIMPLE in place": {
        "hoodie.index.type": "GLOBAL_SIMPLE",
        "hoodie.simple.index.update.partition.path": "false",
    },
}
CASES = [
    *[
        (index, table_type)
        for index in ["SIMPLE", "BLOOM", "BUCKET", "GLOBAL_SIMPLE", "GLOBAL_BLOOM"]
        for table_type in ["COPY_ON_WRITE", "MERGE_ON_READ"]
    ],
    ("GLOBAL_SIMPLE in place", "MERGE_ON_READ"),
]
ROTATED = [*CITIES[1:], CITIES[0]]  # every key's city under trips(cities=ROTATED) is another
MOVED = list(range(40, 48))  # the keys the "moves" batch sends to another partition


def _batches() -> list[tuple[str, str, pa.Table]]:
    """(label, operation, batch): inserts, upserts with duplicate keys, deletes (some of keys
    the table never held), late events (and new keys)."""
    upserts = pa.concat_tables(
        [
            trips(list(range(40, 100)), seed=2, ts=6),
            trips(list(range(44, 48)), seed=3, ts=7),  # duplicates that win
            trips(list(range(52, 55)), seed=4, ts=4),  # duplicates that lose
        ]
    )
    deletes = trips([*range(10), *range(1000, 1006)], seed=5, ts=8)
    late = pa.concat_tables(
        [
            trips([20, 24, 28, 32], seed=6, ts=1),  # san_francisco's, older than stored
            trips(list(range(200, 212)), seed=7, ts=1),  # new keys, every city
        ]
    )
    return [
        ("bulk_insert", "bulk_insert", trips(list(range(60)), seed=1, ts=5)),
        ("upserts", "upsert", upserts),
        ("deletes", "delete", deletes),
        ("late events", "upsert", late),
    ]


def _global_batches() -> list[tuple[str, str, pa.Table]]:
    """After _batches, under a global index: keys moving partition (with new keys and
    duplicates naming two partitions); late events naming another partition (stay), and keys
    moving on (on merge-on-read, found in two base files: the stored records decide); deletes
    naming a wrong or null partition, or only the record key."""
    moves = pa.concat_tables(
        [
            trips(MOVED, seed=8, ts=9, cities=ROTATED),
            trips([300, 301], seed=8, ts=9),  # new keys
            trips([60, 61], seed=9, ts=8, cities=ROTATED),  # duplicates that lose ...
            trips([60, 61], seed=8, ts=9),  # ... to rows naming the key's own partition
        ]
    )
    late_moves = pa.concat_tables(
        [
            trips([20, 24], seed=10, ts=2, cities=ROTATED),  # older than stored (5): stay
            trips([42], seed=10, ts=3, cities=CITIES[:1]),  # moved at 9: stays where it went
            trips([40, 41], seed=10, ts=10, cities=CITIES[3:]),  # move on, to chennai
        ]
    )
    wrong = pa.table(
        {
            "uuid": [f"key-{k:06d}" for k in (43, 62, 63, 999)],
            # 43 left chennai for san_francisco, 62 is in sao_paulo, 63 in chennai
            "city": [CITIES[3], None, CITIES[2], CITIES[0]],
            "ts": [11, 11, 11, 11],
        }
    )
    by_key = pa.table({"uuid": [f"key-{k:06d}" for k in (44, 40, 65, 1000)]})
    return [
        ("moves", "upsert", moves),
        ("late moves", "upsert", late_moves),
        ("deletes in any partition", "delete", wrong),
        ("deletes by key alone", "delete", by_key),
    ]


@pytest.fixture
def writers(monkeypatch) -> list[SparkWriter]:
    """The SparkWriters spark_jobs.write uses, in order (to read what their index read)."""
    made: list[SparkWriter] = []

    class Recorded(SparkWriter):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(save, "SparkWriter", Recorded)
    return made


@pytest.mark.parametrize(("index", "table_type"), CASES)
def test_spark_writes_match_local_writes_under_each_index(
    spark, tmp_path, writers, index, table_type
):
    options = {**TABLE_OPTIONS, **INDEX_OPTIONS[index]}
    options["hoodie.datasource.write.table.type"] = table_type
    if index.endswith("BLOOM") and table_type == "MERGE_ON_READ":  # bloom filters alone prune
        options["hoodie.bloom.index.prune.by.ranges"] = "false"
    spark_path = str(tmp_path / "spark" / "trips")
    _, local = create_trips_table(tmp_path / "local", table_type, options)
    left_alone = 0  # base files a bucket write did not open in partitions it wrote
    is_global = index.startswith("GLOBAL")
    batches = _batches() + (_global_batches() if is_global else [])
    for step, (label, operation, batch) in enumerate(batches):
        partitions = _partition_dirs(spark_path)
        with FileOpens(partitions) as opens:
            instant = spark_jobs.write(spark.createDataFrame(batch), spark_path, operation, options)
        local.write(batch, operation, options)
        _assert_same_rows(spark_path, local, f"{index} {table_type} {label}")
        if label == "moves":
            _assert_moved(spark_path, moving="in place" not in index)
        if step == 0:
            continue
        reads = writers[-1].index_reads
        if index.startswith(("SIMPLE", "GLOBAL_SIMPLE")):
            assert reads.candidates and reads.stored_keys == reads.candidates, (label, reads)
        elif index.endswith("BLOOM"):
            assert reads.candidates and reads.stored_keys <= reads.candidates, (label, reads)
            if label == "late events":  # only san_francisco's file groups may hold the keys
                assert 0 < reads.stored_keys < reads.candidates, reads
        else:
            assert reads.stored_keys == 0 and reads.candidates == 0, (label, reads)
            left_alone += _assert_only_rewritten_bases_opened(
                spark_path, instant, opens.opened, table_type
            )
    if index == "BUCKET":
        _assert_bucket_layout(spark_path)
        assert left_alone, "some batch leaves a bucket of a partition it writes alone"


# ---- reads and layout


def _assert_moved(path: str, moving: bool) -> None:
    """Each of the MOVED keys is one record: in the partition its row named (`moving`), else
    in the one it was stored in, with the row's data either way."""
    rows = HudiTable.open(path).read(["uuid", "city", "_hoodie_partition_path"]).to_pylist()
    for key in MOVED:
        found = [r for r in rows if r["uuid"] == f"key-{key:06d}"]
        city = ROTATED[key % len(ROTATED)]
        where = city if moving else CITIES[key % len(CITIES)]
        assert [(r["city"], r["_hoodie_partition_path"]) for r in found] == [(city, where)], key


def _assert_same_rows(spark_path: str, local: HudiTable, step: str) -> None:
    """Same data rows in both tables, by our reader and by hudi-rs (commit times and file
    names differ between the tables: meta columns are compared per table only)."""
    ours = HudiTable.open(spark_path).read()
    oracle.assert_same_table(ours, oracle.snapshot(spark_path), f"{step}: hudi-rs")
    local_path = local.storage.base_path
    for other, reader in ((local.read(), "ours"), (oracle.snapshot(local_path), "hudi-rs")):
        oracle.assert_same_table(_data(ours), _data(other), f"{step}: spark vs local ({reader})")


def _data(table: pa.Table) -> pa.Table:
    return table.drop_columns([name for name in table.column_names if is_meta_field(name)])


def _file_id(name: str) -> str:
    parsed = LogFileName.parse(name) if name.startswith(".") else BaseFileName.parse(name)
    assert parsed is not None, name
    return parsed.file_id


def _assert_bucket_layout(path: str) -> None:
    """Every file id starts with its bucket number, no bucket has two file groups, and every
    key lies in the file group of its bucket."""
    groups: dict[tuple[str, int], set[str]] = defaultdict(set)
    for relative in data_files(path):
        partition, _, name = relative.rpartition("/")
        file_id = _file_id(name)
        assert file_id[:8].isdigit() and int(file_id[:8]) < BUCKETS, relative
        groups[(partition, int(file_id[:8]))].add(file_id)
    assert groups and all(len(ids) == 1 for ids in groups.values()), groups
    rows = HudiTable.open(path).read(columns=["_hoodie_record_key", "_hoodie_file_name"])
    expected = bucket_ids(rows.column("_hoodie_record_key"), ["uuid"], BUCKETS)
    for bucket, name in zip(expected, rows.column("_hoodie_file_name").to_pylist(), strict=True):
        # a base file's name, or (a record appended to a log) the file id: both start so
        assert name.lstrip(".").startswith(f"{bucket:08d}-"), (bucket, name)


# ---- which base files a write opened


def _partition_dirs(path: str) -> list[Path]:
    root = Path(path)
    if not root.is_dir():
        return []
    return [p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".hoodie")]


def _assert_only_rewritten_bases_opened(
    path: str, instant: str | None, opened: set[Path], table_type: str
) -> int:
    """A bucket-index write opens no stored base file to read keys: on merge-on-read none at
    all (updates are appended to logs), on copy-on-write only those of the file groups it
    rewrites (the merges read them). Returns how many base files of other file groups in the
    partitions it wrote it left unopened (a key join reads them all)."""
    stats = _commit_stats(path, instant)
    written = {s["fileId"] for s in stats}
    stored = {p for p in opened if p.suffix == ".parquet" and instant not in p.name}
    if table_type == "MERGE_ON_READ":
        assert not stored, f"a merge-on-read bucket write opened base files: {sorted(stored)}"
    assert {_file_id(p.name) for p in stored} <= written, sorted(stored)
    touched = {s["partitionPath"] for s in stats}
    others = {
        p
        for partition in touched
        for p in (Path(path) / partition).glob("*.parquet")
        if _file_id(p.name) not in written
    }
    assert not others & stored
    return len(others)


def _commit_stats(path: str, instant: str | None) -> list[dict]:
    assert instant is not None
    (completed,) = [i for i in HudiTable.open(path).timeline() if i.timestamp == instant]
    metadata = json.loads((Path(path) / ".hoodie" / completed.file_name).read_text())
    return [s for stats in metadata["partitionToWriteStats"].values() for s in stats]


_IN_OPEN = 0x20
_EVENT = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len (then the name)


class FileOpens:
    """The files opened in some directories while the block runs, by any process (the driver
    and the executors' Python workers alike): Linux inotify through libc."""

    def __init__(self, folders: list[Path]) -> None:
        self.folders = folders
        self.opened: set[Path] = set()

    def __enter__(self) -> FileOpens:
        self.libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        self.fd = self.libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        assert self.fd >= 0, "inotify is not available"
        self.watches = {}
        for folder in self.folders:
            watch = self.libc.inotify_add_watch(self.fd, str(folder).encode(), _IN_OPEN)
            assert watch >= 0, folder
            self.watches[watch] = folder
        return self

    def __exit__(self, *exc_info) -> None:
        try:
            while True:
                try:
                    events = os.read(self.fd, 1 << 16)
                except BlockingIOError:
                    break
                offset = 0
                while offset < len(events):
                    watch, _, _, length = _EVENT.unpack_from(events, offset)
                    start = offset + _EVENT.size
                    name = events[start : start + length].rstrip(b"\0").decode()
                    if name:
                        self.opened.add(self.watches[watch] / name)
                    offset = start + length
        finally:
            os.close(self.fd)
