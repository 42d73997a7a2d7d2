"""The archived timeline (.hoodie/archived): Apache Hudi 0.14/0.15's archive log files."""

from __future__ import annotations

import io
import json
import os
import struct

import fastavro
import pyarrow as pa
import pytest

from hudi_core import HudiTable
from hudi_core.errors import CorruptFileError, ServiceError
from hudi_core.io.log_format import BlockType, HeaderKey, LogBlock, read_log_blocks
from hudi_core.storage import Storage
from hudi_core.timeline import ActiveTimeline, Instant, State, avro_metadata
from hudi_core.timeline.archived_timeline import (
    ArchivedEntry,
    archive_files,
    archive_folder_path,
    archive_instants,
    commit_metadata_to_avro,
    read_archive_file,
    read_archived_instants,
)
from tests.oracle import assert_same_table, snapshot
from tests.unit.test_avro_metadata import (
    CLEAN_METADATA,
    CLEANER_PLAN,
    COMPACTION_PLAN,
    RECORDS,
    ROLLBACK_METADATA,
    SAVEPOINT_METADATA,
)

FOLDER = archive_folder_path()  # .hoodie/archived
REQ, INF, DONE = State.REQUESTED, State.INFLIGHT, State.COMPLETED
STAT = {
    "fileId": "f1-0",
    "path": "10/f1-0_0-5-6_20240101000000000.parquet",
    "cdcStats": None,  # JSON-only fields: the Avro write stat has no place for them
    "prevCommit": "null",
    "numWrites": 3,
    "numDeletes": 0,
    "numUpdateWrites": 1,
    "numInserts": 2,
    "totalWriteBytes": 4096,
    "totalWriteErrors": 0,
    "tempPath": None,
    "partitionPath": "10",
    "totalLogRecords": 0,
    "totalLogFilesCompacted": 0,
    "totalLogSizeCompacted": 0,
    "totalUpdatedRecordsCompacted": 0,
    "totalLogBlocks": 0,
    "totalCorruptLogBlock": 0,
    "totalRollbackBlocks": 0,
    "fileSizeInBytes": 4096,
    "minEventTime": None,
    "maxEventTime": None,
    "runtimeStats": {"totalScanTime": 0, "totalUpsertTime": 0, "totalCreateTime": 83},
}
COMMIT_JSON = {
    "partitionToWriteStats": {"10": [STAT]},
    "compacted": False,
    "extraMetadata": {"schema": '{"type":"record","name":"t","fields":[]}'},
    "operationType": "UPSERT",
}
AVRO_STAT = {
    "fileId": "f1-0",
    "path": "10/f1-0_0-5-6_20240101000000000.parquet",
    "prevCommit": "null",
    "numWrites": 3,
    "numDeletes": 0,
    "numUpdateWrites": 1,
    "totalWriteBytes": 4096,
    "totalWriteErrors": 0,
    "partitionPath": "10",
    "totalLogRecords": 0,
    "totalLogFiles": None,
    "totalUpdatedRecordsCompacted": 0,
    "numInserts": 2,
    "totalLogBlocks": 0,
    "totalCorruptLogBlock": 0,
    "totalRollbackBlocks": 0,
    "fileSizeInBytes": 4096,
}
AVRO_COMMIT = {
    "partitionToWriteStats": {"10": [AVRO_STAT]},
    "extraMetadata": {"schema": '{"type":"record","name":"t","fields":[]}'},
    "version": None,  # Java's conversion leaves it unset
    "operationType": "UPSERT",
}
EMPTY_COMMIT = {  # an empty .commit.requested, converted as Java does
    "partitionToWriteStats": {},
    "extraMetadata": {},
    "version": None,
    "operationType": "UNKNOWN",
}
REPLACE_JSON = {
    **COMMIT_JSON,
    "operationType": "INSERT_OVERWRITE",
    "partitionToReplaceFileIds": {"10": ["f0-0"]},
}
ROLLBACK_PLAN = RECORDS["HoodieRollbackPlan"]
REQUESTED_REPLACE = RECORDS["HoodieRequestedReplaceMetadata"]


