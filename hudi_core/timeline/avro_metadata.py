"""Avro-serialized timeline metadata: plans and results of table services.

Apache Hudi stores these as Avro object container files (null codec, one record) whose
records follow its `org.apache.hudi.avro.model` schemas. The schemas below declare the same
fields, in the same order, with the same defaults as Apache Hudi 0.14/0.15 (table version 6),
so Java readers resolve our files against their own classes and we read theirs.

Fields that only Hudi 1.x added (extraMetadata on clean plans and clean metadata, restore
metadata and index partition infos; the many write stat fields of the 1.x commit metadata;
missingSchedulePartitions on compaction plans) are left out: a 0.14 reader would skip them,
but nothing 0.14/0.15 writes carries them either.
"""

from __future__ import annotations

import copy
import io
from collections.abc import Iterator
from typing import Any

import fastavro
from fastavro.types import Schema

from hudi_core.errors import SchemaError
from hudi_core.timeline.content import avro_content_name, corrupt

NAMESPACE = "org.apache.hudi.avro.model"


def _nullable(avro_type: Any, default: Any = None) -> dict[str, Any]:
    return {"type": ["null", avro_type], "default": default}


def _field(name: str, avro_type: Any, **extra: Any) -> dict[str, Any]:
    return {"name": name, "type": avro_type, **extra}


def _opt(name: str, avro_type: Any) -> dict[str, Any]:
    return {"name": name, **_nullable(avro_type)}


def _record(name: str, fields: list[dict[str, Any]], top_level: bool = False) -> dict[str, Any]:
    record: dict[str, Any] = {"type": "record", "name": name}
    if top_level:
        record["namespace"] = NAMESPACE
    record["fields"] = fields
    return record


def _array(items: Any) -> dict[str, Any]:
    return {"type": "array", "items": items}


def _map(values: Any) -> dict[str, Any]:
    return {"type": "map", "values": values}


_VERSION = {"name": "version", "type": ["int", "null"], "default": 1}
_STRINGS = _array("string")
_STRING_MAP = _map("string")
_LONG_MAP = _map("long")

INSTANT_INFO = _record(
    "HoodieInstantInfo", [_field("commitTime", "string"), _field("action", "string")]
)

# ---- rollback (<ts>.rollback.requested, <ts>.rollback)

ROLLBACK_PLAN = _record(
    "HoodieRollbackPlan",
    [
        _opt("instantToRollback", INSTANT_INFO),
        _opt(
            "RollbackRequests",
            _array(
                _record(
                    "HoodieRollbackRequest",
                    [
                        _field("partitionPath", "string"),
                        _opt("fileId", "string"),
                        _opt("latestBaseInstant", "string"),
                        _field("filesToBeDeleted", _STRINGS, default=[]),
                        _opt("logBlocksToBeDeleted", _LONG_MAP),
                    ],
                )
            ),
        ),
        _VERSION,
    ],
    top_level=True,
)

ROLLBACK_METADATA = _record(
    "HoodieRollbackMetadata",
    [
        _field("startRollbackTime", "string"),
        _field("timeTakenInMillis", "long"),
        _field("totalFilesDeleted", "int"),
        _field("commitsRollback", _STRINGS),
        _field(
            "partitionMetadata",
            _map(
                _record(
                    "HoodieRollbackPartitionMetadata",
                    [
                        _field("partitionPath", "string"),
                        _field("successDeleteFiles", _STRINGS),
                        _field("failedDeleteFiles", _STRINGS),
                        _opt("rollbackLogFiles", _LONG_MAP),
                        _opt("logFilesFromFailedCommit", _LONG_MAP),
                    ],
                )
            ),
        ),
        _VERSION,
        _field("instantsRollback", _array(INSTANT_INFO), default=[]),
    ],
    top_level=True,
)

# ---- clustering / replace (<ts>.replacecommit.requested)

