"""Apache Hudi's built-in key generators, applied to whole Arrow batches.

Record keys come in two shapes (KeyGenUtils):

- value: the single key field as a string. Null or empty is an error (`getRecordKey(record,
  field)`). Used by Simple, TimestampBased, and Nonpartitioned/Custom with one key field.
- composite: `field1:value1,field2:value2`, a null part written `__null__` and an empty one
  `__empty__`; only a row whose parts are all null or empty is an error. Used by Complex,
  GlobalDelete, and Nonpartitioned/Custom with several key fields.

ComplexKeyGenerator with one key field writes `field:value` (Hudi 0.14.0, and 0.14.2+/0.15.1+
by default) unless `hoodie.write.complex.keygen.new.encoding` is true, which gives the bare
value Hudi 0.14.1 and 0.15.0 wrote.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.config.table_options import HIVE_STYLE_PARTITIONING, URL_ENCODE_PARTITIONING
from hudi_core.errors import InvalidOptionError, PartitionPathError, RecordKeyError
from hudi_core.keygen.columns import as_table, bad_row_summary, field_values, rows_phrase
from hudi_core.keygen.partition import (
    UnsafePartitionPaths,
    escape_path_names,
    find_unsafe_partition_paths,
    join_parts,
    partition_part,
    with_hive_prefix,
)
from hudi_core.keygen.render import java_strings
from hudi_core.keygen.timestamp import TimestampSettings, timestamp_partition_text

NULL_RECORDKEY_PLACEHOLDER = "__null__"
EMPTY_RECORDKEY_PLACEHOLDER = "__empty__"
KEYGEN_PACKAGE = "org.apache.hudi.keygen."
# Table layouts that may make an unsafe partition path safe, tried in this order: the
# KeySettings flags to turn on, and how to ask for them.
_URL_ENCODE = f"{URL_ENCODE_PARTITIONING.key}=true (escapes '/' and control characters)"
_HIVE_STYLE = f"{HIVE_STYLE_PARTITIONING.key}=true (folders named '<field>=<value>')"
_LAYOUT_REMEDIES = (
    (("url_encode",), _URL_ENCODE),
    (("hive_style",), _HIVE_STYLE),
    (("url_encode", "hive_style"), f"{_URL_ENCODE} and {_HIVE_STYLE}"),
)


@dataclass(frozen=True)
class KeySettings:
    """The options every generator shares (BaseKeyGenerator)."""

    hive_style: bool = False
    url_encode: bool = False
    consistent_timestamps: bool = False
    complex_new_encoding: bool = False
    timestamp: TimestampSettings | None = None


class KeyGenerator:
    """Record keys and partition paths of Arrow batches, as one Apache Hudi key generator."""

    default_class_name = ""

    def __init__(
        self,
        record_key_fields: list[str],
        partition_path_fields: list[str],
        settings: KeySettings,
        class_name: str | None = None,
    ) -> None:
        self.class_name: str = class_name or self.default_class_name
        self.record_key_fields: list[str] = list(record_key_fields)
        self.partition_path_fields: list[str] = list(partition_path_fields)
        self.settings = settings

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(record_key_fields={self.record_key_fields}, "
            f"partition_path_fields={self.partition_path_fields})"
        )

    def record_keys(self, batch: pa.Table | pa.RecordBatch) -> pa.Array:
        """`_hoodie_record_key` of every row; raises RecordKeyError for a bad key."""
        table = as_table(batch)
        if not self.record_key_fields:
            raise InvalidOptionError(
                f"{self.class_name} has no record key fields; set "
                "hoodie.datasource.write.recordkey.field (auto-generated keys are not supported)"
            )
        consistent = self.settings.consistent_timestamps
        if self._composite_keys():
            return composite_record_keys(table, self.record_key_fields, consistent)
        return value_record_keys(table, self.record_key_fields[0], consistent)

    def partition_paths(self, batch: pa.Table | pa.RecordBatch) -> pa.Array:
        """`_hoodie_partition_path` of every row ("" for a non-partitioned table); raises
        PartitionPathError when a path is not safe as folders under the table's base path."""
        table = as_table(batch)
        paths = self._paths(table, self.settings)
        if self.partition_path_fields:
            unsafe = find_unsafe_partition_paths(paths)
            if unsafe is not None:
                raise PartitionPathError(self._unsafe_message(table, unsafe))
        return paths

    def _paths(self, table: pa.Table, settings: KeySettings) -> pa.Array:
        parts = [self._partition_part(table, f, settings) for f in self.partition_path_fields]
        return join_parts(parts, table.num_rows)

    def _unsafe_message(self, table: pa.Table, unsafe: UnsafePartitionPaths) -> str:
        fields = ", ".join(f"'{field}'" for field in self.partition_path_fields)
        noun = "field" if len(self.partition_path_fields) == 1 else "fields"
        return (
            f"{unsafe.describe()} (partition path {noun} {fields}); unsafe partition paths in "
            f"{rows_phrase(unsafe.count, unsafe.first)}. Partition values become folder names "
            f"under the table and must stay inside it; nothing was written. "
            f"{self._remedy(table.filter(unsafe.mask))}"
        )

    def _remedy(self, bad_rows: pa.Table) -> str:
        """Which table layout (url-encoding, hive style) would make these rows' paths safe."""
        for changes, what in _LAYOUT_REMEDIES:
            if any(getattr(self.settings, name) for name in changes):
                continue  # a flag already on is no remedy (nor any pair with it)
            flags: dict[str, Any] = dict.fromkeys(changes, True)
            settings = replace(self.settings, **flags)
            if find_unsafe_partition_paths(self._paths(bad_rows, settings)) is None:
                return f"A table created with {what} writes such values safely; or change them."
        return "Change these values so that every folder of the path is a plain name."

    def _composite_keys(self) -> bool:
        return len(self.record_key_fields) > 1

    def _partition_part(self, table: pa.Table, field: str, settings: KeySettings) -> pa.Array:
        return simple_partition_part(table, field, settings)


