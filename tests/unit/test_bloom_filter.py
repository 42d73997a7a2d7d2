"""The footer bloom filter must match Java Hudi byte for byte.

Proof comes from two independent sources: Apache Hudi-written base files in ../shared
(their footers hold Java-serialized DYNAMIC_V0 filters), and golden values produced by
Hadoop's own org.apache.hadoop.util.bloom / util.hash classes (which Hudi's filters copy),
covering key lengths and non-ASCII bytes the fixtures lack, Jenkins hashing and
multi-row dynamic filters. Every test runs on both hashing paths: numpy and compiled (numba).
"""

from __future__ import annotations

import base64
import struct
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_core.config.index_options import (
    BLOOM_DYNAMIC_MAX_ENTRIES,
    BLOOM_FILTER_TYPE,
    BLOOM_FPP,
    BLOOM_NUM_ENTRIES,
)
from hudi_core.errors import CorruptFileError, InvalidOptionError, RecordKeyError
from hudi_core.io.bloom_filter import (
    DYNAMIC_V0,
    FOOTER_BLOOM_FILTER,
    FOOTER_BLOOM_FILTER_TYPE,
    FOOTER_LEGACY_BLOOM_FILTER,
    FOOTER_MAX_RECORD_KEY,
    FOOTER_MIN_RECORD_KEY,
    JENKINS_HASH,
    MURMUR_HASH,
    SIMPLE,
    SimpleBloomFilter,
    bloom_bit_size,
    bloom_filter_footer,
    bloom_filter_from_footer,
    bloom_num_hashes,
    deserialize_bloom_filter,
    hash_keys,
    new_bloom_filter,
)
from tests.unit.test_bloom_compiled import force_hashing_path

FIXTURES_WITH_META_FIELDS = [
    ("cow", "v6_nonpartitioned"),
    ("cow", "v6_simplekeygen_nonhivestyle"),
    ("cow", "v6_simplekeygen_nonhivestyle_overwritetable"),
    ("cow", "v6_timebasedkeygen_nonhivestyle"),
    ("mor", "v6_nonpartitioned_parquetlog"),
    ("mor", "v6_simplekeygen_nonhivestyle_overwritetable_parquetlog"),
    ("mor", "v6_simplekeygen_nonhivestyle_parquetlog"),
    ("mor", "v6_trips_8i1u_avrolog"),
]
FIXTURES_WITHOUT_META_FIELDS = [
    ("cow", "v6_simplekeygen_hivestyle_no_metafields"),
    ("mor", "v6_simplekeygen_hivestyle_no_metafields_parquetlog"),
]


@pytest.fixture(autouse=True, params=["numpy", "compiled"])
def hashing_path(request, monkeypatch) -> str:
    """The goldens hold for both ways of hashing (bloom_filter picks one by batch size)."""
    force_hashing_path(monkeypatch, request.param)
    return str(request.param)


def default_filter(type_code: str = BLOOM_FILTER_TYPE.default):
    return new_bloom_filter(
        type_code, BLOOM_NUM_ENTRIES.default, BLOOM_FPP.default, BLOOM_DYNAMIC_MAX_ENTRIES.default
    )


def base_files(table: Path) -> list[Path]:
    return sorted(
        path
        for path in table.rglob("*.parquet")
        if ".hoodie" not in path.parts and "__MACOSX" not in path.parts
    )


@pytest.fixture(scope="module")
def java_footers(hudi_fixture) -> list[tuple[Path, dict[bytes, bytes], pa.ChunkedArray]]:
    """(file, footer metadata, record keys in file order) of every fixture base file."""
    found = []
    for kind, stem in FIXTURES_WITH_META_FIELDS:
        for path in base_files(hudi_fixture(kind, stem)):
            parquet = pq.ParquetFile(path)
            keys = parquet.read(columns=["_hoodie_record_key"]).column(0)
            found.append((path, parquet.metadata.metadata, keys))
    return found


