"""The archived timeline of table version 6 (timeline layout 1), as Apache Hudi 0.14/0.15 keeps it.

Archival moves the oldest instants off the active timeline into Hudi log files in the archive
folder (`.hoodie/archived`, or what `hoodie.archivelog.folder` names), called
`.commits_.archive.<version>_<writeToken>`: file id `commits`, an empty base instant,
extension `.archive`, versions from 1 and write token `1-0-1`.

Each archived instant file (every state of an archived instant) becomes one
HoodieArchivedMetaEntry record: its time, action and state, the time its file was written
(stateTransitionTime) and its content in the field for its action. Commit metadata, JSON on
the active timeline, is converted to the Avro HoodieCommitMetadata the way Java does it: only
the fields that schema declares survive, and `version` stays null.

Records are written in Avro data blocks of at most `batch_size` records (Java's
hoodie.commits.archival.batch, 10) whose header holds only the SCHEMA. Java appends to the
latest archive file on file systems that support append (HDFS); on the others (local, object
stores: all `Storage` offers) every archival run rolls over to a new file one version up. So
do we: each call writes a new file.
"""

from __future__ import annotations

import io
import json
import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC
from typing import Any

import fastavro

from hudi_core.config.table_config import METAFOLDER
from hudi_core.errors import (
    ConcurrentServiceError,
    CorruptFileError,
    InvalidOptionError,
    ServiceError,
)
from hudi_core.io.log_format import BlockType, HeaderKey, LogBlock, read_log_blocks
from hudi_core.storage import Storage
from hudi_core.timeline import avro_metadata
from hudi_core.timeline.instant import (
    CLEAN,
    COMMIT,
    COMPACTION,
    DELTA_COMMIT,
    INDEXING,
    LOG_COMPACTION,
    REPLACE_COMMIT,
    ROLLBACK,
    SAVEPOINT,
    Instant,
    State,
)
from hudi_core.timeline.instant_time import format_instant_time

ARCHIVE_FILE_PREFIX = ".commits_.archive"
WRITE_TOKEN = "1-0-1"  # Java's rollover (unknown) write token
DEFAULT_BATCH_SIZE = 10  # hoodie.commits.archival.batch
ENTRY_SCHEMA_NAME = "HoodieArchivedMetaEntry"
_VERSION_PATTERN = re.compile(r"^\.commits_\.archive\.(\d+)")
_CONTENT_VERSION = 3
_INT = struct.Struct(">i")
_CREATE_ATTEMPTS = 5

_ENTRY_SCHEMA = avro_metadata.schema_of(ENTRY_SCHEMA_NAME)
_ENTRY_SCHEMA_JSON = json.dumps(_ENTRY_SCHEMA, separators=(",", ":"))
_ENTRY_PARSED = avro_metadata.parsed_schema(ENTRY_SCHEMA_NAME)
_WRITE_STAT_FIELDS = [f["name"] for f in avro_metadata.schema_of("HoodieWriteStat")["fields"]]
# Where each action's content goes: (field when completed, field when pending).
_FIELDS = {
    COMMIT: ("hoodieCommitMetadata", "hoodieCommitMetadata"),
    DELTA_COMMIT: ("hoodieCommitMetadata", "hoodieCommitMetadata"),
    CLEAN: ("hoodieCleanMetadata", "hoodieCleanerPlan"),
    ROLLBACK: ("hoodieRollbackMetadata", None),  # Java does not archive rollback plans
    SAVEPOINT: ("hoodieSavePointMetadata", "hoodieSavePointMetadata"),
    COMPACTION: ("hoodieCompactionPlan", "hoodieCompactionPlan"),
    LOG_COMPACTION: ("hoodieCompactionPlan", "hoodieCompactionPlan"),
    INDEXING: ("hoodieIndexCommitMetadata", None),
}
_REPLACE_FIELDS = {
    State.REQUESTED: "hoodieRequestedReplaceMetadata",
    State.INFLIGHT: "HoodieInflightReplaceMetadata",
    State.COMPLETED: "hoodieReplaceCommitMetadata",
}
_JSON_FIELDS = {
    "hoodieCommitMetadata",
    "HoodieInflightReplaceMetadata",
    "hoodieReplaceCommitMetadata",
}


