"""Apache Hudi's HFileBootstrapIndex: written and read back, with its file names, keys, file
info and Avro values pinned to what Hudi's HFileBootstrapIndex reader looks up."""

from __future__ import annotations

import io

import fastavro
import pytest

from hudi_core.errors import BootstrapError, InternalError
from hudi_core.io import bootstrap_index as bi
from hudi_core.io.bootstrap_index import (
    FILE_ID_INDEX,
    PARTITION_INDEX,
    BootstrapFileMapping,
    BootstrapIndex,
    bootstrap_index_exists,
    drop_bootstrap_index,
    hadoop_path,
    write_bootstrap_index,
)
from hudi_core.io.hfile import HFileReader, write_hfile
from hudi_core.storage import Storage

SOURCE = "file:/data/source"


def _mapping(partition: str, n: int, source: str = SOURCE) -> BootstrapFileMapping:
    return BootstrapFileMapping(
        source_base_path=source,
        source_partition_path=partition,
        source_file_name=f"part-{n:05d}.parquet",
        source_file_size=1000 + n,
        source_modification_time_ms=1_700_000_000_000 + n,
        partition_path=partition,
        file_id=f"{n:08d}-aaaa-bbbb-cccc-000000000000-0",
    )


PARTITIONED = [
    _mapping(partition, n)
    for n, partition in enumerate(
        ["city=sf", "city=sf", "city=nyc", "city=la/zone=1", "city=la", "city=nyc"]
    )
]


def _read(data: bytes) -> tuple[str, dict]:
    """(record's full name, the record) of an Avro container file of one record."""
    reader = fastavro.reader(io.BytesIO(data))
    [record] = list(reader)
    return reader.writer_schema["name"], record


def _by_file_group(mappings):
    return sorted(mappings, key=lambda m: (m.partition_path, m.file_id))


def test_an_index_over_partitions_reads_back_equal(tmp_path):
    storage = Storage(str(tmp_path))
    write_bootstrap_index(storage, SOURCE, PARTITIONED, created_ms=42)
    index = BootstrapIndex.load(storage)
    assert index is not None and index.source_base_path == SOURCE
    # in the byte order of their keys, as the HFile holds them
    assert index.partitions() == ["city=la", "city=la/zone=1", "city=nyc", "city=sf"]
    for partition in index.partitions():
        expected = [m for m in PARTITIONED if m.partition_path == partition]
        assert index.mappings(partition) == sorted(expected, key=lambda m: m.file_id)
    for mapping in PARTITIONED:
        assert index.mapping_for(mapping.partition_path, mapping.file_id) == mapping
    assert _by_file_group(index.all_mappings()) == _by_file_group(PARTITIONED)
    assert index.mappings("city=paris") == []
    assert index.mapping_for("city=sf", "no-such-file-id") is None
    assert index.mapping_for("city=paris", PARTITIONED[0].file_id) is None


def test_a_non_partitioned_index_reads_back_equal(tmp_path):
    storage = Storage(str(tmp_path))
    mappings = [_mapping("", n, source="/data/flat/") for n in range(3)]
    write_bootstrap_index(storage, "/data/flat/", mappings)
    index = BootstrapIndex.load(storage)
    assert index.partitions() == [""]
    assert index.mappings("") == mappings
    assert index.mapping_for("", mappings[1].file_id) == mappings[1]
    assert mappings[0].source_path == "/data/flat/part-00000.parquet"  # no '//'
    # keys: the empty partition is an empty value after 'part='
    by_partition = HFileReader(storage.read_bytes(PARTITION_INDEX))
    by_file_id = HFileReader(storage.read_bytes(FILE_ID_INDEX))
    assert [key for key, _ in by_partition.entries()] == [b"part="]
    assert [key for key, _ in by_file_id.entries()] == [
        f"part=;fileid={m.file_id}".encode() for m in mappings
    ]
    _, status = _read(by_file_id.get(f"part=;fileid={mappings[0].file_id}".encode()))
    assert status["bootstrapPartitionPath"] == ""
    # Hadoop prints a bare local path with the file: scheme
    assert status["bootstrapFileStatus"]["path"]["uri"] == "file:/data/flat/part-00000.parquet"


