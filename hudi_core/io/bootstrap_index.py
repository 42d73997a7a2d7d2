"""Apache Hudi's HFileBootstrapIndex: which source file each skeleton file of a
metadata-only bootstrap stands for.

Two HFiles, both named `00000000-0000-0000-0000-000000000000-0_1-0-1_00000000000001.hfile`
(the index's fixed file id, write token 1-0-1, the metadata bootstrap instant):

- `.hoodie/.aux/.bootstrap/.partitions/`: per Hudi partition the key `part=<partition>`
  ('part=' for a table without partitions) and an Avro HoodieBootstrapPartitionMetadata:
  the source partition, the Hudi partition and, per file id, the source file's
  HoodieFileStatus.
- `.hoodie/.aux/.bootstrap/.fileids/`: per file group the key
  `part=<partition>;fileid=<file id>` and an Avro HoodieBootstrapFilePartitionInfo: the
  source partition, the source file's HoodieFileStatus and the Hudi partition.

Each value is an Avro object container file of one record, as Hudi serializes timeline
metadata; each HFile's file info holds INDEX_INFO, a HoodieBootstrapIndexInfo with the
source dataset's base path, the creation time and the number of keys. Keys are written in
byte order, as an HFile requires. A HoodieFileStatus records the source file's location as
Hadoop prints paths (`file:/data/src/a=1/f.parquet` on a local disk, `s3a://...` as is).
"""

from __future__ import annotations

import io
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import fastavro

from hudi_core.config.table_config import METAFOLDER
from hudi_core.errors import BootstrapError, CorruptFileError, InternalError
from hudi_core.io.hfile import HFileReader, write_hfile
from hudi_core.storage import Storage
from hudi_core.timeline.avro_metadata import (
    _VERSION,
    _define_once,
    _map,
    _opt,
    _record,
    deserialize,
)
from hudi_core.timeline.instant import METADATA_BOOTSTRAP_INSTANT

INDEX_FILE_ID = "00000000-0000-0000-0000-000000000000-0"
INDEX_FILE_NAME = f"{INDEX_FILE_ID}_1-0-1_{METADATA_BOOTSTRAP_INSTANT}.hfile"
BOOTSTRAP_FOLDER = f"{METAFOLDER}/.aux/.bootstrap"
PARTITION_INDEX = f"{BOOTSTRAP_FOLDER}/.partitions/{INDEX_FILE_NAME}"
FILE_ID_INDEX = f"{BOOTSTRAP_FOLDER}/.fileids/{INDEX_FILE_NAME}"
INDEX_INFO_KEY = b"INDEX_INFO"
PARTITION_KEY_PREFIX = "part="
FILE_ID_KEY_SEPARATOR = ";fileid="
# The comparator Apache Hudi 0.x's bootstrap index names in its trailer (Hudi 1.x ignores it).
COMPARATOR = "org.apache.hudi.common.bootstrap.index.HFileBootstrapIndex$HoodieKVComparator"
# What Hadoop reports for a file on a local disk or an object store; Java readers need both set.
BLOCK_REPLICATION = 1
BLOCK_SIZE = 32 * 1024 * 1024

# ---- Avro schemas (org.apache.hudi.avro.model), fields as Apache Hudi declares them

_HOODIE_PATH = _record("HoodiePath", [_VERSION, _opt("uri", "string")])
_FS_PERMISSION = _record(
    "HoodieFSPermission",
    [
        _VERSION,
        _opt("userAction", "string"),
        _opt("groupAction", "string"),
        _opt("otherAction", "string"),
        _opt("stickyBit", "boolean"),
    ],
)
_FILE_STATUS = _record(
    "HoodieFileStatus",
    [
        _VERSION,
        _opt("path", _HOODIE_PATH),
        _opt("length", "long"),
        _opt("isDir", "boolean"),
        _opt("blockReplication", "int"),
        _opt("blockSize", "long"),
        _opt("modificationTime", "long"),
        _opt("accessTime", "long"),
        _opt("permission", _FS_PERMISSION),
        _opt("owner", "string"),
        _opt("group", "string"),
        _opt("symlink", _HOODIE_PATH),
    ],
)
PARTITION_METADATA = _record(
    "HoodieBootstrapPartitionMetadata",
    [
        _VERSION,
        _opt("bootstrapPartitionPath", "string"),
        _opt("partitionPath", "string"),
        _opt("fileIdToBootstrapFile", _map(_FILE_STATUS)),
    ],
    top_level=True,
)
FILE_PARTITION_INFO = _record(
    "HoodieBootstrapFilePartitionInfo",
    [
        _VERSION,
        _opt("bootstrapPartitionPath", "string"),
        _opt("bootstrapFileStatus", _FILE_STATUS),
        _opt("partitionPath", "string"),
    ],
    top_level=True,
)
INDEX_INFO = _record(
    "HoodieBootstrapIndexInfo",
    [
        _VERSION,
        _opt("bootstrapBasePath", "string"),
        _opt("createdTimestamp", "long"),
        _opt("numKeys", "int"),
    ],
    top_level=True,
)
_PARSED = {
    schema["name"]: fastavro.parse_schema(_define_once(schema, set()))
    for schema in (PARTITION_METADATA, FILE_PARTITION_INFO, INDEX_INFO)
}