@dataclass(frozen=True)
class ArchivedEntry:
    """One archived instant file.

    `metadata` is its content decoded: the commit metadata JSON dict for commits, deltacommits
    and replacecommits (requested replacecommits: the HoodieRequestedReplaceMetadata record),
    the Avro record dict for cleans, rollbacks, savepoints and compaction plans, None for an
    empty file. Read back, commit metadata is the Avro HoodieCommitMetadata as a JSON dict,
    which is what Java's archived timeline hands out as the instant's details.

    Content the archived record has no place for is not kept, as in Java: rollback plans,
    restore metadata. A compaction's plan is read from the INFLIGHT entry by Java, so pass
    the plan with both the requested and the inflight instant.
    """

    instant: Instant
    metadata: dict[str, Any] | None = None
    state_transition_time: str | None = None  # yyyyMMddHHmmssSSS the state's file was written


def archive_folder_path(archivelog_folder: str = "archived") -> str:
    """The archive folder relative to the base path, for a `hoodie.archivelog.folder` value."""
    return f"{METAFOLDER}/{archivelog_folder}"


# ---- writing


def archive_instants(
    storage: Storage,
    archive_folder: str,
    entries: list[ArchivedEntry],
    batch_size: int = DEFAULT_BATCH_SIZE,
    timezone: str = "LOCAL",
) -> str:
    """Writes `entries`, in order, to a new archive file one version above the latest; returns
    its path. An entry without a state_transition_time gets its instant file's modification
    time (in the table's timeline `timezone`), as Java records it, if the file is still there.
    """
    if not entries:
        raise ServiceError("no instants to archive")
    if batch_size < 1:
        raise InvalidOptionError(
            f"option hoodie.commits.archival.batch={batch_size}: archived instants per block "
            "must be positive"
        )
    records = [to_record(_with_transition_time(storage, e, timezone)) for e in entries]
    data = b"".join(
        _data_block(records[i : i + batch_size]).to_bytes()
        for i in range(0, len(records), batch_size)
    )
    for _ in range(_CREATE_ATTEMPTS):  # a concurrent archiver may take the same version
        path = f"{archive_folder}/{archive_file_name(_latest_version(storage, archive_folder) + 1)}"
        try:
            storage.create_new(path, data)
            return path
        except FileExistsError:
            continue
    raise ConcurrentServiceError(
        f"could not create a new archive file in {archive_folder}: other archivers took "
        f"{_CREATE_ATTEMPTS} versions in a row; archive again"
    )


def archive_file_name(version: int) -> str:
    return f"{ARCHIVE_FILE_PREFIX}.{version}_{WRITE_TOKEN}"


def to_record(entry: ArchivedEntry) -> dict[str, Any]:
    """The HoodieArchivedMetaEntry record of an entry, as Java's MetadataConversionUtils
    builds it."""
    instant = entry.instant
    record: dict[str, Any] = {
        "commitTime": instant.timestamp,
        "actionType": instant.action,
        "actionState": instant.state.value,
        "stateTransitionTime": entry.state_transition_time,
    }
    if instant.is_completed and entry.metadata is None:
        return record  # an empty completed file: Java archives the bare instant
    field = _content_field(instant)
    if field is None:
        return record
    if entry.metadata is None and instant.action == REPLACE_COMMIT:
        return record  # an empty pending replacecommit file (insert_overwrite) carries nothing
    if field in _JSON_FIELDS:
        replace = field == "hoodieReplaceCommitMetadata"
        record[field] = commit_metadata_to_avro(entry.metadata, replace)
    elif entry.metadata is not None:
        record[field] = entry.metadata
    return record


