"""Engine contexts: how per-file-group work is spread out.

The driver (the caller of a write or a read) alone touches the timeline; tasks only write data
files and return write stats, so an engine may run them anywhere. The local engine runs them on
threads (pyarrow releases the GIL for parquet and compute); the Spark engine in spark_jobs runs
the same task functions on executors.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class EngineContext(Protocol):
    parallelism: int

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        """Applies `fn` to every item, in any order and place, returning results in order."""
        ...


class LocalEngine:
    """Runs tasks on a thread pool in this process."""

    def __init__(self, parallelism: int | None = None) -> None:
        self.parallelism = parallelism or os.cpu_count() or 1

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        if len(items) <= 1 or self.parallelism == 1:
            return [fn(item) for item in items]
        with ThreadPoolExecutor(max_workers=min(self.parallelism, len(items))) as pool:
            return list(pool.map(fn, items))


# Which attempt at a task this is (an engine that retries tasks says so), so that a retried
# task writes files of other names than the failed attempt it replaces.
_attempt = threading.local()


def task_attempt() -> int:
    return getattr(_attempt, "number", 0)


@contextmanager
def running_attempt(number: int) -> Iterator[None]:
    previous = task_attempt()
    _attempt.number = number
    try:
        yield
    finally:
        _attempt.number = previous