def dynamic_layout(serialized: str) -> tuple[tuple, tuple, list[bytes]]:
    """(header, (keys per row, keys in active row, rows), packed bits per row) of DYNAMIC_V0."""
    raw = base64.b64decode(serialized)
    header, state = struct.unpack_from(">iibi", raw), struct.unpack_from(">iii", raw, 13)
    size, pos, rows = (header[3] + 7) // 8, 25, []
    for _ in range(state[2]):
        assert struct.unpack_from(">iibi", raw, pos) == header
        rows.append(raw[pos + 13 : pos + 13 + size])
        pos += 13 + size
    assert pos == len(raw)
    return header, state, rows


# ---------------------------------------------------------------- against Java-written footers


def test_fixtures_hold_enough_java_filters(java_footers):
    with_filter = [meta for _, meta, _ in java_footers if FOOTER_BLOOM_FILTER.encode() in meta]
    assert len(with_filter) >= 10
    assert len(with_filter) == len(java_footers), "every base file with meta fields has a filter"
    for meta in with_filter:
        assert meta[FOOTER_BLOOM_FILTER_TYPE.encode()] == DYNAMIC_V0.encode()
        assert FOOTER_MIN_RECORD_KEY.encode() in meta
        assert FOOTER_MAX_RECORD_KEY.encode() in meta


def test_java_filters_reserialize_identically(java_footers):
    for path, meta, _ in java_footers:
        java = meta[FOOTER_BLOOM_FILTER.encode()]
        bloom = deserialize_bloom_filter(java, meta[FOOTER_BLOOM_FILTER_TYPE.encode()])
        assert bloom.serialize() == java.decode(), path.name


def test_java_filters_contain_every_record_key(java_footers):
    for path, meta, keys in java_footers:
        bloom = bloom_filter_from_footer(meta)
        assert bloom.might_contain(keys).all(), path.name


def test_filters_built_from_scratch_match_java_byte_for_byte(java_footers):
    for path, meta, keys in java_footers:
        ours = default_filter()
        ours.add_keys(keys)
        assert ours.serialize() == meta[FOOTER_BLOOM_FILTER.encode()].decode(), path.name
        assert bloom_filter_footer(ours) == {
            FOOTER_BLOOM_FILTER: meta[FOOTER_BLOOM_FILTER.encode()].decode(),
            FOOTER_BLOOM_FILTER_TYPE: DYNAMIC_V0,
        }


def test_java_filters_reject_absent_keys(java_footers):
    absent = pa.array([f"absent-{i}" for i in range(20_000)])
    for path, meta, _ in java_footers:
        assert bloom_filter_from_footer(meta).might_contain(absent).sum() == 0, path.name


def test_java_filter_parameters_are_hudi_defaults(java_footers):
    _, meta, _ = java_footers[0]
    header, state, rows = dynamic_layout(meta[FOOTER_BLOOM_FILTER.encode()].decode())
    assert header == (-1, 30, MURMUR_HASH, 2_587_966)
    assert state[0] == BLOOM_NUM_ENTRIES.default and len(rows) == 1
    assert bloom_bit_size(60_000, 1e-9) == 2_587_966
    assert bloom_num_hashes(2_587_966, 60_000) == 30


@pytest.mark.parametrize(("kind", "stem"), FIXTURES_WITHOUT_META_FIELDS)
def test_files_without_meta_fields_have_no_filter(hudi_fixture, kind, stem):
    files = base_files(hudi_fixture(kind, stem))
    assert files
    for path in files:
        assert bloom_filter_from_footer(pq.ParquetFile(path).metadata.metadata) is None


# ---------------------------------------------------------------- against Hadoop's Java classes

