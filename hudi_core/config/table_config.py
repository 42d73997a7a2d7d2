"""`.hoodie/hoodie.properties`: the table's own configuration, its checksum and validation."""

from __future__ import annotations

import io
import zlib
from collections.abc import Iterable, Mapping

from jproperties import Properties

from hudi_core.choices import TableType
from hudi_core.config import table_options as T
from hudi_core.config.option import Options
from hudi_core.config.write_options import ALLOW_OPERATION_METADATA_FIELD
from hudi_core.errors import (
    TableConfigError,
    TableNotFoundError,
    UnsupportedTableVersionError,
)
from hudi_core.storage import Storage

METAFOLDER = ".hoodie"
PROPERTIES_FILE = f"{METAFOLDER}/hoodie.properties"
PROPERTIES_BACKUP_FILE = f"{METAFOLDER}/hoodie.properties.backup"
SUPPORTED_TABLE_VERSIONS = (6,)
REQUIRED_KEYS = (T.TABLE_NAME.key, T.TABLE_TYPE.key, T.TABLE_VERSION.key)


def table_checksum(props: Mapping[str, str]) -> int:
    """CRC32 of 'database.table' (database empty when unset), as Apache Hudi computes it."""
    database = props.get(T.DATABASE_NAME.key) or ""
    return zlib.crc32(f"{database}.{props[T.TABLE_NAME.key]}".encode())


def parse_properties(data: bytes) -> dict[str, str]:
    """Java properties (ISO-8859-1 with \\u escapes) into a dict."""
    props = Properties()
    props.load(data, "iso-8859-1")
    return {key: value.data for key, value in props.items()}


def format_properties(values: Mapping[str, str]) -> bytes:
    """A dict as a Java properties file; keys sorted, checksum last, like a stable diff."""
    props = Properties()
    for key in sorted(k for k in values if k != T.CHECKSUM.key):
        props[key] = values[key]
    if T.CHECKSUM.key in values:
        props[T.CHECKSUM.key] = values[T.CHECKSUM.key]
    out = io.BytesIO()
    props.store(out, encoding="iso-8859-1", initial_comments="Properties saved", timestamp=True)
    return out.getvalue()


