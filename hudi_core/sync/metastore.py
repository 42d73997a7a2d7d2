"""What Hive sync needs from a metastore, whatever the way to it (thrift, HiveServer2, the
Spark driver's embedded metastore): a table's definition and its partitions, read and changed.

Definitions are plain data so that every backend maps them the same way and tests can compare
what each backend stored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # a Hive type string: bigint, string, struct<a:int>, decimal(10,2), ...
    comment: str = ""


@dataclass(frozen=True)
class TableDefinition:
    """A Hive table as Apache Hudi's sync defines it (always EXTERNAL)."""

    database: str
    name: str
    columns: tuple[Column, ...]
    partition_keys: tuple[Column, ...]
    location: str
    input_format: str
    output_format: str
    serde: str
    serde_properties: Mapping[str, str] = field(default_factory=dict)
    table_properties: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Partition:
    values: tuple[str, ...]  # in partition_keys order
    location: str  # "" when the backend cannot tell (HiveQL lists partitions without them)


class Metastore(Protocol):
    """The operations Hive sync performs. Implementations raise SyncError with the backend's
    own message when the metastore refuses an operation."""

    def database_exists(self, database: str) -> bool: ...

    def create_database(self, database: str) -> None: ...

    def get_table(self, database: str, name: str) -> TableDefinition | None: ...

    def create_table(self, table: TableDefinition) -> None: ...

    def update_columns(self, table: TableDefinition) -> None:
        """Sets the table's data columns to table.columns, partitions' columns too (cascade)."""

    def set_table_properties(self, database: str, name: str, properties: Mapping[str, str]) -> None:
        """Adds or replaces these table properties, leaving the others."""

    def list_partitions(self, database: str, name: str) -> list[Partition]: ...

    def add_partitions(self, table: TableDefinition, partitions: Iterable[Partition]) -> None: ...

    def set_partition_locations(
        self, table: TableDefinition, partitions: Iterable[Partition]
    ) -> None: ...

    def drop_partitions(self, table: TableDefinition, values: Iterable[tuple[str, ...]]) -> None:
        """Drops partitions from the metastore only; their files stay (tables are external)."""

    def close(self) -> None: ...
