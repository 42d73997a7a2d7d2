"""hoodie.write.log.suffix: each writer's log files end with its suffix, in names that Apache
Hudi's and hudi-rs's log file parsers still take for log files of their file group."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from hudi_core import HudiTable
from hudi_core.config import write_options as W
from hudi_core.config.option import Options
from hudi_core.errors import InvalidOptionError
from hudi_core.model.commit_metadata import CommitMetadata
from hudi_core.model.file_group import FileSlice, LogFile
from hudi_core.model.file_names import LogFileName, log_file_name, log_suffix_stage_id
from hudi_core.write.settings import log_suffix
from tests import oracle
from tests.tables import create_trips_table

FILE_ID = "4f1b3c2e-8d9a-4e7b-9c1d-2a3b4c5d6e7f-0"
BASE = "20240102030405678"
SUFFIX = W.LOG_SUFFIX.key


# ---- names


@pytest.mark.parametrize("suffix", ["job1", "JOB-2", "7", "a-b-c", "-"])
def test_a_suffixed_name_round_trips(suffix):
    name = log_file_name(FILE_ID, BASE, 3, "0-12-1", suffix)
    assert name == f".{FILE_ID}_{BASE}.log.3_0-12-1-{suffix}"
    parsed = LogFileName.parse(name)
    assert parsed == LogFileName(FILE_ID, BASE, 3, "0-12-1", suffix)
    assert name.endswith(f"_0-12-1{parsed.name_suffix}")


@pytest.mark.parametrize("suffix", [None, ""])
def test_without_a_suffix_names_are_as_before(suffix):
    name = log_file_name(FILE_ID, BASE, 1, "0-0-0", suffix)
    assert name == f".{FILE_ID}_{BASE}.log.1_0-0-0"
    parsed = LogFileName.parse(name)
    assert parsed == LogFileName(FILE_ID, BASE, 1, "0-0-0", None)
    assert parsed.name_suffix == ""


@pytest.mark.parametrize(
    "name, expected",
    [
        (f".{FILE_ID}_{BASE}.log.2_1-0-1", (FILE_ID, BASE, 2, "1-0-1", None)),
        (f".{FILE_ID}_{BASE}.log.12", (FILE_ID, BASE, 12, None, None)),  # old, token-less
        (".f1_20240102030405.log.1_3-4-5-x", ("f1", "20240102030405", 1, "3-4-5", "x")),
        (f".{FILE_ID}_{BASE}.log.1_10-2-3-4", (FILE_ID, BASE, 1, "10-2-3", "4")),
        (f".{FILE_ID}_{BASE}.log.1_0-9-0-job-1", (FILE_ID, BASE, 1, "0-9-0", "job-1")),
    ],
)
def test_parse_takes_suffixed_and_plain_names(name, expected):
    assert LogFileName.parse(name) == LogFileName(*expected)


@pytest.mark.parametrize(
    "name",
    [
        f"{FILE_ID}_0-0-0_{BASE}.parquet",
        f".{FILE_ID}_{BASE}.log.1_0-0-0-",  # an empty suffix
        f".{FILE_ID}_{BASE}.log.1_0-0-0-a_b",
        f".{FILE_ID}_{BASE}.log.1_0-0-0-a.b",
        f".{FILE_ID}_{BASE}.log.1_0-0-0job1",
        f".{FILE_ID}_{BASE}.log.1_0-0-job1",
        f".{FILE_ID}_{BASE}.log.1_",
        f".{FILE_ID}_{BASE}.log._0-0-0",
        f"{FILE_ID}_{BASE}.log.1_0-0-0-job1",  # not hidden
        ".hoodie_partition_metadata",
    ],
)
def test_parse_refuses_what_is_no_log_file_name(name):
    assert LogFileName.parse(name) is None


@pytest.mark.parametrize("suffix", ["a_b", "a.b", "a/b", "jöb", " job"])
def test_a_name_never_carries_a_suffix_the_parsers_would_misread(suffix):
    with pytest.raises(InvalidOptionError, match="may hold only"):
        log_file_name(FILE_ID, BASE, 1, "0-0-0", suffix)


def test_the_stage_id_of_a_suffix_is_stable_and_apart_from_unsuffixed_writers():
    assert log_suffix_stage_id(None) == log_suffix_stage_id("") == 0
    ids = {log_suffix_stage_id(s) for s in ("job1", "job2", "job3", "a", "b")}
    assert len(ids) == 5 and all(0 < i < 2**31 for i in ids)
    assert log_suffix_stage_id("job1") == 809_586_041  # stable across processes and releases


def test_two_writers_logs_of_one_version_stay_apart_and_in_one_order():
    """Java keeps a slice's log files in a set ordered by (version, token), seeing only the
    three numbers of a token: two writers' files of one version must differ there."""
    names = [
        log_file_name(FILE_ID, BASE, 2, f"0-{log_suffix_stage_id(s)}-0", s)
        for s in ("job1", "job2")
    ] + [log_file_name(FILE_ID, BASE, 1, "0-0-0")]
    parsed = [LogFileName.parse(n) for n in names]
    assert len({(p.version, p.write_token) for p in parsed if p}) == 3
    logs = [LogFile(f"p/{n}", 1) for n in names]
    one = FileSlice("p", FILE_ID, BASE, None).with_log_files(logs)
    other = FileSlice("p", FILE_ID, BASE, None).with_log_files(logs[::-1])
    assert one.log_files == other.log_files
    assert one.log_files[0].name == names[2]


