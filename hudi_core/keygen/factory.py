"""Choosing and configuring a key generator from table properties and write options."""

from __future__ import annotations

from hudi_core.config import keygen_options as ko
from hudi_core.config.option import ConfigOption, Options
from hudi_core.errors import InvalidOptionError
from hudi_core.keygen.generators import (
    KEYGEN_PACKAGE,
    ComplexKeyGenerator,
    CustomKeyGenerator,
    GlobalDeleteKeyGenerator,
    KeyGenerator,
    KeySettings,
    NonpartitionedKeyGenerator,
    SimpleKeyGenerator,
    TimestampBasedKeyGenerator,
)
from hudi_core.keygen.timestamp import TimestampSettings

_CLASSES: dict[str, type[KeyGenerator]] = {
    "SimpleKeyGenerator": SimpleKeyGenerator,
    "SimpleAvroKeyGenerator": SimpleKeyGenerator,
    "ComplexKeyGenerator": ComplexKeyGenerator,
    "ComplexAvroKeyGenerator": ComplexKeyGenerator,
    "TimestampBasedKeyGenerator": TimestampBasedKeyGenerator,
    "TimestampBasedAvroKeyGenerator": TimestampBasedKeyGenerator,
    "NonpartitionedKeyGenerator": NonpartitionedKeyGenerator,
    "NonpartitionedAvroKeyGenerator": NonpartitionedKeyGenerator,
    "CustomKeyGenerator": CustomKeyGenerator,
    "CustomAvroKeyGenerator": CustomKeyGenerator,
    "GlobalDeleteKeyGenerator": GlobalDeleteKeyGenerator,
    "GlobalAvroDeleteKeyGenerator": GlobalDeleteKeyGenerator,
}
_TYPES: dict[str, type[KeyGenerator]] = {
    "SIMPLE": SimpleKeyGenerator,
    "COMPLEX": ComplexKeyGenerator,
    "TIMESTAMP": TimestampBasedKeyGenerator,
    "CUSTOM": CustomKeyGenerator,
    "NON_PARTITION": NonpartitionedKeyGenerator,
    "GLOBAL_DELETE": GlobalDeleteKeyGenerator,
}
_PARTITION_TYPES = ("SIMPLE", "TIMESTAMP")

PartitionSpec = list[tuple[str, str | None]]


def key_generator_for(options: Options) -> KeyGenerator:
    """The key generator a Hudi table (and this write) uses.

    `options` may hold the table's hoodie.properties and the write options together. As in
    Hudi's Spark writer (HoodieWriterUtils.validateTableConfig and the filling of missing write
    configs from the table config), the table's own properties define the table:

    - record key fields: `hoodie.table.recordkey.fields`, else
      `hoodie.datasource.write.recordkey.field`;
    - partition fields: `hoodie.table.partition.fields`, else
      `hoodie.datasource.write.partitionpath.field`. A table of table version 6 stores plain
      names there, so CustomKeyGenerator's `field:SIMPLE|TIMESTAMP` types come from the write
      option (or from the table property when it carries them);
    - class: `hoodie.table.keygenerator.class` (or a Hudi 1.x table's
      `hoodie.table.keygenerator.type`), else `hoodie.datasource.write.keygenerator.class`,
      else `hoodie.datasource.write.keygenerator.type` (when set), else inferred like
      KeyGenUtils.inferKeyGeneratorType: no partition fields -> NonpartitionedKeyGenerator,
      typed partition fields -> CustomKeyGenerator, one partition field and at most one key
      field -> SimpleKeyGenerator, otherwise ComplexKeyGenerator.

    When a table property and the matching write option are both set and disagree (field lists
    compared after trimming; Avro and Spark variants of a class count as the same generator),
    this raises InvalidOptionError, as Hudi refuses the write with "Config conflict".
    Hive style, url-encoding and `hoodie.keygen.timebased.*` share one key between table and
    write, so whichever layer of `options` set them last is what counts.
    """
    record_keys = _record_key_fields(options)
    partitions = _partition_spec(options)
    generator_class, class_name = _generator_class(options, record_keys, partitions)
    settings = _settings(options, generator_class, partitions)
    names = [name for name, _ in partitions]
    _validate(generator_class, class_name, record_keys, partitions)
    if generator_class is CustomKeyGenerator:
        typed = [(name, kind or "SIMPLE") for name, kind in partitions]
        return CustomKeyGenerator(record_keys, typed, settings, class_name)
    if generator_class in (NonpartitionedKeyGenerator, GlobalDeleteKeyGenerator):
        names = []
    return generator_class(record_keys, names, settings, class_name)


def _record_key_fields(options: Options) -> list[str]:
    table = _field_list(options, ko.TABLE_RECORDKEY_FIELDS)
    write = _field_list(options, ko.RECORDKEY_FIELD)
    if table is not None and write is not None and table != write:
        raise _conflict(ko.RECORDKEY_FIELD, write, ko.TABLE_RECORDKEY_FIELDS, table)
    return table if table is not None else write or []


def _raw(options: Options, option: ConfigOption[object]) -> str | None:
    """The option's text as given (these options are declared elsewhere with other parsers)."""
    for key in (option.key, *option.alternatives):
        if key in options:
            return options[key]
    return None


def _field_list(options: Options, option: ConfigOption[object]) -> list[str] | None:
    text = _raw(options, option)
    if text is None:
        return None
    return [part.strip() for part in text.split(",") if part.strip()]


