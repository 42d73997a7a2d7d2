"""Tables on object storage, addressed as Apache Hudi users address them: a merge-on-read
table at s3a://bucket/... on an S3-compatible server (moto's, on 127.0.0.1) is written,
compacted, cleaned, archived and read; hudi-rs reads it with the same S3 settings as object_store
names them; settings come from Hadoop's fs.s3a.* options, per bucket, or the environment;
gs:// and abfs[s]:// resolve to pyarrow's file systems; unsupported schemes fail clearly."""

from __future__ import annotations

import uuid

import pyarrow as pa
import pyarrow.fs as pafs
import pytest

from hudi_core import HudiTable, UnsupportedStorageError
from hudi_core.filesystems import filesystem_for, object_store_options
from hudi_core.storage import Storage
from tests import oracle
from tests.s3 import ACCESS_KEY, AWS_VARIABLES, REGION, SECRET_KEY

SCHEMA = pa.schema(
    [("id", pa.int64()), ("city", pa.string()), ("ts", pa.int64()), ("v", pa.string())]
)
ANONYMOUS = "org.apache.hadoop.fs.s3a.AnonymousAWSCredentialsProvider"
SERVICE_OPTIONS = {
    "hoodie.compact.inline.max.delta.commits": "2",
    "hoodie.cleaner.commits.retained": "1",
    "hoodie.keep.min.commits": "2",
    "hoodie.keep.max.commits": "3",
}


@pytest.fixture(autouse=True)
def _no_aws_environment(monkeypatch):
    """Settings come only from what each test gives (no stray AWS_* of the machine)."""
    for name in AWS_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def location() -> str:
    return f"s3a://bucket/lake/{uuid.uuid4().hex[:8]}/trips"


def rows(ids, ts: int) -> pa.Table:
    ids = list(ids)
    cities = ["sf" if i % 2 else "chennai" for i in ids]
    return pa.table(
        {"id": ids, "city": cities, "ts": [ts] * len(ids), "v": [f"{i}@{ts}" for i in ids]},
        schema=SCHEMA,
    )


def mor_table(path: str, options: dict[str, str]) -> HudiTable:
    return HudiTable.create(
        path,
        name="trips",
        table_type="MERGE_ON_READ",
        record_key_fields=["id"],
        partition_fields=["city"],
        precombine_field="ts",
        options={**options, **SERVICE_OPTIONS, "hoodie.parquet.small.file.limit": "0"},
    )


def expected(*batches: pa.Table, deleted=()) -> list[dict]:
    latest: dict[int, dict] = {}
    for batch in batches:
        latest.update({row["id"]: row for row in batch.to_pylist()})
    return sorted((r for k, r in latest.items() if k not in deleted), key=lambda r: r["id"])


def data_rows(table: pa.Table) -> list[dict]:
    return sorted(table.select(SCHEMA.names).to_pylist(), key=lambda r: r["id"])


def test_a_merge_on_read_table_on_s3a_is_written_compacted_cleaned_archived_and_read(s3):
    path = location()
    options = s3.hadoop_options()
    table = mor_table(path, options)
    first, second, third = rows(range(20), 1), rows(range(0, 20, 2), 2), rows(range(0, 20, 5), 3)
    for batch in (first, second):
        table.write(batch)
    compaction = table.compaction.schedule()
    assert compaction is not None
    table.compaction.run(compaction)
    table.write(third)
    table.write(rows([1, 3], 4), operation="delete")
    for step in range(3):  # enough commits for the cleaner and the archiver to have work
        table.write(rows([7], 10 + step))
    assert table.clean() is not None
    assert table.archive(), "archival moved no instants"
    fourth = rows([7], 12)
    want = expected(first, second, third, fourth, deleted={1, 3})

    reopened = HudiTable.open(path, options)
    assert data_rows(reopened.read()) == want
    assert reopened.inspect.archived_timeline(), "the archived timeline is empty"
    # hudi-rs, given the same settings as object_store names them, reads the same rows.
    theirs = oracle.snapshot(path, storage_options=object_store_options(path, options))
    oracle.assert_same_table(reopened.read(), theirs, "hudi-rs on s3a")