def _content_field(instant: Instant) -> str | None:
    if instant.action == REPLACE_COMMIT:
        return _REPLACE_FIELDS[instant.state]
    completed, pending = _FIELDS.get(instant.action, (None, None))
    return completed if instant.is_completed else pending


def commit_metadata_to_avro(
    metadata: dict[str, Any] | None, replace: bool = False
) -> dict[str, Any]:
    """Commit metadata JSON as the Avro HoodieCommitMetadata (or HoodieReplaceCommitMetadata).

    Java converts through Jackson into the Avro class: fields the Avro schema lacks are
    dropped, absent ones stay null (`version` too), an empty file is an empty metadata object
    (operation UNKNOWN), a compaction's operation is COMPACT.
    """
    metadata = metadata or {}
    stats = metadata.get("partitionToWriteStats") or {}
    operation = metadata.get("operationType", "UNKNOWN")
    record: dict[str, Any] = {
        "partitionToWriteStats": {
            partition: [_write_stat(stat) for stat in partition_stats or []]
            for partition, partition_stats in stats.items()
            if partition is not None
        },
        "extraMetadata": dict(metadata.get("extraMetadata") or {}),
        "version": None,
        "operationType": "COMPACT" if metadata.get("compacted") else operation,
    }
    if replace:
        replaced = metadata.get("partitionToReplaceFileIds") or {}
        record["partitionToReplaceFileIds"] = {
            p: list(ids or []) for p, ids in replaced.items() if p is not None
        }
    return record


def _write_stat(stat: dict[str, Any]) -> dict[str, Any]:
    return {name: stat.get(name) for name in _WRITE_STAT_FIELDS}


def _with_transition_time(storage: Storage, entry: ArchivedEntry, timezone: str) -> ArchivedEntry:
    if entry.state_transition_time is not None:
        return entry
    info = storage.fs.get_file_info(storage.full_path(f"{METAFOLDER}/{entry.instant.file_name}"))
    if info.mtime is None:
        return entry
    moment = info.mtime.astimezone(UTC if timezone == "UTC" else None).replace(tzinfo=None)
    return ArchivedEntry(entry.instant, entry.metadata, format_instant_time(moment))


def _data_block(records: list[dict[str, Any]]) -> LogBlock:
    """An Avro data block as Java's archiver writes it: the SCHEMA is its only header."""
    parts = [_INT.pack(_CONTENT_VERSION), _INT.pack(len(records))]
    for record in records:
        out = io.BytesIO()
        fastavro.schemaless_writer(out, _ENTRY_PARSED, record)
        datum = out.getvalue()
        parts += [_INT.pack(len(datum)), datum]
    return LogBlock(BlockType.AVRO_DATA, {HeaderKey.SCHEMA: _ENTRY_SCHEMA_JSON}, b"".join(parts))


# ---- reading


def archive_files(storage: Storage, archive_folder: str) -> list[str]:
    """The archive files, oldest (lowest version) first."""
    names = [
        entry.path
        for entry in storage.list_files(archive_folder)
        if entry.name.startswith(ARCHIVE_FILE_PREFIX)
    ]
    return sorted(names, key=lambda path: _version_of(path.rsplit("/", 1)[-1]))


def read_archived_instants(storage: Storage, archive_folder: str) -> list[ArchivedEntry]:
    """Every archived instant file's entry, sorted by time, action and state.

    Damaged blocks (a crash mid-write) are skipped, as Java's reader does; an Avro data block
    whose records cannot be decoded raises CorruptFileError. An instant archived twice (in
    two files) counts once, from the older file.
    """
    found: dict[tuple[str, str, State], ArchivedEntry] = {}
    for path in archive_files(storage, archive_folder):
        for record in read_archive_file(storage, path):
            entry = from_record(record)
            key = (entry.instant.timestamp, entry.instant.action, entry.instant.state)
            found.setdefault(key, entry)
    return sorted(found.values(), key=lambda e: _sort_key(e.instant))