class TableConfig:
    """Validated content of hoodie.properties."""

    def __init__(self, properties: Mapping[str, str]) -> None:
        self.properties = dict(properties)
        self.options = Options(self.properties)

    @classmethod
    def new(cls, properties: Mapping[str, str]) -> TableConfig:
        """A config for a table about to be created: fills version keys and the checksum."""
        values = {
            T.TABLE_VERSION.key: "6",
            T.TIMELINE_LAYOUT_VERSION.key: "1",
            T.ARCHIVELOG_FOLDER.key: T.ARCHIVELOG_FOLDER.default,
            **{k: v for k, v in properties.items() if v is not None},
        }
        values[T.CHECKSUM.key] = str(table_checksum(values))
        config = cls(values)
        config.validate("new table")
        return config

    @classmethod
    def load(cls, storage: Storage) -> TableConfig:
        """Reads and validates hoodie.properties, falling back to the backup an update leaves."""
        for path in (PROPERTIES_FILE, PROPERTIES_BACKUP_FILE):
            if not storage.exists(path):
                continue
            config = cls(parse_properties(storage.read_bytes(path)))
            if path == PROPERTIES_FILE and storage.exists(PROPERTIES_BACKUP_FILE):
                if not config.has_valid_checksum():
                    continue  # an update was cut off mid-write: the backup holds the truth
            config.validate(storage.full_path(path))
            return config
        raise TableNotFoundError(
            f"no Hudi table at {storage.base_uri}: {PROPERTIES_FILE} does not exist"
        )

    def save_new(self, storage: Storage) -> None:
        storage.create_new(PROPERTIES_FILE, format_properties(self.properties))

    def save_update(
        self, storage: Storage, updates: Mapping[str, str], removals: Iterable[str] = ()
    ) -> TableConfig:
        """Rewrites hoodie.properties with `updates` and without the keys in `removals`.

        As Apache Hudi does, the current file is first copied to hoodie.properties.backup,
        which readers fall back to while the new file is incomplete; each file is written
        whole or not at all, always with its checksum, and the backup goes once the new file
        is in place.
        """
        values = {k: v for k, v in {**self.properties, **updates}.items() if k not in removals}
        values[T.CHECKSUM.key] = str(table_checksum(values))
        updated = TableConfig(values)
        updated.validate("updated table config")
        storage.replace(PROPERTIES_BACKUP_FILE, storage.read_bytes(PROPERTIES_FILE))
        storage.replace(PROPERTIES_FILE, format_properties(values))
        storage.delete(PROPERTIES_BACKUP_FILE)
        return updated

    def has_valid_checksum(self) -> bool:
        raw = self.properties.get(T.CHECKSUM.key)
        if raw is None or T.TABLE_NAME.key not in self.properties:
            return False
        return raw.strip().isdigit() and int(raw) == table_checksum(self.properties)

    def validate(self, where: str) -> None:
        missing = [key for key in REQUIRED_KEYS if not self.properties.get(key)]
        if missing:
            raise TableConfigError(f"{where}: hoodie.properties lacks {', '.join(missing)}")
        version = self.properties[T.TABLE_VERSION.key].strip()
        if not version.isdigit() or int(version) not in SUPPORTED_TABLE_VERSIONS:
            raise UnsupportedTableVersionError(
                f"{where}: hoodie.table.version={version} is not supported; this library "
                f"reads and writes table version {', '.join(map(str, SUPPORTED_TABLE_VERSIONS))}"
            )
        layout = self.properties.get(T.TIMELINE_LAYOUT_VERSION.key, "1").strip()
        if layout != "1":
            raise UnsupportedTableVersionError(
                f"{where}: hoodie.timeline.layout.version={layout}; table version 6 uses layout 1"
            )
        self.options.get_option(T.TABLE_TYPE)  # raises on an unknown table type
        if T.CHECKSUM.key in self.properties and not self.has_valid_checksum():
            raise TableConfigError(
                f"{where}: hoodie.table.checksum does not match the table name "
                f"'{self.properties[T.TABLE_NAME.key]}'; the properties file is corrupt"
            )

    @property
    def name(self) -> str:
        return self.properties[T.TABLE_NAME.key]

    @property
    def table_type(self) -> TableType:
        return self.options.get_option(T.TABLE_TYPE)

    @property
    def is_merge_on_read(self) -> bool:
        return self.table_type is TableType.MERGE_ON_READ

    @property
    def record_key_fields(self) -> list[str]:
        return self.options.get_option(T.RECORD_KEY_FIELDS)

    @property
    def partition_fields(self) -> list[str]:
        """Partition field names, without the ':TYPE' suffix CustomKeyGenerator tables carry."""
        return [f.split(":", 1)[0] for f in self.options.get_option(T.PARTITION_FIELDS)]

    @property
    def key_generator_class(self) -> str | None:
        return self.options.get_option(T.KEY_GENERATOR_CLASS)

    @property
    def precombine_field(self) -> str | None:
        """The ordering field, or the ordering groups of a multi-stream table."""
        groups = self.options.get_option(T.ORDERING_GROUPS)
        return groups or self.options.get_option(T.PRECOMBINE_FIELD) or None

    @property
    def populate_meta_fields(self) -> bool:
        return self.options.get_option(T.POPULATE_META_FIELDS)

    @property
    def hive_style_partitioning(self) -> bool:
        return self.options.get_option(T.HIVE_STYLE_PARTITIONING)

    @property
    def timeline_timezone(self) -> str:
        return self.options.get_option(T.TIMELINE_TIMEZONE)

    @property
    def changelog(self) -> bool:
        """Whether records keep `_hoodie_operation` (changelog mode)."""
        return self.options.get_option(ALLOW_OPERATION_METADATA_FIELD)

    @property
    def create_schema(self) -> str | None:
        return self.options.get_option(T.CREATE_SCHEMA)


# What hoodie.properties holds besides the definition a table was made with: the checksum, the
# metadata table's announcement, a bootstrap's source. A table made again is not "redefined"
# by them.
_NOT_DEFINING = (
    T.CHECKSUM.key,
    T.METADATA_PARTITIONS.key,
    T.METADATA_PARTITIONS_INFLIGHT.key,
    T.BOOTSTRAP_BASE_PATH.key,
    T.BOOTSTRAP_INDEX_CLASS.key,
)


def definition_changes(
    stored: Mapping[str, str], wanted: Mapping[str, str]
) -> dict[str, tuple[str | None, str | None]]:
    """The properties a table made with `wanted` (a new table's properties) would hold
    otherwise than the `stored` hoodie.properties: key -> (stored, wanted), None for absent."""
    keys = (set(stored) | set(wanted)) - set(_NOT_DEFINING)
    return {
        key: (stored.get(key), wanted.get(key))
        for key in sorted(keys)
        if stored.get(key) != wanted.get(key)
    }