def test_the_index_files_sit_where_apache_hudi_looks(tmp_path):
    # HFileBootstrapIndex: the metadata bootstrap instant, the fixed file id and FSUtils'
    # bootstrap index file name (write token 1-0-1), under HoodieTableMetaClient's folders.
    name = "00000000-0000-0000-0000-000000000000-0_1-0-1_00000000000001.hfile"
    assert PARTITION_INDEX == f".hoodie/.aux/.bootstrap/.partitions/{name}"
    assert FILE_ID_INDEX == f".hoodie/.aux/.bootstrap/.fileids/{name}"
    storage = Storage(str(tmp_path))
    write_bootstrap_index(storage, SOURCE, PARTITIONED)
    assert (tmp_path / PARTITION_INDEX).is_file() and (tmp_path / FILE_ID_INDEX).is_file()


def test_keys_are_part_and_fileid_in_byte_order(tmp_path):
    storage = Storage(str(tmp_path))
    write_bootstrap_index(storage, SOURCE, PARTITIONED)
    by_partition = HFileReader(storage.read_bytes(PARTITION_INDEX))
    by_file_id = HFileReader(storage.read_bytes(FILE_ID_INDEX))
    # HFileBootstrapIndex: "part=" + partition, and "part=" + partition + ";fileid=" + file id
    assert [key for key, _ in by_partition.entries()] == [
        b"part=city=la",
        b"part=city=la/zone=1",
        b"part=city=nyc",
        b"part=city=sf",
    ]
    file_id_keys = [key for key, _ in by_file_id.entries()]
    assert file_id_keys == sorted(
        f"part={m.partition_path};fileid={m.file_id}".encode() for m in PARTITIONED
    )
    # byte order, as an HFile requires: ';' (0x3b) sorts after '/' (0x2f)
    assert file_id_keys[0].startswith(b"part=city=la/zone=1;")


def test_index_info_names_the_source_and_counts_the_keys(tmp_path):
    storage = Storage(str(tmp_path))
    write_bootstrap_index(storage, SOURCE, PARTITIONED, created_ms=1_700_000_000_123)
    for path, keys in ((PARTITION_INDEX, 4), (FILE_ID_INDEX, len(PARTITIONED))):
        reader = HFileReader(storage.read_bytes(path))
        name, info = _read(reader.file_info[b"INDEX_INFO"])
        assert name == "org.apache.hudi.avro.model.HoodieBootstrapIndexInfo"
        assert info == {
            "version": 1,
            "bootstrapBasePath": SOURCE,
            "createdTimestamp": 1_700_000_000_123,
            "numKeys": keys,
        }
        # Apache Hudi 0.x's writer names its comparator (HBase resolves the class on read)
        assert reader.trailer.comparator_class_name == bi.COMPARATOR


def test_values_are_avro_container_files_of_hudis_records(tmp_path):
    storage = Storage(str(tmp_path))
    write_bootstrap_index(storage, SOURCE, PARTITIONED)
    by_partition = HFileReader(storage.read_bytes(PARTITION_INDEX))
    value = by_partition.get(b"part=city=sf")
    assert value.startswith(b"Obj\x01")  # an Avro object container file
    name, record = _read(value)
    assert name == "org.apache.hudi.avro.model.HoodieBootstrapPartitionMetadata"
    assert (record["bootstrapPartitionPath"], record["partitionPath"]) == ("city=sf", "city=sf")
    sf = [m for m in PARTITIONED if m.partition_path == "city=sf"]
    statuses = record["fileIdToBootstrapFile"]
    assert sorted(statuses) == sorted(m.file_id for m in sf)
    status = statuses[sf[0].file_id]
    assert status["path"] == {"version": 1, "uri": f"{SOURCE}/city=sf/part-00000.parquet"}
    assert (status["length"], status["isDir"]) == (1000, False)
    assert status["modificationTime"] == status["accessTime"] == 1_700_000_000_000
    assert status["blockReplication"] == 1 and status["blockSize"] == 32 * 1024 * 1024

    by_file_id = HFileReader(storage.read_bytes(FILE_ID_INDEX))
    name, record = _read(by_file_id.get(f"part=city=sf;fileid={sf[1].file_id}".encode()))
    assert name == "org.apache.hudi.avro.model.HoodieBootstrapFilePartitionInfo"
    assert record["partitionPath"] == record["bootstrapPartitionPath"] == "city=sf"
    assert record["bootstrapFileStatus"]["path"]["uri"] == f"{SOURCE}/city=sf/part-00001.parquet"


