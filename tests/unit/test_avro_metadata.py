"""Avro schemas of timeline metadata: declared as Apache Hudi 0.14/0.15 declares them.

The expectations below are transcribed from Apache Hudi's .avsc files (hudi-common/src/main/
avro) of the 0.14/0.15 line: record name, field order, field types and defaults.
"""

from __future__ import annotations

import io
import json

import fastavro
import pytest

from hudi_core.errors import SchemaError
from hudi_core.timeline import avro_metadata

NS = "org.apache.hudi.avro.model"
NONE = object()  # a field without a default

OPT_STR = ["null", "string"]
OPT_LONG = ["null", "long"]
OPT_BOOL = ["null", "boolean"]
OPT_STR_MAP = ["null", ("map", "string")]
STRINGS = ("array", "string")
VERSION = ("version", ["int", "null"], 1)

# name -> [(field, type, default)]; nested named records appear by name.
EXPECTED = {
    "HoodieInstantInfo": [("commitTime", "string", NONE), ("action", "string", NONE)],
    "HoodieRollbackPlan": [
        ("instantToRollback", ["null", "HoodieInstantInfo"], None),
        ("RollbackRequests", ["null", ("array", "HoodieRollbackRequest")], None),
        VERSION,
    ],
    "HoodieRollbackRequest": [
        ("partitionPath", "string", NONE),
        ("fileId", OPT_STR, None),
        ("latestBaseInstant", OPT_STR, None),
        ("filesToBeDeleted", STRINGS, []),
        ("logBlocksToBeDeleted", ["null", ("map", "long")], None),
    ],
    "HoodieRollbackMetadata": [
        ("startRollbackTime", "string", NONE),
        ("timeTakenInMillis", "long", NONE),
        ("totalFilesDeleted", "int", NONE),
        ("commitsRollback", STRINGS, NONE),
        ("partitionMetadata", ("map", "HoodieRollbackPartitionMetadata"), NONE),
        VERSION,
        ("instantsRollback", ("array", "HoodieInstantInfo"), []),
    ],
    "HoodieRollbackPartitionMetadata": [
        ("partitionPath", "string", NONE),
        ("successDeleteFiles", STRINGS, NONE),
        ("failedDeleteFiles", STRINGS, NONE),
        ("rollbackLogFiles", ["null", ("map", "long")], None),
        ("logFilesFromFailedCommit", ["null", ("map", "long")], None),
    ],
    "HoodieRequestedReplaceMetadata": [
        ("operationType", OPT_STR, None),
        ("clusteringPlan", ["null", "HoodieClusteringPlan"], None),
        ("extraMetadata", OPT_STR_MAP, None),
        VERSION,
    ],
    "HoodieClusteringPlan": [
        ("inputGroups", ["null", ("array", "HoodieClusteringGroup")], None),
        ("strategy", ["null", "HoodieClusteringStrategy"], None),
        ("extraMetadata", OPT_STR_MAP, None),
        VERSION,
        ("preserveHoodieMetadata", OPT_BOOL, None),
    ],
    "HoodieCompactionPlan": [
        ("operations", ["null", ("array", "HoodieCompactionOperation")], None),
        ("extraMetadata", OPT_STR_MAP, None),
        VERSION,
        ("strategy", ["null", "HoodieCompactionStrategy"], None),
        ("preserveHoodieMetadata", ["boolean", "null"], False),
    ],
    "HoodieCompactionOperation": [
        ("baseInstantTime", OPT_STR, NONE),
        ("deltaFilePaths", ["null", STRINGS], None),
        ("dataFilePath", OPT_STR, None),
        ("fileId", OPT_STR, NONE),
        ("partitionPath", OPT_STR, None),
        ("metrics", ["null", ("map", "double")], None),
        ("bootstrapFilePath", OPT_STR, None),
    ],
    "HoodieCompactionStrategy": [
        ("compactorClassName", OPT_STR, None),
        ("strategyParams", OPT_STR_MAP, None),
        VERSION,
    ],
    "HoodieCleanerPlan": [
        ("earliestInstantToRetain", ["null", "HoodieActionInstant"], None),
        ("lastCompletedCommitTimestamp", "string", ""),
        ("policy", "string", NONE),
        ("filesToBeDeletedPerPartition", ["null", ("map", STRINGS)], None),
        VERSION,
        (
            "filePathsToBeDeletedPerPartition",
            ["null", ("map", ("array", "HoodieCleanFileInfo"))],
            None,
        ),
        ("partitionsToBeDeleted", ["null", STRINGS], None),
    ],
    "HoodieActionInstant": [
        ("timestamp", "string", NONE),
        ("action", "string", NONE),
        ("state", "string", NONE),
    ],
    "HoodieCleanFileInfo": [("filePath", OPT_STR, None), ("isBootstrapBaseFile", OPT_BOOL, None)],
    "HoodieCleanMetadata": [
        ("startCleanTime", "string", NONE),
        ("timeTakenInMillis", "long", NONE),
        ("totalFilesDeleted", "int", NONE),
        ("earliestCommitToRetain", "string", NONE),
        ("lastCompletedCommitTimestamp", "string", ""),
        ("partitionMetadata", ("map", "HoodieCleanPartitionMetadata"), NONE),
        VERSION,
        ("bootstrapPartitionMetadata", ["null", ("map", "HoodieCleanPartitionMetadata")], None),
    ],
    "HoodieCleanPartitionMetadata": [
        ("partitionPath", "string", NONE),
        ("policy", "string", NONE),
        ("deletePathPatterns", STRINGS, NONE),
        ("successDeleteFiles", STRINGS, NONE),
        ("failedDeleteFiles", STRINGS, NONE),
        ("isPartitionDeleted", OPT_BOOL, None),
    ],
    "HoodieSavepointMetadata": [
        ("savepointedBy", "string", NONE),
        ("savepointedAt", "long", NONE),
        ("comments", "string", NONE),
        ("partitionMetadata", ("map", "HoodieSavepointPartitionMetadata"), NONE),
        VERSION,
    ],
    "HoodieSavepointPartitionMetadata": [
        ("partitionPath", "string", NONE),
        ("savepointDataFile", STRINGS, NONE),
    ],
    "HoodieRestorePlan": [
        ("instantsToRollback", ("array", "HoodieInstantInfo"), []),
        ("version", ["int", "null"], 2),
        ("savepointToRestoreTimestamp", ["string", "null"], None),
    ],
    "HoodieRestoreMetadata": [
        ("startRestoreTime", "string", NONE),
        ("timeTakenInMillis", "long", NONE),
        ("instantsToRollback", STRINGS, NONE),
        ("hoodieRestoreMetadata", ("map", ("array", ["null", "HoodieRollbackMetadata"])), NONE),
        VERSION,
        ("restoreInstantInfo", ("array", "HoodieInstantInfo"), []),
    ],
    "HoodieCommitMetadata": [
        ("partitionToWriteStats", ["null", ("map", ("array", "HoodieWriteStat"))], None),
        ("extraMetadata", OPT_STR_MAP, None),
        VERSION,
        ("operationType", OPT_STR, None),
    ],
    "HoodieWriteStat": [
        (name, OPT_STR if name in ("fileId", "path", "prevCommit", "partitionPath") else OPT_LONG)
        + (None,)
        for name in (
            "fileId",
            "path",
            "prevCommit",
            "numWrites",
            "numDeletes",
            "numUpdateWrites",
            "totalWriteBytes",
            "totalWriteErrors",
            "partitionPath",
            "totalLogRecords",
            "totalLogFiles",
            "totalUpdatedRecordsCompacted",
            "numInserts",
            "totalLogBlocks",
            "totalCorruptLogBlock",
            "totalRollbackBlocks",
            "fileSizeInBytes",
        )
    ],
    "HoodieReplaceCommitMetadata": [
        ("partitionToWriteStats", ["null", ("map", ("array", "HoodieWriteStat"))], None),
        ("extraMetadata", OPT_STR_MAP, None),
        VERSION,
        ("operationType", OPT_STR, None),
        ("partitionToReplaceFileIds", ["null", ("map", STRINGS)], None),
    ],
    "HoodieCompactionMetadata": [
        (
            "partitionToCompactionWriteStats",
            ["null", ("map", ("array", "HoodieCompactionWriteStat"))],
            NONE,
        ),
    ],
    "HoodieCompactionWriteStat": [
        ("partitionPath", OPT_STR, None),
        ("totalLogRecords", OPT_LONG, None),
        ("totalLogFiles", OPT_LONG, None),
        ("totalUpdatedRecordsCompacted", OPT_LONG, None),
        ("hoodieWriteStat", ["null", "HoodieWriteStat"], None),
    ],
    "HoodieIndexCommitMetadata": [
        VERSION,
        ("operationType", OPT_STR, None),
        ("indexPartitionInfos", ["null", ("array", "HoodieIndexPartitionInfo")], None),
    ],
    "HoodieIndexPartitionInfo": [
        VERSION,
        ("metadataPartitionPath", OPT_STR, None),
        ("indexUptoInstant", OPT_STR, None),
    ],
    "HoodieArchivedMetaEntry": [
        ("hoodieCommitMetadata", ["null", "HoodieCommitMetadata"], None),
        ("hoodieCleanMetadata", ["null", "HoodieCleanMetadata"], None),
        ("hoodieCompactionMetadata", ["null", "HoodieCompactionMetadata"], None),
        ("hoodieRollbackMetadata", ["null", "HoodieRollbackMetadata"], None),
        ("hoodieSavePointMetadata", ["null", "HoodieSavepointMetadata"], None),
        ("commitTime", OPT_STR, None),
        ("actionType", OPT_STR, None),
        VERSION,
        ("hoodieCompactionPlan", ["null", "HoodieCompactionPlan"], None),
        ("hoodieCleanerPlan", ["null", "HoodieCleanerPlan"], None),
        ("actionState", OPT_STR, None),
        ("hoodieReplaceCommitMetadata", ["null", "HoodieReplaceCommitMetadata"], None),
        ("hoodieRequestedReplaceMetadata", ["null", "HoodieRequestedReplaceMetadata"], None),
        ("HoodieInflightReplaceMetadata", ["null", "HoodieCommitMetadata"], None),
        ("hoodieIndexCommitMetadata", ["null", "HoodieIndexCommitMetadata"], None),
        ("stateTransitionTime", OPT_STR, None),
    ],
}


