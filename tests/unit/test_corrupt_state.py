"""Damaged table state: every damaged file gets a CorruptFileError naming it, what is wrong and
what to do; damage that Apache Hudi's readers (hudi-rs) read past does not stop our reads; and
rolling back the instant a damaged file belongs to repairs the table."""

from __future__ import annotations

import logging
import pickle
from pathlib import Path

import pytest

from hudi_core import HudiTable
from hudi_core.errors import CorruptFileError, HudiError
from hudi_core.io.base_file import read_footer
from hudi_core.model.commit_metadata import CommitMetadata
from hudi_core.model.file_names import BaseFileName, LogFileName
from hudi_core.storage import Storage
from hudi_core.timeline import ActiveTimeline, avro_metadata
from hudi_core.timeline.content import InstantContent
from tests import datagen, oracle
from tests.tables import create_trips_table

KEYS = list(range(40))
UPDATED = KEYS[::3]


def _table(tmp_path: Path, table_type: str) -> tuple[str, HudiTable]:
    """Two writes: an insert of KEYS, then an upsert of UPDATED (log files on merge-on-read)."""
    path, table = create_trips_table(tmp_path, table_type)
    table.write(datagen.trips(KEYS, seed=1, ts=1), operation="insert")
    table.write(datagen.trips(UPDATED, seed=2, ts=2), operation="upsert")
    return path, table


def _hoodie(path: str) -> Path:
    return Path(path) / ".hoodie"


def _instants(path: str) -> list[str]:
    return sorted({p.name.split(".")[0] for p in _hoodie(path).iterdir() if p.name[0].isdigit()})


def _after(timestamp: str) -> str:
    return str(int(timestamp) + 1)


def _truncate(file: Path, keep: int) -> None:
    file.write_bytes(file.read_bytes()[:keep])


def _completed_writes(table: HudiTable) -> list[str]:
    return [i.timestamp for i in table.timeline() if i.is_completed and i.action != "rollback"]


def _pending(table: HudiTable) -> list[tuple[str, str, str]]:
    return [(i.timestamp, i.action, i.state.value) for i in table.timeline() if not i.is_completed]


def _assert_reads_like_hudi_rs(path: str, table: HudiTable, expected, context: str) -> None:
    ours = table.read()
    oracle.assert_same_table(ours, oracle.snapshot(path), f"{context}: hudi-rs")
    oracle.assert_same_table(ours, expected, f"{context}: unchanged")


# ---- the parse points, on their own


def test_damaged_commit_json_names_its_file_and_what_is_wrong(tmp_path):
    path, table = _table(tmp_path, "COPY_ON_WRITE")
    timeline = ActiveTimeline.load(Storage(path))
    latest = timeline.completed_writes()[-1]
    commit = _hoodie(path) / latest.file_name
    good = commit.read_bytes()

    _truncate(commit, 100)
    with pytest.raises(CorruptFileError) as truncated:
        CommitMetadata.from_json_bytes(timeline.read_bytes(latest))
    message = str(truncated.value)
    assert f".hoodie/{latest.timestamp}.commit (100 bytes): truncated JSON" in message
    assert f"HudiTable.rollback('{latest.timestamp}')" in message

    commit.write_bytes(good + b"}garbage")
    with pytest.raises(CorruptFileError, match=r"\.commit \(\d+ bytes\): invalid JSON \(Extra"):
        CommitMetadata.from_json_bytes(timeline.read_bytes(latest))
    commit.write_bytes(b"[1, 2]")
    with pytest.raises(CorruptFileError, match="holds a JSON list, not the object"):
        timeline.read_json(latest)
    commit.write_bytes(b'{"partitionToWriteStats": [1]}')
    with pytest.raises(CorruptFileError, match="JSON that is not commit metadata"):
        CommitMetadata.from_json_bytes(timeline.read_bytes(latest))
    commit.write_bytes(b"\xff\xfe{")
    with pytest.raises(CorruptFileError, match="not UTF-8 text"):
        CommitMetadata.from_json_bytes(timeline.read_bytes(latest))
    commit.write_bytes(b"")
    with pytest.raises(CorruptFileError, match=r"\(0 bytes\): empty, but a completed commit"):
        CommitMetadata.from_json_bytes(timeline.read_bytes(latest))
    # Bytes from elsewhere are named by `source`; empty pending content is no metadata, as
    # Apache Hudi reads an empty commit.requested.
    with pytest.raises(CorruptFileError, match="^archive/x.commit "):
        CommitMetadata.from_json_bytes(b"{", source="archive/x.commit")
    assert CommitMetadata.from_json_bytes(b"").write_stats() == []


