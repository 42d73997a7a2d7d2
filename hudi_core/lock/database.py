"""The database lock: a row per table in a SQL table, through SQLAlchemy (SQLite, PostgreSQL,
MySQL...) that every writer reaches. A URL that does not parse, or a database that cannot be
reached, fails with a HudiError naming hoodie.write.lock.database.url.

Taking the lock inserts the table's row (the primary key makes one insert win); an existing row
whose expiry passed is taken over by a conditional update, which the database applies to one
taker only. Renewing and releasing touch the row only where the owner matches.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa
from sqlalchemy.exc import (
    ArgumentError,
    DBAPIError,
    IntegrityError,
    OperationalError,
    ProgrammingError,
)
from sqlalchemy.pool import NullPool

from hudi_core.errors import InvalidOptionError, LockError
from hudi_core.lock.provider import LockHold, LockProvider, now_ms

# Where the URL comes from (hudi_core.config.lock_options.DATABASE_URL, hudi_core.lock).
_URL_SETTING = "hoodie.write.lock.database.url (or the HUDI_LOCK_DB_URL environment variable)"


class DatabaseLockProvider(LockProvider):
    def __init__(self, url: str, table_name: str, lock_key: str) -> None:
        self.url = url
        self.lock_key = lock_key
        with _reaching(url):
            self.engine = _engine(url)
            self.table = _lock_table(self.engine, table_name)

    @property
    def key(self) -> str:
        return f"database:{self.engine.url.render_as_string(hide_password=True)}:{self.lock_key}"

    def try_acquire(self, owner: str, expires_at_ms: int) -> bool:
        with _reaching(self.url):
            return self._try_acquire(owner, expires_at_ms)

    def _try_acquire(self, owner: str, expires_at_ms: int) -> bool:
        row = {"lock_key": self.lock_key, "owner": owner, "expires_at_ms": expires_at_ms}
        try:
            with self.engine.begin() as connection:
                connection.execute(sa.insert(self.table).values(**row))
            return True
        except IntegrityError:
            pass  # held, or left behind by a holder that died: take it only if expired
        taken_over = (
            sa.update(self.table)
            .where(self.table.c.lock_key == self.lock_key)
            .where(
                sa.or_(
                    self.table.c.expires_at_ms < now_ms(),
                    self.table.c.owner == owner,
                )
            )
            .values(owner=owner, expires_at_ms=expires_at_ms)
        )
        with self.engine.begin() as connection:
            return connection.execute(taken_over).rowcount == 1

    def renew(self, owner: str, expires_at_ms: int) -> bool:
        with _reaching(self.url), self.engine.begin() as connection:
            renewed = connection.execute(
                sa.update(self.table)
                .where(self.table.c.lock_key == self.lock_key, self.table.c.owner == owner)
                .values(expires_at_ms=expires_at_ms)
            )
            return renewed.rowcount == 1

    def release(self, owner: str) -> None:
        with _reaching(self.url), self.engine.begin() as connection:
            connection.execute(
                sa.delete(self.table).where(
                    self.table.c.lock_key == self.lock_key, self.table.c.owner == owner
                )
            )

    def holder(self) -> LockHold | None:
        with _reaching(self.url), self.engine.connect() as connection:
            row = connection.execute(
                sa.select(self.table.c.owner, self.table.c.expires_at_ms).where(
                    self.table.c.lock_key == self.lock_key
                )
            ).first()
        return None if row is None else LockHold(row.owner, row.expires_at_ms)


@contextmanager
def _reaching(url: str) -> Iterator[None]:
    """Turns SQLAlchemy's errors of a bad URL or an unreachable database into HudiErrors that
    name the setting to check."""
    try:
        yield
    except (ArgumentError, ImportError) as error:  # no URL, an unknown dialect or no driver
        raise InvalidOptionError(
            f"the lock database URL is not usable ({_first_line(error)}); check {_URL_SETTING}"
        ) from error
    except DBAPIError as error:
        raise LockError(
            f"the lock database {_shown(url)} cannot be reached ({_first_line(error)}); "
            f"check {_URL_SETTING}"
        ) from error


def _shown(url: str) -> str:
    """The URL without its password."""
    try:
        return sa.make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "(unparsable URL)"


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


@functools.cache
def _engine(url: str) -> sa.Engine:
    # No pool: lock calls are rare, and pooled connections must not cross a fork.
    return sa.create_engine(url, poolclass=NullPool)


@functools.cache
def _lock_table(engine: sa.Engine, name: str) -> sa.Table:
    metadata = sa.MetaData()
    table = sa.Table(
        name,
        metadata,
        sa.Column("lock_key", sa.String(700), primary_key=True),
        sa.Column("owner", sa.String(255), nullable=False),
        sa.Column("expires_at_ms", sa.BigInteger, nullable=False),
    )
    try:
        metadata.create_all(engine, checkfirst=True)
    except (IntegrityError, OperationalError, ProgrammingError):
        # Two processes creating the table at once: the loser finds it made.
        metadata.create_all(engine, checkfirst=True)
    return table
