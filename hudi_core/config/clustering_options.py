"""Options of clustering: when to plan, which file slices a plan takes, how they are rewritten."""

from hudi_core.config.option import ConfigOption, parse_bool

PLAN_STRATEGY_PREFIX = "hoodie.clustering.plan.strategy."
SIZE_BASED_PLAN = (
    "org.apache.hudi.client.clustering.plan.strategy.SparkSizeBasedClusteringPlanStrategy"
)
REJECT_UPDATES = "org.apache.hudi.client.clustering.update.strategy.SparkRejectUpdateStrategy"

INLINE = ConfigOption(
    "hoodie.clustering.inline",
    False,
    "Writers schedule and run a clustering after a commit once inline.max.commits commits "
    "came since the last one.",
    parse=parse_bool,
)
SCHEDULE_INLINE = ConfigOption(
    "hoodie.clustering.schedule.inline",
    False,
    "Writers only schedule clustering plans (for a separate executor to run).",
    parse=parse_bool,
)
INLINE_MAX_COMMITS = ConfigOption(
    "hoodie.clustering.inline.max.commits",
    4,
    "Commits since the last clustering after which inline (or inline-scheduled) clustering "
    "plans the next one.",
    parse=int,
)
PLAN_STRATEGY_CLASS = ConfigOption(
    "hoodie.clustering.plan.strategy.class",
    SIZE_BASED_PLAN,
    "Which file slices a plan takes; the size-based strategy (small base files, grouped up "
    "to max.bytes.per.group) is the one implemented.",
)
SMALL_FILE_LIMIT = ConfigOption(
    PLAN_STRATEGY_PREFIX + "small.file.limit",
    300 << 20,
    "File slices whose base file is smaller than this many bytes are clustered.",
    parse=int,
)
TARGET_FILE_MAX_BYTES = ConfigOption(
    PLAN_STRATEGY_PREFIX + "target.file.max.bytes",
    1 << 30,
    "Size of the files a clustering writes: a group becomes ceil(size / this) files.",
    parse=int,
)
MAX_BYTES_PER_GROUP = ConfigOption(
    PLAN_STRATEGY_PREFIX + "max.bytes.per.group",
    2 << 30,
    "Most bytes of input one clustering group (one task) takes.",
    parse=int,
)
MAX_NUM_GROUPS = ConfigOption(
    PLAN_STRATEGY_PREFIX + "max.num.groups",
    30,
    "Most groups one plan holds.",
    parse=int,
)
SINGLE_GROUP = ConfigOption(
    PLAN_STRATEGY_PREFIX + "single.group.clustering.enabled",
    True,
    "Also cluster a group of a single file slice (it still gets sorted and resized).",
    parse=parse_bool,
)
SORT_COLUMNS = ConfigOption(
    PLAN_STRATEGY_PREFIX + "sort.columns",
    "",
    "Comma-separated columns the rewritten rows are ordered by (see hoodie.layout.optimize."
    "strategy); none: the rows keep their order.",
)
PARTITION_FILTER_MODE = ConfigOption(
    "hoodie.clustering.plan.partition.filter.mode",
    "NONE",
    "Which partitions a plan looks at: NONE (all), RECENT_DAYS, SELECTED_PARTITIONS (between "
    "cluster.begin.partition and cluster.end.partition) or DAY_ROLLING (a 24th of them per "
    "hour of the day).",
    choices=("NONE", "RECENT_DAYS", "SELECTED_PARTITIONS", "DAY_ROLLING"),
)
LOOKBACK_PARTITIONS = ConfigOption(
    PLAN_STRATEGY_PREFIX + "daybased.lookback.partitions",
    2,
    "RECENT_DAYS: how many of the latest partitions a plan looks at.",
    parse=int,
)
SKIP_FROM_LATEST = ConfigOption(
    PLAN_STRATEGY_PREFIX + "daybased.skipfromlatest.partitions",
    0,
    "RECENT_DAYS: how many of the very latest partitions are left out first.",
    parse=int,
)
BEGIN_PARTITION = ConfigOption(
    PLAN_STRATEGY_PREFIX + "cluster.begin.partition",
    None,
    "SELECTED_PARTITIONS: the first partition (inclusive) a plan looks at.",
)
END_PARTITION = ConfigOption(
    PLAN_STRATEGY_PREFIX + "cluster.end.partition",
    None,
    "SELECTED_PARTITIONS: the last partition (inclusive) a plan looks at.",
)
PARTITION_REGEX = ConfigOption(
    PLAN_STRATEGY_PREFIX + "partition.regex.pattern",
    None,
    "Only partitions whose path matches this regular expression (in full) are clustered.",
)
PARTITION_SELECTED = ConfigOption(
    PLAN_STRATEGY_PREFIX + "partition.selected",
    None,
    "Comma-separated partitions to cluster; set, it wins over the regex and the filter mode.",
)
PRESERVE_COMMIT_METADATA = ConfigOption(
    "hoodie.clustering.preserve.commit.metadata",
    True,
    "Rewritten records keep their _hoodie_commit_time and _hoodie_commit_seqno, so incremental "
    "reads do not see them again; false stamps them with the clustering's instant.",
    parse=parse_bool,
)
UPDATES_STRATEGY = ConfigOption(
    "hoodie.clustering.updates.strategy",
    REJECT_UPDATES,
    "What a write updating a file group under pending clustering does: the reject strategy "
    "(the one implemented) fails the write, which is rolled back.",
)
LAYOUT_STRATEGY = ConfigOption(
    "hoodie.layout.optimize.strategy",
    "linear",
    "How rows are ordered by the sort columns: linear (lexicographic), z-order or hilbert "
    "(space-filling curves, which keep rows close in every sort column together).",
    choices=("LINEAR", "Z-ORDER", "ZORDER", "HILBERT"),
)
CURVE_BUILD_METHOD = ConfigOption(
    "hoodie.layout.optimize.curve.build.method",
    "direct",
    "How values map onto a curve: direct (each column's values scaled onto its bits) or sample "
    "(by the quantiles of a sample, for skewed columns).",
    choices=("DIRECT", "SAMPLE"),
)
CURVE_SAMPLE_SIZE = ConfigOption(
    "hoodie.layout.optimize.build.curve.sample.size",
    200000,
    "Rows sampled to find the quantiles with the sample build method.",
    parse=int,
)
