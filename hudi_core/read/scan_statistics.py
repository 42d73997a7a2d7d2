"""What a read scanned: how many base files and row groups it read out of those its slices
hold. Base files without log files are pruned by their parquet column statistics (a file or
row group whose min/max values cannot match the filters is not read), so after clustering a
selective filter reads a fraction of the table."""

from __future__ import annotations

from dataclasses import astuple, dataclass


@dataclass(frozen=True)
class ScanStatistics:
    files: int = 0  # base files (or log-only slices) the query's slices hold
    files_read: int = 0  # of those, read (merged slices are always read)
    row_groups: int = 0  # row groups of the base files read without a log
    row_groups_read: int = 0
    # Of a bootstrapped table's skeleton base files (read with their source files): the
    # skeleton files read, and the source dataset's files read
    skeleton_files_read: int = 0
    source_files_read: int = 0

    def __add__(self, other: ScanStatistics) -> ScanStatistics:
        return ScanStatistics(*(a + b for a, b in zip(astuple(self), astuple(other), strict=True)))