def test_damaged_avro_metadata_names_its_file_and_what_it_should_hold(tmp_path):
    path, table = _table(tmp_path, "MERGE_ON_READ")
    planned = table.compaction.schedule({"hoodie.compact.inline.max.delta.commits": 1})
    assert planned is not None
    plan_file = _hoodie(path) / f"{planned}.compaction.requested"
    good = plan_file.read_bytes()
    timeline = ActiveTimeline.load(Storage(path))
    requested = next(i for i in timeline.instants if i.timestamp == planned)

    plan_file.write_bytes(b"")
    with pytest.raises(CorruptFileError) as empty:
        avro_metadata.deserialize(timeline.read_bytes(requested))
    assert str(empty.value).startswith(
        f".hoodie/{planned}.compaction.requested (0 bytes): empty, but it should hold the "
        f"Avro compaction plan; drop the compaction with HudiTable.rollback('{planned}')"
    )
    plan_file.write_bytes(good[:40])
    with pytest.raises(CorruptFileError, match="not a readable compaction plan: its Avro header"):
        avro_metadata.deserialize(timeline.read_bytes(requested))
    plan_file.write_bytes(good[:-20])
    with pytest.raises(CorruptFileError, match="ends inside an Avro block"):
        avro_metadata.deserialize(timeline.read_bytes(requested))
    with pytest.raises(CorruptFileError, match="^some/file.avro "):
        avro_metadata.deserialize(good[:40], source="some/file.avro")
    with pytest.raises(CorruptFileError, match="^timeline metadata "):
        avro_metadata.deserialize(good[:40])


def test_instant_content_keeps_its_source_through_pickling():
    content = InstantContent(b"{}", ".hoodie/1.commit")
    again = pickle.loads(pickle.dumps(content))
    assert again == b"{}" and again.source == ".hoodie/1.commit"


# ---- completed commits


@pytest.mark.parametrize("damage", ["truncated", "empty"])
def test_damaged_latest_commit_stops_reads_and_writes_as_in_hudi_rs_until_rolled_back(
    tmp_path, damage
):
    path, table = create_trips_table(tmp_path, "COPY_ON_WRITE")
    table.write(datagen.trips(KEYS, seed=1, ts=1), operation="insert")
    before = table.read()
    latest = table.write(datagen.trips(UPDATED, seed=2, ts=2), operation="upsert")
    commit = _hoodie(path) / f"{latest}.commit"
    _truncate(commit, 100 if damage == "truncated" else 0)
    problem = "truncated JSON" if damage == "truncated" else "empty, but a completed commit"

    # hudi-rs cannot read the table either: no silently wrong rows from an older schema.
    with pytest.raises(Exception, match="Failed to parse JSON commit metadata"):
        oracle.snapshot(path)
    with pytest.raises(CorruptFileError, match=rf"^\.hoodie/{latest}\.commit .*{problem}"):
        table.read()
    with pytest.raises(CorruptFileError, match=rf"^\.hoodie/{latest}\.commit .*{problem}"):
        table.write(datagen.trips([100], seed=3, ts=3), operation="upsert")

    table.rollback(latest)  # what the error says to do: its files are found by listing

    assert not commit.exists()
    assert _completed_writes(table) == _instants(path)[:1]
    _assert_reads_like_hudi_rs(path, table, before, "after rolling the damaged commit back")
    table.write(datagen.trips([100], seed=3, ts=3), operation="upsert")
    assert table.read().num_rows == len(KEYS) + 1


