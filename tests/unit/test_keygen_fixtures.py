"""Our key generators reproduce the `_hoodie_record_key` / `_hoodie_partition_path` columns that
Java Hudi wrote into Apache Hudi's own fixture tables, from their hoodie.properties alone."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from hudi_core.config.option import Options
from hudi_core.errors import InvalidOptionError
from hudi_core.keygen import key_generator_for

# hoodie.properties does not keep the timestamp type; the fixture was written with DATE_STRING
# (its ts_str column holds strings like 2023-04-01T12:01:00.123Z).
WRITE_OPTIONS = {
    "v6_timebasedkeygen_nonhivestyle": {
        "hoodie.keygen.timebased.timestamp.type": "DATE_STRING",
    }
}

WITH_META_FIELDS = [
    ("cow", "v6_nonpartitioned"),
    ("cow", "v6_simplekeygen_nonhivestyle"),
    ("cow", "v6_simplekeygen_nonhivestyle_overwritetable"),
    ("cow", "v6_timebasedkeygen_nonhivestyle"),
    ("mor", "v6_nonpartitioned_parquetlog"),
    ("mor", "v6_simplekeygen_nonhivestyle_parquetlog"),
    ("mor", "v6_simplekeygen_nonhivestyle_overwritetable_parquetlog"),
    ("mor", "v6_trips_8i1u_avrolog"),
]
WITHOUT_META_FIELDS = [
    ("cow", "v6_simplekeygen_hivestyle_no_metafields"),
    ("mor", "v6_simplekeygen_hivestyle_no_metafields_parquetlog"),
]


def read_properties(path: Path) -> dict[str, str]:
    """A java.util.Properties file, as far as hoodie.properties needs: key=value lines,
    # and ! comments, backslash escapes."""
    properties = {}
    for line in path.read_text(encoding="latin-1").splitlines():
        line = line.strip()
        if not line or line[0] in "#!":
            continue
        key, _, value = line.partition("=")
        properties[_unescape(key.strip())] = _unescape(value.strip())
    return properties


def _unescape(text: str) -> str:
    out, chars = [], iter(text)
    for char in chars:
        if char == "\\":
            escaped = next(chars, "")
            out.append({"t": "\t", "n": "\n", "r": "\r", "f": "\f"}.get(escaped, escaped))
        else:
            out.append(char)
    return "".join(out)


def base_files(table: Path) -> list[Path]:
    return sorted(p for p in table.rglob("*.parquet") if ".hoodie" not in p.parts)


def table_options(table: Path, stem: str) -> Options:
    properties = read_properties(table / ".hoodie" / "hoodie.properties")
    return Options(properties, WRITE_OPTIONS.get(stem.removesuffix("_parquetlog")))


@pytest.mark.parametrize(("kind", "stem"), WITH_META_FIELDS)
def test_reproduces_the_keys_java_wrote(hudi_fixture, kind, stem):
    table = hudi_fixture(kind, stem)
    generator = key_generator_for(table_options(table, stem))
    files = base_files(table)
    assert files
    for path in files:
        data = pq.read_table(path)
        expected_keys = data.column("_hoodie_record_key").combine_chunks()
        expected_paths = data.column("_hoodie_partition_path").combine_chunks()
        assert generator.record_keys(data).equals(expected_keys), path.name
        assert generator.partition_paths(data).equals(expected_paths), path.name


@pytest.mark.parametrize(("kind", "stem"), WITHOUT_META_FIELDS)
def test_reproduces_the_partition_folders_without_meta_fields(hudi_fixture, kind, stem):
    table = hudi_fixture(kind, stem)
    generator = key_generator_for(table_options(table, stem))
    for path in base_files(table):
        data = pq.read_table(path)
        folder = path.parent.relative_to(table).as_posix()
        assert set(generator.partition_paths(data).to_pylist()) == {folder}
        assert generator.record_keys(data).to_pylist() == [str(v) for v in data["id"].to_pylist()]


def test_the_fixtures_use_the_generators_they_name(hudi_fixture):
    names = {
        stem: key_generator_for(table_options(hudi_fixture(kind, stem), stem)).class_name
        for kind, stem in WITH_META_FIELDS + [("cow", "v6_empty"), ("mor", "v6_empty_parquetlog")]
    }
    assert names["v6_timebasedkeygen_nonhivestyle"].endswith(".TimestampBasedKeyGenerator")
    assert names["v6_trips_8i1u_avrolog"].endswith(".SimpleKeyGenerator")
    assert names["v6_empty"].endswith(".NonpartitionedKeyGenerator")


def test_timestamp_table_needs_the_writers_timestamp_type(hudi_fixture):
    table = hudi_fixture("cow", "v6_timebasedkeygen_nonhivestyle")
    properties = read_properties(table / ".hoodie" / "hoodie.properties")
    assert properties["hoodie.keygen.timebased.input.dateformat"] == "yyyy-MM-dd'T'HH:mm:ss.SSSZ"
    with pytest.raises(InvalidOptionError, match="hoodie.keygen.timebased.timestamp.type"):
        key_generator_for(Options(properties))
