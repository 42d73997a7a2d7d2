"""Options of the cleaner: which old file slices go, and how failed writes are cleaned."""

from hudi_core.config.option import ConfigOption, parse_bool

POLICY = ConfigOption(
    "hoodie.cleaner.policy",
    "KEEP_LATEST_COMMITS",
    "KEEP_LATEST_COMMITS keeps the slices queries of the last N commits need, "
    "KEEP_LATEST_FILE_VERSIONS the last N slices of each file group, KEEP_LATEST_BY_HOURS "
    "the slices queries of the last N hours need.",
    choices=("KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS", "KEEP_LATEST_BY_HOURS"),
)
COMMITS_RETAINED = ConfigOption(
    "hoodie.cleaner.commits.retained",
    10,
    "KEEP_LATEST_COMMITS: how many of the latest commits stay readable (time travel, "
    "incremental reads, running queries).",
    parse=int,
)
FILE_VERSIONS_RETAINED = ConfigOption(
    "hoodie.cleaner.fileversions.retained",
    3,
    "KEEP_LATEST_FILE_VERSIONS: file slices kept per file group.",
    parse=int,
)
HOURS_RETAINED = ConfigOption(
    "hoodie.cleaner.hours.retained",
    24,
    "KEEP_LATEST_BY_HOURS: hours of commits that stay readable.",
    parse=int,
)
MAX_COMMITS = ConfigOption(
    "hoodie.clean.max.commits",
    1,
    "Commits since the last clean before a new clean is planned.",
    parse=int,
)
AUTOMATIC = ConfigOption(
    "hoodie.clean.automatic",
    False,
    "Writers clean after each commit. Off by default here (Apache Hudi: on): cleaning runs as "
    "its own task.",
    parse=parse_bool,
)
FAILED_WRITES_POLICY = ConfigOption(
    "hoodie.cleaner.policy.failed.writes",
    "EAGER",
    "EAGER: each write first rolls back every pending write (single writer). LAZY: the cleaner "
    "rolls back writes whose heartbeat expired. NEVER: failed writes stay until rolled back "
    "by hand.",
    choices=("EAGER", "LAZY", "NEVER"),
)
DELETE_BOOTSTRAP_BASE_FILE = ConfigOption(
    "hoodie.cleaner.delete.bootstrap.base.file",
    False,
    "Delete a bootstrap's source files with the skeleton slices that reference them; not "
    "supported (true is refused): source files are never deleted.",
    parse=parse_bool,
)