def read_archive_file(storage: Storage, path: str) -> Iterator[dict[str, Any]]:
    """The HoodieArchivedMetaEntry records of one archive file, in the order written."""
    for block in read_log_blocks(storage, path):
        if block.block_type is not BlockType.AVRO_DATA:
            continue  # corrupt stretches; Java only reads Avro data blocks here
        yield from _block_records(block, path)


def _block_records(block: LogBlock, path: str) -> Iterator[dict[str, Any]]:
    try:
        writer_schema = fastavro.parse_schema(json.loads(block.header[HeaderKey.SCHEMA]))
        datums = list(_datums(block.content))
    except (
        KeyError,
        ValueError,
        struct.error,
        fastavro.schema.SchemaParseException,
        CorruptFileError,
    ) as exc:
        raise CorruptFileError(f"{path}: unreadable archived block: {exc}") from exc
    for datum in datums:
        yield _decode(datum, writer_schema, path)


def _datums(content: bytes) -> Iterator[bytes]:
    version, count = struct.unpack_from(">ii", content, 0)
    if version != _CONTENT_VERSION:
        raise CorruptFileError(f"Avro data block version {version} is not supported")
    offset = 8
    for _ in range(count):
        (length,) = _INT.unpack_from(content, offset)
        offset += _INT.size
        if length < 0 or offset + length > len(content):
            raise CorruptFileError("a record runs past the end of its block")
        yield content[offset : offset + length]
        offset += length


def _decode(datum: bytes, writer_schema: Any, path: str) -> dict[str, Any]:
    """A record, resolved to our declared schema so that files of other Hudi versions read
    the same; one the declared schema cannot resolve is read as written."""
    try:
        try:
            record = fastavro.schemaless_reader(io.BytesIO(datum), writer_schema, _ENTRY_PARSED)
        except fastavro.read.SchemaResolutionError:
            record = fastavro.schemaless_reader(io.BytesIO(datum), writer_schema, None)
    except (EOFError, ValueError, IndexError, UnicodeDecodeError) as exc:
        raise CorruptFileError(f"{path}: undecodable archived record: {exc}") from exc
    if not isinstance(record, dict):
        raise CorruptFileError(
            f"{path}: an archived entry is an Avro {type(record).__name__}, not a record"
        )
    return record


def from_record(record: dict[str, Any]) -> ArchivedEntry:
    """The entry a HoodieArchivedMetaEntry record stands for (very old records have no state:
    they are completed instants, as Java reads them)."""
    state_name = record.get("actionState")
    state = State[state_name] if state_name else State.COMPLETED
    instant = Instant(record["commitTime"], record["actionType"], state)
    return ArchivedEntry(instant, _content_of(record, instant), record.get("stateTransitionTime"))


def _content_of(record: dict[str, Any], instant: Instant) -> dict[str, Any] | None:
    field = _content_field(instant)
    content = record.get(field) if field is not None else None
    return content if isinstance(content, dict) else None


def _latest_version(storage: Storage, archive_folder: str) -> int:
    files = archive_files(storage, archive_folder)
    return max((_version_of(p.rsplit("/", 1)[-1]) for p in files), default=0)


def _version_of(name: str) -> int:
    match = _VERSION_PATTERN.match(name)
    return int(match.group(1)) if match else 0  # Java counts unparsable names as version 0


_COMPARABLE_ACTION = {COMPACTION: COMMIT, LOG_COMPACTION: DELTA_COMMIT}


def _sort_key(instant: Instant) -> tuple[str, str, int]:
    """Java's instant order: time, then action (a compaction sorts as the commit it becomes),
    then state."""
    return (
        instant.timestamp,
        _COMPARABLE_ACTION.get(instant.action, instant.action),
        instant.state.rank,
    )


def entry_schema() -> dict[str, Any]:
    """The HoodieArchivedMetaEntry schema written into every archive block's header."""
    return avro_metadata.schema_of(ENTRY_SCHEMA_NAME)