# Hadoop MurmurHash / JenkinsHash of each key's UTF-8 bytes, printed by a Java run:
# (key, murmur seed 0, murmur seed -123456789, jenkins seed 0, jenkins seed 987654321).
JAVA_HASHES = [
    ("a", -1838653602, -660579645, 1490454280, 415160626),
    ("ab", 1525573013, -1350732610, -72111905, -1148791929),
    ("abc", 1775488903, -266368160, 238646833, -662508408),
    ("abcd", 646393889, -585429739, -1242265444, 1628152585),
    ("abcde", 1594468574, -734502094, 40727262, -1341613523),
    ("é", -384040333, 2064042168, -382074372, -1656066959),
    ("日", 549027846, -841582381, -1565521303, -739575147),
    ("😀", -842402043, 1885028301, -1253095259, 1281457341),
    ("ab日", -662214753, -443318010, -2091282213, -807212100),
    ("hoodie-record-key-0001", 2095614537, 2143992151, 1396396691, -457613140),
    ("Four score and seven years ago", -373709198, 2092346157, 393676113, 1572690956),
]
GOLDEN_KEYS = ["a", "bc", "def", "ghij", "klmno", "é", "日本", "😀x"]
# Hadoop BloomFilter(96 bits, 7 hashes) and DynamicBloomFilter(15 bits, 4 hashes, 3 per row)
# over GOLDEN_KEYS, base64 of write(DataOutput): the layouts Hudi's SIMPLE / DYNAMIC_V0 use.
JAVA_SIMPLE_MURMUR = "/////wAAAAcBAAAAYK6ijHlgY81UrhayGA=="
JAVA_SIMPLE_JENKINS = "/////wAAAAcAAAAAYAEpj6Oxs2cEFaJK9A=="
JAVA_DYNAMIC_THREE_ROWS = (
    "/////wAAAAQBAAAADwAAAAMAAAACAAAAA/////8AAAAEAQAAAA8cdf////8AAAAEAQAAAA81dv////"
    "8AAAAEAQAAAA9YRw=="
)


@pytest.mark.parametrize(
    ("column", "seed", "hash_type"),
    [
        (1, 0, MURMUR_HASH),
        (2, -123456789, MURMUR_HASH),
        (3, 0, JENKINS_HASH),
        (4, 987654321, JENKINS_HASH),
    ],
)
def test_hashes_match_hadoop(column, seed, hash_type):
    keys = [row[0] for row in JAVA_HASHES]
    expected = np.array([row[column] for row in JAVA_HASHES], dtype=np.int32)
    np.testing.assert_array_equal(hash_keys(keys, seed, hash_type), expected)


def test_jenkins_matches_published_lookup3_vectors():
    key = ["Four score and seven years ago"]
    hashes = [int(hash_keys(key, seed, JENKINS_HASH)[0]) & 0xFFFFFFFF for seed in (0, 1)]
    assert hashes == [0x17770551, 0xCD628161]


def test_simple_filter_matches_hadoop_golden():
    bloom = new_bloom_filter(SIMPLE, 10, 0.01, 0)
    assert (bloom.vector_size, bloom.num_hashes) == (96, 7)
    bloom.add_keys(GOLDEN_KEYS)
    assert bloom.serialize() == JAVA_SIMPLE_MURMUR


def test_jenkins_filter_from_hadoop_reads_and_writes_back():
    bloom = deserialize_bloom_filter(JAVA_SIMPLE_JENKINS, SIMPLE)
    assert bloom.hash_type == JENKINS_HASH
    assert bloom.might_contain(GOLDEN_KEYS).all()
    assert bloom.serialize() == JAVA_SIMPLE_JENKINS
    fresh = SimpleBloomFilter(96, 7, JENKINS_HASH, np.zeros((1, 96), dtype=bool))
    fresh.add_keys(GOLDEN_KEYS)
    assert fresh.serialize() == JAVA_SIMPLE_JENKINS