def test_damaged_older_commit_does_not_stop_reads(tmp_path):
    path, table = _table(tmp_path, "COPY_ON_WRITE")
    before = table.read()
    first = _instants(path)[0]
    _truncate(_hoodie(path) / f"{first}.commit", 100)
    _assert_reads_like_hudi_rs(path, table, before, "older commit truncated")


def test_rollback_of_a_merge_on_read_commit_with_damaged_metadata_cancels_its_log_blocks(
    tmp_path,
):
    path, table = create_trips_table(tmp_path, "MERGE_ON_READ")
    table.write(datagen.trips(KEYS, seed=1, ts=1), operation="insert")
    before = table.read()
    latest = table.write(datagen.trips(UPDATED, seed=2, ts=2), operation="upsert")
    logs = [p for p in Path(path).rglob(".*.log.*") if LogFileName.parse(p.name)]
    assert logs, "the upsert should have appended log files to the inserted file groups"
    _truncate(_hoodie(path) / f"{latest}.deltacommit", 50)
    with pytest.raises(CorruptFileError, match=rf"{latest}\.deltacommit"):
        table.read()

    table.rollback(latest)

    _assert_reads_like_hudi_rs(path, table, before, "appended logs cancelled by listing")
    rollback_logs = [p for p in Path(path).rglob(".*.log.*") if "_1-0-1" in p.name]
    assert len(rollback_logs) == len(logs)  # one rollback block per file group it appended to


# ---- pending compactions


def test_empty_pending_compaction_plan_is_read_past_refused_by_writers_and_rolled_back(
    tmp_path,
):
    path, table = _table(tmp_path, "MERGE_ON_READ")
    before = table.read()
    stray = _after(_instants(path)[-1])
    (_hoodie(path) / f"{stray}.compaction.requested").write_bytes(b"")
    expected = f"^\\.hoodie/{stray}\\.compaction\\.requested \\(0 bytes\\): empty"

    _assert_reads_like_hudi_rs(path, table, before, "empty compaction plan")
    with pytest.raises(CorruptFileError, match=expected):
        table.write(datagen.trips(UPDATED, seed=3, ts=3), operation="upsert")
    with pytest.raises(CorruptFileError, match=expected):
        table.compaction.run()
    with pytest.raises(CorruptFileError, match=expected):
        table.compaction.run(stray)
    assert _pending(table) == [(stray, "compaction", "REQUESTED")]  # runs changed nothing

    rollback = table.rollback(stray)

    assert _pending(table) == []
    assert not list(_hoodie(path).glob(f"{stray}.*"))
    assert [i.action for i in table.timeline()][-1] == "rollback" and rollback > stray
    _assert_reads_like_hudi_rs(path, table, before, "after dropping the compaction")
    table.write(datagen.trips(UPDATED, seed=3, ts=3), operation="upsert")
    planned = table.compaction.schedule({"hoodie.compact.inline.max.delta.commits": 1})
    assert table.compaction.run(planned) == planned
    oracle.assert_same_table(table.read(), oracle.snapshot(path), "compacted after the repair")


def test_damaged_compaction_plan_before_later_writes_is_read_past_and_can_be_dropped(tmp_path):
    path, table = _table(tmp_path, "MERGE_ON_READ")
    before = table.read()
    stray = _after(_instants(path)[0])  # between the two writes
    plan = _hoodie(path) / f"{stray}.compaction.requested"
    plan.write_bytes(b"Obj\x01\x04\x14avro.codec")

    _assert_reads_like_hudi_rs(path, table, before, "damaged plan between writes")
    with pytest.raises(CorruptFileError, match="not a readable compaction plan"):
        table.write(datagen.trips(UPDATED, seed=3, ts=3), operation="upsert")

    table.rollback(stray)  # not the latest write, but nothing was built on it

    assert not plan.exists() and _pending(table) == []
    _assert_reads_like_hudi_rs(path, table, before, "after dropping it")
    table.write(datagen.trips(UPDATED, seed=3, ts=3), operation="upsert")
    oracle.assert_same_table(table.read(), oracle.snapshot(path), "written after the repair")