def _shape(avro_type):
    """A compact rendering of a type: named records by name, arrays and maps as tuples."""
    if isinstance(avro_type, list):
        return [_shape(branch) for branch in avro_type]
    if isinstance(avro_type, str):
        return avro_type.rsplit(".", 1)[-1]
    kind = avro_type["type"]
    if kind in ("record", "enum", "fixed"):
        return avro_type["name"]
    if kind == "array":
        return ("array", _shape(avro_type["items"]))
    if kind == "map":
        return ("map", _shape(avro_type["values"]))
    return _shape(kind)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_schema_declares_apache_hudi_fields(name):
    schema = avro_metadata.schema_of(name)
    assert (schema["type"], schema["name"], schema["namespace"]) == ("record", name, NS)
    declared = [(f["name"], _shape(f["type"]), f.get("default", NONE)) for f in schema["fields"]]
    assert [d[0] for d in declared] == [e[0] for e in EXPECTED[name]]
    for got, expected in zip(declared, EXPECTED[name], strict=True):
        assert got[1] == expected[1], f"{name}.{got[0]} type"
        assert got[2] is expected[2] or got[2] == expected[2], f"{name}.{got[0]} default"


def test_every_top_level_schema_has_expectations_and_parses():
    for name in avro_metadata.schema_names():
        assert name in EXPECTED
        fastavro.parse_schema(avro_metadata.schema_of(name))