def test_dynamic_rows_match_hadoop_golden():
    bloom = new_bloom_filter(DYNAMIC_V0, 3, 0.1, 1_000)
    bloom.add_keys(GOLDEN_KEYS)
    assert bloom.num_rows == 3
    assert bloom.serialize() == JAVA_DYNAMIC_THREE_ROWS
    assert (
        deserialize_bloom_filter(JAVA_DYNAMIC_THREE_ROWS, DYNAMIC_V0)
        .might_contain(GOLDEN_KEYS)
        .all()
    )


def test_unversioned_header_means_jenkins():
    versioned = base64.b64decode(JAVA_SIMPLE_JENKINS)
    old = struct.pack(">i", 7) + versioned[9:]  # hash count first, no version or hash type
    bloom = deserialize_bloom_filter(base64.b64encode(old), SIMPLE)
    assert (bloom.hash_type, bloom.num_hashes, bloom.vector_size) == (JENKINS_HASH, 7, 96)
    assert bloom.serialize() == JAVA_SIMPLE_JENKINS


# ---------------------------------------------------------------- behaviour


def test_dynamic_filter_grows_past_num_entries():
    keys = pa.array([f"{i:08d}-record-key" for i in range(250_000)])
    bloom = default_filter(DYNAMIC_V0)
    bloom.add_keys(keys)
    assert bloom.might_contain(keys).all()
    header, state, rows = dynamic_layout(bloom.serialize())
    # one row per 60000 keys while rows * 60000 < 100000, then keys cycle over both rows
    # and the active count keeps counting from the second row's start.
    assert state == (60_000, 250_000 - 60_000, 2)
    again = deserialize_bloom_filter(bloom.serialize(), DYNAMIC_V0)
    assert again.serialize() == bloom.serialize()
    assert again.might_contain(keys).all()
    absent = pa.array([f"{i:08d}-absent-key" for i in range(20_000)])
    assert again.might_contain(absent).mean() < 0.01


def test_dynamic_filter_cycles_rows_starting_with_row_zero_twice():
    bloom = new_bloom_filter(DYNAMIC_V0, 4, 1e-6, 8)
    bloom.add_keys([f"k{i}" for i in range(8)])  # fills rows 0 and 1
    changed = []
    for key in ["x1", "x2", "x3", "x4", "x5"]:
        before = dynamic_layout(bloom.serialize())[2]
        bloom.add_keys([key])
        after = dynamic_layout(bloom.serialize())[2]
        changed.append([row for row in range(2) if before[row] != after[row]])
    assert changed == [[0], [0], [1], [0], [1]]


def test_dynamic_growth_does_not_depend_on_batching():
    keys = [f"key-{i}" for i in range(157)]
    whole = new_bloom_filter(DYNAMIC_V0, 10, 0.01, 45)
    whole.add_keys(keys)
    for step in (1, 7, 33):
        pieces = new_bloom_filter(DYNAMIC_V0, 10, 0.01, 45)
        for begin in range(0, len(keys), step):
            pieces.add_keys(keys[begin : begin + step])
        assert pieces.serialize() == whole.serialize(), step
    assert whole.num_rows == 5  # rows added while rows * 10 < 45


def test_simple_filter_with_defaults():
    bloom = default_filter(SIMPLE)
    assert (bloom.vector_size, bloom.num_hashes, bloom.hash_type) == (2_587_966, 30, MURMUR_HASH)
    keys = pa.array([f"uuid-{i:06d}" for i in range(50_000)])
    bloom.add_keys(keys)
    assert bloom.might_contain(keys).all()
    serialized = bloom.serialize()
    assert base64.b64decode(serialized)[:13] == struct.pack(">iibi", -1, 30, 1, 2_587_966)
    assert deserialize_bloom_filter(serialized, SIMPLE).serialize() == serialized
    assert bloom_filter_footer(bloom) == {FOOTER_BLOOM_FILTER: serialized}
    absent = pa.array([f"uuid-{i:06d}x" for i in range(50_000)])
    assert bloom.might_contain(absent).sum() == 0


