"""Options of merge-on-read compaction: when to schedule, what to pick, how to run."""

from hudi_core.config.option import ConfigOption, parse_bool

STRATEGY_PACKAGE = "org.apache.hudi.table.action.compact.strategy."

INLINE = ConfigOption(
    "hoodie.compact.inline",
    False,
    "Writers schedule and run a compaction after a deltacommit when the trigger says it is due.",
    parse=parse_bool,
)
SCHEDULE_INLINE = ConfigOption(
    "hoodie.compact.schedule.inline",
    False,
    "Writers only schedule compaction plans (for a separate executor to run).",
    parse=parse_bool,
)
TRIGGER_STRATEGY = ConfigOption(
    "hoodie.compact.inline.trigger.strategy",
    "NUM_COMMITS",
    "When a compaction is due: NUM_COMMITS, NUM_COMMITS_AFTER_LAST_REQUEST, TIME_ELAPSED, "
    "NUM_AND_TIME or NUM_OR_TIME.",
    choices=(
        "NUM_COMMITS",
        "NUM_COMMITS_AFTER_LAST_REQUEST",
        "TIME_ELAPSED",
        "NUM_AND_TIME",
        "NUM_OR_TIME",
    ),
)
MAX_DELTA_COMMITS = ConfigOption(
    "hoodie.compact.inline.max.delta.commits",
    5,
    "Delta commits since the last compaction after which one is due.",
    parse=int,
)
MAX_DELTA_SECONDS = ConfigOption(
    "hoodie.compact.inline.max.delta.seconds",
    3600,
    "Seconds since the last compaction after which one is due.",
    parse=int,
)
STRATEGY = ConfigOption(
    "hoodie.compaction.strategy",
    STRATEGY_PACKAGE + "LogFileSizeBasedCompactionStrategy",
    "Which file slices a plan compacts: LogFileSizeBased (largest logs first), LogFileNumBased, "
    "BoundedIO, DayBased (latest partitions), UnBounded or PartitionRegexBased.",
)
LOG_FILE_SIZE_THRESHOLD = ConfigOption(
    "hoodie.compaction.logfile.size.threshold",
    0,
    "LogFileSizeBased: slices whose log files total fewer bytes are left out.",
    parse=int,
)
LOG_FILE_NUM_THRESHOLD = ConfigOption(
    "hoodie.compaction.logfile.num.threshold",
    0,
    "LogFileNumBased: slices with fewer log files are left out.",
    parse=int,
)
TARGET_IO = ConfigOption(
    "hoodie.compaction.target.io",
    512000,
    "Bounded strategies: megabytes of reads and writes one plan may take.",
    parse=int,
)
DAY_BASED_PARTITIONS = ConfigOption(
    "hoodie.compaction.daybased.target.partitions",
    10,
    "DayBased: how many of the latest partitions a plan compacts.",
    parse=int,
)
PARTITION_REGEX = ConfigOption(
    "hoodie.compaction.partition.path.regex",
    None,
    "Only partitions whose path contains a match of this regular expression are compacted.",
)
MEMORY = ConfigOption(
    "hoodie.memory.compaction.max.size",
    1073741824,
    "Bytes of log records one compaction operation holds in memory before spilling to disk.",
    parse=int,
)