def test_unknown_schema_name():
    with pytest.raises(SchemaError, match="HoodieNoSuchThing"):
        avro_metadata.schema_of("HoodieNoSuchThing")


def test_schema_of_returns_a_copy():
    avro_metadata.schema_of("HoodieCleanerPlan")["fields"].clear()
    assert avro_metadata.schema_of("HoodieCleanerPlan")["fields"]


# ---- realistic records, one per top-level schema

INSTANT = {"commitTime": "20240707001301554", "action": "commit"}
ROLLBACK_METADATA = {
    "startRollbackTime": "20240707001402000",
    "timeTakenInMillis": 195,
    "totalFilesDeleted": 1,
    "commitsRollback": ["20240707001301554"],
    "partitionMetadata": {
        "10": {
            "partitionPath": "10",
            "successDeleteFiles": ["/t/10/f1-0_0-1-1_20240707001301554.parquet"],
            "failedDeleteFiles": [],
            "rollbackLogFiles": {},
            "logFilesFromFailedCommit": {},
        }
    },
    "version": 1,
    "instantsRollback": [INSTANT],
}
WRITE_STAT = {
    "fileId": "ebcb261d-62d3-4895-90ec-5b3c9622dff4-0",
    "path": "30/ebcb261d-62d3-4895-90ec-5b3c9622dff4-0_0-111-154_20240707001303088.parquet",
    "prevCommit": "null",
    "numWrites": 1,
    "numDeletes": 0,
    "numUpdateWrites": 0,
    "totalWriteBytes": 441392,
    "totalWriteErrors": 0,
    "partitionPath": "30",
    "totalLogRecords": 0,
    "totalLogFiles": None,
    "totalUpdatedRecordsCompacted": 0,
    "numInserts": 1,
    "totalLogBlocks": 0,
    "totalCorruptLogBlock": 0,
    "totalRollbackBlocks": 0,
    "fileSizeInBytes": 441392,
}
COMMIT_METADATA = {
    "partitionToWriteStats": {"30": [WRITE_STAT]},
    "extraMetadata": {"schema": '{"type":"record","name":"t","fields":[]}'},
    "version": None,
    "operationType": "UPSERT",
}
COMPACTION_PLAN = {
    "operations": [
        {
            "baseInstantTime": "20250121000656060",
            "deltaFilePaths": [".f1-0_20250121000700000.log.1_0-10-20"],
            "dataFilePath": "f1-0_0-5-6_20250121000656060.parquet",
            "fileId": "f1-0",
            "partitionPath": "city=chennai",
            "metrics": {"TOTAL_LOG_FILES": 1.0, "TOTAL_IO_MB": 0.0},
            "bootstrapFilePath": None,
        }
    ],
    "extraMetadata": {},
    "version": 2,
    "strategy": None,
    "preserveHoodieMetadata": False,
}
CLEANER_PLAN = {
    "earliestInstantToRetain": {
        "timestamp": "20240707001302376",
        "action": "commit",
        "state": "COMPLETED",
    },
    "lastCompletedCommitTimestamp": "20240707001303088",
    "policy": "KEEP_LATEST_COMMITS",
    "filesToBeDeletedPerPartition": {},
    "version": 2,
    "filePathsToBeDeletedPerPartition": {
        "10": [
            {
                "filePath": "/t/10/f1-0_1-74-111_20240707001301554.parquet",
                "isBootstrapBaseFile": False,
            }
        ]
    },
    "partitionsToBeDeleted": [],
}
CLEAN_PARTITION = {
    "partitionPath": "10",
    "policy": "KEEP_LATEST_COMMITS",
    "deletePathPatterns": ["f1-0_1-74-111_20240707001301554.parquet"],
    "successDeleteFiles": ["f1-0_1-74-111_20240707001301554.parquet"],
    "failedDeleteFiles": [],
    "isPartitionDeleted": False,
}
CLEAN_METADATA = {
    "startCleanTime": "20240707001500000",
    "timeTakenInMillis": 42,
    "totalFilesDeleted": 1,
    "earliestCommitToRetain": "20240707001302376",
    "lastCompletedCommitTimestamp": "20240707001303088",
    "partitionMetadata": {"10": CLEAN_PARTITION},
    "version": 2,
    "bootstrapPartitionMetadata": {},
}
SAVEPOINT_METADATA = {
    "savepointedBy": "hudi",
    "savepointedAt": 1720311000,
    "comments": "before backfill",
    "partitionMetadata": {
        "10": {
            "partitionPath": "10",
            "savepointDataFile": ["f1-0_0-95-135_20240707001302376.parquet"],
        }
    },
    "version": 1,
}
RECORDS = {
    "HoodieRollbackPlan": {
        "instantToRollback": INSTANT,
        "RollbackRequests": [
            {
                "partitionPath": "10",
                "fileId": "",
                "latestBaseInstant": "",
                "filesToBeDeleted": ["/t/10/f1-0_0-1-1_20240707001301554.parquet"],
                "logBlocksToBeDeleted": {},
            }
        ],
        "version": 1,
    },
    "HoodieRollbackMetadata": ROLLBACK_METADATA,
    "HoodieRequestedReplaceMetadata": {
        "operationType": None,
        "clusteringPlan": None,
        "extraMetadata": None,
        "version": None,
    },
    "HoodieCompactionPlan": COMPACTION_PLAN,
    "HoodieCleanerPlan": CLEANER_PLAN,
    "HoodieCleanMetadata": CLEAN_METADATA,
    "HoodieSavepointMetadata": SAVEPOINT_METADATA,
    "HoodieRestorePlan": {
        "instantsToRollback": [INSTANT],
        "version": 2,
        "savepointToRestoreTimestamp": "20240707001300000",
    },
    "HoodieRestoreMetadata": {
        "startRestoreTime": "20240707001600000",
        "timeTakenInMillis": 300,
        "instantsToRollback": ["20240707001301554"],
        "hoodieRestoreMetadata": {"20240707001301554": [ROLLBACK_METADATA, None]},
        "version": 1,
        "restoreInstantInfo": [INSTANT],
    },
    "HoodieCommitMetadata": COMMIT_METADATA,
    "HoodieReplaceCommitMetadata": {
        **COMMIT_METADATA,
        "operationType": "INSERT_OVERWRITE_TABLE",
        "partitionToReplaceFileIds": {"10": ["4f2685a3-614f-49ca-9b2b-e1cb9fb61f27-0"]},
    },
    "HoodieCompactionMetadata": {
        "partitionToCompactionWriteStats": {
            "30": [
                {
                    "partitionPath": "30",
                    "totalLogRecords": 4,
                    "totalLogFiles": 1,
                    "totalUpdatedRecordsCompacted": 2,
                    "hoodieWriteStat": WRITE_STAT,
                }
            ]
        }
    },
    "HoodieIndexCommitMetadata": {
        "version": 1,
        "operationType": None,
        "indexPartitionInfos": [
            {
                "version": 1,
                "metadataPartitionPath": "column_stats",
                "indexUptoInstant": "20240707001303088",
            }
        ],
    },
}
RECORDS["HoodieArchivedMetaEntry"] = {
    **dict.fromkeys(f[0] for f in EXPECTED["HoodieArchivedMetaEntry"]),
    "commitTime": "20240707001500000",
    "actionType": "clean",
    "actionState": "COMPLETED",
    "version": 1,
    "hoodieCleanMetadata": CLEAN_METADATA,
    "stateTransitionTime": "20240707001500042",
}


