"""Names and literals that go into HiveQL, checked before they get there.

Hive stores database, table and column names case-insensitively and only accepts letters,
digits and underscores in them; anything else in a name is refused here rather than quoted,
so a name can never close its quotes and inject DDL. String literals (locations, property
values, partition values) are escaped instead, since they legitimately hold any character.
"""

from __future__ import annotations

import re

from hudi_core.errors import SyncError

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_NAME_LENGTH = 128  # the metastore's column width for names


def checked_name(name: str, what: str) -> str:
    """`name` lower-cased as the metastore stores it, or SyncError saying why it is refused."""
    if not isinstance(name, str) or not _NAME.fullmatch(name) or len(name) > MAX_NAME_LENGTH:
        raise SyncError(
            f"{what} name {name!r} is not a valid Hive identifier: use letters, digits and "
            f"underscores, starting with a letter or underscore, at most {MAX_NAME_LENGTH} "
            "characters"
        )
    return name.lower()


def quoted(name: str, what: str) -> str:
    """A checked name in backticks, for HiveQL."""
    return f"`{checked_name(name, what)}`"


def literal(text: str) -> str:
    """A HiveQL string literal: single-quoted, with backslashes and quotes escaped."""
    escaped = str(text).replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n")
    return f"'{escaped}'"