@dataclass(frozen=True)
class BootstrapFileMapping:
    """A skeleton file group of the Hudi table and the source file it stands for."""

    source_base_path: str  # URI of the source dataset root, as hoodie.bootstrap.base.path holds it
    source_partition_path: str  # relative to source_base_path, '' when not partitioned
    source_file_name: str
    source_file_size: int
    source_modification_time_ms: int
    partition_path: str  # the Hudi table's partition (after translation)
    file_id: str

    @property
    def source_path(self) -> str:
        """The source file's full location."""
        base = self.source_base_path.rstrip("/")
        partition = self.source_partition_path.strip("/")
        folder = f"{base}/{partition}" if partition else base
        return f"{folder}/{self.source_file_name}"


# ---- writing


def write_bootstrap_index(
    storage: Storage,
    source_base_path: str,
    mappings: Sequence[BootstrapFileMapping],
    created_ms: int | None = None,
) -> None:
    """Writes both index files (replacing any) for `mappings` from the dataset at
    `source_base_path`."""
    created = int(time.time() * 1000) if created_ms is None else created_ms
    by_partition: dict[str, list[BootstrapFileMapping]] = {}
    for mapping in mappings:
        if mapping.source_base_path.rstrip("/") != source_base_path.rstrip("/"):
            raise InternalError(
                f"bootstrap mapping of {mapping.source_path} is not under the source "
                f"{source_base_path} the index is written for"
            )
        by_partition.setdefault(mapping.partition_path, []).append(mapping)
    partition_entries = [
        (_partition_key(partition), _serialize(PARTITION_METADATA, _partition_metadata(group)))
        for partition, group in by_partition.items()
    ]
    file_id_entries = [
        (_file_id_key(m.partition_path, m.file_id), _serialize(FILE_PARTITION_INFO, _file_info(m)))
        for m in mappings
    ]
    storage.write_bytes(FILE_ID_INDEX, _index_file(file_id_entries, source_base_path, created))
    storage.write_bytes(PARTITION_INDEX, _index_file(partition_entries, source_base_path, created))


def drop_bootstrap_index(storage: Storage) -> None:
    """Deletes both index files, whichever exist."""
    for path in (PARTITION_INDEX, FILE_ID_INDEX):
        storage.delete(path)


def bootstrap_index_exists(storage: Storage) -> bool:
    """Whether the index is there: both files, as Apache Hudi requires."""
    return storage.exists(PARTITION_INDEX) and storage.exists(FILE_ID_INDEX)


def hadoop_path(location: str) -> str:
    """A location as Hadoop's Path prints it: `file:/...` for a local path (bare or
    file:///), any other URI unchanged."""
    if location.startswith("/"):
        return f"file:{location}"
    if location.startswith("file:///"):
        return f"file:{location[len('file://') :]}"
    return location


def _index_file(entries: list[tuple[bytes, bytes]], source_base_path: str, created: int) -> bytes:
    info = {
        "version": 1,
        "bootstrapBasePath": source_base_path,
        "createdTimestamp": created,
        "numKeys": len(entries),
    }
    return write_hfile(
        sorted(entries, key=lambda entry: entry[0]),
        {INDEX_INFO_KEY: _serialize(INDEX_INFO, info)},
        comparator=COMPARATOR,
        created_ms=created,
    )


def _partition_metadata(group: list[BootstrapFileMapping]) -> dict[str, Any]:
    partition = group[0].partition_path
    sources = sorted({m.source_partition_path for m in group})
    if len(sources) > 1:
        raise BootstrapError(
            f"Hudi partition {partition!r} would take files of the source partitions {sources}; "
            "the bootstrap index maps each Hudi partition to one source partition: make the "
            "partition path translation one-to-one"
        )
    return {
        "version": 1,
        "bootstrapPartitionPath": sources[0],
        "partitionPath": partition,
        "fileIdToBootstrapFile": {
            m.file_id: _file_status(m) for m in sorted(group, key=lambda m: m.file_id)
        },
    }


def _file_info(mapping: BootstrapFileMapping) -> dict[str, Any]:
    return {
        "version": 1,
        "bootstrapPartitionPath": mapping.source_partition_path,
        "bootstrapFileStatus": _file_status(mapping),
        "partitionPath": mapping.partition_path,
    }


def _file_status(mapping: BootstrapFileMapping) -> dict[str, Any]:
    """The source file's HoodieFileStatus, with the fields Apache Hudi fills in."""
    return {
        "version": 1,
        "path": {"version": 1, "uri": hadoop_path(mapping.source_path)},
        "length": mapping.source_file_size,
        "isDir": False,
        "blockReplication": BLOCK_REPLICATION,
        "blockSize": BLOCK_SIZE,
        "modificationTime": mapping.source_modification_time_ms,
        "accessTime": mapping.source_modification_time_ms,
        "permission": None,
        "owner": None,
        "group": None,
        "symlink": None,
    }