_SLICE_INFO = _record(
    "HoodieSliceInfo",
    [
        _opt("dataFilePath", "string"),
        _opt("deltaFilePaths", _STRINGS),
        _field("fileId", ["null", "string"]),
        _opt("partitionPath", "string"),
        _opt("bootstrapFilePath", "string"),
        _VERSION,
    ],
)

CLUSTERING_PLAN = _record(
    "HoodieClusteringPlan",
    [
        _opt(
            "inputGroups",
            _array(
                _record(
                    "HoodieClusteringGroup",
                    [
                        _opt("slices", _array(_SLICE_INFO)),
                        _opt("metrics", _map("double")),
                        {"name": "numOutputFileGroups", "type": ["int", "null"], "default": 1},
                        _opt("extraMetadata", _STRING_MAP),
                        _VERSION,
                    ],
                )
            ),
        ),
        _opt(
            "strategy",
            _record(
                "HoodieClusteringStrategy",
                [
                    _opt("strategyClassName", "string"),
                    _opt("strategyParams", _STRING_MAP),
                    _VERSION,
                ],
            ),
        ),
        _opt("extraMetadata", _STRING_MAP),
        _VERSION,
        _opt("preserveHoodieMetadata", "boolean"),
    ],
)

REQUESTED_REPLACE_METADATA = _record(
    "HoodieRequestedReplaceMetadata",
    [
        _opt("operationType", "string"),
        _opt("clusteringPlan", CLUSTERING_PLAN),
        _opt("extraMetadata", _STRING_MAP),
        _VERSION,
    ],
    top_level=True,
)

# ---- compaction (<ts>.compaction.requested, <ts>.logcompaction.requested)

COMPACTION_OPERATION = _record(
    "HoodieCompactionOperation",
    [
        _field("baseInstantTime", ["null", "string"]),  # no default in Apache Hudi either
        _opt("deltaFilePaths", _STRINGS),
        _opt("dataFilePath", "string"),
        _field("fileId", ["null", "string"]),
        _opt("partitionPath", "string"),
        _opt("metrics", _map("double")),
        _opt("bootstrapFilePath", "string"),
    ],
)

# Added with log compaction (0.13): the class executing the plan and its parameters.
COMPACTION_STRATEGY = _record(
    "HoodieCompactionStrategy",
    [
        _opt("compactorClassName", "string"),
        _opt("strategyParams", _STRING_MAP),
        _VERSION,
    ],
)

COMPACTION_PLAN = _record(
    "HoodieCompactionPlan",
    [
        _opt("operations", _array(COMPACTION_OPERATION)),
        _opt("extraMetadata", _STRING_MAP),
        _VERSION,
        _opt("strategy", COMPACTION_STRATEGY),
        {"name": "preserveHoodieMetadata", "type": ["boolean", "null"], "default": False},
    ],
    top_level=True,
)

# ---- clean (<ts>.clean.requested / .inflight hold the plan, <ts>.clean the result)

ACTION_INSTANT = _record(
    "HoodieActionInstant",
    [
        _field("timestamp", "string"),
        _field("action", "string"),
        _field("state", "string"),
    ],
)

CLEAN_FILE_INFO = _record(
    "HoodieCleanFileInfo",
    [_opt("filePath", "string"), _opt("isBootstrapBaseFile", "boolean")],
)

CLEANER_PLAN = _record(
    "HoodieCleanerPlan",
    [
        _opt("earliestInstantToRetain", ACTION_INSTANT),
        _field("lastCompletedCommitTimestamp", "string", default=""),
        _field("policy", "string"),
        # Deprecated: replaced by filePathsToBeDeletedPerPartition (version 2 plans).
        _opt("filesToBeDeletedPerPartition", _map(_STRINGS)),
        _VERSION,
        _opt("filePathsToBeDeletedPerPartition", _map(_array(CLEAN_FILE_INFO))),
        _opt("partitionsToBeDeleted", _STRINGS),
    ],
    top_level=True,
)