def _entry(ts, action, state, metadata=None):
    return ArchivedEntry(Instant(ts, action, state), metadata, f"{ts[:-3]}999")


# (entry written, metadata read back)
CASES = [
    (_entry("20240101000000000", "commit", REQ), EMPTY_COMMIT),
    (_entry("20240101000000000", "commit", INF, COMMIT_JSON), AVRO_COMMIT),
    (_entry("20240101000000000", "commit", DONE, COMMIT_JSON), AVRO_COMMIT),
    (_entry("20240101000001000", "deltacommit", REQ), EMPTY_COMMIT),
    (_entry("20240101000001000", "deltacommit", INF, COMMIT_JSON), AVRO_COMMIT),
    (_entry("20240101000001000", "deltacommit", DONE, COMMIT_JSON), AVRO_COMMIT),
    (_entry("20240101000002000", "replacecommit", REQ, REQUESTED_REPLACE), REQUESTED_REPLACE),
    (_entry("20240101000002000", "replacecommit", INF, COMMIT_JSON), AVRO_COMMIT),
    (
        _entry("20240101000002000", "replacecommit", DONE, REPLACE_JSON),
        {
            **AVRO_COMMIT,
            "operationType": "INSERT_OVERWRITE",
            "partitionToReplaceFileIds": {"10": ["f0-0"]},
        },
    ),
    (_entry("20240101000003000", "clean", REQ, CLEANER_PLAN), CLEANER_PLAN),
    (_entry("20240101000003000", "clean", INF, CLEANER_PLAN), CLEANER_PLAN),
    (_entry("20240101000003000", "clean", DONE, CLEAN_METADATA), CLEAN_METADATA),
    (_entry("20240101000004000", "rollback", REQ, ROLLBACK_PLAN), None),  # not archived by Java
    (_entry("20240101000004000", "rollback", INF), None),
    (_entry("20240101000004000", "rollback", DONE, ROLLBACK_METADATA), ROLLBACK_METADATA),
    (_entry("20240101000005000", "savepoint", INF), None),
    (_entry("20240101000005000", "savepoint", DONE, SAVEPOINT_METADATA), SAVEPOINT_METADATA),
    (_entry("20240101000006000", "compaction", REQ, COMPACTION_PLAN), COMPACTION_PLAN),
    (_entry("20240101000006000", "compaction", INF, COMPACTION_PLAN), COMPACTION_PLAN),
    (
        _entry("20240101000006000", "commit", DONE, {**COMMIT_JSON, "compacted": True}),
        {**AVRO_COMMIT, "operationType": "COMPACT"},
    ),
    (_entry("20240101000007000", "restore", REQ, RECORDS["HoodieRestorePlan"]), None),
    (_entry("20240101000007000", "restore", INF), None),
    (_entry("20240101000007000", "restore", DONE, RECORDS["HoodieRestoreMetadata"]), None),
    (_entry("20240101000008000", "commit", DONE), None),  # an empty completed commit file
]


@pytest.fixture
def storage(tmp_path):
    return Storage(str(tmp_path))


def test_round_trip_of_every_action_and_state(storage):
    written = [case[0] for case in CASES]
    path = archive_instants(storage, FOLDER, written[::-1])  # any order in; sorted out
    assert path == f"{FOLDER}/.commits_.archive.1_1-0-1"
    back = read_archived_instants(storage, FOLDER)
    assert [e.instant for e in back] == [e.instant for e in written]
    assert [e.state_transition_time for e in back] == [e.state_transition_time for e in written]
    for entry, (case, expected) in zip(back, CASES, strict=True):
        assert entry.metadata == expected, case.instant


