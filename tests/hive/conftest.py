"""One Hive metastore (and, for jdbc mode, one Spark Thrift Server on it) per test session."""

from __future__ import annotations

import pytest

from tests.hive.servers import hive_metastore, spark_thrift_server
from tests.hive.stand_ins import hudi_input_format_stand_ins


@pytest.fixture(scope="session")
def metastore(tmp_path_factory):
    with hive_metastore(tmp_path_factory.mktemp("hive-metastore")) as server:
        yield server


@pytest.fixture(scope="session")
def thrift_server(tmp_path_factory, metastore):
    work = tmp_path_factory.mktemp("spark-thrift-server")
    jar = hudi_input_format_stand_ins(work / "stand-ins")
    with spark_thrift_server(work, metastore.uri, extra_jars=[jar]) as server:
        yield server
