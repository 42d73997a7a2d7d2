"""Options of a bootstrap: which source partitions are referenced (metadata only) and which
rewritten (full record), and how source folders name the table's partitions."""

from hudi_core.config.option import ConfigOption

_SELECTORS = "org.apache.hudi.client.bootstrap.selector."
METADATA_ONLY_SELECTOR = _SELECTORS + "MetadataOnlyBootstrapModeSelector"
FULL_RECORD_SELECTOR = _SELECTORS + "FullRecordBootstrapModeSelector"
REGEX_SELECTOR = _SELECTORS + "BootstrapRegexModeSelector"
_TRANSLATORS = "org.apache.hudi.client.bootstrap.translator."
IDENTITY_TRANSLATOR = _TRANSLATORS + "IdentityBootstrapPartitionPathTranslator"
DECODED_TRANSLATOR = _TRANSLATORS + "DecodedBootstrapPartitionPathTranslator"
METADATA_ONLY, FULL_RECORD = "METADATA_ONLY", "FULL_RECORD"

MODE_SELECTOR = ConfigOption(
    "hoodie.bootstrap.mode.selector",
    METADATA_ONLY_SELECTOR,
    "How each source partition is bootstrapped: MetadataOnlyBootstrapModeSelector (skeleton "
    "files referencing the source files), FullRecordBootstrapModeSelector (rewritten as Hudi "
    "files) or BootstrapRegexModeSelector (by the regex below).",
)
MODE_SELECTOR_REGEX = ConfigOption(
    "hoodie.bootstrap.mode.selector.regex",
    ".*",
    "BootstrapRegexModeSelector: partitions whose whole path matches get regex.mode, the "
    "others the other mode.",
)
MODE_SELECTOR_REGEX_MODE = ConfigOption(
    "hoodie.bootstrap.mode.selector.regex.mode",
    METADATA_ONLY,
    "BootstrapRegexModeSelector: the mode of the partitions the regex matches.",
    choices=(METADATA_ONLY, FULL_RECORD),
)
PARTITION_PATH_TRANSLATOR = ConfigOption(
    "hoodie.bootstrap.partitionpath.translator.class",
    IDENTITY_TRANSLATOR,
    "How a source folder names the table partition it becomes: "
    "IdentityBootstrapPartitionPathTranslator (the same path) or "
    "DecodedBootstrapPartitionPathTranslator (URL-decoded).",
)
PARALLELISM = ConfigOption(
    "hoodie.bootstrap.parallelism",
    1500,
    "Most Spark tasks a bootstrap's per-file work runs in (spark_jobs/bootstrap.py); source "
    "files share them in order.",
    parse=int,
)
