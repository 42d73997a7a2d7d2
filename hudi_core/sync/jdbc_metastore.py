"""Metastore over HiveQL, through HiveServer2's protocol (Hive's HiveServer2, or the Spark
Thrift Server), with PyHive. The statements are Apache Hudi's jdbc-mode DDL, in the subset
both Hive and Spark SQL accept: columns are added with ADD COLUMNS (Spark has no REPLACE
COLUMNS for Hive tables), and CASCADE is used only where the server understands it.

Reads use what both servers answer: SHOW DATABASES / TABLES / PARTITIONS, DESCRIBE and SHOW
TBLPROPERTIES; partition locations are not listed, so a moved partition is not detected.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TypeVar
from urllib.parse import unquote, urlparse

from hudi_core.errors import SyncError
from hudi_core.sync.identifiers import literal, quoted
from hudi_core.sync.metastore import Column, Partition, TableDefinition

_SPARK_REFUSES_PREFIX = "spark.sql."
T = TypeVar("T")


class JdbcMetastore:
    def __init__(self, connection: Any, batch_size: int = 1000) -> None:
        self.connection = connection
        self.batch_size = max(batch_size, 1)

    # ---- statements

    def _run(self, statement: str, what: str) -> list[tuple[Any, ...]]:
        cursor = self.connection.cursor()
        try:
            cursor.execute(statement)
            return list(cursor.fetchall()) if cursor.description else []
        except Exception as exc:  # the driver's errors carry the server's message
            message = _server_message(exc)
            raise SyncError(_explained(f"HiveServer2 refused to {what}: {message}")) from exc
        finally:
            cursor.close()

    # ---- reads

    def database_exists(self, database: str) -> bool:
        rows = self._run("SHOW DATABASES", "list databases")
        return database.lower() in {str(row[0]).lower() for row in rows}

    def get_table(self, database: str, name: str) -> TableDefinition | None:
        rows = self._run(f"SHOW TABLES IN {quoted(database, 'database')}", "list tables")
        names = {str(row[1] if len(row) > 2 else row[0]).lower() for row in rows}
        if name.lower() not in names:
            return None
        target = _table(database, name)
        columns, keys = _described_columns(self._run(f"DESCRIBE {target}", f"describe {target}"))
        properties = dict(self._run(f"SHOW TBLPROPERTIES {target}", f"read {target}'s properties"))
        return TableDefinition(
            database=database,
            name=name,
            columns=columns,
            partition_keys=keys,
            location="",
            input_format="",
            output_format="",
            serde="",
            table_properties={str(k): str(v) for k, v in properties.items()},
        )

    def list_partitions(self, database: str, name: str) -> list[Partition]:
        target = _table(database, name)
        rows = self._run(f"SHOW PARTITIONS {target}", f"list the partitions of {target}")
        return [Partition(_spec_values(str(row[0])), "") for row in rows]

    # ---- changes

    def create_database(self, database: str) -> None:
        self._run(f"CREATE DATABASE IF NOT EXISTS {quoted(database, 'database')}", "create it")

    def create_table(self, table: TableDefinition) -> None:
        parts = [
            f"CREATE EXTERNAL TABLE IF NOT EXISTS {_table(table.database, table.name)}"
            f"({_column_list(table.columns)})"
        ]
        if table.partition_keys:
            parts.append(f"PARTITIONED BY ({_column_list(table.partition_keys)})")
        parts.append(f"ROW FORMAT SERDE {literal(table.serde)}")
        if table.serde_properties:
            parts.append(f"WITH SERDEPROPERTIES ({_property_list(table.serde_properties)})")
        parts.append(
            f"STORED AS INPUTFORMAT {literal(table.input_format)} "
            f"OUTPUTFORMAT {literal(table.output_format)}"
        )
        parts.append(f"LOCATION {literal(table.location)}")
        if table.table_properties:
            parts.append(f"TBLPROPERTIES ({_property_list(table.table_properties)})")
        self._run(" ".join(parts), f"create table {table.database}.{table.name}")

    def update_columns(self, table: TableDefinition) -> None:
        target = _table(table.database, table.name)
        existing = self.get_table(table.database, table.name)
        if existing is None:
            raise SyncError(f"cannot change the columns of {target}: the table does not exist")
        current = {c.name: c for c in existing.columns}
        added = [c for c in table.columns if c.name not in current]
        for column in table.columns:
            old = current.get(column.name)
            if old is not None and old.type != column.type:
                name = quoted(column.name, "column")
                self._cascading(f"ALTER TABLE {target} CHANGE COLUMN {name} {name} {column.type}")
        if added:
            self._cascading(f"ALTER TABLE {target} ADD COLUMNS ({_column_list(added)})")

    def _cascading(self, statement: str) -> None:
        """Hive needs CASCADE to change the partitions' columns too; Spark SQL has no such
        clause (its partitions take the table's columns), so it is dropped there."""
        try:
            self._run(f"{statement} CASCADE", "alter the table's columns")
        except SyncError as exc:
            if "cascade" not in str(exc).lower() and "parse" not in str(exc).lower():
                raise
            self._run(statement, "alter the table's columns")

    def set_table_properties(self, database: str, name: str, properties: Mapping[str, str]) -> None:
        target = _table(database, name)
        self._run(
            f"ALTER TABLE {target} SET TBLPROPERTIES ({_property_list(properties)})",
            f"set {target}'s properties",
        )

    def add_partitions(self, table: TableDefinition, partitions: Iterable[Partition]) -> None:
        target = _table(table.database, table.name)
        for batch in _batches(list(partitions), self.batch_size):
            specs = " ".join(
                f"PARTITION ({_spec(table, p.values)}) LOCATION {literal(p.location)}"
                for p in batch
            )
            self._run(
                f"ALTER TABLE {target} ADD IF NOT EXISTS {specs}", f"add partitions to {target}"
            )

    def set_partition_locations(
        self, table: TableDefinition, partitions: Iterable[Partition]
    ) -> None:
        target = _table(table.database, table.name)
        for p in partitions:
            self._run(
                f"ALTER TABLE {target} PARTITION ({_spec(table, p.values)}) "
                f"SET LOCATION {literal(p.location)}",
                f"move a partition of {target}",
            )

    def drop_partitions(self, table: TableDefinition, values: Iterable[tuple[str, ...]]) -> None:
        target = _table(table.database, table.name)
        for batch in _batches(list(values), self.batch_size):
            specs = ", ".join(f"PARTITION ({_spec(table, v)})" for v in batch)
            self._run(
                f"ALTER TABLE {target} DROP IF EXISTS {specs}", f"drop partitions of {target}"
            )

    def close(self) -> None:
        self.connection.close()


def connect_jdbc(url: str, username: str, password: str, batch_size: int = 1000) -> JdbcMetastore:
    """A HiveServer2 session at jdbc:hive2://host:port[/database]."""
    from pyhive import hive

    parsed = urlparse(url.removeprefix("jdbc:"))
    if parsed.scheme != "hive2" or not parsed.hostname:
        raise SyncError(f"JDBC URL {url!r} is not jdbc:hive2://host:port[/database]")
    try:
        connection = hive.connect(
            host=parsed.hostname,
            port=parsed.port or 10000,
            username=username,
            password=password or None,
            auth="CUSTOM" if password else "NONE",
            database=parsed.path.strip("/") or "default",
        )
    except Exception as exc:  # thrift/SASL errors: the server is absent or refuses us
        raise SyncError(f"cannot open a HiveServer2 session at {url}: {exc}") from exc
    return JdbcMetastore(connection, batch_size)


def _server_message(exc: Exception) -> str:
    """The server's own error message (PyHive wraps it in the whole thrift response)."""
    response = exc.args[0] if exc.args else None
    status = getattr(response, "status", None)
    return getattr(status, "errorMessage", None) or str(exc)


def _explained(message: str) -> str:
    if _SPARK_REFUSES_PREFIX in message and "persist" in message.lower():
        return (
            f"{message} (the Spark Thrift Server does not accept spark.sql.* table properties "
            "in DDL: set hoodie.datasource.hive_sync.sync_as_datasource=false, or use hms mode)"
        )
    if "ClassNotFoundException" in message and "org.apache.hudi" in message:
        return (
            f"{message} (the server needs Apache Hudi's hudi-hadoop-mr-bundle jar on its "
            "classpath to define Hudi tables; or use hms mode, which needs no jar)"
        )
    return message


def _table(database: str, name: str) -> str:
    return f"{quoted(database, 'database')}.{quoted(name, 'table')}"


def _column_list(columns: Iterable[Column]) -> str:
    return ", ".join(f"{quoted(c.name, 'column')} {c.type}" for c in columns)


def _property_list(properties: Mapping[str, str]) -> str:
    return ", ".join(f"{literal(k)}={literal(v)}" for k, v in properties.items())


def _spec(table: TableDefinition, values: tuple[str, ...]) -> str:
    keys = [c.name for c in table.partition_keys]
    if len(keys) != len(values):
        raise SyncError(f"partition values {list(values)} do not match partition keys {keys}")
    return ", ".join(
        f"{quoted(k, 'partition column')}={literal(v)}" for k, v in zip(keys, values, strict=True)
    )


def _spec_values(spec: str) -> tuple[str, ...]:
    """'k1=v1/k2=v2' as SHOW PARTITIONS prints it (values path-escaped) -> ('v1', 'v2')."""
    return tuple(unquote(part.split("=", 1)[1]) for part in spec.split("/"))


def _described_columns(
    rows: list[tuple[Any, ...]],
) -> tuple[tuple[Column, ...], tuple[Column, ...]]:
    """DESCRIBE's rows: the columns (partition columns included), then '# Partition
    Information' and the partition columns again."""
    columns: list[Column] = []
    keys: list[Column] = []
    section = "columns"
    for row in rows:
        name = (row[0] or "").strip()
        if name.startswith("# Partition"):
            section = "keys"
            continue
        if not name or name.startswith("#"):
            continue
        column = Column(name.lower(), str(row[1]).strip().lower(), str(row[2] or "").strip())
        (keys if section == "keys" else columns).append(column)
    key_names = {k.name for k in keys}
    return tuple(c for c in columns if c.name not in key_names), tuple(keys)


def _batches(items: list[T], size: int) -> Iterator[list[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
