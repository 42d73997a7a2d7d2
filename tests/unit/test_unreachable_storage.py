"""An object store that cannot be reached (here: an S3 endpoint on a closed local port) fails
opening, creating, reading and writing a table with StorageUnreachableError, naming the
location, the endpoint and the settings to check, never pyarrow's bare OSError."""

from __future__ import annotations

import time

import pyarrow as pa
import pytest

from hudi_core import HudiError, HudiTable, StorageUnreachableError
from hudi_core.config.table_config import TableConfig
from hudi_core.storage import Storage
from tests.s3 import AWS_VARIABLES

LOCATION = "s3a://bucket/trips"
ENDPOINT = "http://127.0.0.1:1"  # nothing listens on port 1
OPTIONS = {
    "fs.s3a.endpoint": ENDPOINT,
    "fs.s3a.access.key": "key",
    "fs.s3a.secret.key": "secret",
    "fs.s3a.endpoint.region": "us-east-1",
    "fs.s3a.attempts.maximum": "1",
}


@pytest.fixture(autouse=True)
def _no_aws_environment(monkeypatch):
    for name in AWS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    started = time.monotonic()
    yield
    assert time.monotonic() - started < 20


def _assert_names_what_to_check(error: pytest.ExceptionInfo[BaseException]) -> None:
    assert isinstance(error.value, HudiError) and isinstance(error.value, OSError)
    message = str(error.value)
    assert LOCATION in message
    assert "127.0.0.1:1" in message
    assert "fs.s3a.endpoint" in message and "AWS_ENDPOINT_URL" in message
    assert "secret" not in message.replace("fs.s3a.secret.key", "").replace("SECRET_ACCESS", "")


def test_opening_a_table_on_an_unreachable_store(tmp_path):
    with pytest.raises(StorageUnreachableError) as raised:
        HudiTable.open(LOCATION, OPTIONS)
    _assert_names_what_to_check(raised)


def test_creating_a_table_on_an_unreachable_store(tmp_path):
    with pytest.raises(StorageUnreachableError) as raised:
        HudiTable.create(LOCATION, "trips", record_key_fields=["uuid"], options=OPTIONS)
    _assert_names_what_to_check(raised)


def test_the_endpoint_from_the_environment_is_named(monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", ENDPOINT)
    options = {k: v for k, v in OPTIONS.items() if k != "fs.s3a.endpoint"}
    with pytest.raises(StorageUnreachableError) as raised:
        HudiTable.open(LOCATION, options)
    _assert_names_what_to_check(raised)


def test_reading_and_writing_a_table_whose_store_went_away():
    config = TableConfig.new(
        {
            "hoodie.table.name": "trips",
            "hoodie.table.type": "COPY_ON_WRITE",
            "hoodie.table.recordkey.fields": "uuid",
        }
    )
    table = HudiTable(Storage(LOCATION, options=OPTIONS), config, options=OPTIONS)
    with pytest.raises(StorageUnreachableError) as raised:
        table.read()
    _assert_names_what_to_check(raised)
    with pytest.raises(StorageUnreachableError) as raised:
        table.write(pa.table({"uuid": ["a"], "ts": [1]}))
    _assert_names_what_to_check(raised)
