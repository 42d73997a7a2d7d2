"""Partition values are data, never paths: no write puts a file outside `<base>/<partition>/`,
`.hoodie` is never a partition, and a value that cannot be written safely is refused before
any instant exists, with nothing changed."""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import pyarrow as pa
import pytest

from hudi_core import HudiTable
from hudi_core.config.option import Options
from hudi_core.errors import HudiError, PartitionPathError, RecordKeyError
from hudi_core.keygen import key_generator_for
from hudi_core.keygen.partition import (
    MAX_FOLDER_NAME_BYTES,
    find_unsafe_partition_paths,
    require_safe_partition_paths,
)
from hudi_core.read.file_system_view import file_groups_on_storage
from tests import oracle

UNSAFE_VALUES = ["..", ".", "../x", "x/../../y", "/abs", "a//b", "a/./b", ".hoodie", "a\nb"]
HIVE = "hoodie.datasource.write.hive_style_partitioning"
URL_ENCODE = "hoodie.datasource.write.partitionpath.urlencode"
TO_DELETE = "hoodie.datasource.write.partitions.to.delete"
TIMELINE_FILE = re.compile(r"^\.hoodie/\d{17}\.[a-z.]+$")

# The partition path each value gets under each layout (hive style, url-encoded), or None
# where the write must be refused. Hive style makes a whole value one folder name
# ("p=..", "p=.hoodie"), so only values whose '/' splits it into a bad folder stay unsafe;
# url-encoding escapes '/' and control characters, never '.'.
EXPECTED = {
    "plain": dict.fromkeys(UNSAFE_VALUES),
    "hive": {
        "..": "p=..",
        ".": "p=.",
        "../x": "p=../x",
        "x/../../y": None,
        "/abs": "p=/abs",
        "a//b": None,
        "a/./b": None,
        ".hoodie": "p=.hoodie",
        "a\nb": None,
    },
    "urlencode": {
        "..": None,
        ".": None,
        "../x": "..%2Fx",
        "x/../../y": "x%2F..%2F..%2Fy",
        "/abs": "%2Fabs",
        "a//b": "a%2F%2Fb",
        "a/./b": "a%2F.%2Fb",
        ".hoodie": None,
        "a\nb": "a%0Ab",
    },
}


def _create(base: Path, table_type: str, hive: bool, url_encode: bool) -> HudiTable:
    return HudiTable.create(
        str(base),
        name="t",
        table_type=table_type,
        record_key_fields=["id"],
        partition_fields=["p"],
        precombine_field="ts",
        options={HIVE: str(hive).lower(), URL_ENCODE: str(url_encode).lower()},
    )


def _batch(ids: list[int], parts: list[str], ts: int) -> pa.Table:
    return pa.table({"id": ids, "p": parts, "ts": [ts] * len(ids), "v": [f"{i}@{ts}" for i in ids]})


def _files(root: Path) -> dict[str, str]:
    """Every file under `root` (the table's parent folders too) -> a digest of its bytes."""
    return {
        path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in root.rglob("*")
        if path.is_file()
    }


def _assert_same_rows_as_hudi_rs(table: HudiTable, ids: set[int]) -> pa.Table:
    ours = table.read()
    oracle.assert_same_table(ours, oracle.snapshot(table.storage.base_path))
    assert set(ours["id"].to_pylist()) == ids
    return ours


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("layout", list(EXPECTED))
@pytest.mark.parametrize("value", UNSAFE_VALUES, ids=repr)
def test_a_write_never_leaves_its_partition_folder(tmp_path, value, layout, table_type):
    hive, url_encode = layout == "hive", layout == "urlencode"
    root = tmp_path / "outer"
    base = root / "inner" / "t"  # '..' or 'x/../../y' would land in the walked parent folders
    table = _create(base, table_type, hive, url_encode)
    table.write(_batch([1, 2], ["ok", "ok"], ts=1))
    before = _files(root)
    timeline_before = [i.file_name for i in table.timeline()]
    expected = EXPECTED[layout][value]

    def write_and_update() -> None:
        table.write(_batch([10, 11, 1], [value, value, "ok"], ts=2))
        table.write(_batch([10], [value], ts=3))  # an update in the partition: MOR logs it

    if expected is None:
        with pytest.raises(PartitionPathError) as refused:
            write_and_update()
        assert repr(value)[1:-1] in str(refused.value)  # names the value as written
        assert "in 2 rows; first at row 0" in str(refused.value)
        assert _files(root) == before, "a refused write changed files"
        assert [i.file_name for i in table.timeline()] == timeline_before
        _assert_same_rows_as_hudi_rs(table, {1, 2})
        return

    write_and_update()
    after = _files(root)
    new = set(after) - set(before)
    prefix = base.relative_to(root).as_posix() + "/"
    assert all(name.startswith(prefix) for name in new), "a file outside the base path"
    inside = {name[len(prefix) :] for name in new}
    meta = {name for name in inside if name.startswith(".hoodie/")}
    assert all(TIMELINE_FILE.match(name) for name in meta), sorted(meta)
    data = inside - meta
    assert data and all(
        name.startswith(f"{expected}/") or name.startswith("ok/") or name.startswith("p=ok/")
        for name in data
    ), sorted(data)
    assert {name.rsplit("/", 1)[0] for name in data} >= {expected}
    rows = _assert_same_rows_as_hudi_rs(table, {1, 2, 10, 11})
    moved = rows.filter(pa.compute.is_in(rows["id"], pa.array([10, 11])))
    assert set(moved["_hoodie_partition_path"].to_pylist()) == {expected}
    assert set(moved["p"].to_pylist()) == {value}
    assert moved.filter(pa.compute.equal(moved["id"], 10))["v"].to_pylist() == ["10@3"]


