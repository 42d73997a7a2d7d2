"""Test locks: the options selecting each kind of lock, and the PostgreSQL the database lock's
tests use when there is one (HUDI_TEST_PG_URL; skipped, saying why, when unreachable)."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.pool import NullPool

from hudi_core.config import lock_options as L

PG_URL = os.environ.get("HUDI_TEST_PG_URL", "postgresql+psycopg2://postgres@127.0.0.1:5432/test")


@functools.cache
def postgres_unreachable() -> str | None:
    """Why the test PostgreSQL cannot be reached (None when it can); asked once."""
    try:
        engine = sa.create_engine(PG_URL, poolclass=NullPool, connect_args={"connect_timeout": 3})
        with engine.connect() as connection:
            connection.execute(sa.text("select 1"))
    except Exception as exc:  # any failure to connect means: no PostgreSQL here
        return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0]}"
    return None


def postgres_url() -> str:
    """HUDI_TEST_PG_URL (default: the local test database); skips the test, saying why, when
    that database cannot be reached."""
    reason = postgres_unreachable()
    if reason is not None:
        pytest.skip(f"PostgreSQL at {PG_URL} is unreachable ({reason}); set HUDI_TEST_PG_URL")
    return PG_URL


def lock_options(kind: str, folder: Path) -> dict:
    """Options selecting the lock of `kind`; SQLite's database file lives in `folder`."""
    if kind in ("in_process", "file_system"):
        return {L.PROVIDER.key: kind}
    url = postgres_url() if kind == "postgresql" else f"sqlite:///{folder / 'locks.db'}"
    return {L.PROVIDER.key: "database", L.DATABASE_URL.key: url}
