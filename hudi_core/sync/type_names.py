"""What each Arrow primitive type of a table column is called in Hive and in Spark's schema
JSON, as Apache Hudi's sync names them (Hive after parquet: long is bigint, fixed is binary).
Timestamps and decimals depend on options or parameters and are named by the callers."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.types as t

# (Arrow type check, Hive name, Spark name); None: that engine has no such type.
_PRIMITIVES = (
    (t.is_boolean, "boolean", "boolean"),
    (t.is_int8, "int", "byte"),
    (t.is_int16, "int", "short"),
    (t.is_int32, "int", "integer"),
    (t.is_int64, "bigint", "long"),
    (t.is_float32, "float", "float"),
    (t.is_float64, "double", "double"),
    (t.is_string, "string", "string"),
    (t.is_large_string, "string", "string"),
    (t.is_binary, "binary", "binary"),
    (t.is_large_binary, "binary", "binary"),
    (t.is_fixed_size_binary, "binary", "binary"),
    (t.is_date32, "date", "date"),
    (t.is_time32, "int", None),
    (t.is_time64, "bigint", None),
    (t.is_dictionary, "string", "string"),
    (t.is_duration, "binary", "binary"),  # Avro's duration: a fixed(12), binary in Parquet
)


def hive_name(dtype: pa.DataType) -> str | None:
    return next((hive for check, hive, _ in _PRIMITIVES if check(dtype)), None)


def spark_name(dtype: pa.DataType) -> str | None:
    return next((spark for check, _, spark in _PRIMITIVES if check(dtype)), None)