def test_false_positive_rate_near_target():
    bloom = new_bloom_filter(SIMPLE, 2_000, 0.01, 0)
    bloom.add_keys([f"present-{i}" for i in range(2_000)])
    rate = bloom.might_contain([f"absent-{i}" for i in range(50_000)]).mean()
    assert 0.002 < rate < 0.02


def test_keys_in_any_arrow_layout_hash_alike():
    words = [f"k{i}" * (i % 5 + 1) for i in range(300)] + ["é日😀"]
    bloom = new_bloom_filter(SIMPLE, 500, 0.001, 0)
    bloom.add_keys(pa.array(words))
    probe = words + ["missing-1", "missing-2"]
    expected = bloom.might_contain(pa.array(probe))
    assert expected[:-2].all()
    padded = pa.array(["pad"] + probe + ["pad"])
    layouts = [
        pa.array(probe, type=pa.large_string()),
        pa.chunked_array([probe[:100], probe[100:]]),
        padded.slice(1, len(probe)),
        pa.array(probe).dictionary_encode(),
        pa.array([w.encode() for w in probe], type=pa.binary()),
        probe,
    ]
    for keys in layouts:
        np.testing.assert_array_equal(bloom.might_contain(keys), expected)


def test_empty_input_is_a_no_op():
    bloom = default_filter()
    before = bloom.serialize()
    bloom.add_keys(pa.array([], type=pa.string()))
    assert bloom.serialize() == before
    assert bloom.might_contain(pa.array([], type=pa.string())).shape == (0,)


@pytest.mark.parametrize("keys", [pa.array(["a", None]), pa.array(["a", ""]), pa.array([1, 2])])
def test_bad_keys_are_refused(keys):
    with pytest.raises(RecordKeyError):
        default_filter().add_keys(keys)


# ---------------------------------------------------------------- bad input


def test_new_filter_rejects_bad_options():
    with pytest.raises(InvalidOptionError):
        new_bloom_filter("BOUNDED", 100, 0.01, 1000)
    with pytest.raises(InvalidOptionError):
        new_bloom_filter(SIMPLE, 0, 0.01, 1000)
    with pytest.raises(InvalidOptionError):
        new_bloom_filter(SIMPLE, 100, 1.0, 1000)
    assert new_bloom_filter("dynamic_v0", 100, 0.01, 1000).type_code == DYNAMIC_V0


@pytest.mark.parametrize(
    ("serialized", "type_code"),
    [
        ("not base64!", SIMPLE),
        (JAVA_SIMPLE_MURMUR[:-8], SIMPLE),  # truncated
        (JAVA_DYNAMIC_THREE_ROWS, SIMPLE),  # wrong type code leaves bytes over
        (JAVA_SIMPLE_MURMUR, DYNAMIC_V0),
        (JAVA_SIMPLE_MURMUR, "BOUNDED"),
        (base64.b64encode(struct.pack(">iibi", -2, 7, 1, 96) + bytes(12)).decode(), SIMPLE),
        (base64.b64encode(struct.pack(">iibi", -1, 7, 5, 96) + bytes(12)).decode(), SIMPLE),
        (base64.b64encode(struct.pack(">iibi", -1, 7, 1, 0)).decode(), SIMPLE),
    ],
)
def test_corrupt_filters_raise(serialized, type_code):
    with pytest.raises(CorruptFileError):
        deserialize_bloom_filter(serialized, type_code)


def test_footer_lookup_falls_back_to_legacy_key_and_simple():
    legacy = {FOOTER_LEGACY_BLOOM_FILTER.encode(): JAVA_SIMPLE_MURMUR.encode()}
    bloom = bloom_filter_from_footer(legacy)
    assert bloom.type_code == SIMPLE
    assert bloom.might_contain(GOLDEN_KEYS).all()
    assert bloom_filter_from_footer({}) is None
    assert bloom_filter_from_footer(None) is None