@pytest.mark.parametrize(
    "listed", ["..", "../ok", "ok/../..", "/ok", "ok//", "./ok", ".hoodie", "o\nk", "ok,.."]
)
def test_delete_partition_refuses_an_unsafe_listed_path_before_any_instant(tmp_path, listed):
    table = _create(tmp_path / "t", "COPY_ON_WRITE", hive=False, url_encode=False)
    table.write(_batch([1, 2], ["ok", "ko"], ts=1))
    before = _files(tmp_path)
    with pytest.raises(PartitionPathError, match=TO_DELETE):
        table.write(_batch([], [], ts=2), "delete_partition", {TO_DELETE: listed})
    assert _files(tmp_path) == before
    _assert_same_rows_as_hudi_rs(table, {1, 2})


def test_delete_partition_by_rows_refuses_an_unsafe_value_before_any_instant(tmp_path):
    table = _create(tmp_path / "t", "MERGE_ON_READ", hive=False, url_encode=False)
    table.write(_batch([1, 2], ["ok", "ko"], ts=1))
    before = _files(tmp_path)
    with pytest.raises(PartitionPathError, match=r"partition path '\.\./ok'"):
        table.write(_batch([1], ["../ok"], ts=2), "delete_partition")
    assert _files(tmp_path) == before


def test_delete_partition_of_a_hive_style_dot_dot_partition_deletes_only_it(tmp_path):
    table = _create(tmp_path / "t", "COPY_ON_WRITE", hive=True, url_encode=False)
    table.write(_batch([1, 2, 3], ["..", "ok", ".hoodie"], ts=1))
    assert {p.name for p in (tmp_path / "t").iterdir()} == {".hoodie", "p=..", "p=ok", "p=.hoodie"}
    table.write(_batch([], [], ts=2), "delete_partition", {TO_DELETE: "p=.., p=.hoodie"})
    _assert_same_rows_as_hudi_rs(table, {2})


def test_the_reader_never_takes_the_metadata_folder_for_a_partition(tmp_path):
    table = _create(tmp_path / "t", "COPY_ON_WRITE", hive=False, url_encode=False)
    table.write(_batch([1, 2], ["ok", "ok"], ts=1))
    (base_file,) = (tmp_path / "t" / "ok").glob("*.parquet")
    for stray in ("", "ok", ".temp/ok", "archived"):  # a base file where a reader must not look
        folder = tmp_path / "t" / ".hoodie" / stray
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(base_file, folder / base_file.name.replace("-0_", "-9_"))
    groups = file_groups_on_storage(table.storage)
    assert {partition for partition, _ in groups} == {"ok"}
    assert table.read()["id"].to_pylist() == [1, 2]


# --- the check itself ---------------------------------------------------------------------


def test_find_unsafe_partition_paths_flags_each_unsafe_shape():
    safe = ["ok", "p=..", "p=/abs", "2024/01/01", "...", ".x", "_x", "x/metadata", "a b", "é" * 127]
    unsafe = [
        *UNSAFE_VALUES,
        "",
        "a/",
        "a/.hoodie",
        "a/.hoodie/b",
        ".hoodie_partition_metadata",
        "metadata",
        "_delta_log/x",
        "a\tb",
        "a\x7fb",
        "x" * (MAX_FOLDER_NAME_BYTES + 1),
        "é" * 128,  # 256 bytes
    ]
    for path in safe:
        assert find_unsafe_partition_paths(pa.array([path])) is None, path
    for path in unsafe:
        found = find_unsafe_partition_paths(pa.array(["ok", path, None, path]))
        assert found is not None, path
        assert (found.count, found.first, found.value) == (2, 1, path)
        assert found.mask.to_pylist() == [False, True, False, True]