def test_every_top_level_schema_has_a_sample_record():
    assert sorted(RECORDS) == sorted(avro_metadata.schema_names())


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_serialize_round_trip(name):
    data = avro_metadata.serialize(name, RECORDS[name])
    assert avro_metadata.deserialize(data) == RECORDS[name]


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_serialized_file_is_an_avro_container_with_its_schema(name):
    reader = fastavro.reader(io.BytesIO(avro_metadata.serialize(name, RECORDS[name])))
    embedded = json.loads(reader.metadata["avro.schema"])
    fullname = embedded["name"]
    if "." not in fullname:
        fullname = f"{embedded['namespace']}.{fullname}"
    assert fullname == f"{NS}.{name}"
    assert reader.metadata.get("avro.codec", "null") == "null"
    assert list(reader) == [RECORDS[name]]


def test_defaults_fill_absent_fields():
    plan = {"policy": "KEEP_LATEST_COMMITS"}
    record = avro_metadata.deserialize(avro_metadata.serialize("HoodieCleanerPlan", plan))
    assert record["lastCompletedCommitTimestamp"] == ""
    assert record["version"] == 1
    assert record["earliestInstantToRetain"] is None
    restore = avro_metadata.deserialize(avro_metadata.serialize("HoodieRestorePlan", {}))
    assert restore == {
        "instantsToRollback": [],
        "version": 2,
        "savepointToRestoreTimestamp": None,
    }