def test_records_fill_the_fields_java_fills(storage):
    archive_instants(storage, FOLDER, [case[0] for case in CASES])
    records = list(read_archive_file(storage, f"{FOLDER}/.commits_.archive.1_1-0-1"))
    by_key = {(r["commitTime"], r["actionType"], r["actionState"]): r for r in records}
    clean = by_key[("20240101000003000", "clean", "INFLIGHT")]
    assert clean["hoodieCleanerPlan"] == CLEANER_PLAN and clean["hoodieCleanMetadata"] is None
    inflight_replace = by_key[("20240101000002000", "replacecommit", "INFLIGHT")]
    assert inflight_replace["HoodieInflightReplaceMetadata"] == AVRO_COMMIT
    empty = by_key[("20240101000008000", "commit", "COMPLETED")]
    filled = {k for k, v in empty.items() if v is not None}
    assert filled == {"commitTime", "actionType", "actionState", "version", "stateTransitionTime"}
    assert all(r["version"] == 1 for r in records)


def test_commit_metadata_json_becomes_avro_like_java():
    assert commit_metadata_to_avro(COMMIT_JSON) == AVRO_COMMIT
    assert commit_metadata_to_avro(None) == EMPTY_COMMIT
    replace = commit_metadata_to_avro(REPLACE_JSON, replace=True)
    assert replace["partitionToReplaceFileIds"] == {"10": ["f0-0"]}


def test_blocks_hold_batches_with_the_schema_as_only_header(storage):
    entries = [_entry(f"2024010100{i:02d}00000", "clean", DONE, CLEAN_METADATA) for i in range(25)]
    path = archive_instants(storage, FOLDER, entries)
    blocks = list(read_log_blocks(storage, path))
    assert [b.block_type for b in blocks] == [BlockType.AVRO_DATA] * 3
    assert [struct.unpack_from(">ii", b.content)[1] for b in blocks] == [10, 10, 5]
    for block in blocks:
        assert list(block.header) == [HeaderKey.SCHEMA]
        assert struct.unpack_from(">i", block.content)[0] == 3  # Avro data block version
    schema = json.loads(blocks[0].header[HeaderKey.SCHEMA])
    assert schema == avro_metadata.schema_of("HoodieArchivedMetaEntry")
    assert (schema["name"], schema["namespace"]) == (
        "HoodieArchivedMetaEntry",
        "org.apache.hudi.avro.model",
    )
    nested = {f["name"]: f["type"][1] for f in schema["fields"] if isinstance(f["type"], list)}
    assert nested["hoodieCommitMetadata"]["name"] == "HoodieCommitMetadata"
    assert nested["hoodieCleanerPlan"]["name"] == "HoodieCleanerPlan"
    assert nested["HoodieInflightReplaceMetadata"] == "HoodieCommitMetadata"  # by name
    stat = nested["hoodieCommitMetadata"]["fields"][0]["type"][1]["values"]["items"]
    assert stat["name"] == "HoodieWriteStat"


def test_datums_decode_with_the_header_schema_alone(storage):
    """What Java's reader does: the block's SCHEMA header is the writer schema."""
    path = archive_instants(storage, FOLDER, [CASES[2][0]])
    (block,) = read_log_blocks(storage, path)
    writer = fastavro.parse_schema(json.loads(block.header[HeaderKey.SCHEMA]))
    (length,) = struct.unpack_from(">i", block.content, 8)
    datum = block.content[12 : 12 + length]
    record = fastavro.schemaless_reader(io.BytesIO(datum), writer, None)
    assert record["hoodieCommitMetadata"] == AVRO_COMMIT
    assert len(block.content) == 12 + length


