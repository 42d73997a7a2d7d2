"""Partition path spelling shared by the key generators (KeyGenUtils, PartitionPathEncodeUtils).

One part per partition field: a null or empty value becomes `__HIVE_DEFAULT_PARTITION__`, other
values are url-encoded when asked (Hive's escapePathName), then hive style prefixes
`<field>=`; parts are joined with `/`.

Partition values are data, never paths: every generated path must be safe as folders under the
base path (see `find_unsafe_partition_paths`), else the write is refused before it starts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.config.table_config import METAFOLDER
from hudi_core.errors import PartitionPathError
from hudi_core.keygen.columns import bad_row_summary
from hudi_core.model.file_names import PARTITION_METAFILE

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


# --- safety ------------------------------------------------------------------------------

# A folder name longer than this is refused by local file systems and HDFS (NAME_MAX and
# dfs.namenode.fs-limits.max-component-length): the write would fail half-way.
MAX_FOLDER_NAME_BYTES = 255
# Top-level folders hudi-rs never lists as partitions (its LAKE_FORMAT_METADATA_DIRS).
HUDI_RS_SKIPPED_TOP_FOLDERS = ("metadata", "_delta_log")

# (RE2 pattern, what is wrong) in the order a path's problem is reported.
_UNSAFE_RULES = (
    (
        r"[\x00-\x1f\x7f]",
        "holds a control character (newline, tab, ...): hudi-rs cannot list such a folder, "
        "and every query of the table would fail",
    ),
    (
        r"(^|/)\.{0,2}(/|$)",
        "is not a relative path of named folders: a leading, doubled or trailing '/', or a "
        "'.' or '..' folder, would put its files outside its partition folder",
    ),
    (
        f"(^|/){re.escape(METAFOLDER)}(/|$)|(^|/){re.escape(PARTITION_METAFILE)}",
        f"names the metadata folder '{METAFOLDER}' (or the partition marker "
        f"'{PARTITION_METAFILE}'), which is never a partition",
    ),
    (
        "^(" + "|".join(HUDI_RS_SKIPPED_TOP_FOLDERS) + ")(/|$)",
        "starts with a folder hudi-rs skips as another table format's metadata ("
        + ", ".join(f"'{name}'" for name in HUDI_RS_SKIPPED_TOP_FOLDERS)
        + "): its rows would be invisible there",
    ),
)
_TOO_LONG = (
    f"has a folder name longer than {MAX_FOLDER_NAME_BYTES} bytes, which file systems refuse"
)


@dataclass(frozen=True)
class UnsafePartitionPaths:
    """The rows whose partition path is unsafe, and the first of them explained."""

    mask: pa.Array  # True on every row with an unsafe path
    count: int
    first: int  # index of the first such row
    value: str  # its path
    reason: str  # what is wrong with it ("... is not a relative path ...")

    def describe(self) -> str:
        shown = self.value if len(self.value) <= 80 else self.value[:80] + "..."
        return f"partition path {shown!r} {self.reason}"


def find_unsafe_partition_paths(paths: pa.Array | pa.ChunkedArray) -> UnsafePartitionPaths | None:
    """None when every path is safe as folders under the base path, else the unsafe rows.

    A safe path is relative, every folder in it has a name (no empty, `.` or `..` segment)
    of at most MAX_FOLDER_NAME_BYTES bytes, no folder is `.hoodie` (nor the partition marker
    file's name), its first folder is not one hudi-rs skips, and it has no control character.
    Each distinct path is checked once; nulls are not paths and pass.
    """
    if isinstance(paths, pa.ChunkedArray):
        paths = paths.combine_chunks()
    distinct = pc.unique(paths)
    unsafe = distinct.filter(_unsafe(distinct))
    if len(unsafe) == 0:
        return None
    mask = pc.fill_null(pc.is_in(paths, value_set=unsafe), False)
    count, first = bad_row_summary(mask)
    value = paths[first].as_py()
    return UnsafePartitionPaths(mask, count, first, value, _reason(value))


def require_safe_partition_paths(paths: Sequence[str], source: str) -> None:
    """Refuses partition paths a user listed (e.g. in hoodie.datasource.write.partitions.to.delete)
    unless every one is safe; `source` names where they were listed."""
    found = find_unsafe_partition_paths(pa.array(list(paths), pa.string()))
    if found is None:
        return
    raise PartitionPathError(
        f"{found.describe()}; it is listed in {source}. List partition paths "
        "relative to the table's base path, as their folders are named (e.g. 'city=sf' or "
        "'2024/01/01')"
    )


def _unsafe(paths: pa.Array) -> pa.Array:
    mask = _too_long(paths)
    for pattern, _ in _UNSAFE_RULES:
        mask = pc.or_(mask, pc.match_substring_regex(paths, pattern))
    return pc.fill_null(mask, False)


def _too_long(paths: pa.Array) -> pa.Array:
    """Whether any folder name of a path is longer than MAX_FOLDER_NAME_BYTES bytes."""
    folders = pc.split_pattern(paths, PATH_SEPARATOR)
    long_ones = pc.greater(pc.binary_length(pc.list_flatten(folders)), MAX_FOLDER_NAME_BYTES)
    owners = pc.list_parent_indices(folders).filter(long_ones)
    return pc.is_in(pa.array(np.arange(len(paths))), value_set=owners.cast(pa.int64()))


def _reason(path: str) -> str:
    one = pa.array([path], pa.string())
    for pattern, reason in _UNSAFE_RULES:
        if pc.match_substring_regex(one, pattern)[0].as_py():
            return reason
    return _TOO_LONG