def test_hudi_rs_and_we_read_with_one_dict_of_object_store_settings(s3):
    """hudi-rs's storage options (object_store's AWS_* names) work for us unchanged."""
    path = location()
    mor_table(path, s3.hadoop_options()).write(rows(range(6), 1))
    settings = object_store_options(path, s3.hadoop_options())
    assert settings == {
        "AWS_ENDPOINT_URL": s3.endpoint,
        "AWS_REGION": REGION,
        "AWS_ACCESS_KEY_ID": ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        "AWS_ALLOW_HTTP": "true",
    }
    ours = HudiTable.open(path, settings).read()
    assert data_rows(ours) == expected(rows(range(6), 1))
    oracle.assert_same_table(ours, oracle.snapshot(path, storage_options=settings))


def test_the_standard_environment_variables_reach_the_store(s3, monkeypatch):
    path = location()
    mor_table(path, s3.hadoop_options()).write(rows(range(4), 1))
    for name, value in s3.environment().items():
        monkeypatch.setenv(name, value)
    assert data_rows(HudiTable.open(path).read()) == expected(rows(range(4), 1))


def test_a_per_bucket_option_wins_over_the_global_one(s3):
    path = location()
    options = {**s3.hadoop_options(), "fs.s3a.endpoint": "http://127.0.0.1:9"}  # nothing there
    options["fs.s3a.bucket.bucket.endpoint"] = s3.endpoint
    mor_table(path, options).write(rows(range(4), 1))
    assert data_rows(HudiTable.open(path, options).read()) == expected(rows(range(4), 1))


def test_instants_are_published_by_whole_uploads_with_nothing_left_aside(s3):
    """No rename on S3: every timeline file is one upload; no temporary files remain."""
    path = location()
    table = mor_table(path, s3.hadoop_options())
    table.write(rows(range(4), 1))
    table.write(rows(range(2), 2))
    prefix = path.removeprefix("s3a://bucket/")
    keys = s3.keys("bucket", prefix)
    timeline = [k for k in keys if "/.hoodie/" in k and k.count("/.hoodie/") == 1]
    assert not [k for k in keys if k.endswith(".tmp") or ".renew" in k], keys
    completed = [k for k in timeline if k.endswith(".deltacommit")]
    assert len(completed) == 2, timeline


def test_deleting_an_absent_object_says_it_was_gone(s3):
    storage = Storage(location(), options=s3.hadoop_options())
    storage.write_bytes("a/file", b"x")
    assert storage.delete("a/file") is True
    assert storage.delete("a/file") is False


def test_the_file_system_lock_is_refused_on_an_object_store(s3):
    path = location()
    table = mor_table(path, s3.hadoop_options())
    options = {
        "hoodie.write.lock.provider": "FileSystemBasedLockProvider",
        "hoodie.write.concurrency.mode": "OPTIMISTIC_CONCURRENCY_CONTROL",
    }
    with pytest.raises(UnsupportedStorageError, match="no exclusive create.*database"):
        table.write(rows(range(3), 1), options=options)
    assert table.read().num_rows == 0


def test_the_database_lock_guards_writers_on_an_object_store(s3, tmp_path):
    path = location()
    options = {
        **s3.hadoop_options(),
        "hoodie.write.lock.provider": "database",
        "hoodie.write.lock.database.url": f"sqlite:///{tmp_path / 'locks.db'}",
        "hoodie.write.concurrency.mode": "OPTIMISTIC_CONCURRENCY_CONTROL",
        "hoodie.cleaner.policy.failed.writes": "LAZY",
    }
    table = mor_table(path, options)
    table.write(rows(range(5), 1))
    table.write(rows(range(2), 2))
    assert data_rows(table.read()) == expected(rows(range(5), 1), rows(range(2), 2))


# ---- resolving locations without a server


