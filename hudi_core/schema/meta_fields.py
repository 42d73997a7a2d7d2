"""Hudi's meta columns: the five every record carries (plus the optional operation column)."""

from __future__ import annotations

import pyarrow as pa

COMMIT_TIME_FIELD = "_hoodie_commit_time"
COMMIT_SEQNO_FIELD = "_hoodie_commit_seqno"
RECORD_KEY_FIELD = "_hoodie_record_key"
PARTITION_PATH_FIELD = "_hoodie_partition_path"
FILE_NAME_FIELD = "_hoodie_file_name"
OPERATION_FIELD = "_hoodie_operation"

# `_hoodie_operation` values (Apache Hudi's HoodieOperation): insert, the row before an update,
# the row after it, delete. The second and the last take their record away.
INSERT_OPERATION, UPDATE_BEFORE_OPERATION, UPDATE_OPERATION, DELETE_OPERATION = "I", "-U", "U", "D"
REMOVING_OPERATIONS = (UPDATE_BEFORE_OPERATION, DELETE_OPERATION)

META_FIELDS: list[str] = [
    COMMIT_TIME_FIELD,
    COMMIT_SEQNO_FIELD,
    RECORD_KEY_FIELD,
    PARTITION_PATH_FIELD,
    FILE_NAME_FIELD,
]
_ALL_META_FIELDS = frozenset([*META_FIELDS, OPERATION_FIELD])


def is_meta_field(name: str) -> bool:
    """True for the five meta columns and `_hoodie_operation`."""
    return name in _ALL_META_FIELDS


def meta_field_names(with_operation_field: bool = False) -> list[str]:
    return [*META_FIELDS, OPERATION_FIELD] if with_operation_field else list(META_FIELDS)


def strip_meta_fields(schema: pa.Schema) -> pa.Schema:
    """`schema` without any meta column (schema metadata kept)."""
    keep = [field for field in schema if not is_meta_field(field.name)]
    return pa.schema(keep, metadata=schema.metadata)


def add_meta_fields(
    schema: pa.Schema, *, with_operation_field: bool = False, nullable: bool = False
) -> pa.Schema:
    """Meta columns first, then the data columns of `schema`.

    Meta columns are strings; non-nullable by default, as the `hudi` package (hudi-rs) reports
    them. A meta column already in `schema` moves to its place at the front, and stays nullable
    if it was.
    """
    existing = {field.name: field for field in schema if is_meta_field(field.name)}
    meta = []
    for name in meta_field_names(with_operation_field):
        was_nullable = existing[name].nullable if name in existing else False
        meta.append(pa.field(name, pa.string(), nullable=nullable or was_nullable))
    rest = [field for field in schema if field.name not in {f.name for f in meta}]
    return pa.schema([*meta, *rest], metadata=schema.metadata)