def test_each_call_rolls_over_to_a_new_file_and_reads_all(storage):
    first = [case[0] for case in CASES[:6]]
    second = [case[0] for case in CASES[6:12]]
    assert archive_instants(storage, FOLDER, first).endswith(".commits_.archive.1_1-0-1")
    assert archive_instants(storage, FOLDER, second).endswith(".commits_.archive.2_1-0-1")
    assert archive_files(storage, FOLDER) == [
        f"{FOLDER}/.commits_.archive.1_1-0-1",
        f"{FOLDER}/.commits_.archive.2_1-0-1",
    ]
    back = read_archived_instants(storage, FOLDER)
    assert [e.instant for e in back] == [e.instant for e in first + second]
    in_file = [
        r["commitTime"] for r in read_archive_file(storage, archive_files(storage, FOLDER)[1])
    ]
    assert in_file == [e.instant.timestamp for e in second]  # written order kept in a file


def test_versions_continue_after_the_latest_and_other_files_are_ignored(storage):
    storage.write_bytes(f"{FOLDER}/.commits_.archive.9_1-0-1", b"")
    storage.write_bytes(f"{FOLDER}/mergeArchivePlan", b"not an archive")
    path = archive_instants(storage, FOLDER, [CASES[0][0]])
    assert path == f"{FOLDER}/.commits_.archive.10_1-0-1"
    assert archive_files(storage, FOLDER)[-1] == path  # numeric, not lexicographic, order
    assert [e.instant for e in read_archived_instants(storage, FOLDER)] == [CASES[0][0].instant]


