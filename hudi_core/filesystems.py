"""The pyarrow file system a table's location names, configured the way Apache Hudi users
configure Hadoop's: `s3a://` (and `s3://`, `s3n://`) is S3, `gs://` Google Cloud Storage,
`abfs[s]://` Azure Data Lake Storage, `hdfs://` HDFS, plain paths and `file:` the local disk.

Settings come, first found wins, from the Hadoop options (fs.s3a.*, per bucket first), the
object_store names hudi-rs takes (AWS_ENDPOINT_URL, ...; any case) given as options, and the
standard environment variables. `object_store_options` turns the same settings into what
hudi-rs (`hudi.HudiTableBuilder.with_storage_options`) takes, so both read one table alike.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import pyarrow.fs as pafs

from hudi_core.config import filesystem_options as F
from hudi_core.config.option import ConfigOption, Options, parse_bool
from hudi_core.errors import UnsupportedStorageError

LOCAL_SCHEMES = ("", "file")
S3_SCHEMES = ("s3a", "s3", "s3n")
GCS_SCHEMES = ("gs", "gcs")
AZURE_SCHEMES = ("abfs", "abfss")
HDFS_SCHEMES = ("hdfs", "viewfs")
OBJECT_STORE_SCHEMES = (*S3_SCHEMES, *GCS_SCHEMES, *AZURE_SCHEMES)
SUPPORTED_SCHEMES = (*LOCAL_SCHEMES[1:], *OBJECT_STORE_SCHEMES, *HDFS_SCHEMES)

__all__ = [
    "OBJECT_STORE_SCHEMES",
    "SUPPORTED_SCHEMES",
    "S3Settings",
    "SECRET_OPTIONS_ENV",
    "filesystem_for",
    "is_object_store",
    "object_store_options",
    "scheme_of",
    "secret_options",
]

# Where an orchestrator hands a job the options that hold secrets (JSON), so that they never
# show on a command line.
SECRET_OPTIONS_ENV = "HUDI_SECRET_OPTIONS"
_SECRET_SUFFIXES = (".access.key", ".secret.key", ".session.token", ".client.secret")
_SECRET_NAMES = (
    "aws_access_key_id",
    "aws_secret_access_key",
    "aws_session_token",
    "azure_storage_account_key",
    "azure_storage_key",
)
_ANONYMOUS_PROVIDER = "AnonymousAWSCredentialsProvider"


def scheme_of(location: str) -> str:
    """The URI scheme of a location, lower case; '' for a plain path."""
    if "://" not in location and not location.startswith("file:"):
        return ""
    return urlsplit(location).scheme.lower()


def is_object_store(location: str) -> bool:
    return scheme_of(location) in OBJECT_STORE_SCHEMES


def filesystem_for(
    location: str, options: Mapping[str, Any] | None = None
) -> tuple[pafs.FileSystem, str]:
    """The file system of `location` and the path pyarrow knows it by there (for object
    stores `bucket/key`, locally an absolute path)."""
    scheme = scheme_of(location)
    values = Options(options)
    if scheme in LOCAL_SCHEMES:
        return pafs.LocalFileSystem(), _local_path(location)
    url = urlsplit(location)
    if scheme in S3_SCHEMES:
        return _s3(url.netloc, values), _bucket_path(url.netloc, url.path)
    if scheme in GCS_SCHEMES:
        return _gcs(values), _bucket_path(url.netloc, url.path)
    if scheme in AZURE_SCHEMES:
        container, _, host = url.netloc.partition("@")
        return _azure(scheme, host, values), _bucket_path(container, url.path)
    if scheme in HDFS_SCHEMES:
        hdfs, path = pafs.FileSystem.from_uri(location)
        return hdfs, str(path)
    raise UnsupportedStorageError(
        f"{location}: the scheme {scheme}:// is not supported; "
        f"use one of {', '.join(s + '://' for s in SUPPORTED_SCHEMES)} or a local path"
    )


def object_store_options(location: str, options: Mapping[str, Any] | None = None) -> dict[str, str]:
    """The settings `filesystem_for` uses for an S3 location, as object_store (hudi-rs) names
    them; an empty mapping for other locations (their settings come from the environment)."""
    if scheme_of(location) not in S3_SCHEMES:
        return {}
    s3 = S3Settings.resolve(urlsplit(location).netloc, Options(options))
    named = {
        "AWS_ENDPOINT_URL": s3.endpoint_url,
        "AWS_REGION": s3.region,
        "AWS_ACCESS_KEY_ID": s3.access_key,
        "AWS_SECRET_ACCESS_KEY": s3.secret_key,
        "AWS_SESSION_TOKEN": s3.session_token,
    }
    flags = {
        "AWS_ALLOW_HTTP": s3.scheme == "http",
        "AWS_VIRTUAL_HOSTED_STYLE_REQUEST": s3.virtual_hosted,
        "AWS_SKIP_SIGNATURE": s3.anonymous,
    }
    result = {key: value for key, value in named.items() if value}
    result.update({key: "true" for key, on in flags.items() if on})
    return result


def secret_options(options: Mapping[str, Any]) -> dict[str, str]:
    """The options that hold credentials: keys, secrets and tokens of the object stores."""
    return {
        key: str(value)
        for key, value in options.items()
        if key.lower().endswith(_SECRET_SUFFIXES)
        or key.lower().startswith("fs.azure.account.key")
        or key.lower() in _SECRET_NAMES
    }


@dataclass(frozen=True)
class S3Settings:
    """One bucket's S3 connection, resolved from options and the environment."""

    endpoint: str | None  # host[:port]
    scheme: str
    region: str | None
    access_key: str | None
    secret_key: str | None
    session_token: str | None
    virtual_hosted: bool
    anonymous: bool
    attempts: int | None

    @property
    def endpoint_url(self) -> str | None:
        return f"{self.scheme}://{self.endpoint}" if self.endpoint else None

    @classmethod
    def resolve(cls, bucket: str, options: Options) -> S3Settings:
        def setting(option: ConfigOption[Any], *names: str) -> str | None:
            return _s3a_value(options, bucket, option) or _named(options, names)

        endpoint = setting(
            F.S3A_ENDPOINT, "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_ENDPOINT"
        )
        allow_http = _flag(_named(options, ("AWS_ALLOW_HTTP",)))
        ssl = _flag(_s3a_value(options, bucket, F.S3A_SSL_ENABLED))
        scheme = "http" if allow_http or ssl is False else "https"
        if endpoint and "://" in endpoint:
            parts = urlsplit(endpoint)
            scheme, endpoint = parts.scheme, parts.netloc
        path_style = _flag(_s3a_value(options, bucket, F.S3A_PATH_STYLE_ACCESS))
        virtual = _flag(_named(options, ("AWS_VIRTUAL_HOSTED_STYLE_REQUEST",)))
        provider = _s3a_value(options, bucket, F.S3A_CREDENTIALS_PROVIDER) or ""
        attempts = _s3a_value(options, bucket, F.S3A_ATTEMPTS)
        return cls(
            endpoint=endpoint or None,
            scheme=scheme,
            region=setting(F.S3A_REGION, "AWS_REGION", "AWS_DEFAULT_REGION"),
            access_key=setting(F.S3A_ACCESS_KEY, "AWS_ACCESS_KEY_ID"),
            secret_key=setting(F.S3A_SECRET_KEY, "AWS_SECRET_ACCESS_KEY"),
            session_token=setting(F.S3A_SESSION_TOKEN, "AWS_SESSION_TOKEN", "AWS_TOKEN"),
            virtual_hosted=path_style is False or bool(virtual),
            anonymous=_ANONYMOUS_PROVIDER in provider
            or bool(_flag(_named(options, ("AWS_SKIP_SIGNATURE",)))),
            attempts=int(attempts) if attempts else None,
        )

    def filesystem(self) -> pafs.S3FileSystem:
        credentials: dict[str, Any] = {"anonymous": True} if self.anonymous else {}
        if self.access_key and self.secret_key and not self.anonymous:
            credentials = {
                "access_key": self.access_key,
                "secret_key": self.secret_key,
                "session_token": self.session_token,
            }
        retries = (
            {"retry_strategy": pafs.AwsStandardS3RetryStrategy(max_attempts=self.attempts)}
            if self.attempts
            else {}
        )
        return pafs.S3FileSystem(
            region=self.region,
            endpoint_override=self.endpoint,
            scheme=self.scheme,
            force_virtual_addressing=self.virtual_hosted,
            **credentials,
            **retries,
        )