def test_find_unsafe_partition_paths_explains_the_first_unsafe_row():
    paths = pa.chunked_array([["ok", "ok"], ["a\nb", ".hoodie", "a\nb"]])
    found = find_unsafe_partition_paths(paths)
    assert (found.count, found.first, found.value) == (3, 2, "a\nb")
    assert "control character" in found.reason
    assert "'.hoodie'" in find_unsafe_partition_paths(pa.array([".hoodie"])).reason
    assert "outside its partition folder" in find_unsafe_partition_paths(pa.array(["/a"])).reason
    assert "hudi-rs skips" in find_unsafe_partition_paths(pa.array(["metadata/x"])).reason
    assert "255 bytes" in find_unsafe_partition_paths(pa.array(["x" * 256])).reason


def test_require_safe_partition_paths_names_the_entry_and_the_option():
    require_safe_partition_paths(["a", "p=..", "2024/01/01"], TO_DELETE)
    with pytest.raises(PartitionPathError, match=rf"'\.\.'.*listed in {TO_DELETE}"):
        require_safe_partition_paths(["a", "..", "b"], TO_DELETE)


def _generator(**options: str):
    return key_generator_for(Options({"hoodie.datasource.write.recordkey.field": "id", **options}))


@pytest.mark.parametrize(
    ("value", "remedy"),
    [
        ("../x", URL_ENCODE),  # escaping the '/' is enough
        ("a\nb", URL_ENCODE),
        ("..", HIVE),  # escaping leaves '.' alone; 'p=..' is a plain folder name
        (".hoodie", HIVE),
        ("metadata", HIVE),
        ("x" * 300, None),  # no layout makes the folder name short enough
    ],
)
def test_the_error_names_value_rows_and_the_layout_that_would_write_it(value, remedy):
    generator = _generator(**{"hoodie.datasource.write.partitionpath.field": "p"})
    batch = pa.table({"id": [1, 2, 3], "p": ["ok", value, value]})
    with pytest.raises(PartitionPathError) as refused:
        generator.partition_paths(batch)
    message = str(refused.value)
    assert isinstance(refused.value, RecordKeyError) and isinstance(refused.value, HudiError)
    assert "partition path field 'p'" in message
    assert "in 2 rows; first at row 1" in message
    if remedy is None:
        assert URL_ENCODE not in message and HIVE not in message
    else:
        assert f"created with {remedy}=true" in message


def test_urlencode_already_on_is_not_suggested_again():
    generator = _generator(
        **{"hoodie.datasource.write.partitionpath.field": "p", URL_ENCODE: "true"}
    )
    with pytest.raises(PartitionPathError) as refused:
        generator.partition_paths(pa.table({"id": [1], "p": [".."]}))
    message = str(refused.value)
    assert f"created with {HIVE}=true" in message and f"{URL_ENCODE}=true" not in message


def test_every_field_of_a_multi_field_path_is_checked():
    generator = _generator(**{"hoodie.datasource.write.partitionpath.field": "a,b"})
    ok = pa.table({"id": [1], "a": ["x"], "b": ["2024/01/01"]})
    assert generator.partition_paths(ok).to_pylist() == ["x/2024/01/01"]
    with pytest.raises(PartitionPathError, match=r"'x/\.\.'.*partition path fields 'a', 'b'"):
        generator.partition_paths(pa.table({"id": [1], "a": ["x"], "b": [".."]}))


def test_timestamp_day_folders_with_slashes_stay_accepted():
    generator = _generator(
        **{
            "hoodie.datasource.write.partitionpath.field": "ts",
            "hoodie.datasource.write.keygenerator.class": (
                "org.apache.hudi.keygen.TimestampBasedKeyGenerator"
            ),
            "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
            "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd",
        }
    )
    batch = pa.table({"id": [1], "ts": [1_704_067_200_000]})
    assert generator.partition_paths(batch).to_pylist() == ["2024/01/01"]


def test_a_non_partitioned_table_keeps_its_empty_partition_path():
    generator = _generator(
        **{
            "hoodie.datasource.write.keygenerator.class": (
                "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
            )
        }
    )
    assert generator.partition_paths(pa.table({"id": [1, 2]})).to_pylist() == ["", ""]
