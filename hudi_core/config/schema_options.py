"""Options deciding how a write may change the table's schema (Apache Hudi 0.14 names, defaults)."""

from hudi_core.config.option import ConfigOption, parse_bool

RECONCILE_SCHEMA = ConfigOption(
    "hoodie.datasource.write.reconcile.schema",
    False,
    "Keep the table's schema when a batch lacks some of its columns (legacy reconciliation): the "
    "missing columns stay in the schema and are written as nulls.",
    parse=parse_bool,
)
SET_NULL_FOR_MISSING_COLUMNS = ConfigOption(
    "hoodie.write.set.null.for.missing.columns",
    False,
    "Fill table columns the incoming batch lacks with nulls instead of failing the write.",
    parse=parse_bool,
)
SCHEMA_ALLOW_AUTO_EVOLUTION_COLUMN_DROP = ConfigOption(
    "hoodie.datasource.write.schema.allow.auto.evolution.column.drop",
    False,
    "Let a batch that lacks some table columns drop them from the table's schema instead of "
    "failing the write.",
    parse=parse_bool,
)
MAKE_NEW_COLUMNS_NULLABLE = ConfigOption(
    "hoodie.datasource.write.new.columns.nullable",
    False,
    "Add a new non-nullable column of the batch to the table as nullable instead of failing the "
    "write (existing rows have no value for it).",
    parse=parse_bool,
)