def _serialize(schema: dict[str, Any], record: dict[str, Any]) -> bytes:
    """One record as an Avro container file (null codec), as Hudi's serializeAvroMetadata."""
    out = io.BytesIO()
    fastavro.writer(out, _PARSED[schema["name"]], [record], codec="null")
    return out.getvalue()


def _partition_key(partition: str) -> bytes:
    return f"{PARTITION_KEY_PREFIX}{partition}".encode()


def _file_id_key(partition: str, file_id: str) -> bytes:
    return f"{PARTITION_KEY_PREFIX}{partition}{FILE_ID_KEY_SEPARATOR}{file_id}".encode()


# ---- reading


class BootstrapIndex:
    """The bootstrap index of a table, read whole from its two HFiles."""

    def __init__(self, source_base_path: str, by_partition: HFileReader, by_file_id: HFileReader):
        self.source_base_path = source_base_path
        self._by_partition = by_partition
        self._by_file_id = by_file_id

    @classmethod
    def load(cls, storage: Storage) -> BootstrapIndex | None:
        """The table's index; None when it has none (or only one of its two files)."""
        if not bootstrap_index_exists(storage):
            return None
        by_partition = HFileReader(storage.read_bytes(PARTITION_INDEX), PARTITION_INDEX)
        by_file_id = HFileReader(storage.read_bytes(FILE_ID_INDEX), FILE_ID_INDEX)
        info = by_partition.file_info.get(INDEX_INFO_KEY)
        if info is None:
            raise CorruptFileError(
                f"{PARTITION_INDEX} has no INDEX_INFO in its file info, so the bootstrap "
                "source is unknown; rerun the bootstrap into a new table"
            )
        base = deserialize(info, f"{PARTITION_INDEX} INDEX_INFO").get("bootstrapBasePath")
        if not base:
            raise CorruptFileError(f"{PARTITION_INDEX}: INDEX_INFO names no bootstrapBasePath")
        return cls(str(base), by_partition, by_file_id)

    def partitions(self) -> list[str]:
        """The Hudi partitions with mappings, in key order."""
        return [self._partition_of(key) for key, _ in self._by_partition.entries()]

    def mappings(self, partition: str) -> list[BootstrapFileMapping]:
        """The partition's mappings by file id; [] for a partition without any."""
        key = _partition_key(partition)
        value = self._by_partition.get(key)
        if value is None:
            return []
        record = deserialize(value, f"{PARTITION_INDEX} value of {key.decode()!r}")
        source_partition = record.get("bootstrapPartitionPath") or ""
        statuses = record.get("fileIdToBootstrapFile") or {}
        return [
            self._mapping(partition, file_id, source_partition, statuses[file_id])
            for file_id in sorted(statuses)
        ]

    def mapping_for(self, partition: str, file_id: str) -> BootstrapFileMapping | None:
        key = _file_id_key(partition, file_id)
        value = self._by_file_id.get(key)
        if value is None:
            return None
        return self._file_id_mapping(key, value)

    def all_mappings(self) -> list[BootstrapFileMapping]:
        """Every mapping, in the file-id index's key order."""
        return [self._file_id_mapping(key, value) for key, value in self._by_file_id.entries()]

    def _file_id_mapping(self, key: bytes, value: bytes) -> BootstrapFileMapping:
        record = deserialize(value, f"{FILE_ID_INDEX} value of {key.decode(errors='replace')!r}")
        partition = record.get("partitionPath") or ""
        prefix = _file_id_key(partition, "")
        if not key.startswith(prefix):
            raise CorruptFileError(
                f"{FILE_ID_INDEX}: key {key!r} does not start with {prefix!r}, the partition its "
                "value names; rerun the bootstrap into a new table"
            )
        file_id = key[len(prefix) :].decode()
        source_partition = record.get("bootstrapPartitionPath") or ""
        return self._mapping(
            partition, file_id, source_partition, record.get("bootstrapFileStatus")
        )

    def _mapping(
        self, partition: str, file_id: str, source_partition: str, status: Any
    ) -> BootstrapFileMapping:
        uri = (status or {}).get("path", {}) or {}
        location = uri.get("uri") if isinstance(uri, dict) else None
        if not location:
            raise CorruptFileError(
                f"bootstrap index entry of file group {partition!r}/{file_id} has no source file "
                "path; rerun the bootstrap into a new table"
            )
        return BootstrapFileMapping(
            source_base_path=self.source_base_path,
            source_partition_path=source_partition,
            source_file_name=str(location).rstrip("/").rsplit("/", 1)[-1],
            source_file_size=int(status.get("length") or 0),
            source_modification_time_ms=int(status.get("modificationTime") or 0),
            partition_path=partition,
            file_id=file_id,
        )

    @staticmethod
    def _partition_of(key: bytes) -> str:
        text = key.decode(errors="replace")
        if not text.startswith(PARTITION_KEY_PREFIX):
            raise CorruptFileError(
                f"{PARTITION_INDEX}: key {text!r} does not start with {PARTITION_KEY_PREFIX!r}; "
                "rerun the bootstrap into a new table"
            )
        return text[len(PARTITION_KEY_PREFIX) :]
