"""Options of Apache Hudi's metadata table, which this library does not keep (see
hudi_core.services.metadata_table)."""

from hudi_core.config.option import ConfigOption, parse_bool

ENABLE = ConfigOption(
    "hoodie.metadata.enable",
    False,
    "Apache Hudi's metadata table (.hoodie/metadata). Not kept here: true is refused, and a "
    "write or table service removes a metadata table it finds, as Apache Hudi does with false.",
    parse_bool,
)
