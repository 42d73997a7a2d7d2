"""When a compaction is due: `hoodie.compact.inline.trigger.strategy`, as Apache Hudi decides.

Counts are of completed delta commits since the last completed compaction (NUM_COMMITS), or
since the last compaction planned, completed or not (NUM_COMMITS_AFTER_LAST_REQUEST); time is
measured from the last compaction (or the first delta commit when there was none).
"""

from __future__ import annotations

from datetime import UTC, datetime

from hudi_core.config import compaction_options as C
from hudi_core.config.option import Options
from hudi_core.timeline import ActiveTimeline
from hudi_core.timeline.instant import COMMIT, COMPACTION, DELTA_COMMIT
from hudi_core.timeline.instant_time import parse_instant_time


def compaction_due(timeline: ActiveTimeline, options: Options) -> bool:
    strategy = options.get_option(C.TRIGGER_STRATEGY)
    enough_commits = _delta_commits_since(timeline, strategy) >= options.get_option(
        C.MAX_DELTA_COMMITS
    )
    if strategy in ("NUM_COMMITS", "NUM_COMMITS_AFTER_LAST_REQUEST"):
        return enough_commits
    enough_time = _seconds_since_last(timeline) >= options.get_option(C.MAX_DELTA_SECONDS)
    if strategy == "TIME_ELAPSED":
        return enough_time
    if strategy == "NUM_AND_TIME":
        return enough_commits and enough_time
    return enough_commits or enough_time  # NUM_OR_TIME


def _delta_commits_since(timeline: ActiveTimeline, strategy: str) -> int:
    since = _last_compaction(timeline, include_planned=strategy == "NUM_COMMITS_AFTER_LAST_REQUEST")
    deltas = timeline.completed([DELTA_COMMIT])
    return sum(1 for d in deltas if since is None or d.timestamp > since)


def _last_compaction(timeline: ActiveTimeline, include_planned: bool) -> str | None:
    """The time of the latest completed compaction (on merge-on-read tables compactions are
    what completes as a commit), or of the latest one planned."""
    times = [i.timestamp for i in timeline.completed([COMMIT])]
    if include_planned:
        times += [i.timestamp for i in timeline.pending([COMPACTION])]
    return max(times, default=None)


def _seconds_since_last(timeline: ActiveTimeline) -> float:
    since = _last_compaction(timeline, include_planned=False)
    if since is None:
        deltas = timeline.completed([DELTA_COMMIT])
        if not deltas:
            return 0.0
        since = deltas[0].timestamp
    now = datetime.now(UTC).replace(tzinfo=None) if timeline.timezone == "UTC" else datetime.now()
    return (now - parse_instant_time(since)).total_seconds()