def _s3(bucket: str, options: Options) -> pafs.S3FileSystem:
    return S3Settings.resolve(bucket, options).filesystem()


def _gcs(options: Options) -> pafs.GcsFileSystem:
    root = options.get_option(F.GS_ROOT_URL) or os.environ.get("STORAGE_EMULATOR_HOST")
    endpoint: dict[str, Any] = {}
    if root:
        parts = urlsplit(root if "://" in root else f"https://{root}")
        endpoint = {"endpoint_override": parts.netloc, "scheme": parts.scheme}
    auth = (options.get_option(F.GS_AUTH_TYPE) or "").upper()
    return pafs.GcsFileSystem(
        anonymous=auth == "UNAUTHENTICATED",
        project_id=options.get_option(F.GS_PROJECT_ID),
        **endpoint,
    )


def _azure(scheme: str, host: str, options: Options) -> pafs.AzureFileSystem:
    """`host` is `<account>.dfs.core.windows.net` (or an emulator's host:port/account)."""
    account = host.split(".", 1)[0]
    key = (
        options.get(f"{F.AZURE_ACCOUNT_KEY.key}.{host}")
        or options.get_option(F.AZURE_ACCOUNT_KEY)
        or _named(options, ("AZURE_STORAGE_ACCOUNT_KEY", "AZURE_STORAGE_KEY"))
    )
    client: dict[str, Any] = {}
    client_id = options.get_option(F.AZURE_CLIENT_ID)
    if client_id:
        endpoint = options.get_option(F.AZURE_CLIENT_ENDPOINT) or ""
        client = {
            "client_id": client_id,
            "client_secret": options.get_option(F.AZURE_CLIENT_SECRET),
            "tenant_id": urlsplit(endpoint).path.strip("/").split("/", 1)[0] or None,
        }
    return pafs.AzureFileSystem(account_name=account, account_key=key or None, **client)