def test_corrupt_blocks_are_skipped(storage):
    path = archive_instants(storage, FOLDER, [case[0] for case in CASES[:25]], batch_size=5)
    data = storage.read_bytes(path)
    blocks = list(read_log_blocks(storage, path))
    sizes = [len(b.to_bytes()) for b in blocks]
    second = slice(sizes[0], sizes[0] + sizes[1])
    damaged = bytearray(data)
    damaged[second.start + 20 : second.stop - 30] = b"\xff" * (sizes[1] - 50)
    damaged[second.stop - 8 : second.stop] = b"\x00" * 8  # wrong trailing length: corrupt
    storage.write_bytes(path, bytes(damaged) + b"#HUDI#\x00\x00")  # and a torn tail
    kinds = [b.block_type for b in read_log_blocks(storage, path)]
    assert BlockType.CORRUPT in kinds
    back = read_archived_instants(storage, FOLDER)
    expected = [case[0].instant for i, case in enumerate(CASES) if i // 5 != 1]
    assert [e.instant for e in back] == expected  # CASES are in timeline order


def test_undecodable_avro_block_raises(storage):
    header = {HeaderKey.SCHEMA: json.dumps(avro_metadata.schema_of("HoodieArchivedMetaEntry"))}
    truncated = struct.pack(">iii", 3, 1, 40) + b"\x02"  # claims 40 bytes, holds 1
    path = f"{FOLDER}/.commits_.archive.1_1-0-1"
    storage.write_bytes(path, LogBlock(BlockType.AVRO_DATA, header, truncated).to_bytes())
    with pytest.raises(CorruptFileError):
        read_archived_instants(storage, FOLDER)
    storage.write_bytes(path, LogBlock(BlockType.AVRO_DATA, {}, truncated).to_bytes())
    with pytest.raises(CorruptFileError):
        read_archived_instants(storage, FOLDER)


def test_records_of_older_hudi_versions_resolve(storage):
    """An 0.12-era record (no stateTransitionTime, no index metadata, no state) reads too."""
    schema = avro_metadata.schema_of("HoodieArchivedMetaEntry")
    dropped = {"hoodieIndexCommitMetadata", "stateTransitionTime"}
    schema["fields"] = [f for f in schema["fields"] if f["name"] not in dropped]
    parsed = fastavro.parse_schema(schema)
    record = {"commitTime": "20240101000000000", "actionType": "commit", "actionState": None}
    record["hoodieCommitMetadata"] = AVRO_COMMIT
    out = io.BytesIO()
    fastavro.schemaless_writer(out, parsed, record)
    content = struct.pack(">iii", 3, 1, len(out.getvalue())) + out.getvalue()
    block = LogBlock(BlockType.AVRO_DATA, {HeaderKey.SCHEMA: json.dumps(schema)}, content)
    storage.write_bytes(f"{FOLDER}/.commits_.archive.1_1-0-1", block.to_bytes())
    (entry,) = read_archived_instants(storage, FOLDER)
    assert entry.instant == Instant("20240101000000000", "commit", State.COMPLETED)
    assert entry.metadata == AVRO_COMMIT and entry.state_transition_time is None


def test_transition_time_comes_from_the_instant_file(storage):
    instant = Instant("20240101000000000", "commit", State.COMPLETED)
    storage.write_bytes(f".hoodie/{instant.file_name}", json.dumps(COMMIT_JSON).encode())
    moment = 1_704_067_201.25  # 2024-01-01T00:00:01.250Z
    os.utime(storage.full_path(f".hoodie/{instant.file_name}"), (moment, moment))
    archive_instants(storage, FOLDER, [ArchivedEntry(instant, COMMIT_JSON)], timezone="UTC")
    missing = ArchivedEntry(Instant("20240101000001000", "commit", State.COMPLETED), None)
    archive_instants(storage, FOLDER, [missing])
    times = [e.state_transition_time for e in read_archived_instants(storage, FOLDER)]
    assert times == ["20240101000001250", None]


def test_empty_archive_is_refused(storage):
    with pytest.raises(ServiceError, match="no instants to archive"):
        archive_instants(storage, FOLDER, [])
    assert read_archived_instants(storage, FOLDER) == []


def _archive_oldest_commits(storage: Storage, count: int) -> list[ArchivedEntry]:
    """What the archiver does: every state file of the oldest completed commits goes into the
    archive, then the files leave the active timeline (pending states first)."""
    timeline = ActiveTimeline.load(storage)
    oldest = {i.timestamp for i in timeline.completed_writes()[:count]}
    entries = []
    for file in sorted(f.name for f in storage.list_files(".hoodie")):
        instant = Instant.from_file_name(file)
        if instant is None or instant.timestamp not in oldest:
            continue
        data = storage.read_bytes(f".hoodie/{file}")
        entries.append(ArchivedEntry(instant, json.loads(data) if data.strip() else None))
    archive_instants(storage, FOLDER, entries)
    for entry in sorted(entries, key=lambda e: e.instant.is_completed):
        storage.delete(f".hoodie/{entry.instant.file_name}")
    return entries


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_table_reads_the_same_after_archival(tmp_path, table_type):
    path = str(tmp_path / "t")
    table = HudiTable.create(
        path,
        name="t",
        table_type=table_type,
        record_key_fields=["id"],
        partition_fields=["part"],
        precombine_field="ts",
    )
    # The first commit writes a partition no later commit touches: once archived, its files
    # are older than the active timeline and must still count.
    table.write(pa.table({"id": [100, 101], "ts": [0, 0], "v": ["a", "b"], "part": ["old"] * 2}))
    for i in range(4):
        ids = [i, i + 1]
        rows = {"id": ids, "ts": [i + 1] * 2, "v": [f"v{i}"] * 2, "part": ["new"] * 2}
        table.write(pa.table(rows))
    before, ours_before = snapshot(path), table.read()

    storage = Storage(path)
    entries = _archive_oldest_commits(storage, 2)
    assert len(entries) == 6  # requested, inflight, completed of two commits
    assert len(ActiveTimeline.load(storage).completed_writes()) == 3

    assert_same_table(snapshot(path), before, "hudi after archival")
    assert_same_table(HudiTable.open(path).read(), ours_before, "ours after archival")
    back = read_archived_instants(storage, FOLDER)
    in_order = sorted(e.instant for e in entries if e.instant.state is State.REQUESTED)
    assert [e.instant for e in back] == [i.with_state(s) for i in in_order for s in State]
    completed = [e for e in back if e.instant.is_completed]
    assert all(e.metadata["partitionToWriteStats"] for e in completed)
    assert all(e.state_transition_time for e in back)
