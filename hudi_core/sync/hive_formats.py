"""How Apache Hudi defines its Hive tables: the input format of each query type, the parquet
serde and output format, and the table name suffixes of a merge-on-read table."""

from __future__ import annotations

from dataclasses import dataclass, field

READ_OPTIMIZED_INPUT_FORMAT = "org.apache.hudi.hadoop.HoodieParquetInputFormat"
SNAPSHOT_INPUT_FORMAT = "org.apache.hudi.hadoop.realtime.HoodieParquetRealtimeInputFormat"
OUTPUT_FORMAT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
QUERY_AS_RO_TABLE = "hoodie.query.as.ro.table"  # tells Spark's hudi source which view to read


@dataclass(frozen=True)
class TableKind:
    suffix: str
    input_format: str
    read_optimized: bool
    serde_properties: dict[str, str] = field(default_factory=dict)


def table_kinds(merge_on_read: bool, skip_ro_suffix: bool) -> list[TableKind]:
    """COW: `<table>`. MOR: `<table>_ro` (or `<table>` with skip_ro_suffix), then `<table>_rt`."""
    if not merge_on_read:
        return [TableKind("", READ_OPTIMIZED_INPUT_FORMAT, False)]
    return [
        TableKind("" if skip_ro_suffix else "_ro", READ_OPTIMIZED_INPUT_FORMAT, True),
        TableKind("_rt", SNAPSHOT_INPUT_FORMAT, False),
    ]
