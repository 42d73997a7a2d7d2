"""The named choices of the public API, as StrEnums.

Each member equals its Apache Hudi spelling (`WriteOperation.UPSERT == "UPSERT"`, the name a
commit's operationType holds), so members go wherever those strings went. Users may still pass
plain strings in any case ("upsert", "Upsert"): `parse` turns them into members, and a value
that names no member fails with an InvalidOptionError listing the choices.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TypeVar

from hudi_core.errors import InvalidOptionError

C = TypeVar("C", bound="Choice")


class Choice(StrEnum):
    """A StrEnum whose members also match their value in any case and with spaces around."""

    @classmethod
    def _missing_(cls, value: object) -> Choice | None:
        if isinstance(value, str):
            wanted = value.strip().lower()
            for member in cls:
                if member.value.lower() == wanted:
                    return member
        return None

    @classmethod
    def parse(cls: type[C], value: str | C, what: str | None = None) -> C:
        """`value` as a member; `what` names the argument or option in the error."""
        try:
            return cls(value)
        except ValueError:
            choices = ", ".join(member.value for member in cls)
            raise InvalidOptionError(
                f"{what or cls.__name__} {value!r} is not one of {choices}"
            ) from None


class WriteOperation(Choice):
    """What a write does (hoodie.datasource.write.operation)."""

    UPSERT = "UPSERT"
    INSERT = "INSERT"
    BULK_INSERT = "BULK_INSERT"
    DELETE = "DELETE"
    INSERT_OVERWRITE = "INSERT_OVERWRITE"
    INSERT_OVERWRITE_TABLE = "INSERT_OVERWRITE_TABLE"
    DELETE_PARTITION = "DELETE_PARTITION"


class TableType(Choice):
    """How updates are stored (hoodie.table.type)."""

    COPY_ON_WRITE = "COPY_ON_WRITE"
    MERGE_ON_READ = "MERGE_ON_READ"


class QueryType(Choice):
    """What a read returns (hoodie.datasource.query.type)."""

    SNAPSHOT = "snapshot"
    READ_OPTIMIZED = "read_optimized"
    INCREMENTAL = "incremental"


class CompactionOrder(Choice):
    """Which pending compaction runs when none is named: the oldest or the newest."""

    FIFO = "FIFO"
    LIFO = "LIFO"
