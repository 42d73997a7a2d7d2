"""The file a Spark job writes its result to (spark_jobs' `--result-file`), and the operator
reads once spark-submit returns: the job's status, error and the instant it produced.

The file lives in a folder both the Spark driver and the Airflow worker reach: by default a
temporary folder on the worker, which a driver in client mode (spark-submit's default) shares;
with the driver elsewhere (cluster mode), a shared folder or an object store URI.
"""

from __future__ import annotations

import json
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from hudi_core.storage import Storage


class JobResultFile:
    """One job run's result file: `location` for the job, `read()` for the operator."""

    def __init__(self, folder: str) -> None:
        self.storage = Storage(folder)
        self.name = f"hudi-job-{uuid.uuid4().hex}.json"
        self.location = f"{folder.rstrip('/')}/{self.name}"

    def read(self) -> dict[str, Any] | None:
        """The job's result; None when it wrote none (it never started, or died)."""
        if not self.storage.exists(self.name):
            return None
        data = self.storage.read_bytes(self.name)
        return json.loads(data) if data else None


@contextmanager
def job_result_file(folder: str | None = None) -> Iterator[JobResultFile]:
    """A new result file in `folder` (a path or URI), else in a temporary folder here; deleted
    after use."""
    with ExitStack() as stack:
        if not folder:
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="hudi-job-"))
        result_file = JobResultFile(folder)
        try:
            yield result_file
        finally:
            result_file.storage.delete(result_file.name)
