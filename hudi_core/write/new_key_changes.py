"""New file groups for keys new to a merge-on-read table in changelog mode, keeping every change.

A base file has room for one version of a key, so a new key's first change that is not a
delete goes into the new base file, and its later changes into a log file on that same file
group, written in the same commit (see write.changelog for why not a log-only file group).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from hudi_core.arrow_utils import positions_in
from hudi_core.model.commit_metadata import WriteStat
from hudi_core.model.file_group import BaseFile, FileSlice
from hudi_core.schema.meta_fields import RECORD_KEY_FIELD
from hudi_core.write.append_task import AppendTask
from hudi_core.write.changelog import split_new_keys
from hudi_core.write.handles import CreateTask, WriteSettings


@dataclass
class NewKeyChangesTask(CreateTask):
    """A CreateTask whose rows may hold several changes of a key, in batch order."""

    def run(self, settings: WriteSettings) -> list[WriteStat]:
        rows = self.rows if self.order is None else self.rows.take(self.order)
        first, later = split_new_keys(rows)
        created = self.write_files(first, settings)
        if later.num_rows == 0:
            return created
        # The files hold `first` in order: the file of a key is found by its row's position.
        ends = np.cumsum([stat.num_writes for stat in created])
        row = positions_in(later.column(RECORD_KEY_FIELD), first.column(RECORD_KEY_FIELD))
        in_file = np.searchsorted(ends, row.to_numpy(zero_copy_only=False), side="right")
        logged: list[WriteStat] = []
        for index, stat in enumerate(created):
            changes = later.filter(pa.array(in_file == index))
            if changes.num_rows:
                base = BaseFile(stat.path, stat.file_size_in_bytes)
                new = FileSlice(self.partition_path, stat.file_id, settings.instant_time, base)
                logged += AppendTask(self.task_id, new, changes).run(settings)
        return created + logged
