"""The bucket of a key equals Apache Hudi's: Java's List<String>.hashCode() of the key's
hash-field values, & Integer.MAX_VALUE, % buckets.

The reference here follows the Java definitions literally, one string at a time:
String.hashCode() is s[0]*31^(n-1) + ... + s[n-1] over UTF-16 code units in 32-bit
arithmetic; List.hashCode() starts at 1 and takes 31*h + (e == null ? 0 : e.hashCode()) per
element; the values come from the key as KeyGenUtils.extractRecordKeysByFields splits it.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from hudi_core.index.bucket_id import (
    bucket_file_id,
    bucket_ids,
    bucket_of_file_id,
    hash_values,
    list_hash_codes,
    string_hash_codes,
)

KEYS = [
    "",
    "a",
    "key-000042",
    "héllo wörld",
    "日本語のキー",
    "emoji 😀 and 𝄞",  # characters outside the BMP: two UTF-16 code units each
    "a" * 300,  # long: 31^n wraps many times
    "Aa",
    "BB",
    "id:1,region:eu",
    "region:eu,id:1",
    "id:7,region:__null__",
    "id:7,region:__empty__",
    "a,b,,",
    ",,",
    "k:v:w",
    "plain:colon",
    "id:ß,region:ü",
]


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def java_string_hash(text: str | None) -> int:
    if text is None:
        return 0
    units = text.encode("utf-16-le")
    h = 0
    for i in range(0, len(units), 2):
        h = _int32(31 * h + int.from_bytes(units[i : i + 2], "little"))
    return h


def java_list_hash(values: list[str | None]) -> int:
    h = 1
    for value in values:
        h = _int32(31 * h + java_string_hash(value))
    return h


def java_split(text: str, separator: str) -> list[str]:
    """Java's String.split: trailing empty strings removed; an empty input is one part."""
    if text == "":
        return [""]
    parts = text.split(separator)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def java_hash_values(record_key: str, fields: list[str]) -> list[str | None]:
    values: list[str | None] = []
    for part in java_split(record_key, ","):
        pair = part.split(":", 1)
        if len(pair) == 2 and fields and pair[0] not in fields:
            continue
        if len(pair) == 1:
            values.append(pair[0])
        elif pair[1] == "__null__":
            values.append(None)
        elif pair[1] == "__empty__":
            values.append("")
        else:
            values.append(pair[1])
    return values


def java_bucket(record_key: str, fields: list[str], buckets: int) -> int:
    return (java_list_hash(java_hash_values(record_key, fields)) & 0x7FFFFFFF) % buckets


def test_java_string_hash_reference_is_javas():
    """Values Java itself gives (known constants), so the reference is the right one."""
    assert [java_string_hash(s) for s in ("", "a", "hello", "Aa", "BB")] == [
        0,
        97,
        99162322,
        2112,
        2112,
    ]
    assert java_list_hash(["a"]) == 128 and java_list_hash([]) == 1


def test_string_hash_codes_equal_javas_for_any_text():
    assert string_hash_codes(pa.array(KEYS)).tolist() == [java_string_hash(k) for k in KEYS]
    with_null = pa.array(["x", None, "y"])
    assert string_hash_codes(with_null).tolist() == [
        java_string_hash("x"),
        0,
        java_string_hash("y"),
    ]


@pytest.mark.parametrize("fields", [["uuid"], ["id", "region"], ["region"], ["id"]])
def test_hash_values_split_the_key_as_apache_hudi(fields):
    assert hash_values(pa.array(KEYS), fields).to_pylist() == [
        java_hash_values(k, fields) for k in KEYS
    ]


def test_list_hash_codes_equal_javas():
    lists = [java_hash_values(k, ["region"]) for k in KEYS]
    array = pa.array(lists, pa.list_(pa.string()))
    assert list_hash_codes(array).tolist() == [java_list_hash(v) for v in lists]


@pytest.mark.parametrize("buckets", [1, 4, 7, 256])
@pytest.mark.parametrize("fields", [["uuid"], ["id", "region"], ["region"]])
def test_bucket_ids_equal_javas(buckets, fields):
    keys = (
        KEYS
        + [f"key-{i:06d}" for i in range(2000)]
        + [f"id:{i},region:r{i % 5}" for i in range(500)]
    )
    ours = bucket_ids(pa.chunked_array([keys[:700], keys[700:]]), fields, buckets).tolist()
    assert ours == [java_bucket(k, fields, buckets) for k in keys]
    assert all(0 <= b < buckets for b in ours)


def test_a_hash_field_other_than_the_key_puts_its_keys_together():
    """region as the hash field: every key of a region in one bucket, whatever its id."""
    keys = [f"id:{i},region:r{i % 3}" for i in range(300)]
    buckets = bucket_ids(pa.array(keys), ["region"], 16).tolist()
    by_region: dict[str, set[int]] = {}
    for key, bucket in zip(keys, buckets, strict=True):
        by_region.setdefault(key.rsplit(":", 1)[1], set()).add(bucket)
    assert all(len(found) == 1 for found in by_region.values())
    assert by_region["r1"] == {java_bucket("id:0,region:r1", ["region"], 16)}


def test_bucket_file_ids_start_with_the_bucket_number():
    file_id = bucket_file_id(42)
    assert file_id.startswith("00000042-") and file_id.endswith("-0") and len(file_id) == 38
    assert bucket_of_file_id(file_id) == 42
    assert bucket_file_id(42) != file_id  # a new file id each time
    assert bucket_of_file_id("c2a4f0d1-1111-2222-3333-444444444444-0") is None
