"""How a table's object store is reached: the Hadoop file system options Apache Hudi users
already set (fs.s3a.*, fs.gs.*, fs.azure.*), read by hudi_core.filesystems.

Every S3 option also has a per-bucket form, as in Hadoop: `fs.s3a.bucket.<bucket>.endpoint`
wins over `fs.s3a.endpoint` for that bucket. The object_store names hudi-rs takes
(`AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`, ...; any case) are accepted as options too, and
the standard environment variables are the fallback; docs/storage.md has the whole order.
"""

from hudi_core.config.option import ConfigOption, parse_bool

S3A_ENDPOINT = ConfigOption(
    "fs.s3a.endpoint",
    None,
    "S3 endpoint of s3a://, s3:// and s3n:// paths: host[:port] or a URL (http://minio:9000); "
    "else AWS_ENDPOINT_URL, else AWS.",
)
S3A_REGION = ConfigOption(
    "fs.s3a.endpoint.region", None, "S3 region; else AWS_REGION or AWS_DEFAULT_REGION."
)
S3A_ACCESS_KEY = ConfigOption(
    "fs.s3a.access.key",
    None,
    "S3 access key id; else AWS_ACCESS_KEY_ID or the AWS SDK's default credential chain.",
)
S3A_SECRET_KEY = ConfigOption(
    "fs.s3a.secret.key", None, "S3 secret key; else AWS_SECRET_ACCESS_KEY."
)
S3A_SESSION_TOKEN = ConfigOption(
    "fs.s3a.session.token", None, "S3 session token of temporary credentials."
)
S3A_PATH_STYLE_ACCESS = ConfigOption(
    "fs.s3a.path.style.access",
    None,
    "true: bucket in the path (MinIO and most S3-compatible stores); false: in the host name. "
    "Unset: path style with a custom endpoint, virtual hosts on AWS.",
    parse=parse_bool,
)
S3A_SSL_ENABLED = ConfigOption(
    "fs.s3a.connection.ssl.enabled",
    True,
    "HTTPS to an endpoint given without a scheme (false: HTTP).",
    parse=parse_bool,
)
S3A_CREDENTIALS_PROVIDER = ConfigOption(
    "fs.s3a.aws.credentials.provider",
    None,
    "...AnonymousAWSCredentialsProvider reads public buckets unsigned; other providers are "
    "the AWS SDK's default chain.",
)
S3A_ATTEMPTS = ConfigOption(
    "fs.s3a.attempts.maximum",
    None,
    "Attempts per S3 request before it fails (the AWS SDK's standard retries).",
    parse=int,
)
GS_PROJECT_ID = ConfigOption("fs.gs.project.id", None, "Google Cloud project of gs:// paths.")
GS_ROOT_URL = ConfigOption(
    "fs.gs.storage.root.url",
    None,
    "GCS endpoint URL (an emulator's); else STORAGE_EMULATOR_HOST, else Google's.",
)
GS_AUTH_TYPE = ConfigOption(
    "fs.gs.auth.type",
    None,
    "UNAUTHENTICATED reads public buckets; otherwise Google's default credentials "
    "(GOOGLE_APPLICATION_CREDENTIALS).",
)
AZURE_ACCOUNT_KEY = ConfigOption(
    "fs.azure.account.key",
    None,
    "Storage account key of abfs[s]:// paths; `fs.azure.account.key.<account host>` wins; "
    "else AZURE_STORAGE_ACCOUNT_KEY, else Azure's default credential.",
)
AZURE_CLIENT_ID = ConfigOption(
    "fs.azure.account.oauth2.client.id", None, "Service principal (client id) for abfs[s]://."
)
AZURE_CLIENT_SECRET = ConfigOption(
    "fs.azure.account.oauth2.client.secret", None, "The service principal's secret."
)
AZURE_CLIENT_ENDPOINT = ConfigOption(
    "fs.azure.account.oauth2.client.endpoint",
    None,
    "The service principal's token endpoint (https://login.microsoftonline.com/<tenant>/...); "
    "its tenant is used.",
)
