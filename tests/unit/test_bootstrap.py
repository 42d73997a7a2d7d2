"""Bootstrap: a hive-style partitioned parquet dataset (written here, every column type, several
files per partition) becomes a Hudi table. Metadata-only partitions are read stitched from the
skeleton and source files (each side alone when the query needs only its columns), full-record
ones are rewritten and read by hudi-rs like ours; the regex selector splits partitions by full
match as Java's Pattern.matches does; upserts, deletes, compaction and cleaning agree with a
model and never touch a source file; a failed or killed bootstrap is rolled back and redone."""

from __future__ import annotations

import hashlib
import json
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from hudi_core import BootstrapError, HudiTable, InvalidOptionError
from hudi_core.config.table_config import PROPERTIES_FILE, parse_properties
from hudi_core.io.bootstrap_index import BootstrapIndex
from hudi_core.model.commit_metadata import CommitMetadata
from hudi_core.model.compaction_plan import read_plan
from hudi_core.model.file_names import BaseFileName
from hudi_core.read.file_system_view import clustering_plan
from hudi_core.timeline import ActiveTimeline
from tests import datagen, oracle
from tests.killed_writer import ROOT

KEYS = list(range(48))
SELECTOR = "hoodie.bootstrap.mode.selector"
FULL_RECORD = "org.apache.hudi.client.bootstrap.selector.FullRecordBootstrapModeSelector"
REGEX = "org.apache.hudi.client.bootstrap.selector.BootstrapRegexModeSelector"
META = [
    "_hoodie_commit_time",
    "_hoodie_commit_seqno",
    "_hoodie_record_key",
    "_hoodie_partition_path",
    "_hoodie_file_name",
]
# Partitions named so that a regex found inside one name but not matching it whole tells
# Pattern.matches (full match) from Matcher.find.
CITIES = ["san_francisco", "sao_paulo", "sao_paulo_sul", "chennai"]


def _source_rows() -> pa.Table:
    """The dataset's rows: datagen's trips, the partition column `city` last (as a reader of
    a hive-style dataset puts it)."""
    rows = datagen.trips(KEYS, seed=1, ts=1, cities=CITIES)
    return rows.drop_columns(["city"]).append_column("city", rows.column("city"))