def test_damaged_plan_of_a_compaction_later_writes_built_on_is_kept(tmp_path):
    path, table = _table(tmp_path, "MERGE_ON_READ")
    planned = table.compaction.schedule({"hoodie.compact.inline.max.delta.commits": 1})
    table.write(datagen.trips(KEYS[1::4], seed=3, ts=3), operation="upsert")  # onto its slices
    before = table.read()
    plan = _hoodie(path) / f"{planned}.compaction.requested"
    _truncate(plan, 30)

    oracle.assert_same_table(table.read(), before, "reads do not need the plan")
    with pytest.raises(HudiError, match=f"compaction {planned} cannot be dropped: later writes"):
        table.rollback(planned)
    assert plan.exists()
    oracle.assert_same_table(table.read(), before, "nothing was dropped")


def test_inflight_compaction_without_its_plan_file_is_read_past_and_rolled_back(tmp_path):
    path, table = _table(tmp_path, "MERGE_ON_READ")
    before = table.read()
    stray = _after(_instants(path)[-1])
    (_hoodie(path) / f"{stray}.compaction.inflight").write_bytes(b"")

    _assert_reads_like_hudi_rs(path, table, before, "compaction.inflight alone")
    with pytest.raises(CorruptFileError, match=rf"{stray}\.compaction\.requested does not exist"):
        table.compaction.run()
    assert _pending(table) == [(stray, "compaction", "INFLIGHT")]  # the run changed nothing

    table.rollback(stray)

    assert _pending(table) == [] and not list(_hoodie(path).glob(f"{stray}.*"))
    table.write(datagen.trips(UPDATED, seed=3, ts=3), operation="upsert")
    oracle.assert_same_table(table.read(), oracle.snapshot(path), "written after the repair")


# ---- pending writes and rollbacks


def test_pending_write_with_damaged_files_is_read_past_and_rolled_back(tmp_path):
    path, table = _table(tmp_path, "MERGE_ON_READ")
    before = table.read()
    stray = _after(_instants(path)[-1])
    (_hoodie(path) / f"{stray}.deltacommit.requested").write_bytes(b"\x00garbage")
    (_hoodie(path) / f"{stray}.deltacommit.inflight").write_bytes(b'{"partitionToWr')

    _assert_reads_like_hudi_rs(path, table, before, "damaged pending write")
    table.rollback(stray)
    assert _pending(table) == [] and not list(_hoodie(path).glob(f"{stray}.*"))
    _assert_reads_like_hudi_rs(path, table, before, "after its rollback")


def test_empty_requested_rollback_is_deleted_by_the_next_writer(tmp_path, caplog):
    path, table = _table(tmp_path, "COPY_ON_WRITE")
    before = table.read()
    failed = _after(_instants(path)[-1])
    stray = _after(failed)
    (_hoodie(path) / f"{failed}.commit.requested").write_bytes(b"")  # a write that died
    (_hoodie(path) / f"{stray}.rollback.requested").write_bytes(b"")  # its rollback's plan, lost

    _assert_reads_like_hudi_rs(path, table, before, "empty rollback plan")
    with caplog.at_level(logging.WARNING, logger="hudi_core.services.rollback"):
        table.write(datagen.trips([100], seed=3, ts=3), operation="upsert")

    assert f"deleting requested rollback [{stray}__rollback__REQUESTED]" in caplog.text
    assert f".hoodie/{stray}.rollback.requested (0 bytes): empty" in caplog.text
    assert _pending(table) == []
    assert not list(_hoodie(path).glob(f"{stray}.*"))
    assert not list(_hoodie(path).glob(f"{failed}.*"))  # rolled back as any failed write
    oracle.assert_same_table(table.read(), oracle.snapshot(path), "after the write")


def test_inflight_rollback_without_a_readable_plan_is_skipped_with_a_warning(tmp_path, caplog):
    path, table = _table(tmp_path, "COPY_ON_WRITE")
    stray = _after(_instants(path)[-1])
    (_hoodie(path) / f"{stray}.rollback.requested").write_bytes(b"Obj\x01")
    (_hoodie(path) / f"{stray}.rollback.inflight").write_bytes(b"")

    with caplog.at_level(logging.WARNING, logger="hudi_core.services.rollback"):
        written = table.write(datagen.trips([100], seed=3, ts=3), operation="upsert")

    assert f"skipping inflight rollback [{stray}__rollback__INFLIGHT]" in caplog.text
    assert "not a readable rollback plan" in caplog.text
    assert _pending(table) == [(stray, "rollback", "INFLIGHT")]  # left, as Apache Hudi does
    assert written in _completed_writes(table)
    oracle.assert_same_table(table.read(), oracle.snapshot(path), "after the write")


