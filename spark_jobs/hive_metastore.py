"""A Hive metastore client for Hive sync in Spark mode: the metastore embedded in the driver's JVM.

Hive sync talks to any object with the thrift ThriftHiveMetastore.Iface method names, taking and
returning hmsclient's thrift types (hmsclient's HMSClient does it for a remote metastore). Here
the same calls go to a metastore handler created in the driver's JVM on the Hive configuration
Spark's Hive catalog uses, so tables land in the same (Derby) metastore `spark.catalog` shows,
with no metastore server. Spark's own DDL cannot be used: it loads the table's input format
class (Apache Hudi's, not on Spark's classpath); the metastore handler does not.

Structs cross the py4j bridge serialized with thrift's binary protocol, into and out of
instances of the matching org.apache.hadoop.hive.metastore.api classes.
"""

from __future__ import annotations

from typing import Any

from hmsclient.genthrift.hive_metastore import ttypes
from py4j.protocol import Py4JJavaError
from pyspark.sql import SparkSession
from thrift.protocol import TBinaryProtocol
from thrift.transport import TTransport

from hudi_core.errors import SyncError

# Java exceptions raised again in Python as the thrift exception of the same name.
_ERRORS = {
    cls.__name__: cls
    for cls in (
        ttypes.NoSuchObjectException,
        ttypes.AlreadyExistsException,
        ttypes.InvalidObjectException,
        ttypes.InvalidOperationException,
        ttypes.MetaException,
    )
}


class EmbeddedMetastoreClient:
    """The ThriftHiveMetastore.Iface methods Hive sync uses, on the driver's embedded metastore."""

    def __init__(self, jvm: Any, conf: Any) -> None:
        """On a metastore handler made in `jvm` from the HiveConf `conf`."""
        self._jvm = jvm
        metastore = self._jvm.org.apache.hadoop.hive.metastore.HiveMetaStore
        self._handler = metastore.newRetryingHMSHandler("hudi-hive-sync", conf, True)
        protocol = self._jvm.org.apache.thrift.protocol.TBinaryProtocol.Factory()
        self._serializer = self._jvm.org.apache.thrift.TSerializer(protocol)
        self._deserializer = self._jvm.org.apache.thrift.TDeserializer(protocol)

    @classmethod
    def of_session(cls, spark: SparkSession) -> EmbeddedMetastoreClient:
        """On the metastore of a Hive-enabled session's catalog."""
        return cls(spark._jvm, _hive_conf(spark))

    def get_all_databases(self) -> list[str]:
        return list(self._call("get_all_databases"))

    def get_database(self, name: str) -> ttypes.Database:
        return self._from_java(ttypes.Database, self._call("get_database", name))

    def create_database(self, database: ttypes.Database) -> None:
        self._call("create_database", self._to_java(database))

    def get_all_tables(self, db_name: str) -> list[str]:
        return list(self._call("get_all_tables", db_name))

    def get_table(self, dbname: str, tbl_name: str) -> ttypes.Table:
        return self._from_java(ttypes.Table, self._call("get_table", dbname, tbl_name))

    def create_table(self, tbl: ttypes.Table) -> None:
        self._call("create_table", self._to_java(tbl))

    def alter_table_with_environment_context(
        self,
        dbname: str,
        tbl_name: str,
        new_tbl: ttypes.Table,
        environment_context: ttypes.EnvironmentContext | None,
    ) -> None:
        context = self._to_java(environment_context) if environment_context else None
        self._call(
            "alter_table_with_environment_context",
            dbname,
            tbl_name,
            self._to_java(new_tbl),
            context,
        )

    def get_partitions(self, db_name: str, tbl_name: str, max_parts: int) -> list[ttypes.Partition]:
        partitions = self._call("get_partitions", db_name, tbl_name, max_parts)
        return [self._from_java(ttypes.Partition, partition) for partition in partitions]

    def add_partitions(self, new_parts: list[ttypes.Partition]) -> int:
        return self._call("add_partitions", self._to_java_list(new_parts))

    def alter_partitions(
        self, db_name: str, tbl_name: str, new_parts: list[ttypes.Partition]
    ) -> None:
        self._call("alter_partitions", db_name, tbl_name, self._to_java_list(new_parts))

    def drop_partition(
        self, db_name: str, tbl_name: str, part_vals: list[str], deleteData: bool
    ) -> bool:
        values = self._jvm.java.util.ArrayList()
        for value in part_vals:
            values.add(value)
        return self._call("drop_partition", db_name, tbl_name, values, deleteData)

    def close(self) -> None:
        """Releases this thread's metastore connection; the handler is not used after."""
        self._handler.shutdown()

    def _call(self, method: str, *args: Any) -> Any:
        try:
            return getattr(self._handler, method)(*args)
        except Py4JJavaError as error:
            thrift_error = _thrift_error(error.java_exception)
            if thrift_error is None:
                raise
            raise thrift_error from error

    def _to_java(self, struct: Any) -> Any:
        java_struct = getattr(
            self._jvm.org.apache.hadoop.hive.metastore.api, type(struct).__name__
        )()
        self._deserializer.deserialize(java_struct, _serialize(struct))
        return java_struct

    def _to_java_list(self, structs: list[Any]) -> Any:
        java_list = self._jvm.java.util.ArrayList()
        for struct in structs:
            java_list.add(self._to_java(struct))
        return java_list

    def _from_java(self, cls: type, java_struct: Any) -> Any:
        return _deserialize(cls, bytes(self._serializer.serialize(java_struct)))


