"""The average on-disk record size, measured from recent commits, for sizing file groups."""

from __future__ import annotations

import logging
import math

from hudi_core.config import storage_options as S
from hudi_core.config import write_options as W
from hudi_core.config.option import Options
from hudi_core.errors import CorruptFileError
from hudi_core.model.commit_metadata import CommitMetadata
from hudi_core.timeline import ActiveTimeline

_LOG = logging.getLogger(__name__)


def average_record_size(timeline: ActiveTimeline, options: Options) -> int:
    """Bytes per record of the newest commit that wrote enough to be a fair sample.

    A commit counts when it wrote more than threshold x small-file-limit bytes; until one
    exists, `hoodie.copyonwrite.record.size.estimate` stands in.
    """
    threshold = options.get_option(W.RECORD_SIZE_ESTIMATION_THRESHOLD) * options.get_option(
        S.PARQUET_SMALL_FILE_LIMIT
    )
    for instant in reversed(timeline.completed_writes()):
        try:
            stats = CommitMetadata.from_json_bytes(timeline.read_bytes(instant)).write_stats()
        except CorruptFileError as exc:  # an estimate: Apache Hudi skips such a commit too
            _LOG.warning("record size estimate skips a commit it cannot read: %s", exc)
            continue
        total_bytes = sum(s.total_write_bytes for s in stats)
        total_records = sum(s.num_writes for s in stats)
        if total_bytes > threshold and total_records > 0:
            return max(1, math.ceil(total_bytes / total_records))
    return options.get_option(W.RECORD_SIZE_ESTIMATE)