# ---- base files


def _latest_base_file(path: str) -> Path:
    files = [p for p in Path(path).rglob("*.parquet") if BaseFileName.parse(p.name)]
    return max(files, key=lambda p: BaseFileName.parse(p.name).instant_time)


def test_truncated_base_file_names_itself_on_read_and_upsert_and_is_rolled_back(tmp_path):
    path, table = create_trips_table(tmp_path, "COPY_ON_WRITE")
    table.write(datagen.trips(KEYS, seed=1, ts=1), operation="insert")
    before = table.read()
    latest = table.write(datagen.trips(UPDATED, seed=2, ts=2), operation="upsert")
    damaged = _latest_base_file(path)
    _truncate(damaged, 200)
    relative = damaged.relative_to(path).as_posix()
    expected = (
        f"^base file {relative} \\(200 bytes\\): no parquet footer at its end: truncated, or "
        f"not a parquet file; restore it from a backup, or, if {latest}"
    )

    with pytest.raises(Exception, match="Corrupt footer"):
        oracle.snapshot(path)  # hudi-rs fails on it too
    with pytest.raises(CorruptFileError, match=expected):
        table.read()
    city = relative.split("/")[0]
    keys = [k for k in UPDATED if datagen.CITIES[k % 4] == city]
    for index in ("BLOOM", "SIMPLE"):
        with pytest.raises(CorruptFileError, match=expected):
            table.write(
                datagen.trips(keys, seed=3, ts=3),
                operation="upsert",
                options={"hoodie.index.type": index},
            )
    with pytest.raises(CorruptFileError, match=expected):
        read_footer(Storage(path), relative)

    table.rollback(latest)

    _assert_reads_like_hudi_rs(path, table, before, "after rolling the write back")


def test_truncated_base_file_under_logs_names_itself_on_read_and_compaction(tmp_path):
    path, table = _table(tmp_path, "MERGE_ON_READ")
    damaged = _latest_base_file(path)
    _truncate(damaged, 0)
    relative = damaged.relative_to(path).as_posix()
    expected = f"^base file {relative} \\(0 bytes\\): empty, truncated to nothing"

    with pytest.raises(CorruptFileError, match=expected):
        table.read()
    oracle.assert_same_table(
        table.read(filters=[("city", "!=", relative.split("/")[0])]),
        oracle.snapshot(path, filters=[("city", "!=", relative.split("/")[0])]),
        "the other partitions read as hudi-rs reads them",
    )
    planned = table.compaction.schedule({"hoodie.compact.inline.max.delta.commits": 1})
    with pytest.raises(CorruptFileError, match=expected):
        table.compaction.run(planned)
    assert _pending(table) == [(planned, "compaction", "REQUESTED")]  # its attempt undone


def test_truncated_base_file_names_itself_on_clustering_which_keeps_its_plan(tmp_path):
    path, table = _table(tmp_path, "MERGE_ON_READ")
    planned = table.clustering.schedule()
    damaged = _latest_base_file(path)
    _truncate(damaged, 0)
    relative = damaged.relative_to(path).as_posix()
    with pytest.raises(CorruptFileError, match=f"^base file {relative} \\(0 bytes\\): empty"):
        table.clustering.run(planned)
    assert _pending(table) == [(planned, "replacecommit", "REQUESTED")]  # its attempt undone


def test_base_file_deleted_after_listing_is_named(tmp_path):
    path, table = _table(tmp_path, "COPY_ON_WRITE")
    storage = Storage(path)
    relative = _latest_base_file(path).relative_to(path).as_posix()
    Path(path, relative).unlink()
    with pytest.raises(CorruptFileError, match=f"^{relative} does not exist") as gone:
        read_footer(storage, relative)
    assert isinstance(gone.value, FileNotFoundError)