def _write_source(folder: Path) -> Path:
    """A hive-style dataset: `city=<name>/` folders of 3 files each, the files without the
    partition column, plus the marker and hidden files Spark leaves (not data)."""
    rows = _source_rows()
    source = folder / "source"
    for city in CITIES:
        part = rows.filter(pc.equal(rows.column("city"), city)).drop_columns(["city"])
        folder_path = source / f"city={city}"
        folder_path.mkdir(parents=True)
        step = -(-part.num_rows // 3)
        for i in range(3):
            pq.write_table(
                part.slice(i * step, step), folder_path / f"part-{i:05d}.parquet", row_group_size=4
            )
        (folder_path / ".part-00000.parquet.crc").write_bytes(b"crc")
    (source / "_SUCCESS").write_bytes(b"")
    return source


def _digests(source: Path) -> dict[str, str]:
    return {
        str(p.relative_to(source)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(source.rglob("*"))
        if p.is_file()
    }


def _bootstrap(tmp_path: Path, table_type: str = "COPY_ON_WRITE", options: dict | None = None):
    source = _write_source(tmp_path)
    path = str(tmp_path / "table")
    table = HudiTable.bootstrap(
        path,
        str(source),
        name="trips",
        table_type=table_type,
        record_key_fields=["uuid"],
        partition_fields=["city"],
        precombine_field="ts",
        options=options,
    )
    return source, path, table


def _by_key(rows: pa.Table) -> list[dict]:
    return sorted(rows.to_pylist(), key=lambda row: row["uuid"])


def _data(rows: pa.Table) -> pa.Table:
    return rows.drop_columns([c for c in META if c in rows.column_names])


def _base_files(path: str) -> dict[str, list[str]]:
    """Base file names of the table by partition."""
    found: dict[str, list[str]] = {}
    for file in Path(path).rglob("*.parquet"):
        relative = file.relative_to(path)
        if ".hoodie" not in relative.parts:
            found.setdefault(str(relative.parent), []).append(file.name)
    return found


# ---- metadata-only


def test_metadata_only_bootstrap_reads_the_source_rows_with_meta_columns(tmp_path):
    source, path, table = _bootstrap(tmp_path)
    before = _digests(source)
    rows = table.read()
    assert rows.column_names == META + _source_rows().column_names
    assert _by_key(_data(rows)) == _by_key(_source_rows())
    assert set(rows.column("_hoodie_commit_time").to_pylist()) == {"00000000000001"}
    assert rows.column("_hoodie_record_key").to_pylist() == rows.column("uuid").to_pylist()
    assert rows.column("_hoodie_partition_path").to_pylist() == [
        f"city={c}" for c in rows.column("city").to_pylist()
    ]
    # one skeleton per source file, named by its file group, at the metadata bootstrap instant
    skeletons = _base_files(path)
    assert sorted(skeletons) == [f"city={c}" for c in sorted(CITIES)]
    assert all(len(names) == 3 for names in skeletons.values())
    for name in rows.column("_hoodie_file_name").to_pylist():
        assert BaseFileName.parse(name).instant_time == "00000000000001"
    seqnos = rows.column("_hoodie_commit_seqno").to_pylist()
    assert len(set(seqnos)) == len(seqnos) and all(s.startswith("00000000000001_") for s in seqnos)
    # skeleton files hold the meta columns only
    skeleton = next(Path(path, "city=chennai").glob("*.parquet"))
    assert pq.read_schema(skeleton).names == META
    assert _digests(source) == before  # the source is only read


def test_metadata_only_bootstrap_records_the_table_and_the_commit_as_apache_hudi_does(tmp_path):
    source, path, table = _bootstrap(tmp_path)
    properties = parse_properties((Path(path) / PROPERTIES_FILE).read_bytes())
    assert properties["hoodie.bootstrap.base.path"] == f"file:{source}"
    assert properties["hoodie.bootstrap.index.class"].endswith("HFileBootstrapIndex")
    assert properties["hoodie.datasource.write.hive_style_partitioning"] == "true"
    timeline = ActiveTimeline.load(table.storage)
    [commit] = timeline.completed_writes()
    assert (commit.timestamp, commit.action) == ("00000000000001", "commit")
    metadata = CommitMetadata.from_json_bytes(timeline.read_bytes(commit))
    assert metadata.operation_type == "BOOTSTRAP"
    stats = metadata.write_stats()
    assert len(stats) == 12 and sum(s.num_writes for s in stats) == len(KEYS)
    schema = json.loads(metadata.extra_metadata[CommitMetadata.SCHEMA_KEY])
    assert [f["name"] for f in schema["fields"]] == _source_rows().column_names
    # the index maps every skeleton to its source file
    index = BootstrapIndex.load(table.storage)
    assert sorted(index.partitions()) == [f"city={c}" for c in sorted(CITIES)]
    for stat in stats:
        mapping = index.mapping_for(stat.partition_path, stat.file_id)
        assert mapping.source_partition_path == stat.partition_path
        assert (source / mapping.source_partition_path / mapping.source_file_name).is_file()


def test_a_query_reads_only_the_side_that_holds_its_columns(tmp_path):
    _, _, table = _bootstrap(tmp_path)
    data, statistics = table.read_with_statistics(columns=["uuid", "fare", "city"])
    assert (statistics.skeleton_files_read, statistics.source_files_read) == (0, 12)
    assert _by_key(data) == _by_key(_source_rows().select(["uuid", "fare", "city"]))
    meta, statistics = table.read_with_statistics(columns=META[2:4])
    assert (statistics.skeleton_files_read, statistics.source_files_read) == (12, 0)
    assert meta.num_rows == len(KEYS)
    both, statistics = table.read_with_statistics(columns=["_hoodie_record_key", "fare"])
    assert (statistics.skeleton_files_read, statistics.source_files_read) == (12, 12)
    assert both.column("_hoodie_record_key").num_chunks >= 1


def test_filters_on_a_bootstrapped_table_prune_partitions_and_row_groups(tmp_path):
    _, _, table = _bootstrap(tmp_path)
    expected = _source_rows()
    rows, statistics = table.read_with_statistics(filters=[("city", "=", "chennai")])
    want = expected.filter(pc.equal(expected.column("city"), "chennai"))
    assert _by_key(_data(rows)) == _by_key(want)
    assert statistics.files == 3  # the other partitions' files are pruned by their path
    ts_rows, statistics = table.read_with_statistics(
        columns=["uuid", "passengers"], filters=[("passengers", ">=", 5)]
    )
    want = expected.filter(pc.greater_equal(expected.column("passengers"), 5))
    assert _by_key(ts_rows) == _by_key(want.select(["uuid", "passengers"]))
    assert statistics.source_files_read == 12 and statistics.skeleton_files_read == 0


def test_a_changed_source_file_is_named_when_read_with_its_skeleton(tmp_path):
    source, _, table = _bootstrap(tmp_path)
    victim = source / "city=chennai" / "part-00000.parquet"
    pq.write_table(pq.read_table(victim).slice(0, 1), victim)
    with pytest.raises(Exception, match="changed since the bootstrap"):
        table.read()


# ---- full record, regex selector


def test_full_record_bootstrap_is_read_by_hudi_rs_like_ours(tmp_path):
    source, path, table = _bootstrap(tmp_path, options={SELECTOR: FULL_RECORD})
    timeline = ActiveTimeline.load(table.storage)
    assert [i.timestamp for i in timeline.completed_writes()] == ["00000000000002"]
    ours = table.read()
    assert _by_key(_data(ours).select(_source_rows().column_names)) == _by_key(_source_rows())
    oracle.assert_same_table(ours, oracle.snapshot(path), "full record")
    assert all(
        BaseFileName.parse(name).instant_time == "00000000000002"
        for names in _base_files(path).values()
        for name in names
    )


@pytest.mark.parametrize(
    ("regex", "mode", "metadata_only"),
    [
        ("city=sao_paulo", "METADATA_ONLY", {"city=sao_paulo"}),  # not sao_paulo_sul: full match
        ("city=sao.*", "FULL_RECORD", {"city=san_francisco", "city=chennai"}),
        ("sao_paulo", "METADATA_ONLY", set()),  # inside every sao_paulo name, matching none
    ],
)
def test_the_regex_selector_splits_partitions_by_full_match(tmp_path, regex, mode, metadata_only):
    options = {
        SELECTOR: REGEX,
        "hoodie.bootstrap.mode.selector.regex": regex,
        "hoodie.bootstrap.mode.selector.regex.mode": mode,
    }
    _, path, table = _bootstrap(tmp_path, options=options)
    instants = {
        partition: {BaseFileName.parse(n).instant_time for n in names}
        for partition, names in _base_files(path).items()
    }
    skeletons = {p for p, times in instants.items() if times == {"00000000000001"}}
    rewritten = {p for p, times in instants.items() if times == {"00000000000002"}}
    assert skeletons == metadata_only
    assert rewritten == {f"city={c}" for c in CITIES} - metadata_only
    ours = table.read()
    assert _by_key(_data(ours).select(_source_rows().column_names)) == _by_key(_source_rows())
    # hudi-rs reads the rewritten partitions as we do
    for partition in sorted(rewritten):
        city = partition.split("=", 1)[1]
        mine = table.read(filters=[("city", "=", city)])
        theirs = oracle.snapshot(path, filters=[("city", "=", city)])
        oracle.assert_same_table(mine, theirs, partition)


@pytest.mark.parametrize(
    ("options", "complaint"),
    [
        ({SELECTOR: "com.example.MySelector"}, "mode selector"),
        ({SELECTOR: REGEX, "hoodie.bootstrap.mode.selector.regex": "("}, "not a regex"),
        ({"hoodie.bootstrap.partitionpath.translator.class": "x.Mine"}, "translator"),
        ({"hoodie.populate.meta.fields": "false"}, "meta columns"),
        ({"hoodie.index.type": "BUCKET"}, "buckets"),
    ],
)
def test_bad_options_are_refused_before_anything_is_written(tmp_path, options, complaint):
    with pytest.raises(InvalidOptionError, match=complaint):
        _bootstrap(tmp_path, options=options)
    assert not (tmp_path / "table").exists()


# ---- after the bootstrap


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_upserts_deletes_compaction_and_cleaning_agree_with_a_model(tmp_path, table_type):
    options = {
        "hoodie.cleaner.commits.retained": "1",
        "hoodie.compact.inline.max.delta.commits": "1",
    }
    source, path, table = _bootstrap(tmp_path, table_type, options)
    before = _digests(source)
    model = {row["uuid"]: row for row in _source_rows().to_pylist()}

    def check(label: str) -> None:
        rows = _data(table.read()).select(_source_rows().column_names)
        assert _by_key(rows) == sorted(model.values(), key=lambda r: r["uuid"]), label
        assert _digests(source) == before, label

    updates = datagen.trips(KEYS[::5] + [100, 101], seed=7, ts=2, cities=CITIES)
    updates = updates.drop_columns(["city"]).append_column("city", updates.column("city"))
    table.write(updates, options=options)
    model.update({row["uuid"]: row for row in updates.to_pylist()})
    check("after an upsert")
    deletes = _source_rows().take([1, 2, 3])
    table.write(deletes, operation="delete", options=options)
    for key in deletes.column("uuid").to_pylist():
        model.pop(key)
    check("after a delete")
    if table_type == "MERGE_ON_READ":
        planned = table.compaction.schedule(options)
        assert planned is not None
        operations = read_plan(ActiveTimeline.load(table.storage), planned).operations
        on_skeletons = [op for op in operations if op.base_instant_time == "00000000000001"]
        assert on_skeletons and all(
            op.bootstrap_file.startswith(f"file:{source}/") for op in on_skeletons
        )
        assert all(op.bootstrap_file is None for op in operations if op not in on_skeletons)
        table.compaction.run(planned)
        check("after a compaction")
        # hudi-rs does not stitch skeletons; the compacted file groups are ordinary files
        commit = table.inspect.commit(planned)
        compacted = {f.file_id for p in commit.partitions for f in p.files}
        oracle.assert_same_table(
            _in_file_groups(table.read(), compacted),
            _in_file_groups(oracle.snapshot(path), compacted),
            "compacted",
        )
    table.write(updates.slice(0, 2), options=options)
    table.clean(options)
    check("after a clean")
    # the rewritten file groups are ordinary files now
    rows = table.read()
    touched = {f"city={c}" for c in updates.column("city").to_pylist()}
    assert set(rows.column("_hoodie_partition_path").to_pylist()) >= touched


def _in_file_groups(rows: pa.Table, file_ids: set[str]) -> pa.Table:
    names = rows.column("_hoodie_file_name").to_pylist()
    keep = [BaseFileName.parse(n).file_id in file_ids for n in names]
    return rows.filter(pa.array(keep))


# ---- failures


def test_bootstrap_refuses_a_table_with_commits(tmp_path):
    _, path, _ = _bootstrap(tmp_path)
    with pytest.raises(BootstrapError, match="already has commits"):
        HudiTable.bootstrap(
            path, str(tmp_path / "source"), name="trips", record_key_fields=["uuid"]
        )


def test_a_bootstrap_that_failed_is_rolled_back_and_redone(tmp_path, monkeypatch):
    import hudi_core.services.bootstrap as bootstrap

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(bootstrap, "write_bootstrap_index", broken)
    with pytest.raises(OSError, match="disk full"):
        _bootstrap(tmp_path)
    monkeypatch.undo()
    path = str(tmp_path / "table")
    assert _base_files(path) == {}  # rolled back at once
    table = HudiTable.bootstrap(
        path, str(tmp_path / "source"), name="trips", record_key_fields=["uuid"]
    )
    assert _by_key(_data(table.read())) == _by_key(_source_rows())


_KILLED_CHILD = textwrap.dedent(
    """
    import os, signal, sys
    sys.path.insert(0, {root!r})
    from hudi_core import HudiTable
    from hudi_core.io.base_file import BaseFileWriter
    from hudi_core.timeline import ActiveTimeline

    def die(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)

    if {where!r} == "midway":
        original = BaseFileWriter.close
        closed = [0]
        def close(self):
            result = original(self)
            closed[0] += 1
            if closed[0] == 5:
                die()
            return result
        BaseFileWriter.close = close
    else:
        original = ActiveTimeline.transition
        def transition(self, instant, to, content=b""):
            if to.value == "COMPLETED":
                die()
            return original(self, instant, to, content)
        ActiveTimeline.transition = transition
    HudiTable.bootstrap({path!r}, {source!r}, name="trips", record_key_fields=["uuid"],
                        partition_fields=["city"], options={options!r})
    """
)
_FAST_HEARTBEAT = {
    "hoodie.client.heartbeat.interval_in_ms": "100",
    "hoodie.client.heartbeat.tolerable.misses": "3",
}


@pytest.mark.parametrize("where", ["midway", "before completing"])
def test_a_killed_bootstrap_is_rolled_back_by_the_next_one(tmp_path, where):
    source = _write_source(tmp_path)
    path = str(tmp_path / "table")
    code = _KILLED_CHILD.format(
        root=str(ROOT), path=path, source=str(source), where=where, options=_FAST_HEARTBEAT
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    assert result.returncode == -signal.SIGKILL, result.stderr.decode()[-2000:]
    time.sleep(0.4)  # the killed bootstrap's heartbeat goes stale
    assert HudiTable.open(path).read().num_rows == 0  # nothing visible
    table = HudiTable.bootstrap(
        path,
        str(source),
        name="trips",
        record_key_fields=["uuid"],
        partition_fields=["city"],
        options=_FAST_HEARTBEAT,
    )
    assert _by_key(_data(table.read())) == _by_key(_source_rows())
    assert all(len(names) == 3 for names in _base_files(path).values())  # no leftovers


# ---- more reads and services on skeleton slices


def test_time_travel_incremental_and_read_optimized_reads_of_a_bootstrapped_table(tmp_path):
    _, _, table = _bootstrap(tmp_path, "MERGE_ON_READ")
    updates = (
        _source_rows()
        .take([0, 5])
        .set_column(_source_rows().schema.get_field_index("ts"), "ts", pa.array([9, 9], pa.int64()))
    )
    later = table.write(updates)
    as_bootstrapped = table.read(as_of="00000000000001")
    assert _by_key(_data(as_bootstrapped)) == _by_key(_source_rows())
    first = table.read(query_type="incremental", begin="00000000000000", end="00000000000001")
    assert first.num_rows == len(KEYS)
    changed = table.read(query_type="incremental", begin="00000000000001", end=later)
    assert sorted(changed.column("uuid").to_pylist()) == sorted(updates.column("uuid").to_pylist())
    # read-optimized: the skeleton slices' base rows, without the logs on top
    optimized = table.read(query_type="read_optimized")
    assert _by_key(_data(optimized)) == _by_key(_source_rows())
    snapshot = {r["uuid"]: r["ts"] for r in table.read(columns=["uuid", "ts"]).to_pylist()}
    assert {snapshot[k] for k in updates.column("uuid").to_pylist()} == {9}


def test_clustering_rewrites_skeleton_file_groups_into_ordinary_files(tmp_path):
    source, path, table = _bootstrap(tmp_path)
    before = _digests(source)
    planned = table.clustering.schedule({"hoodie.clustering.plan.strategy.sort.columns": "fare"})
    assert planned is not None
    plan = table.inspect.clustering(planned)
    assert len(plan.file_groups) == 12  # every skeleton file group
    # the plan names each slice's source file, as Apache Hudi's executor needs it
    requested = clustering_plan(ActiveTimeline.load(table.storage), planned)
    recorded = {s.bootstrap_file for g in requested.groups for s in g.slices}
    assert recorded == {
        f"file:{source}/city={c}/part-{i:05d}.parquet" for c in CITIES for i in range(3)
    }
    table.clustering.run(planned)
    ours = table.read()
    assert _by_key(_data(ours)) == _by_key(_source_rows())
    names = set(ours.column("_hoodie_file_name").to_pylist())
    assert all(BaseFileName.parse(n).instant_time == planned for n in names)
    # commit times kept; every file is ordinary now, so hudi-rs reads it all
    assert set(ours.column("_hoodie_commit_time").to_pylist()) == {"00000000000001"}
    oracle.assert_same_table(ours, oracle.snapshot(path), "clustered")
    assert _digests(source) == before


def test_cleaning_never_deletes_source_files_and_refuses_to_be_asked(tmp_path):
    source, _, table = _bootstrap(tmp_path)
    with pytest.raises(InvalidOptionError, match="delete.bootstrap.base.file"):
        table.clean({"hoodie.cleaner.delete.bootstrap.base.file": "true"})
    before = _digests(source)
    options = {"hoodie.cleaner.commits.retained": "1"}
    rows = _source_rows().take(list(range(0, 48, 4)))  # every row of san_francisco's 3 files
    for _ in range(2):
        table.write(rows, options=options)
    assert _skeletons(path := table.storage.base_path, "city=san_francisco") == 3
    assert table.clean(options) is not None
    assert _skeletons(path, "city=san_francisco") == 0  # the skeleton slices were cleaned
    assert _skeletons(path, "city=chennai") == 3
    assert _digests(source) == before
    assert _by_key(_data(table.read())) == _by_key(_source_rows())


def _skeletons(path: str, partition: str) -> int:
    return sum(
        BaseFileName.parse(f.name).instant_time == "00000000000001"
        for f in Path(path, partition).glob("*.parquet")
    )


def test_a_non_partitioned_source_and_the_decoding_translator(tmp_path):
    flat = tmp_path / "flat"
    flat.mkdir()
    rows = _source_rows()
    for i in range(2):
        pq.write_table(rows.slice(24 * i, 24), flat / f"part-{i}.parquet")
    table = HudiTable.bootstrap(
        str(tmp_path / "t1"), str(flat), name="t", record_key_fields=["uuid"]
    )
    assert _by_key(_data(table.read())) == _by_key(rows)
    assert set(table.read().column("_hoodie_partition_path").to_pylist()) == {""}
    index = BootstrapIndex.load(table.storage)
    assert index.partitions() == [""] and len(index.mappings("")) == 2
    # an encoded folder name: kept as is by default, decoded by the decoding translator
    encoded = tmp_path / "encoded" / "hour=2024-01-01%2000%3A00"
    encoded.mkdir(parents=True)
    pq.write_table(rows.drop_columns(["city"]), encoded / "part-0.parquet")
    decoding = {
        "hoodie.bootstrap.partitionpath.translator.class": "org.apache.hudi.client.bootstrap."
        "translator.DecodedBootstrapPartitionPathTranslator"
    }
    for name, options, partition in (
        ("t2", {}, "hour=2024-01-01%2000%3A00"),
        ("t3", decoding, "hour=2024-01-01 00:00"),
    ):
        table = HudiTable.bootstrap(
            str(tmp_path / name),
            str(tmp_path / "encoded"),
            name="t",
            record_key_fields=["uuid"],
            partition_fields=["hour"],
            options=options,
        )
        read = table.read()
        assert set(read.column("_hoodie_partition_path").to_pylist()) == {partition}
        assert set(read.column("hour").to_pylist()) == {"2024-01-01 00:00"}  # the folder's value


def test_bad_sources_are_refused_clearly(tmp_path):
    source = _write_source(tmp_path)
    with pytest.raises(BootstrapError, match="overlap"):
        HudiTable.bootstrap(
            str(source / "table"), str(source), name="t", record_key_fields=["uuid"]
        )
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(BootstrapError, match="no parquet files"):
        HudiTable.bootstrap(str(tmp_path / "t"), str(empty), name="t", record_key_fields=["uuid"])
    pq.write_table(_source_rows().slice(0, 2), source / "stray.parquet")
    with pytest.raises(BootstrapError, match="different folder depths"):
        HudiTable.bootstrap(str(tmp_path / "t2"), str(source), name="t", record_key_fields=["uuid"])


def test_the_source_named_by_its_option_as_a_plain_path_is_accepted(tmp_path):
    source = _write_source(tmp_path)
    named = {"hoodie.bootstrap.base.path": str(source)}  # as Apache Hudi users keep it
    table = HudiTable.bootstrap(
        str(tmp_path / "t"),
        str(source),
        name="t",
        record_key_fields=["uuid"],
        partition_fields=["city"],
        options=named,
    )
    table.write(_source_rows().slice(0, 2), options=named)  # the same source, not a conflict
    assert table.read().num_rows == len(KEYS)
    with pytest.raises(InvalidOptionError, match="is not the source"):
        HudiTable.bootstrap(
            str(tmp_path / "t2"),
            str(source),
            name="t",
            record_key_fields=["uuid"],
            options={"hoodie.bootstrap.base.path": str(tmp_path / "elsewhere")},
        )
    with pytest.raises(InvalidOptionError, match="conflicts"):
        table.write(
            _source_rows().slice(0, 2),
            options={"hoodie.bootstrap.base.path": str(tmp_path / "elsewhere")},
        )