def test_source_locations_are_recorded_as_hadoop_prints_them(tmp_path):
    assert hadoop_path("/tmp/src/a=1/f.parquet") == "file:/tmp/src/a=1/f.parquet"
    assert hadoop_path("file:///tmp/src/f.parquet") == "file:/tmp/src/f.parquet"
    assert hadoop_path("file:/tmp/src/f.parquet") == "file:/tmp/src/f.parquet"
    assert hadoop_path("s3a://bucket/src/f.parquet") == "s3a://bucket/src/f.parquet"
    source = Storage(str(tmp_path / "src"))
    mapping = _mapping("a=1", 0, source=source.uri_of(""))
    assert hadoop_path(mapping.source_path) == source.uri_of("a=1/part-00000.parquet")


def test_entries_apache_hudi_wrote_are_read_whatever_their_uri_form(tmp_path):
    storage = Storage(str(tmp_path))
    status = dict(bi._file_status(_mapping("", 7)), path={"version": 1, "uri": "file:///x/f.pq"})
    info = {"bootstrapPartitionPath": None, "bootstrapFileStatus": status, "partitionPath": ""}
    write_bootstrap_index(storage, SOURCE, [])
    key = b"part=;fileid=fid-1"
    index_info = HFileReader(storage.read_bytes(FILE_ID_INDEX)).file_info[b"INDEX_INFO"]
    value = bi._serialize(bi.FILE_PARTITION_INFO, info)
    file_ids = write_hfile([(key, value)], {b"INDEX_INFO": index_info})
    storage.write_bytes(FILE_ID_INDEX, file_ids)
    mapping = BootstrapIndex.load(storage).mapping_for("", "fid-1")
    assert (mapping.source_partition_path, mapping.source_file_name) == ("", "f.pq")
    assert mapping.source_path == f"{SOURCE}/f.pq"


def test_drop_deletes_both_files_and_load_sees_no_index(tmp_path):
    storage = Storage(str(tmp_path))
    assert not bootstrap_index_exists(storage) and BootstrapIndex.load(storage) is None
    write_bootstrap_index(storage, SOURCE, PARTITIONED)
    assert bootstrap_index_exists(storage)
    storage.delete(FILE_ID_INDEX)  # half an index is no index, as in Apache Hudi
    assert not bootstrap_index_exists(storage) and BootstrapIndex.load(storage) is None
    drop_bootstrap_index(storage)
    assert not (tmp_path / PARTITION_INDEX).exists()
    drop_bootstrap_index(storage)  # nothing left to drop


def test_inconsistent_mappings_are_refused(tmp_path):
    storage = Storage(str(tmp_path))
    mixed = [_mapping("a", 1), BootstrapFileMapping(SOURCE, "b", "f.parquet", 1, 1, "a", "x-0")]
    with pytest.raises(BootstrapError, match="one source partition"):
        write_bootstrap_index(storage, SOURCE, mixed)
    with pytest.raises(InternalError, match="not under the source"):
        write_bootstrap_index(storage, "file:/elsewhere", [_mapping("a", 1)])
    with pytest.raises(InternalError, match="strictly increasing"):
        write_bootstrap_index(storage, SOURCE, [_mapping("a", 1), _mapping("a", 1)])
    assert not bootstrap_index_exists(storage)
