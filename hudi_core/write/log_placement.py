"""Non-blocking concurrency control: where a commit's log files end up.

Writers appending to one file group at once each pick their log file's version from what they
listed when they planned, and a compaction may be planned meanwhile. At commit, under the table
lock, each of the write's log files is moved, if it must, to sit after every other log file of
its file group's current slice for logs:

- on the slice a compaction planned meanwhile starts: left on the slice the compaction
  replaces, the log would be lost once the compaction completes (the plan never names a log
  file of a write still in flight, see services.compaction);
- on the slice a concurrent writer's first log made, for a file group both created at once
  (see index.bucket_index): a file group has one slice per base instant;
- at a version above every other log file there, so that versions follow the order commits
  complete in: the order the merge applies them in, and the order Apache Hudi's readers sort
  log files by.

A move is a rename (a copy on object stores) of a file no reader sees yet (its instant is not
complete), after a marker for the new name, so a rollback finds the file under either name.
"""

from __future__ import annotations

from collections.abc import Iterable

from hudi_core.model.commit_metadata import WriteStat
from hudi_core.model.file_names import LogFileName, log_file_name
from hudi_core.read.file_system_view import FileSystemView
from hudi_core.storage import Storage
from hudi_core.timeline import ActiveTimeline
from hudi_core.write.markers import Markers


def place_logs(
    storage: Storage, timeline: ActiveTimeline, instant_time: str, stats: Iterable[WriteStat]
) -> None:
    """Moves the log files of `stats` (the write at `instant_time`) where they belong, updating
    the stats in place; `timeline` is current (the caller holds the table lock)."""
    view = FileSystemView(storage, timeline)
    markers = Markers(storage, instant_time)
    for stat in stats:
        parsed = LogFileName.parse(stat.path.rsplit("/", 1)[-1])
        if parsed is None:
            continue
        target = view.slice_for_logs(stat.partition_path, stat.file_id)
        if target is None:
            continue  # no committed slice yet: this write makes the file group's first
        others = [f for f in target.log_files if f.path != stat.path]
        top = max((f.parsed.version for f in others), default=0)
        if parsed.base_instant_time == target.base_instant_time and parsed.version > top:
            continue
        token = parsed.write_token or "0-0-0"
        name = log_file_name(stat.file_id, target.base_instant_time, top + 1, token, parsed.suffix)
        path = f"{stat.partition_path}/{name}" if stat.partition_path else name
        markers.create(path, "APPEND")
        storage.move(stat.path, path)
        stat.path = path
        stat.log_version = top + 1
        stat.prev_commit = target.base_instant_time
        stat.base_file = target.base_file.name if target.base_file else ""
        stat.log_files = [f.name for f in others] + [name]
