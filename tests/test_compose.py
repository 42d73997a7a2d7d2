"""docker-compose.yaml holds together, checked without Docker: the services are there, Airflow
runs on the PostgreSQL service and after airflow-init, the code folders and the data volume
are mounted where the DAGs and Spark expect them (the tables of dags/tables.yaml land on the
volume Spark shares), and the image pins pyproject's Airflow.

Each check returns the problems it finds; every check is also run on a copy of the file broken
in the way it guards against, so none of them can pass by construction.
"""

from __future__ import annotations

import copy
import posixpath
import re
import shutil
import subprocess
import tomllib
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = ROOT / "docker-compose.yaml"
DOCKERFILE = ROOT / "docker" / "Dockerfile"
PYPROJECT = ROOT / "pyproject.toml"
TABLES = ROOT / "dags" / "tables.yaml"

AIRFLOW_SERVICES = (
    "airflow-init",
    "airflow-api-server",
    "airflow-scheduler",
    "airflow-dag-processor",
    "airflow-triggerer",
)
LONG_RUNNING_AIRFLOW = AIRFLOW_SERVICES[1:]
SPARK_SERVICES = ("spark-master", "spark-worker")
SERVICES = ("postgres", *AIRFLOW_SERVICES, *SPARK_SERVICES, "hive-metastore")
# Repository folder -> where the Airflow containers must see it (HUDI_TABLES_CONFIG and the
# DAG factory look for dags/tables.yaml in the dags folder; spark_jobs' parent folder goes on
# PYTHONPATH, ahead of the copy installed in the image).
CODE_MOUNTS = {
    "dags": "/opt/airflow/dags",
    "spark_jobs": "/opt/hudi/spark_jobs",
}
_VARIABLE = re.compile(r"\$\{(\w+)(?::?-([^}]*))?\}")

Compose = dict
Problems = list[str]


def load_compose(path: Path = COMPOSE) -> Compose:
    """The file as compose reads it (anchors and merge keys resolved), as a private copy."""
    return copy.deepcopy(yaml.safe_load(path.read_text()))


def interpolate(value: str) -> str:
    """${VAR:-default} and ${VAR-default} as compose resolves them with VAR unset."""
    return _VARIABLE.sub(lambda match: match.group(2) or "", value)


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
    installed in the image: no plugins folder)."""
    found = []
    for name in AIRFLOW_SERVICES:
        service = services(compose).get(name, {})
        mounted = {(ROOT / src).resolve(): dst for src, dst in mounts(service) if is_bind(src)}
        for folder, target in CODE_MOUNTS.items():
            if mounted.get((ROOT / folder).resolve()) != target:
                found.append(f"{name}: ./{folder} is not mounted at {target}")
        config = environment(service).get("HUDI_TABLES_CONFIG", "")
        if not config.startswith(CODE_MOUNTS["dags"] + "/"):
            found.append(f"{name}: HUDI_TABLES_CONFIG={config!r} is not in the mounted dags")
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
    project = next((i for i, run in enumerate(runs) if "[airflow,spark,hive]" in run), None)
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
}


@pytest.mark.parametrize("check", COMPOSE_CHECKS.values(), ids=COMPOSE_CHECKS.keys())
def test_compose_file(check):
    assert check(load_compose()) == []


def test_tables_land_on_the_shared_volume():
    assert TABLES.is_file(), "HUDI_TABLES_CONFIG points at dags/tables.yaml, which is missing"
    assert table_location_problems(load_compose(), TABLES.read_text()) == []


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
    tables = TABLES.read_text()
    assert table_location_problems(load_compose(), tables) == []
    for location in ("/tmp/lake/trips", "data/lake/trips"):
        moved = yaml.safe_dump({"tables": [{"name": "t", "base_path": location}]})
        assert table_location_problems(load_compose(), moved), location
    compose = load_compose()
    _data_elsewhere_in_spark(compose)
    assert table_location_problems(compose, tables)


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
    project = next(step for step in steps if "[airflow,spark,hive]" in step)
    swapped = dockerfile.replace(project, "@@").replace(reinstall, project).replace("@@", reinstall)
    assert pyspark_step_problems(swapped)


def _compose_cli() -> list[str] | None:
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    if shutil.which("docker"):
        probe = subprocess.run(["docker", "compose", "version"], capture_output=True)
        if probe.returncode == 0:
            return ["docker", "compose"]
    return None


def test_compose_cli_accepts_the_file():
    """Compose's own validation (no engine needed), where a compose CLI is installed."""
    cli = _compose_cli()
    if cli is None:
        pytest.skip("no docker compose CLI here; the parse checks above stand in for it")
    result = subprocess.run(
        [*cli, "-f", str(COMPOSE), "config", "--quiet"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