CLEAN_PARTITION_METADATA = _record(
    "HoodieCleanPartitionMetadata",
    [
        _field("partitionPath", "string"),
        _field("policy", "string"),
        _field("deletePathPatterns", _STRINGS),
        _field("successDeleteFiles", _STRINGS),
        _field("failedDeleteFiles", _STRINGS),
        _opt("isPartitionDeleted", "boolean"),
    ],
)

CLEAN_METADATA = _record(
    "HoodieCleanMetadata",
    [
        _field("startCleanTime", "string"),
        _field("timeTakenInMillis", "long"),
        _field("totalFilesDeleted", "int"),
        _field("earliestCommitToRetain", "string"),
        _field("lastCompletedCommitTimestamp", "string", default=""),
        _field("partitionMetadata", _map(CLEAN_PARTITION_METADATA)),
        _VERSION,
        _opt("bootstrapPartitionMetadata", _map(CLEAN_PARTITION_METADATA)),
    ],
    top_level=True,
)

# ---- savepoint (<ts>.savepoint)

SAVEPOINT_METADATA = _record(
    "HoodieSavepointMetadata",
    [
        _field("savepointedBy", "string"),
        _field("savepointedAt", "long"),
        _field("comments", "string"),
        _field(
            "partitionMetadata",
            _map(
                _record(
                    "HoodieSavepointPartitionMetadata",
                    [
                        _field("partitionPath", "string"),
                        _field("savepointDataFile", _STRINGS),
                    ],
                )
            ),
        ),
        _VERSION,
    ],
    top_level=True,
)

# ---- restore (<ts>.restore.requested holds the plan, <ts>.restore the result)

RESTORE_PLAN = _record(
    "HoodieRestorePlan",
    [
        _field("instantsToRollback", _array(INSTANT_INFO), default=[]),
        # Plans of 0.14/0.15 are version 2: they name the savepoint restored to.
        {"name": "version", "type": ["int", "null"], "default": 2},
        # ["string", "null"] with a null default is Apache Hudi's declaration, kept as is.
        {"name": "savepointToRestoreTimestamp", "type": ["string", "null"], "default": None},
    ],
    top_level=True,
)

RESTORE_METADATA = _record(
    "HoodieRestoreMetadata",
    [
        _field("startRestoreTime", "string"),
        _field("timeTakenInMillis", "long"),
        _field("instantsToRollback", _STRINGS),
        _field("hoodieRestoreMetadata", _map(_array(["null", ROLLBACK_METADATA]))),
        _VERSION,
        _field("restoreInstantInfo", _array(INSTANT_INFO), default=[]),
    ],
    top_level=True,
)

# ---- commit metadata as Avro: JSON on the active timeline, Avro inside archived entries

WRITE_STAT = _record(
    "HoodieWriteStat",
    [
        _opt("fileId", "string"),
        _opt("path", "string"),
        _opt("prevCommit", "string"),
        _opt("numWrites", "long"),
        _opt("numDeletes", "long"),
        _opt("numUpdateWrites", "long"),
        _opt("totalWriteBytes", "long"),
        _opt("totalWriteErrors", "long"),
        _opt("partitionPath", "string"),
        _opt("totalLogRecords", "long"),
        _opt("totalLogFiles", "long"),
        _opt("totalUpdatedRecordsCompacted", "long"),
        _opt("numInserts", "long"),
        _opt("totalLogBlocks", "long"),
        _opt("totalCorruptLogBlock", "long"),
        _opt("totalRollbackBlocks", "long"),
        _opt("fileSizeInBytes", "long"),
    ],
)

COMMIT_METADATA = _record(
    "HoodieCommitMetadata",
    [
        _opt("partitionToWriteStats", _map(_array(WRITE_STAT))),
        _opt("extraMetadata", _STRING_MAP),
        _VERSION,
        _opt("operationType", "string"),
    ],
    top_level=True,
)