def _s3a_value(options: Options, bucket: str, option: ConfigOption[Any]) -> str | None:
    """A fs.s3a.* option, its per-bucket form first (fs.s3a.bucket.<bucket>.<name>)."""
    name = option.key.removeprefix("fs.s3a.")
    return options.get(f"fs.s3a.bucket.{bucket}.{name}") or options.get(option.key)


def _named(options: Options, names: tuple[str, ...]) -> str | None:
    """The first of object_store's names given as an option (any case), else in the
    environment."""
    lowered = {key.lower(): value for key, value in options.items()}
    given = [lowered.get(name.lower()) for name in names]
    return next((value for value in given if value), None) or next(
        (os.environ[name] for name in names if os.environ.get(name)), None
    )


def _flag(raw: str | None) -> bool | None:
    return None if raw is None or raw == "" else parse_bool(raw)


def _bucket_path(bucket: str, path: str) -> str:
    return f"{bucket}/{path.strip('/')}".rstrip("/")


def _local_path(location: str) -> str:
    """Plain paths become absolute, so any working directory resolves them alike; `file:`
    URIs (file:///x and Hadoop's file:/x) become their path."""
    if location.startswith("file:"):
        location = "/" + urlsplit(location).path.lstrip("/")
    return os.path.abspath(location)


def connection_settings(location: str, options: Mapping[str, Any] | None = None) -> str:
    """Where `location`'s file system is reached and the settings that say so, for an error
    telling what to check when it cannot be reached (no secret is shown)."""
    scheme = scheme_of(location)
    values = Options(options)
    url = urlsplit(location)
    if scheme in S3_SCHEMES:
        s3 = S3Settings.resolve(url.netloc, values)
        where = (
            f"the endpoint {s3.endpoint_url}"
            if s3.endpoint
            else f"AWS's S3 endpoint of region {s3.region or '(none set)'}"
        )
        return (
            f"{where}: check {F.S3A_ENDPOINT.key} (or fs.s3a.bucket.{url.netloc}.endpoint, "
            f"AWS_ENDPOINT_URL), {F.S3A_SSL_ENABLED.key} / AWS_ALLOW_HTTP, "
            f"{F.S3A_REGION.key} (AWS_REGION), the credentials {F.S3A_ACCESS_KEY.key} and "
            f"{F.S3A_SECRET_KEY.key} (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY), and "
            f"{F.S3A_ATTEMPTS.key} for the retries"
        )
    if scheme in GCS_SCHEMES:
        root = values.get_option(F.GS_ROOT_URL) or os.environ.get("STORAGE_EMULATOR_HOST")
        return (
            f"{'the endpoint ' + root if root else 'Google Cloud Storage'}: check "
            f"{F.GS_ROOT_URL.key} (STORAGE_EMULATOR_HOST), {F.GS_AUTH_TYPE.key}, "
            f"{F.GS_PROJECT_ID.key} and the credentials (GOOGLE_APPLICATION_CREDENTIALS)"
        )
    if scheme in AZURE_SCHEMES:
        host = url.netloc.partition("@")[2]
        return (
            f"the account host {host or '(none in the location)'}: check the location, "
            f"{F.AZURE_ACCOUNT_KEY.key}.{host} (AZURE_STORAGE_ACCOUNT_KEY) or "
            f"{F.AZURE_CLIENT_ID.key} and its secret and endpoint"
        )
    if scheme in HDFS_SCHEMES:
        return (
            f"the namenode {url.netloc or '(the default one)'}: check the location's host and "
            "port, and HADOOP_HOME / ARROW_LIBHDFS_DIR / CLASSPATH for libhdfs"
        )
    return "the file system's settings and the network"