def test_s3_settings_map_to_pyarrow_s3():
    fs, where = filesystem_for(
        "s3a://lake/db/t",
        {
            "fs.s3a.endpoint": "minio:9000",
            "fs.s3a.connection.ssl.enabled": "false",
            "fs.s3a.access.key": "a",
            "fs.s3a.secret.key": "b",
            "fs.s3a.endpoint.region": "eu-west-1",
        },
    )
    assert where == "lake/db/t"
    assert fs == pafs.S3FileSystem(
        access_key="a", secret_key="b", region="eu-west-1", endpoint_override="minio:9000",
        scheme="http",
    )  # fmt: skip
    virtual, _ = filesystem_for("s3://lake/t", {"fs.s3a.path.style.access": "false"})
    assert virtual == pafs.S3FileSystem(force_virtual_addressing=True)
    anonymous, _ = filesystem_for(
        "s3n://public/t",
        {"fs.s3a.aws.credentials.provider": ANONYMOUS},
    )
    assert anonymous == pafs.S3FileSystem(anonymous=True)


def test_gcs_and_azure_locations_map_to_their_pyarrow_file_systems():
    fs, where = filesystem_for(
        "gs://lake/db/t",
        {"fs.gs.storage.root.url": "http://127.0.0.1:4443", "fs.gs.auth.type": "UNAUTHENTICATED"},
    )
    assert where == "lake/db/t"
    assert fs == pafs.GcsFileSystem(
        anonymous=True, endpoint_override="127.0.0.1:4443", scheme="http"
    )
    host = "account1.dfs.core.windows.net"
    fs, where = filesystem_for(
        f"abfss://container@{host}/db/t", {f"fs.azure.account.key.{host}": "a2V5"}
    )
    assert where == "container/db/t"
    assert fs == pafs.AzureFileSystem(account_name="account1", account_key="a2V5")


def test_local_paths_and_file_uris_are_the_local_disk(tmp_path):
    for given in (str(tmp_path), f"file://{tmp_path}", f"file:{tmp_path}"):
        fs, where = filesystem_for(given)
        assert isinstance(fs, pafs.LocalFileSystem) and where == str(tmp_path), given


@pytest.mark.parametrize(
    "location", ["wasbs://c@a.blob.core.windows.net/t", "oss://b/t", "ftp://h/t"]
)
def test_an_unsupported_scheme_fails_naming_it(location, tmp_path):
    scheme = location.split("://")[0]
    with pytest.raises(UnsupportedStorageError, match=f"the scheme {scheme}:// is not supported"):
        HudiTable.create(location, name="t", record_key_fields=["id"])


class RecordingMetastore:
    """A metastore in memory that keeps what Hive sync defines (for the locations)."""

    def __init__(self) -> None:
        self.tables: dict[str, object] = {}
        self.partitions: dict[str, list] = {}

    def database_exists(self, database):
        return True

    def create_database(self, database):
        raise AssertionError("the database exists")

    def get_table(self, database, name):
        return self.tables.get(name)

    def create_table(self, table):
        self.tables[table.name] = table

    def update_columns(self, table):
        self.tables[table.name] = table

    def set_table_properties(self, database, name, properties):
        pass

    def list_partitions(self, database, name):
        return list(self.partitions.get(name, []))

    def add_partitions(self, table, partitions):
        self.partitions.setdefault(table.name, []).extend(partitions)

    def set_partition_locations(self, table, partitions):
        raise AssertionError("no partition moved")

    def drop_partitions(self, table, values):
        raise AssertionError("no partition dropped")

    def close(self):
        pass


def test_hive_sync_registers_the_s3a_locations_as_given(s3):
    """Hive (with hadoop-aws) and Apache Hudi's readers resolve s3a:// themselves: the
    metastore gets the table's URI as the user wrote it, not a pyarrow path."""
    from hudi_core.config.option import Options
    from hudi_core.sync.hive_sync import HiveSyncTool

    path = location()
    table = mor_table(path, s3.hadoop_options())
    table.write(rows(range(4), 1))
    metastore = RecordingMetastore()
    HiveSyncTool(table, Options({}), metastore).sync()
    assert {t.location for t in metastore.tables.values()} == {path}
    for name, partitions in metastore.partitions.items():
        assert sorted(p.location for p in partitions) == [f"{path}/chennai", f"{path}/sf"], name