REPLACE_COMMIT_METADATA = _record(
    "HoodieReplaceCommitMetadata",
    [
        _opt("partitionToWriteStats", _map(_array(WRITE_STAT))),
        _opt("extraMetadata", _STRING_MAP),
        _VERSION,
        _opt("operationType", "string"),
        _opt("partitionToReplaceFileIds", _map(_STRINGS)),
    ],
    top_level=True,
)

# Deprecated since compactions complete as commits; kept because archived entries declare it.
COMPACTION_METADATA = _record(
    "HoodieCompactionMetadata",
    [
        _field(
            "partitionToCompactionWriteStats",
            [
                "null",
                _map(
                    _array(
                        _record(
                            "HoodieCompactionWriteStat",
                            [
                                _opt("partitionPath", "string"),
                                _opt("totalLogRecords", "long"),
                                _opt("totalLogFiles", "long"),
                                _opt("totalUpdatedRecordsCompacted", "long"),
                                _opt("hoodieWriteStat", WRITE_STAT),
                            ],
                        )
                    )
                ),
            ],
        ),
    ],
    top_level=True,
)

INDEX_COMMIT_METADATA = _record(
    "HoodieIndexCommitMetadata",
    [
        _VERSION,
        _opt("operationType", "string"),
        _opt(
            "indexPartitionInfos",
            _array(
                _record(
                    "HoodieIndexPartitionInfo",
                    [
                        _VERSION,
                        _opt("metadataPartitionPath", "string"),
                        _opt("indexUptoInstant", "string"),
                    ],
                )
            ),
        ),
    ],
    top_level=True,
)

# ---- the archived timeline's record: one per archived instant file

ARCHIVED_META_ENTRY = _record(
    "HoodieArchivedMetaEntry",
    [
        _opt("hoodieCommitMetadata", COMMIT_METADATA),
        _opt("hoodieCleanMetadata", CLEAN_METADATA),
        _opt("hoodieCompactionMetadata", COMPACTION_METADATA),
        _opt("hoodieRollbackMetadata", ROLLBACK_METADATA),
        _opt("hoodieSavePointMetadata", SAVEPOINT_METADATA),
        _opt("commitTime", "string"),
        _opt("actionType", "string"),
        _VERSION,
        _opt("hoodieCompactionPlan", COMPACTION_PLAN),
        _opt("hoodieCleanerPlan", CLEANER_PLAN),
        _opt("actionState", "string"),
        _opt("hoodieReplaceCommitMetadata", REPLACE_COMMIT_METADATA),
        _opt("hoodieRequestedReplaceMetadata", REQUESTED_REPLACE_METADATA),
        _opt("HoodieInflightReplaceMetadata", COMMIT_METADATA),  # capital H, as in Apache Hudi
        _opt("hoodieIndexCommitMetadata", INDEX_COMMIT_METADATA),
        _opt("stateTransitionTime", "string"),
    ],
    top_level=True,
)

# ---- registry

_TOP_LEVEL = (
    ROLLBACK_PLAN,
    ROLLBACK_METADATA,
    REQUESTED_REPLACE_METADATA,
    COMPACTION_PLAN,
    CLEANER_PLAN,
    CLEAN_METADATA,
    SAVEPOINT_METADATA,
    RESTORE_PLAN,
    RESTORE_METADATA,
    COMMIT_METADATA,
    REPLACE_COMMIT_METADATA,
    COMPACTION_METADATA,
    INDEX_COMMIT_METADATA,
    ARCHIVED_META_ENTRY,
)


def _named_records(schema: Any) -> Iterator[dict[str, Any]]:
    """Every record declaration nested in a schema, outermost first."""
    if isinstance(schema, list):
        for branch in schema:
            yield from _named_records(branch)
    elif isinstance(schema, dict):
        kind = schema.get("type")
        if kind == "record":
            yield schema
            for field in schema["fields"]:
                yield from _named_records(field["type"])
        elif kind == "array":
            yield from _named_records(schema["items"])
        elif kind == "map":
            yield from _named_records(schema["values"])
        elif isinstance(kind, dict | list):
            yield from _named_records(kind)


