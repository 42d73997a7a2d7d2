"""Options of partition commit: telling downstream readers that a partition is complete
(the names of the filesystem connector's sink.partition-commit.* options)."""

from hudi_core.config.option import ConfigOption, parse_list

TRIGGER = ConfigOption(
    "sink.partition-commit.trigger",
    "process-time",
    "When a written partition is committed: process-time (the delay after its data was "
    "first seen committed) or partition-time (when the watermark passes the time parsed "
    "from the partition's path plus the delay).",
    parse=str.lower,
    choices=("PROCESS-TIME", "PARTITION-TIME"),
)
DELAY = ConfigOption(
    "sink.partition-commit.delay",
    "0 s",
    "How long after its trigger time a partition is committed, e.g. '0 s', '30 min', '1 h', '1 d'.",
)
POLICY_KIND: ConfigOption[list[str]] = ConfigOption(
    "sink.partition-commit.policy.kind",
    [],
    "What committing a partition does, comma-separated: success-file (write the success "
    "file into its folder) and/or metastore (register it in the Hive metastore of the "
    "hive_sync options; new partitions then wait for their commit). Empty: no partition "
    "commit.",
    parse_list,
)
SUCCESS_FILE_NAME = ConfigOption(
    "sink.partition-commit.success-file.name",
    "_SUCCESS",
    "Name of the success file the success-file policy writes.",
)
WATERMARK_TIME_ZONE = ConfigOption(
    "sink.partition-commit.watermark-time-zone",
    "UTC",
    "Time zone in which partition times parsed from paths are read (an IANA name).",
)
TIMESTAMP_PATTERN = ConfigOption(
    "partition.time-extractor.timestamp-pattern",
    None,
    "How a partition's time is assembled from its fields, e.g. '$dt $hour:00:00' "
    "(default: the first field's value).",
)
TIMESTAMP_FORMATTER = ConfigOption(
    "partition.time-extractor.timestamp-formatter",
    "yyyy-MM-dd HH:mm:ss",
    "Java date-time pattern the assembled partition time is parsed with (a date-only pattern "
    "such as yyyy-MM-dd or yyyyMMdd means midnight).",
)
