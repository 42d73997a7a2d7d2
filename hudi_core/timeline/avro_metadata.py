"""Avro-serialized timeline metadata: plans and results of table services.

Apache Hudi stores these as Avro object container files (null codec, one record) whose
records follow its `org.apache.hudi.avro.model` schemas. The schemas below declare the same
fields, in the same order, so Java readers resolve our files against their own classes.
"""

from __future__ import annotations

import io
from typing import Any

import fastavro

NAMESPACE = "org.apache.hudi.avro.model"


def _nullable(avro_type: Any, default: Any = None) -> dict[str, Any]:
    return {"type": ["null", avro_type], "default": default}


def _field(name: str, avro_type: Any, **extra: Any) -> dict[str, Any]:
    return {"name": name, "type": avro_type, **extra}


def _opt(name: str, avro_type: Any) -> dict[str, Any]:
    return {"name": name, **_nullable(avro_type)}


_VERSION = {"name": "version", "type": ["int", "null"], "default": 1}
_STRINGS = {"type": "array", "items": "string"}
_STRING_MAP = {"type": "map", "values": "string"}
_LONG_MAP = {"type": "map", "values": "long"}

INSTANT_INFO = {
    "type": "record",
    "name": "HoodieInstantInfo",
    "fields": [_field("commitTime", "string"), _field("action", "string")],
}

ROLLBACK_PLAN = {
    "type": "record",
    "name": "HoodieRollbackPlan",
    "namespace": NAMESPACE,
    "fields": [
        _opt("instantToRollback", INSTANT_INFO),
        _opt(
            "RollbackRequests",
            {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "HoodieRollbackRequest",
                    "fields": [
                        _field("partitionPath", "string"),
                        _opt("fileId", "string"),
                        _opt("latestBaseInstant", "string"),
                        _field("filesToBeDeleted", _STRINGS, default=[]),
                        _opt("logBlocksToBeDeleted", _LONG_MAP),
                    ],
                },
            },
        ),
        _VERSION,
    ],
}

ROLLBACK_METADATA = {
    "type": "record",
    "name": "HoodieRollbackMetadata",
    "namespace": NAMESPACE,
    "fields": [
        _field("startRollbackTime", "string"),
        _field("timeTakenInMillis", "long"),
        _field("totalFilesDeleted", "int"),
        _field("commitsRollback", _STRINGS),
        _field(
            "partitionMetadata",
            {
                "type": "map",
                "values": {
                    "type": "record",
                    "name": "HoodieRollbackPartitionMetadata",
                    "fields": [
                        _field("partitionPath", "string"),
                        _field("successDeleteFiles", _STRINGS),
                        _field("failedDeleteFiles", _STRINGS),
                        _opt("rollbackLogFiles", _LONG_MAP),
                        _opt("logFilesFromFailedCommit", _LONG_MAP),
                    ],
                },
            },
        ),
        _VERSION,
        _field("instantsRollback", {"type": "array", "items": INSTANT_INFO}, default=[]),
    ],
}

_SLICE_INFO = {
    "type": "record",
    "name": "HoodieSliceInfo",
    "fields": [
        _opt("dataFilePath", "string"),
        _opt("deltaFilePaths", _STRINGS),
        _field("fileId", ["null", "string"]),
        _opt("partitionPath", "string"),
        _opt("bootstrapFilePath", "string"),
        _VERSION,
    ],
}

CLUSTERING_PLAN = {
    "type": "record",
    "name": "HoodieClusteringPlan",
    "fields": [
        _opt(
            "inputGroups",
            {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "HoodieClusteringGroup",
                    "fields": [
                        _opt("slices", {"type": "array", "items": _SLICE_INFO}),
                        _opt("metrics", {"type": "map", "values": "double"}),
                        {"name": "numOutputFileGroups", "type": ["int", "null"], "default": 1},
                        _opt("extraMetadata", _STRING_MAP),
                        _VERSION,
                    ],
                },
            },
        ),
        _opt(
            "strategy",
            {
                "type": "record",
                "name": "HoodieClusteringStrategy",
                "fields": [
                    _opt("strategyClassName", "string"),
                    _opt("strategyParams", _STRING_MAP),
                    _VERSION,
                ],
            },
        ),
        _opt("extraMetadata", _STRING_MAP),
        _VERSION,
        _opt("preserveHoodieMetadata", "boolean"),
    ],
}

REQUESTED_REPLACE_METADATA = {
    "type": "record",
    "name": "HoodieRequestedReplaceMetadata",
    "namespace": NAMESPACE,
    "fields": [
        _opt("operationType", "string"),
        _opt("clusteringPlan", CLUSTERING_PLAN),
        _opt("extraMetadata", _STRING_MAP),
        _VERSION,
    ],
}

_PARSED = {
    schema["name"]: fastavro.parse_schema(schema)
    for schema in (ROLLBACK_PLAN, ROLLBACK_METADATA, REQUESTED_REPLACE_METADATA)
}


def serialize(schema_name: str, record: dict[str, Any]) -> bytes:
    """One record as an Avro container file, the way Apache Hudi stores timeline metadata."""
    out = io.BytesIO()
    fastavro.writer(out, _PARSED[schema_name], [record], codec="null")
    return out.getvalue()


def deserialize(data: bytes) -> dict[str, Any]:
    """The record of a timeline metadata file, read with the schema embedded in it."""
    records = list(fastavro.reader(io.BytesIO(data)))
    if len(records) != 1:
        raise ValueError(f"timeline metadata holds {len(records)} records; expected 1")
    return records[0]