# ---- the option


@pytest.mark.parametrize("raw, expected", [("job1", "job1"), (" job-2 ", "job-2"), (None, None)])
def test_the_option_gives_the_suffix(raw, expected):
    assert log_suffix(Options({SUFFIX: raw})) == expected


@pytest.mark.parametrize("raw", ["a_b", "a.b", "a/b", "jöb", "job 1", "", "   "])
def test_a_bad_suffix_is_refused_naming_the_option_value_and_characters(raw):
    with pytest.raises(InvalidOptionError) as caught:
        log_suffix(Options({SUFFIX: raw}))
    message = str(caught.value)
    assert SUFFIX in message and repr(raw) in message
    assert "A-Z, a-z, 0-9 and '-'" in message


# ---- two writers on one merge-on-read table


def _trips(keys: list[int], fare: float) -> pa.Table:
    ids = pa.array(keys, pa.int64())
    return pa.table(
        {
            "uuid": pc.binary_join_element_wise("trip-", pc.cast(ids, pa.string()), ""),
            "city": pc.cast(pc.bit_wise_and(ids, 1), pa.string()),
            "ts": pa.array([int(fare * 10)] * len(keys), pa.int64()),
            "fare": pa.array([fare + k for k in keys]),
        }
    )


def _commit_paths(table: HudiTable, instant: str) -> list[str]:
    action = "commit" if instant in _commits(table) else "deltacommit"
    data = (Path(table.storage.base_path) / ".hoodie" / f"{instant}.{action}").read_bytes()
    return [stat.path for stat in CommitMetadata.from_json_bytes(data).write_stats()]


def _commits(table: HudiTable) -> set[str]:
    return {p.name.split(".")[0] for p in Path(table.storage.base_path, ".hoodie").glob("*.commit")}


def _rows(table: pa.Table) -> list[dict]:
    return sorted(table.select(["uuid", "city", "ts", "fare"]).to_pylist(), key=lambda r: r["uuid"])


def _expected(expected: dict[str, dict]) -> list[dict]:
    return sorted(expected.values(), key=lambda r: r["uuid"])


def _check_readers(table: HudiTable, expected: dict[str, dict], context: str) -> None:
    ours = table.read()
    assert _rows(ours) == _expected(expected), f"{context}: our snapshot"
    theirs = oracle.snapshot(table.storage.base_path)
    oracle.assert_same_table(ours, theirs, f"{context}: hudi-rs")


