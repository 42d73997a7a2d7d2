"""The table schema: Arrow <-> Avro as Apache Hudi writes and reads it, and evolution on write.

- `arrow_to_avro` / `arrow_to_avro_json`: the Avro schema Hudi records in commit metadata, base
  file footers and log block headers; `arrow_to_create_schema` for `hoodie.table.create.schema`.
- `avro_to_arrow` / `table_schema_from_commit`: the Arrow schema a reader returns (as hudi-rs).
- `reconcile_write_schema` / `deduce_writer_schema`: the schema a new commit gets;
  `cast_batch_to_schema` conforms a batch to it.
- `META_FIELDS`, `OPERATION_FIELD`, `add_meta_fields`, `strip_meta_fields`.
"""

from hudi_core.schema.evolution import (
    EvolutionPolicy,
    cast_batch_to_schema,
    deduce_writer_schema,
    normalize_schema,
    normalize_type,
    reconcile_write_schema,
)
from hudi_core.schema.meta_fields import (
    META_FIELDS,
    OPERATION_FIELD,
    add_meta_fields,
    is_meta_field,
    meta_field_names,
    strip_meta_fields,
)
from hudi_core.schema.to_arrow import avro_to_arrow, parse_avro_schema, table_schema_from_commit
from hudi_core.schema.to_avro import (
    arrow_to_avro,
    arrow_to_avro_json,
    arrow_to_create_schema,
    avro_record_name,
    avro_schema_json,
    decimal_fixed_size,
    meta_avro_fields,
    sanitize_avro_name,
)

__all__ = [
    "META_FIELDS",
    "OPERATION_FIELD",
    "EvolutionPolicy",
    "add_meta_fields",
    "arrow_to_avro",
    "arrow_to_avro_json",
    "arrow_to_create_schema",
    "avro_record_name",
    "avro_schema_json",
    "avro_to_arrow",
    "cast_batch_to_schema",
    "decimal_fixed_size",
    "deduce_writer_schema",
    "is_meta_field",
    "meta_avro_fields",
    "meta_field_names",
    "normalize_schema",
    "normalize_type",
    "parse_avro_schema",
    "reconcile_write_schema",
    "sanitize_avro_name",
    "strip_meta_fields",
    "table_schema_from_commit",
]
