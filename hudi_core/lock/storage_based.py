"""The storage-based lock: one lock file per table on its object store (S3, GCS, Azure), taken
and kept by conditional writes, on the file and in the format of Apache Hudi 1.1's
StorageBasedLockProvider (`<table>/.hoodie/.locks/table_lock.json`, holding
{"expired", "validUntil", "owner"}), so Apache Hudi writers and this library exclude each other.

Taking a free lock creates the file only if it is absent (If-None-Match: *). Taking over a
released or stale hold, renewing and releasing rewrite it only if it is still the version read
(If-Match on its ETag or generation): of two processes racing on one version, the store lets
one write land. Releasing marks the hold expired instead of deleting the file, as Apache Hudi
does (a conditional delete is not available on every store). A hold is stale only
CLOCK_DRIFT_MS after its validUntil, allowing for hosts whose clocks disagree a little.

The object store client is obstore's, built from the settings hudi_core.filesystems reads for
the table's location (fs.s3a.*, fs.gs.*, fs.azure.*, the AWS_* variables...); pyarrow's file
systems have no conditional writes. Its runtime's threads do not survive fork(): a process
that used this lock must start the processes that use it again by spawn, not fork.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import obstore
from obstore.exceptions import (
    AlreadyExistsError,
    NotSupportedError,
    PermissionDeniedError,
    PreconditionError,
    UnauthenticatedError,
    UnknownConfigurationKeyError,
)
from obstore.store import AzureStore, GCSStore, S3Store

from hudi_core.config import filesystem_options as F
from hudi_core.config.option import Options
from hudi_core.errors import LockError, UnsupportedStorageError
from hudi_core.filesystems import (
    AZURE_SCHEMES,
    GCS_SCHEMES,
    S3_SCHEMES,
    S3Settings,
    scheme_of,
)
from hudi_core.lock.provider import LockHold, LockProvider, now_ms

if TYPE_CHECKING:
    from obstore import PutMode, UpdateVersion
    from obstore.store import (
        AzureConfig,
        ClientConfig,
        GCSConfig,
        ObjectStore,
        RetryConfig,
        S3Config,
    )

_LOG = logging.getLogger(__name__)

LOCK_FILE = ".hoodie/.locks/table_lock.json"
CLOCK_DRIFT_MS = 500
# Errors no retry cures: the location or its settings are wrong.
_FATAL = (
    FileNotFoundError,  # on a write: the bucket or container does not exist
    PermissionDeniedError,
    UnauthenticatedError,
    NotSupportedError,
    UnknownConfigurationKeyError,
)
_SETTINGS = {
    "s3": "fs.s3a.endpoint, fs.s3a.access.key / fs.s3a.secret.key, fs.s3a.endpoint.region, "
    "fs.s3a.path.style.access (per bucket: fs.s3a.bucket.<bucket>.*) or the AWS_* variables",
    "gs": "fs.gs.storage.root.url, fs.gs.auth.type or GOOGLE_APPLICATION_CREDENTIALS",
    "abfs": "fs.azure.account.key[.<account host>], fs.azure.account.oauth2.client.* or "
    "AZURE_STORAGE_ACCOUNT_KEY",
}


class _Unanswered(Exception):
    """A conditional write whose outcome is unknown: it failed other than on its condition."""


@dataclass(frozen=True)
class _Hold:
    """A lock file's content: Apache Hudi's StorageLockData."""

    owner: str
    valid_until: int
    expired: bool  # released: free whatever validUntil says

    def to_bytes(self) -> bytes:
        return json.dumps(
            {"expired": self.expired, "validUntil": self.valid_until, "owner": self.owner}
        ).encode()

    @property
    def stale(self) -> bool:
        """Free to take over: released, or not renewed in time (its holder died)."""
        return self.expired or now_ms() > self.valid_until + CLOCK_DRIFT_MS


@dataclass(frozen=True)
class _Version:
    """One version of the lock file as read: its bytes and what a conditional write names."""

    content: bytes
    e_tag: str | None
    version: str | None

    def mode(self) -> UpdateVersion:
        condition: UpdateVersion = {}
        if self.e_tag is not None:
            condition["e_tag"] = self.e_tag
        if self.version is not None:
            condition["version"] = self.version
        return condition


class StorageBasedLockProvider(LockProvider):
    def __init__(self, store: ObjectStore, path: str, lock_uri: str, settings: str) -> None:
        """`path`: the lock file within `store`; `lock_uri` and `settings` are for messages."""
        self.store = store
        self.path = path
        self.lock_uri = lock_uri
        self.settings = settings
        # The validUntil of this process's last write per owner: a renewal the store could not
        # answer still holds until then.
        self._written: dict[str, int] = {}

    @classmethod
    def for_table(
        cls,
        table_uri: str,
        options: Mapping[str, Any],
        request_timeout_s: float = 60,
        lock_file: str = LOCK_FILE,
    ) -> StorageBasedLockProvider:
        """The lock of the table at `table_uri` (s3a://, gs://, abfs[s]://...), reached with
        the table's options; each request gives up after `request_timeout_s`. `lock_file`
        (under the table): Apache Hudi's table lock, or another named lock's file."""
        scheme = scheme_of(table_uri)
        url = urlsplit(table_uri)
        path = f"{url.path.strip('/')}/{lock_file}".lstrip("/")
        lock_uri = f"{table_uri.rstrip('/')}/{lock_file}"
        store, settings = _store(scheme, url.netloc, Options(options), request_timeout_s)
        if store is None:
            raise UnsupportedStorageError(
                f"the storage-based lock needs a table on an object store (s3a://, s3://, gs://, "
                f"abfs[s]://); {table_uri} is not one: use hoodie.write.lock.provider=file_system "
                "for local and HDFS tables"
            )
        return cls(store, path, lock_uri, settings)

    @property
    def key(self) -> str:
        return f"storage:{self.lock_uri}"

    def try_acquire(self, owner: str, expires_at_ms: int) -> bool:
        current = self._read()
        wanted = _Hold(owner, expires_at_ms, expired=False)
        if current is not None:
            hold = self._parse(current)
            # Asked again by its holder, it is renewed; another's live hold is left alone.
            if (hold.owner != owner or hold.expired) and not hold.stale:
                return False
        try:
            return self._write(wanted, over=current)
        except _Unanswered as error:  # ask again later; a write that landed late is ours then
            _LOG.warning("taking %s got no answer: %s", self.lock_uri, error)
            return False

    def renew(self, owner: str, expires_at_ms: int) -> bool:
        try:
            current = self._read()
            hold = None if current is None else _parse(current.content)
            if current is None or hold is None or hold.owner != owner or hold.expired:
                return False
            return self._write(_Hold(owner, expires_at_ms, expired=False), over=current)
        except (LockError, _Unanswered):
            # The store did not answer: the hold last written stands until its validUntil,
            # and nobody takes it over before then; past it, the hold counts as lost.
            return now_ms() < self._written.get(owner, 0)

    def release(self, owner: str) -> None:
        try:
            current = self._read()
            hold = None if current is None else _parse(current.content)
            if current is None or hold is None or hold.owner != owner or hold.expired:
                return
            self._write(_Hold(owner, hold.valid_until, expired=True), over=current)
        except (LockError, _Unanswered) as error:
            # Not fatal: the hold lapses by itself at its validUntil.
            _LOG.warning("could not release %s (it lapses by itself): %s", self.key, error)
        self._written.pop(owner, None)

    def holder(self) -> LockHold | None:
        current = self._read()
        if current is None:
            return None
        hold = _parse(current.content)
        if hold is None:
            return LockHold(f"unknown (unreadable lock file {self.lock_uri})", 2**62)
        return None if hold.expired else LockHold(hold.owner, hold.valid_until)

    def _read(self) -> _Version | None:
        """The lock file's current version, None if there is none."""
        try:
            result = obstore.get(self.store, self.path)
            content = bytes(result.bytes())
        except FileNotFoundError:
            return None
        except Exception as error:  # obstore's errors, connection errors, timeouts
            raise self._unreachable(error) from error
        meta = result.meta
        return _Version(content, meta.get("e_tag"), meta.get("version"))

    def _write(self, hold: _Hold, over: _Version | None) -> bool:
        """Writes `hold` if the lock file is still `over` (absent if None); whether it did.
        Raises _Unanswered when the store's answer says neither."""
        content = hold.to_bytes()
        mode: PutMode = "create" if over is None else over.mode()
        try:
            obstore.put(self.store, self.path, content, mode=mode, use_multipart=False)
        except (AlreadyExistsError, PreconditionError):
            # Lost the race, unless a retry of a write whose answer was lost failed its own
            # condition: the file then holds exactly these bytes (owners are unique).
            landed = self._holds(content)
        except _FATAL as error:
            raise self._unreachable(error) from error
        except Exception as error:  # a conflict in flight, throttling, a timeout
            if not self._holds(content):
                raise _Unanswered(_first_line(error)) from error
            landed = True
        else:
            landed = True
        if landed:
            self._written[hold.owner] = hold.valid_until
        return landed

    def _holds(self, content: bytes) -> bool:
        """Whether the lock file holds exactly `content`."""
        try:
            current = self._read()
        except LockError as error:
            raise _Unanswered(str(error)) from error
        return current is not None and current.content == content

    def _parse(self, current: _Version) -> _Hold:
        hold = _parse(current.content)
        if hold is None:
            raise LockError(
                f"the lock file {self.lock_uri} is not a lock Apache Hudi's "
                f"StorageBasedLockProvider writes ({current.content[:200]!r}); if no writer or "
                "service of the table is running, delete it"
            )
        return hold

    def _unreachable(self, error: BaseException) -> LockError:
        return LockError(
            f"the storage-based lock {self.lock_uri} cannot be reached: {_first_line(error)}; "
            f"check the table's path and the settings of its store ({self.settings})"
        )


def _parse(content: bytes) -> _Hold | None:
    """The hold a lock file's bytes describe; None when they are not a lock file."""
    try:
        fields = json.loads(content)
        owner, valid_until, expired = fields["owner"], fields["validUntil"], fields["expired"]
    except (ValueError, KeyError, TypeError):
        return None
    if not (isinstance(owner, str) and isinstance(valid_until, int)):
        return None
    if not isinstance(expired, bool):
        return None
    return _Hold(owner, valid_until, expired)


def _first_line(error: BaseException) -> str:
    # obstore's messages run on with the response body and a debug dump of the request.
    text = str(error).strip().splitlines()
    line = text[0] if text else type(error).__name__
    return line if len(line) <= 300 else line[:300] + "..."


# ---- the object store of a location


def _store(
    scheme: str, netloc: str, options: Options, timeout_s: float
) -> tuple[ObjectStore | None, str]:
    """An obstore client of the bucket or container in `netloc`, and the settings it used."""
    retry: RetryConfig = {"max_retries": 3, "retry_timeout": timedelta(seconds=timeout_s)}
    client: ClientConfig = {
        "timeout": timedelta(seconds=timeout_s),
        "connect_timeout": timedelta(seconds=min(10.0, timeout_s)),
    }
    if scheme in S3_SCHEMES:
        return _s3_store(netloc, options, retry, client), _SETTINGS["s3"]
    if scheme in GCS_SCHEMES:
        return _gcs_store(netloc, options, retry, client), _SETTINGS["gs"]
    if scheme in AZURE_SCHEMES:
        return _azure_store(netloc, options, retry, client), _SETTINGS["abfs"]
    return None, ""


def _s3_store(bucket: str, options: Options, retry: RetryConfig, client: ClientConfig) -> S3Store:
    s3 = S3Settings.resolve(bucket, options)
    config: S3Config = {
        "conditional_put": "etag",
        "virtual_hosted_style_request": s3.virtual_hosted,
    }
    if s3.endpoint:
        # A virtual-hosted endpoint names the bucket in its host, as obstore expects.
        host = f"{bucket}.{s3.endpoint}" if s3.virtual_hosted else s3.endpoint
        config["endpoint"] = f"{s3.scheme}://{host}"
    if s3.region:
        config["region"] = s3.region
    if s3.anonymous:
        config["skip_signature"] = True
    elif s3.access_key and s3.secret_key:
        config["access_key_id"] = s3.access_key
        config["secret_access_key"] = s3.secret_key
        if s3.session_token:
            config["session_token"] = s3.session_token
    if s3.attempts:
        retry["max_retries"] = s3.attempts
    client["allow_http"] = s3.scheme == "http"
    return S3Store(bucket, config=config, client_options=client, retry_config=retry)


def _gcs_store(bucket: str, options: Options, retry: RetryConfig, client: ClientConfig) -> GCSStore:
    config: GCSConfig = {}
    root = options.get_option(F.GS_ROOT_URL) or os.environ.get("STORAGE_EMULATOR_HOST")
    if root:
        config["base_url"] = root if "://" in root else f"https://{root}"
        client["allow_http"] = config["base_url"].startswith("http://")
    if (options.get_option(F.GS_AUTH_TYPE) or "").upper() == "UNAUTHENTICATED":
        config["skip_signature"] = True
    return GCSStore(bucket, config=config, client_options=client, retry_config=retry)


def _azure_store(
    netloc: str, options: Options, retry: RetryConfig, client: ClientConfig
) -> AzureStore:
    """`netloc` is `<container>@<account>.dfs.core.windows.net`."""
    container, _, host = netloc.partition("@")
    config: AzureConfig = {"account_name": host.split(".", 1)[0]}
    key = (
        options.get(f"{F.AZURE_ACCOUNT_KEY.key}.{host}")
        or options.get_option(F.AZURE_ACCOUNT_KEY)
        or os.environ.get("AZURE_STORAGE_ACCOUNT_KEY")
        or os.environ.get("AZURE_STORAGE_KEY")
    )
    if key:
        config["account_key"] = key
    client_id = options.get_option(F.AZURE_CLIENT_ID)
    if client_id:
        config["client_id"] = client_id
        config["client_secret"] = options.get_option(F.AZURE_CLIENT_SECRET) or ""
        endpoint = options.get_option(F.AZURE_CLIENT_ENDPOINT) or ""
        tenant = urlsplit(endpoint).path.strip("/").split("/", 1)[0]
        if tenant:
            config["tenant_id"] = tenant
    return AzureStore(container, config=config, client_options=client, retry_config=retry)
