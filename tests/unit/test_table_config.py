"""hoodie.properties: checksum as Apache Hudi computes it, validation, and safe updates."""

from __future__ import annotations

import pytest

from hudi_core.config.table_config import (
    PROPERTIES_BACKUP_FILE,
    PROPERTIES_FILE,
    TableConfig,
    format_properties,
    parse_properties,
    table_checksum,
)
from hudi_core.errors import TableConfigError, TableNotFoundError, UnsupportedTableVersionError
from hudi_core.storage import Storage
from tests.conftest import fixture_zips


@pytest.mark.parametrize(
    "zip_path", fixture_zips("cow") + fixture_zips("mor"), ids=lambda p: p.stem
)
def test_checksum_matches_every_apache_hudi_table(hudi_fixture, zip_path):
    kind = zip_path.parent.name
    path = hudi_fixture(kind, zip_path.stem)
    props = parse_properties((path / ".hoodie" / "hoodie.properties").read_bytes())
    assert table_checksum(props) == int(props["hoodie.table.checksum"])
    config = TableConfig.load(Storage(str(path)))
    assert config.has_valid_checksum()


def test_properties_round_trip_escapes_like_java():
    values = {
        "hoodie.table.name": "trips",
        "hoodie.keygen.timebased.input.dateformat": "yyyy-MM-dd'T'HH:mm:ss.SSSZ",
        "hoodie.table.create.schema": '{"type":"record","name":"été"}',
    }
    data = format_properties(values)
    assert b"HH\\:mm\\:ss" in data
    assert b"\\u00e9t\\u00e9" in data.lower()
    assert parse_properties(data) == values


def _new_config(**overrides) -> TableConfig:
    props = {"hoodie.table.name": "t", "hoodie.table.type": "COPY_ON_WRITE", **overrides}
    return TableConfig.new(props)


def test_new_config_fills_versions_and_checksum():
    config = _new_config(**{"hoodie.database.name": "db"})
    assert config.properties["hoodie.table.version"] == "6"
    assert config.properties["hoodie.timeline.layout.version"] == "1"
    assert config.properties["hoodie.table.checksum"] == str(
        table_checksum({"hoodie.table.name": "t", "hoodie.database.name": "db"})
    )


def test_unknown_table_version_is_refused_with_a_clear_error(tmp_path):
    storage = Storage(str(tmp_path))
    props = dict(_new_config().properties, **{"hoodie.table.version": "8"})
    storage.write_bytes(PROPERTIES_FILE, format_properties(props))
    with pytest.raises(UnsupportedTableVersionError, match="hoodie.table.version=8"):
        TableConfig.load(storage)


def test_wrong_checksum_is_refused(tmp_path):
    storage = Storage(str(tmp_path))
    props = dict(_new_config().properties, **{"hoodie.table.checksum": "12345"})
    storage.write_bytes(PROPERTIES_FILE, format_properties(props))
    with pytest.raises(TableConfigError, match="checksum"):
        TableConfig.load(storage)


def test_missing_table_is_reported(tmp_path):
    with pytest.raises(TableNotFoundError, match="no Hudi table"):
        TableConfig.load(Storage(str(tmp_path)))


def test_update_keeps_a_backup_until_done_and_a_torn_update_falls_back(tmp_path):
    storage = Storage(str(tmp_path))
    config = _new_config()
    config.save_new(storage)
    updated = config.save_update(storage, {"hoodie.table.precombine.field": "ts"})
    assert not storage.exists(PROPERTIES_BACKUP_FILE)
    assert TableConfig.load(storage).properties == updated.properties
    # An update cut off after the backup was written but mid-way through the new file:
    storage.write_bytes(PROPERTIES_BACKUP_FILE, storage.read_bytes(PROPERTIES_FILE))
    storage.write_bytes(PROPERTIES_FILE, b"hoodie.table.name=t\nhoodie.table.checks")
    assert TableConfig.load(storage).properties == updated.properties
