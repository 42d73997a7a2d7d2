"""Partition path spelling shared by the key generators (KeyGenUtils, PartitionPathEncodeUtils).

One part per partition field: a null or empty value becomes `__HIVE_DEFAULT_PARTITION__`, other
values are url-encoded when asked (Hive's escapePathName), then hive style prefixes
`<field>=`; parts are joined with `/`.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

DEFAULT_PARTITION_PATH = "__HIVE_DEFAULT_PARTITION__"
PATH_SEPARATOR = "/"

# Hive's FileUtils.charToEscape: ASCII controls, DEL and "#%'*/:=?\{[]^
_ESCAPED_CHARS = [chr(code) for code in range(0x20)] + list("\"#'*/:=?\\\x7f{[]^")
_NEEDS_ESCAPE = "[\\x00-\\x1f\\x7f\"#%'*/:=?\\\\{\\[\\]^]"


def escape_path_names(values: pa.Array) -> pa.Array:
    """PartitionPathEncodeUtils.escapePathName on every value: `%XX` (uppercase hex)."""
    values = pc.if_else(pc.equal(values, ""), DEFAULT_PARTITION_PATH, values)
    if not pc.any(pc.match_substring_regex(values, _NEEDS_ESCAPE)).as_py():
        return values
    escaped = pc.replace_substring(values, "%", "%25")  # first, so added escapes stay intact
    for char in _ESCAPED_CHARS:
        escaped = pc.replace_substring(escaped, char, f"%{ord(char):02X}")
    return escaped


def partition_part(text: pa.Array, field: str, hive_style: bool, url_encode: bool) -> pa.Array:
    """One field's part of the path from its string values (KeyGenUtils.getPartitionPath)."""
    missing = pc.or_(pc.is_null(text), pc.equal(pc.fill_null(text, ""), ""))
    part = pc.if_else(missing, DEFAULT_PARTITION_PATH, text)
    if url_encode:
        part = escape_path_names(part)
    return with_hive_prefix(part, field, hive_style)


def with_hive_prefix(part: pa.Array, field: str, hive_style: bool) -> pa.Array:
    if not hive_style:
        return part
    return pc.binary_join_element_wise(f"{field}=", part, "")


def join_parts(parts: list[pa.Array], num_rows: int) -> pa.Array:
    if not parts:
        return constant(num_rows, "")
    if len(parts) == 1:
        return parts[0]
    return pc.binary_join_element_wise(*parts, PATH_SEPARATOR)


def constant(num_rows: int, text: str) -> pa.Array:
    return pa.repeat(pa.scalar(text, pa.string()), num_rows)