def _partition_spec(options: Options) -> PartitionSpec:
    table = _typed_fields(options, ko.TABLE_PARTITION_FIELDS)
    write = _typed_fields(options, ko.PARTITIONPATH_FIELD)
    if table is None:
        return write or []
    if write is None:
        return table
    if [name for name, _ in table] != [name for name, _ in write]:
        raise _conflict(
            ko.PARTITIONPATH_FIELD,
            [n for n, _ in write],
            ko.TABLE_PARTITION_FIELDS,
            [n for n, _ in table],
        )
    return write if any(kind for _, kind in write) else table


def _typed_fields(options: Options, option: ConfigOption[object]) -> PartitionSpec | None:
    names = _field_list(options, option)
    if names is None:
        return None
    spec: PartitionSpec = []
    for entry in names:
        name, _, type_name = entry.partition(":")
        kind = type_name.strip().upper() or None
        if kind is not None and kind not in _PARTITION_TYPES:
            raise InvalidOptionError(
                f"option {option.key}: partition field '{entry}' has type {kind!r}; "
                "CustomKeyGenerator takes SIMPLE or TIMESTAMP"
            )
        spec.append((name.strip(), kind))
    return spec


def _conflict(
    write: ConfigOption[object],
    write_value: object,
    table: ConfigOption[object],
    table_value: object,
) -> InvalidOptionError:
    return InvalidOptionError(
        f"config conflict: write option {write.key}={_show(write_value)} but the table has "
        f"{table.key}={_show(table_value)}; the table's properties define its keys"
    )


def _show(value: object) -> str:
    return ",".join(value) if isinstance(value, list) else str(value)


def _generator_class(
    options: Options, record_keys: list[str], partitions: PartitionSpec
) -> tuple[type[KeyGenerator], str]:
    table_choice = _named_class(options, ko.TABLE_KEYGENERATOR_CLASS) or _typed_class(
        options, ko.TABLE_KEYGENERATOR_TYPE
    )
    write_class = _named_class(options, ko.KEYGENERATOR_CLASS)
    if table_choice and write_class and table_choice[0] is not write_class[0]:
        table_option = (
            ko.TABLE_KEYGENERATOR_CLASS
            if options.is_set(ko.TABLE_KEYGENERATOR_CLASS)
            else ko.TABLE_KEYGENERATOR_TYPE
        )
        raise _conflict(ko.KEYGENERATOR_CLASS, write_class[1], table_option, table_choice[1])
    chosen = table_choice or write_class or _typed_class(options, ko.KEYGENERATOR_TYPE)
    if chosen:
        return chosen
    inferred = _infer(record_keys, partitions)
    return inferred, inferred.default_class_name


def _typed_class(
    options: Options, option: ConfigOption[str | None]
) -> tuple[type[KeyGenerator], str] | None:
    type_name = options.get_option(option) if options.is_set(option) else None
    if type_name is None:
        return None
    generator_class = _TYPES[type_name.removesuffix("_AVRO")]
    return generator_class, generator_class.default_class_name


def _named_class(
    options: Options, option: ConfigOption[object]
) -> tuple[type[KeyGenerator], str] | None:
    name = (_raw(options, option) or "").strip()
    if not name:
        return None
    short = name.removeprefix(KEYGEN_PACKAGE)
    if short == name or short not in _CLASSES:
        raise InvalidOptionError(
            f"option {option.key}={name!r} is not a key generator hudi_core supports; use one of "
            + ", ".join(KEYGEN_PACKAGE + known for known in _CLASSES)
        )
    return _CLASSES[short], name


def _infer(record_keys: list[str], partitions: PartitionSpec) -> type[KeyGenerator]:
    if not partitions:
        return NonpartitionedKeyGenerator
    if any(kind for _, kind in partitions):
        return CustomKeyGenerator
    if len(partitions) == 1 and len(record_keys) <= 1:
        return SimpleKeyGenerator
    return ComplexKeyGenerator


def _settings(
    options: Options, generator_class: type[KeyGenerator], partitions: PartitionSpec
) -> KeySettings:
    needs_time = generator_class is TimestampBasedKeyGenerator or (
        generator_class is CustomKeyGenerator and any(k == "TIMESTAMP" for _, k in partitions)
    )
    return KeySettings(
        hive_style=options.get_option(ko.HIVE_STYLE_PARTITIONING),
        url_encode=options.get_option(ko.URL_ENCODE_PARTITIONING),
        consistent_timestamps=options.get_option(ko.CONSISTENT_LOGICAL_TIMESTAMP),
        complex_new_encoding=options.get_option(ko.COMPLEX_KEYGEN_NEW_ENCODING),
        timestamp=TimestampSettings.from_options(options) if needs_time else None,
    )


def _validate(
    generator_class: type[KeyGenerator],
    class_name: str,
    record_keys: list[str],
    partitions: PartitionSpec,
) -> None:
    """The shape checks Hudi's constructors make (e.g. SimpleKeyGenerator's single fields)."""
    single_key = generator_class in (SimpleKeyGenerator, TimestampBasedKeyGenerator)
    if single_key and len(record_keys) > 1:
        raise InvalidOptionError(
            f"{class_name} takes a single record key field, got {', '.join(record_keys)}; "
            "use ComplexKeyGenerator"
        )
    if single_key and len(partitions) > 1:
        raise InvalidOptionError(
            f"{class_name} takes a single partition path field, got "
            f"{', '.join(name for name, _ in partitions)}; use ComplexKeyGenerator"
        )
    if generator_class is TimestampBasedKeyGenerator and not partitions:
        raise InvalidOptionError(f"{class_name} needs a partition path field")
    if generator_class is CustomKeyGenerator and any(kind is None for _, kind in partitions):
        raise InvalidOptionError(
            "CustomKeyGenerator needs every partition field typed, e.g. "
            "hoodie.datasource.write.partitionpath.field=city:SIMPLE,ts:TIMESTAMP"
        )