class SimpleKeyGenerator(KeyGenerator):
    default_class_name = KEYGEN_PACKAGE + "SimpleKeyGenerator"


class ComplexKeyGenerator(KeyGenerator):
    default_class_name = KEYGEN_PACKAGE + "ComplexKeyGenerator"

    def _composite_keys(self) -> bool:
        return len(self.record_key_fields) > 1 or not self.settings.complex_new_encoding


class TimestampBasedKeyGenerator(KeyGenerator):
    default_class_name = KEYGEN_PACKAGE + "TimestampBasedKeyGenerator"

    def _partition_part(self, table: pa.Table, field: str, settings: KeySettings) -> pa.Array:
        return timestamp_partition_part(table, field, settings)


class NonpartitionedKeyGenerator(KeyGenerator):
    default_class_name = KEYGEN_PACKAGE + "NonpartitionedKeyGenerator"


class GlobalDeleteKeyGenerator(KeyGenerator):
    default_class_name = KEYGEN_PACKAGE + "GlobalDeleteKeyGenerator"

    def _composite_keys(self) -> bool:
        return True


class CustomKeyGenerator(KeyGenerator):
    """Partition fields typed `field:SIMPLE` or `field:TIMESTAMP`, one part each."""

    default_class_name = KEYGEN_PACKAGE + "CustomKeyGenerator"

    def __init__(
        self,
        record_key_fields: list[str],
        partition_path_types: list[tuple[str, str]],
        settings: KeySettings,
        class_name: str | None = None,
    ) -> None:
        super().__init__(
            record_key_fields, [name for name, _ in partition_path_types], settings, class_name
        )
        self.partition_path_types = dict(partition_path_types)

    def _partition_part(self, table: pa.Table, field: str, settings: KeySettings) -> pa.Array:
        if self.partition_path_types[field] == "TIMESTAMP":
            return timestamp_partition_part(table, field, settings)
        return simple_partition_part(table, field, settings)


# --- record keys --------------------------------------------------------------------------


def value_record_keys(table: pa.Table, field: str, consistent_timestamps: bool) -> pa.Array:
    """The key field's string; null or empty values are an error (KeyGenUtils.getRecordKey)."""
    label = f"record key field '{field}'"
    text = java_strings(field_values(table, field, "record key"), label, consistent_timestamps)
    nulls = text.is_null()
    empties = pc.equal(pc.fill_null(text, "-"), "")
    bad = pc.or_(nulls, empties)
    count, first = bad_row_summary(bad)
    if count:
        null_count, _ = bad_row_summary(nulls)
        what = "null" if null_count == count else "empty" if null_count == 0 else "null or empty"
        raise RecordKeyError(f"{label} is {what} in {rows_phrase(count, first)}")
    return text


def composite_record_keys(
    table: pa.Table, fields: list[str], consistent_timestamps: bool
) -> pa.Array:
    """`f1:v1,f2:v2` with __null__/__empty__ parts; a row with no real value is an error."""
    parts = []
    all_missing: pa.Array | None = None
    for field in fields:
        label = f"record key field '{field}'"
        text = java_strings(field_values(table, field, "record key"), label, consistent_timestamps)
        nulls = text.is_null()
        empties = pc.equal(pc.fill_null(text, "-"), "")
        value = pc.if_else(
            nulls,
            NULL_RECORDKEY_PLACEHOLDER,
            pc.if_else(empties, EMPTY_RECORDKEY_PLACEHOLDER, text),
        )
        parts.append(pc.binary_join_element_wise(f"{field}:", value, ""))
        missing = pc.or_(nulls, empties)
        all_missing = missing if all_missing is None else pc.and_(all_missing, missing)
    count, first = bad_row_summary(all_missing)
    if count:
        names = ", ".join(f"'{field}'" for field in fields)
        raise RecordKeyError(
            f"record key fields {names} are all null or empty in {rows_phrase(count, first)}"
        )
    return parts[0] if len(parts) == 1 else pc.binary_join_element_wise(*parts, ",")


# --- partition parts ----------------------------------------------------------------------


def simple_partition_part(table: pa.Table, field: str, settings: KeySettings) -> pa.Array:
    label = f"partition path field '{field}'"
    values = field_values(table, field, "partition path")
    text = java_strings(values, label, settings.consistent_timestamps)
    return partition_part(text, field, settings.hive_style, settings.url_encode)


def timestamp_partition_part(table: pa.Table, field: str, settings: KeySettings) -> pa.Array:
    """TimestampBasedAvroKeyGenerator.getPartitionPath: format, then encode, then hive style."""
    if settings.timestamp is None:
        raise InvalidOptionError("timestamp partition fields need hoodie.keygen.timebased.*")
    label = f"partition path field '{field}'"
    values = field_values(table, field, "partition path")
    text = timestamp_partition_text(values, label, settings.timestamp)
    if settings.url_encode:
        text = escape_path_names(text)
    return with_hive_prefix(text, field, settings.hive_style)
