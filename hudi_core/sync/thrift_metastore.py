"""Metastore over the Hive metastore's thrift interface.

`client` is anything with the thrift interface's method names taking hmsclient's thrift
types: hmsclient's HMSClient for a metastore server (hms mode), or the Spark driver's
embedded metastore (spark mode, spark_jobs/hive_metastore.py).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, TypeVar
from urllib.parse import urlparse

from hmsclient import hmsclient
from hmsclient.genthrift.hive_metastore import ttypes
from thrift.Thrift import TException

from hudi_core.errors import SyncError
from hudi_core.sync.metastore import Column, Partition, TableDefinition

T = TypeVar("T")

EXTERNAL_TABLE = "EXTERNAL_TABLE"
_REFUSALS = (
    ttypes.AlreadyExistsException,
    ttypes.InvalidObjectException,
    ttypes.InvalidOperationException,
    ttypes.MetaException,
    ttypes.NoSuchObjectException,
)


@contextmanager
def _refusals_as_sync_errors(what: str) -> Iterator[None]:
    try:
        yield
    except _REFUSALS as exc:
        raise SyncError(f"the metastore refused to {what}: {exc.message}") from exc
    except (TException, OSError) as exc:
        raise SyncError(f"the metastore failed to {what}: {exc}") from exc


class ThriftMetastore:
    def __init__(self, client: Any, batch_size: int = 1000) -> None:
        self.client = client
        self.batch_size = batch_size

    def database_exists(self, database: str) -> bool:
        try:
            self.client.get_database(database)
        except ttypes.NoSuchObjectException:
            return False
        return True

    def create_database(self, database: str) -> None:
        with _refusals_as_sync_errors(f"create database {database}"):
            self.client.create_database(
                ttypes.Database(
                    name=database, description="automatically created by hoodie", parameters={}
                )
            )

    def get_table(self, database: str, name: str) -> TableDefinition | None:
        try:
            table = self.client.get_table(database, name)
        except ttypes.NoSuchObjectException:
            return None
        return _definition(table)

    def create_table(self, table: TableDefinition) -> None:
        with _refusals_as_sync_errors(f"create table {table.database}.{table.name}"):
            self.client.create_table(_thrift_table(table))

    def update_columns(self, table: TableDefinition) -> None:
        current = self._thrift_table(table)
        current.sd.cols = _fields(table.columns)
        cascade = ttypes.EnvironmentContext(properties={"CASCADE": "true"})
        self._alter(table.database, table.name, current, cascade)

    def set_table_properties(self, database: str, name: str, properties: Mapping[str, str]) -> None:
        current = self.client.get_table(database, name)
        current.parameters = {**(current.parameters or {}), **properties}
        self._alter(database, name, current, ttypes.EnvironmentContext(properties={}))

    def list_partitions(self, database: str, name: str) -> list[Partition]:
        with _refusals_as_sync_errors(f"list the partitions of {database}.{name}"):
            found = self.client.get_partitions(database, name, -1)
        return [Partition(tuple(p.values), p.sd.location) for p in found]

    def add_partitions(self, table: TableDefinition, partitions: Iterable[Partition]) -> None:
        thrift_table = self._thrift_table(table)
        for batch in _batches(list(partitions), self.batch_size):
            with _refusals_as_sync_errors(f"add partitions to {table.database}.{table.name}"):
                self.client.add_partitions([_thrift_partition(thrift_table, p) for p in batch])

    def set_partition_locations(
        self, table: TableDefinition, partitions: Iterable[Partition]
    ) -> None:
        thrift_table = self._thrift_table(table)
        for batch in _batches(list(partitions), self.batch_size):
            parts = [_thrift_partition(thrift_table, p) for p in batch]
            with _refusals_as_sync_errors(f"alter partitions of {table.database}.{table.name}"):
                self.client.alter_partitions(table.database, table.name, parts)

    def drop_partitions(self, table: TableDefinition, values: Iterable[tuple[str, ...]]) -> None:
        for partition_values in values:
            with _refusals_as_sync_errors(f"drop a partition of {table.database}.{table.name}"):
                try:
                    self.client.drop_partition(
                        table.database, table.name, list(partition_values), False
                    )
                except ttypes.NoSuchObjectException:
                    pass  # already gone: dropping is idempotent

    def close(self) -> None:
        self.client.close()

    def _thrift_table(self, table: TableDefinition) -> Any:
        with _refusals_as_sync_errors(f"read table {table.database}.{table.name}"):
            return self.client.get_table(table.database, table.name)

    def _alter(self, database: str, name: str, table: Any, context: Any) -> None:
        with _refusals_as_sync_errors(f"alter table {database}.{name}"):
            self.client.alter_table_with_environment_context(database, name, table, context)


def connect_hms(uris: str, batch_size: int = 1000) -> ThriftMetastore:
    """A metastore client on the first of the comma-separated thrift URIs that answers."""
    errors = []
    for uri in [u.strip() for u in uris.split(",") if u.strip()]:
        parsed = urlparse(uri)
        if parsed.scheme != "thrift" or not parsed.hostname:
            raise SyncError(f"metastore URI {uri!r} is not thrift://host:port")
        client = hmsclient.HMSClient(host=parsed.hostname, port=parsed.port or 9083)
        try:
            client.open()
        except TException as exc:
            errors.append(f"{uri}: {exc}")
            continue
        return ThriftMetastore(client, batch_size)
    raise SyncError(f"no Hive metastore answers at {uris}: {'; '.join(errors)}")


def _batches(items: list[T], size: int) -> Iterator[list[T]]:
    for start in range(0, len(items), max(size, 1)):
        yield items[start : start + size]


def _fields(columns: Iterable[Column]) -> list[Any]:
    return [
        ttypes.FieldSchema(name=c.name, type=c.type, comment=c.comment or None) for c in columns
    ]


def _columns(fields: Iterable[Any] | None) -> tuple[Column, ...]:
    return tuple(Column(f.name, f.type, f.comment or "") for f in fields or ())


def _thrift_table(table: TableDefinition) -> Any:
    serde = ttypes.SerDeInfo(serializationLib=table.serde, parameters=dict(table.serde_properties))
    sd = ttypes.StorageDescriptor(
        cols=_fields(table.columns),
        location=table.location,
        inputFormat=table.input_format,
        outputFormat=table.output_format,
        compressed=False,
        numBuckets=-1,
        serdeInfo=serde,
        bucketCols=[],
        sortCols=[],
        parameters={},
    )
    return ttypes.Table(
        tableName=table.name,
        dbName=table.database,
        owner="hudi",
        createTime=int(time.time()),
        lastAccessTime=0,
        retention=0,
        sd=sd,
        partitionKeys=_fields(table.partition_keys),
        parameters={"EXTERNAL": "TRUE", **table.table_properties},
        tableType=EXTERNAL_TABLE,
    )


def _definition(table: Any) -> TableDefinition:
    sd = table.sd
    return TableDefinition(
        database=table.dbName,
        name=table.tableName,
        columns=_columns(sd.cols),
        partition_keys=_columns(table.partitionKeys),
        location=sd.location,
        input_format=sd.inputFormat,
        output_format=sd.outputFormat,
        serde=sd.serdeInfo.serializationLib,
        serde_properties=dict(sd.serdeInfo.parameters or {}),
        table_properties=dict(table.parameters or {}),
    )


def _thrift_partition(table: Any, partition: Partition) -> Any:
    """A partition stored like its table (same columns, formats and serde), at its folder."""
    sd = ttypes.StorageDescriptor(**vars(table.sd))
    sd.location = partition.location
    now = int(time.time())
    return ttypes.Partition(
        values=list(partition.values),
        dbName=table.dbName,
        tableName=table.tableName,
        createTime=now,
        lastAccessTime=0,
        sd=sd,
        parameters={},
    )