def _define_once(schema: Any, seen: set[str]) -> Any:
    """The schema with each named record declared at its first use and referenced by name
    after it, as Avro requires (and as Java's generated schemas inline them)."""
    if isinstance(schema, list):
        return [_define_once(branch, seen) for branch in schema]
    if not isinstance(schema, dict):
        return schema
    kind = schema.get("type")
    if kind == "record":
        if schema["name"] in seen:
            return schema["name"]
        seen.add(schema["name"])
        fields = [{**f, "type": _define_once(f["type"], seen)} for f in schema["fields"]]
        return {**schema, "fields": fields}
    if kind == "array":
        return {**schema, "items": _define_once(schema["items"], seen)}
    if kind == "map":
        return {**schema, "values": _define_once(schema["values"], seen)}
    return schema


_SCHEMAS: dict[str, dict[str, Any]] = {s["name"]: _define_once(s, set()) for s in _TOP_LEVEL}
_PARSED = {name: fastavro.parse_schema(schema) for name, schema in _SCHEMAS.items()}
# Nested records too, so that schema_of answers for any record name Apache Hudi declares.
_RECORDS: dict[str, dict[str, Any]] = {}
for _schema in _TOP_LEVEL:
    for _rec in _named_records(_schema):
        _RECORDS.setdefault(_rec["name"], _rec)


def schema_names() -> list[str]:
    """The top-level schemas `serialize` writes."""
    return list(_SCHEMAS)


def schema_of(name: str) -> dict[str, Any]:
    """The declared Avro schema of a record (top-level or nested), namespace included.

    Top-level schemas come ready to parse (nested records declared once); a nested record
    comes as declared, with its own nested records inlined.
    """
    if name in _SCHEMAS:
        return copy.deepcopy(_SCHEMAS[name])
    if name not in _RECORDS:
        raise SchemaError(f"no Avro schema named {name!r}")
    record = copy.deepcopy(_RECORDS[name])
    placed = {"type": "record", "name": name, "namespace": NAMESPACE, "fields": record["fields"]}
    defined: dict[str, Any] = _define_once(placed, set())
    return defined


def parsed_schema(name: str) -> Schema:
    """The fastavro-parsed form of a top-level schema, for encoding datums."""
    return _PARSED[name]


def serialize(schema_name: str, record: dict[str, Any]) -> bytes:
    """One record as an Avro container file, the way Apache Hudi stores timeline metadata."""
    out = io.BytesIO()
    fastavro.writer(out, _PARSED[schema_name], [record], codec="null")
    return out.getvalue()


def deserialize(data: bytes, source: str | None = None) -> dict[str, Any]:
    """The record of a timeline metadata file, read with the schema embedded in it.

    Damaged content raises a CorruptFileError naming the file: `source`, else the file
    `data` was read from (ActiveTimeline.read_bytes knows it).
    """
    what = avro_content_name(data)
    if not data:
        raise corrupt(data, f"empty, but it should hold the Avro {what}", source)
    try:
        records = list(fastavro.reader(io.BytesIO(data)))
    except Exception as exc:  # fastavro reports damage as any of a dozen exception types
        problem = str(exc) or type(exc).__name__
        if isinstance(exc, ValueError) and "cannot read header" in problem:
            problem = "its Avro header is incomplete (truncated, or not an Avro file)"
        elif isinstance(exc, EOFError):
            problem = f"it ends inside an Avro block (truncated: {problem})"
        raise corrupt(data, f"not a readable {what}: {problem}", source) from exc
    if len(records) != 1:
        problem = f"holds {len(records)} Avro records where a {what} is one"
        raise corrupt(data, problem, source)
    if not isinstance(records[0], dict):
        problem = f"holds an Avro {type(records[0]).__name__} where a {what} record belongs"
        raise corrupt(data, problem, source)
    return records[0]