def test_empty_requested_replace_datum_matches_java_bytes():
    # Java's `new HoodieRequestedReplaceMetadata()`: union index 0 three times, then the null
    # branch (index 1) of version: 00 00 00 02.
    out = io.BytesIO()
    fastavro.schemaless_writer(
        out,
        avro_metadata.parsed_schema("HoodieRequestedReplaceMetadata"),
        RECORDS["HoodieRequestedReplaceMetadata"],
    )
    assert out.getvalue() == b"\x00\x00\x00\x02"


def test_java_written_requested_replace_resolves(hudi_fixture):
    """A file Apache Hudi wrote: its embedded schema is ours, and our reader decodes it."""
    table = hudi_fixture("cow", "v6_simplekeygen_nonhivestyle_overwritetable")
    data = (table / ".hoodie" / "20240707001303088.replacecommit.requested").read_bytes()
    embedded = fastavro.reader(io.BytesIO(data)).writer_schema
    ours = fastavro.parse_schema(avro_metadata.schema_of("HoodieRequestedReplaceMetadata"))
    canonical = fastavro.schema.to_parsing_canonical_form
    assert canonical(embedded) == canonical(ours)
    assert avro_metadata.deserialize(data) == RECORDS["HoodieRequestedReplaceMetadata"]


def test_nested_records_share_one_declaration():
    """Named records used twice are declared once and referenced by name after."""
    entry = json.dumps(avro_metadata.schema_of("HoodieArchivedMetaEntry"))
    for name in ("HoodieWriteStat", "HoodieCommitMetadata", "HoodieCleanPartitionMetadata"):
        assert entry.count(f'"name": "{name}"') == 1
    restore = avro_metadata.schema_of("HoodieRestoreMetadata")
    assert restore["fields"][5]["type"]["items"] == "HoodieInstantInfo"
