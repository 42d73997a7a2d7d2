"""Options of timeline archival: how many completed commits the active timeline keeps."""

from hudi_core.config.option import ConfigOption, parse_bool

MIN_COMMITS = ConfigOption(
    "hoodie.keep.min.commits",
    20,
    "Archival leaves at least this many completed commits on the active timeline; must exceed "
    "hoodie.cleaner.commits.retained.",
    parse=int,
)
MAX_COMMITS = ConfigOption(
    "hoodie.keep.max.commits",
    30,
    "Archival starts once the active timeline holds more completed commits than this.",
    parse=int,
)
BATCH = ConfigOption(
    "hoodie.commits.archival.batch",
    10,
    "Archived instants written per archive log block.",
    parse=int,
)
AUTOMATIC = ConfigOption(
    "hoodie.archive.automatic",
    False,
    "Writers archive after each commit. Off by default here (Apache Hudi: on): archival runs "
    "as its own task.",
    parse=parse_bool,
)
BEYOND_SAVEPOINT = ConfigOption(
    "hoodie.archive.beyond.savepoint",
    False,
    "Archive commits past the earliest savepoint, savepointed ones too (the savepoints "
    "themselves stay, pinning their files against the cleaner).",
    parse=parse_bool,
)