def _hive_conf(spark: SparkSession) -> Any:
    """The Hive configuration of Spark's Hive client if the session's catalog is Hive (so tables
    land where `spark.catalog` looks), else the session's Hadoop configuration (spark.hadoop.*
    settings, warehouse dir); as a copy, and only for an embedded metastore."""
    shared_state = spark._jsparkSession.sharedState()
    # Checked before Spark's Hive client exists: it connects to a remote metastore when created.
    conf = _embedded(_copy_hive_conf(spark, shared_state.hadoopConf()))
    if spark.conf.get("spark.sql.catalogImplementation", "in-memory") == "hive":
        client = shared_state.externalCatalog().unwrapped().client()
        conf = _embedded(_copy_hive_conf(spark, client.conf()))
    # What Spark's Hive client sets too: BoneCP (Hive's default pool) is not on Spark's
    # classpath, and a new embedded Derby metastore gets its schema created.
    if conf.get("datanucleus.connectionPoolingType", "").lower() == "bonecp":
        conf.set("datanucleus.connectionPoolingType", "DBCP")
    if conf.get("javax.jdo.option.ConnectionURL", "").startswith("jdbc:derby"):
        conf.setBoolean("hive.metastore.schema.verification", False)
        conf.setBoolean("datanucleus.schema.autoCreateAll", True)
    return conf


def _copy_hive_conf(spark: SparkSession, source: Any) -> Any:
    """`source` as a HiveConf of the driver's class loader (Spark's Hive client may use its own)."""
    hive_conf = spark._jvm.org.apache.hadoop.hive.conf.HiveConf
    return hive_conf(source, hive_conf._java_lang_class)


def _embedded(conf: Any) -> Any:
    """`conf`, unless it names a remote metastore: that one is for sync mode hms."""
    uris = (conf.get("hive.metastore.uris") or "").strip()
    if uris:
        raise SyncError(
            f"Spark's Hive metastore is remote ({uris}): sync with mode hms and this URI"
        )
    return conf


def _thrift_error(java_exception: Any) -> Exception | None:
    """The thrift exception for the first Java exception in the cause chain with its name."""
    while java_exception is not None:
        cls = _ERRORS.get(java_exception.getClass().getSimpleName())
        if cls is not None:
            return cls(message=java_exception.getMessage())
        java_exception = java_exception.getCause()
    return None


def _serialize(struct: Any) -> bytes:
    buffer = TTransport.TMemoryBuffer()
    struct.write(TBinaryProtocol.TBinaryProtocol(buffer))
    return buffer.getvalue()


def _deserialize(cls: type, data: bytes) -> Any:
    struct = cls()
    struct.read(TBinaryProtocol.TBinaryProtocol(TTransport.TMemoryBuffer(data)))
    return struct