def test_two_writers_suffixes_name_their_logs_and_hudi_rs_reads_them(tmp_path):
    bucket = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "2"}
    path, _ = create_trips_table(tmp_path, "MERGE_ON_READ", bucket)
    writers = {s: HudiTable.open(path, options={SUFFIX: s}) for s in ("job1", "job2")}
    expected: dict[str, dict] = {}
    by_commit: dict[str, str] = {}  # instant -> the suffix of its writer

    def write(suffix: str, keys: list[int], fare: float, operation: str = "upsert") -> None:
        batch = _trips(keys, fare)
        instant = writers[suffix].write(batch, operation)
        assert instant is not None
        by_commit[instant] = suffix
        for row in batch.to_pylist():
            if operation == "delete":
                expected.pop(row["uuid"], None)
            else:
                expected[row["uuid"]] = row

    write("job1", list(range(20)), 1.0, "insert")
    write("job2", [0, 1, 2, 3, 4, 5], 2.0)
    write("job1", [2, 3, 20, 21], 3.0)
    write("job2", [4, 5], 4.0, "delete")
    write("job1", [0, 3, 5, 7], 5.0)  # key 5 comes back
    write("job2", [1, 7, 9], 6.0)

    table = HudiTable.open(path)
    logs_seen = 0
    for instant, suffix in by_commit.items():
        for stat_path in _commit_paths(table, instant):
            name = stat_path.rsplit("/", 1)[-1]
            parsed = LogFileName.parse(name)
            if name.startswith("."):
                assert parsed is not None and parsed.suffix == suffix, (instant, name)
                stage = log_suffix_stage_id(suffix)
                assert parsed.write_token == f"{parsed.write_token.split('-')[0]}-{stage}-0"
                assert name.endswith(f"-{suffix}")
                logs_seen += 1
            else:
                assert parsed is None and name.endswith(".parquet"), name
    assert logs_seen >= 5
    updating = [
        i for i in by_commit if any(Path(p).name.startswith(".") for p in _commit_paths(table, i))
    ]
    assert len(updating) == len(by_commit) - 1  # every write but the first (inserts) appended
    listed = [p.name for p in Path(path).rglob(".*.log.*")]
    assert len(listed) == logs_seen
    suffixes = {LogFileName.parse(n).suffix for n in listed}  # type: ignore[union-attr]
    assert suffixes == {"job1", "job2"}
    groups = table.inspect.file_groups()
    assert sum(g.latest.log_files for g in groups if g.latest) == logs_seen
    _check_readers(table, expected, "before compaction")

    compaction = writers["job1"].compaction.schedule(
        {"hoodie.compact.inline.max.delta.commits": "1"}
    )
    assert compaction is not None
    assert writers["job1"].compaction.run(compaction) == compaction
    _check_readers(HudiTable.open(path), expected, "after compaction")

    write("job2", [0, 11], 7.0)  # logs on the compacted slices
    table = HudiTable.open(path)
    names = [p.rsplit("/", 1)[-1] for p in _commit_paths(table, max(by_commit))]
    parsed = [LogFileName.parse(n) for n in names]
    assert parsed and all(p is not None and p.suffix == "job2" for p in parsed), names
    assert compaction in {p.base_instant_time for p in parsed if p}
    _check_readers(table, expected, "after a write on the compacted slices")


@pytest.mark.parametrize("bad", ["job_1", "job.1"])
def test_a_bad_suffix_fails_before_any_instant_and_leaves_the_table_as_it_was(tmp_path, bad):
    _, table = create_trips_table(tmp_path, "MERGE_ON_READ")
    table.write(_trips([1, 2], 1.0), "insert")
    before = table.read()
    instants = [i.file_name for i in table.timeline()]
    with pytest.raises(InvalidOptionError, match=SUFFIX):
        table.write(_trips([1], 2.0), options={SUFFIX: bad})
    assert _rows(table.read()) == _rows(before)
    assert not list(Path(table.storage.base_path).rglob(".*.log.*"))
    assert [i.file_name for i in table.timeline()] == instants
