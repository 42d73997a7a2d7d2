"""Options of reads: the query, and how merge-on-read file slices are merged."""

from hudi_core.choices import QueryType
from hudi_core.config.option import ConfigOption, parse_bool

QUERY_TYPE = ConfigOption(
    "hoodie.datasource.query.type",
    QueryType.SNAPSHOT,
    "snapshot (merged), read_optimized (base files only) or incremental.",
    parse=QueryType,
    choices=tuple(query.upper() for query in QueryType),
)
MERGE_TYPE = ConfigOption(
    "hoodie.datasource.merge.type",
    "payload_combine",
    "payload_combine merges log records into base rows; skip_merge returns both as written.",
    parse=lambda raw: raw.strip().lower(),
    choices=("PAYLOAD_COMBINE", "SKIP_MERGE"),
)
MERGE_MAX_MEMORY = ConfigOption(
    "hoodie.memory.merge.max.size",
    1073741824,
    "Bytes of log records a file slice merge holds in memory before spilling to local disk.",
    parse=int,
)
SPILL_PATH = ConfigOption(
    "hoodie.memory.spillable.map.path",
    None,
    "Local folder for merge spill files (default: the system temporary folder).",
)
CHANGELOG_READ = ConfigOption(
    "hoodie.datasource.read.changelog.enabled",
    False,
    "Incremental reads of changelog-mode tables return every change (with _hoodie_operation) "
    "instead of the merged row.",
    parse=parse_bool,
)
INCREMENTAL_FULL_SCAN_FALLBACK = ConfigOption(
    "hoodie.datasource.read.incr.fallback.fulltablescan.enable",
    False,
    "Incremental and streaming reads whose commits were archived or whose files were cleaned "
    "scan every file group, filtering rows by commit time, instead of the groups the commits "
    "touched (streaming reads fail without it).",
    parse=parse_bool,
)
BEGIN_INSTANT = ConfigOption(
    "hoodie.datasource.read.begin.instanttime",
    None,
    "Incremental reads: changes after this instant (exclusive).",
)
END_INSTANT = ConfigOption(
    "hoodie.datasource.read.end.instanttime",
    None,
    "Incremental reads: changes up to this instant (inclusive; default the latest commit).",
)
AS_OF_INSTANT = ConfigOption(
    "as.of.instant",
    None,
    "Time travel: snapshot as of this instant (yyyyMMddHHmmssSSS or yyyy-MM-dd HH:mm:ss).",
)
SKIP_COMPACTION = ConfigOption(
    "hoodie.datasource.read.streaming.skip_compaction",
    False,
    "Incremental and streaming reads leave compaction commits out: their rows keep the commit "
    "times of the writes they merged, so reading them emits nothing new.",
    parse=parse_bool,
    alternatives=("read.streaming.skip_compaction",),
)
SKIP_CLUSTERING = ConfigOption(
    "hoodie.datasource.read.streaming.skip_clustering",
    False,
    "Incremental and streaming reads leave clustering commits out (rows a clustering rewrote "
    "without hoodie.clustering.preserve.commit.metadata would be emitted again).",
    parse=parse_bool,
    alternatives=("read.streaming.skip_clustering",),
)
STREAMING_START_OFFSET = ConfigOption(
    "hoodie.datasource.streaming.startOffset",
    "latest",
    "Where a new streaming read starts: latest (commits after the newest one), earliest "
    "(everything, the first micro-batch a scan of the table) or an instant time (commits from "
    "it on, inclusive). A restarted query resumes from its checkpoint instead.",
    alternatives=("read.start-commit",),
)
STREAMING_MAX_INSTANTS = ConfigOption(
    "hoodie.datasource.streaming.max.instants.per.trigger",
    0,
    "Commits one micro-batch of a streaming read takes at most (0: all that completed).",
    parse=int,
)
