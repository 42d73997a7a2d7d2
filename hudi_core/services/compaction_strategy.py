"""Compaction strategies: which file slices with log files a compaction plan takes.

Named as Apache Hudi names them (`hoodie.compaction.strategy`). Each orders and filters the
candidates; the bounded ones then stop once the plan's estimated IO reaches
`hoodie.compaction.target.io` megabytes (the slice that reaches it is still taken).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hudi_core.config import compaction_options as C
from hudi_core.config.option import Options
from hudi_core.errors import InvalidOptionError
from hudi_core.model.file_group import FileSlice

_MB = 1024 * 1024


@dataclass(frozen=True)
class Candidate:
    file_slice: FileSlice
    max_file_size: int  # what a compaction without a base file is expected to write

    @property
    def log_bytes(self) -> int:
        return sum(f.size for f in self.file_slice.log_files)

    @property
    def log_count(self) -> int:
        return len(self.file_slice.log_files)

    @property
    def base_bytes(self) -> int:
        base = self.file_slice.base_file
        return base.size if base is not None else 0

    def metrics(self) -> dict[str, float]:
        """Apache Hudi's per-operation metrics: what compacting this slice reads and writes
        (in whole megabytes, as Apache Hudi counts them)."""
        read_mb = (self.base_bytes + self.log_bytes) // _MB
        write_mb = (self.base_bytes or self.max_file_size) // _MB
        return {
            "TOTAL_LOG_FILES_SIZE": float(self.log_bytes),
            "TOTAL_LOG_FILES": float(self.log_count),
            "TOTAL_IO_READ_MB": float(read_mb),
            "TOTAL_IO_WRITE_MB": float(write_mb),
            "TOTAL_IO_MB": float(read_mb + write_mb),
        }


def select(candidates: list[Candidate], options: Options) -> list[Candidate]:
    """The candidates a plan compacts, in the strategy's order."""
    regex = options.get_option(C.PARTITION_REGEX)
    if regex:
        pattern = re.compile(regex)
        candidates = [c for c in candidates if pattern.search(c.file_slice.partition_path)]
    name = options.get_option(C.STRATEGY).rsplit(".", 1)[-1]
    if name not in _STRATEGIES:
        raise InvalidOptionError(
            f"hoodie.compaction.strategy {name} is not supported; use one of "
            + ", ".join(sorted(_STRATEGIES))
        )
    return _STRATEGIES[name](candidates, options)


def _log_size_based(candidates: list[Candidate], options: Options) -> list[Candidate]:
    threshold = options.get_option(C.LOG_FILE_SIZE_THRESHOLD)
    kept = [c for c in candidates if c.log_bytes >= threshold]
    return _bounded(sorted(kept, key=lambda c: c.log_bytes, reverse=True), options)


def _log_num_based(candidates: list[Candidate], options: Options) -> list[Candidate]:
    threshold = options.get_option(C.LOG_FILE_NUM_THRESHOLD)
    kept = [c for c in candidates if c.log_count >= threshold]
    return _bounded(sorted(kept, key=lambda c: c.log_count, reverse=True), options)


def _bounded(candidates: list[Candidate], options: Options) -> list[Candidate]:
    remaining = options.get_option(C.TARGET_IO)
    chosen = []
    for candidate in candidates:
        chosen.append(candidate)
        remaining -= int(candidate.metrics()["TOTAL_IO_MB"])
        if remaining <= 0:
            break
    return chosen


def _day_based(candidates: list[Candidate], options: Options) -> list[Candidate]:
    """Slices of the latest N partitions, newest partition first as Apache Hudi orders them
    (partition paths of dates sort as dates)."""
    partitions = sorted({c.file_slice.partition_path for c in candidates}, reverse=True)
    rank = {p: i for i, p in enumerate(partitions[: options.get_option(C.DAY_BASED_PARTITIONS)])}
    kept = [c for c in candidates if c.file_slice.partition_path in rank]
    return sorted(kept, key=lambda c: rank[c.file_slice.partition_path])


def _unbounded(candidates: list[Candidate], options: Options) -> list[Candidate]:
    return list(candidates)


_STRATEGIES = {
    "LogFileSizeBasedCompactionStrategy": _log_size_based,
    "LogFileNumBasedCompactionStrategy": _log_num_based,
    "BoundedIOCompactionStrategy": _bounded,
    "DayBasedCompactionStrategy": _day_based,
    "UnBoundedCompactionStrategy": _unbounded,
    "PartitionRegexBasedCompactionStrategy": _unbounded,  # the regex filter applies to all
}
