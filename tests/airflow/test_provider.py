"""The Hudi provider as an installed Airflow sees it (issue 14's acceptance check 3), through
the `airflow` command of this environment against a throwaway Airflow home and SQLite
database: `providers list` lists it, `connections add --conn-type hudi` works and the `hudi`
connection type has its form fields, the UI plugin is registered once however providers
are discovered, and the DAG files import with no plugins folder on sys.path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hudi_airflow.provider import CONNECTION_FIELDS, get_provider_info

pytestmark = [pytest.mark.airflow, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
AIRFLOW = Path(sys.executable).parent / "airflow"
PROVIDER = "hudi-airflow"


@pytest.fixture(scope="module")
def airflow_env(tmp_path_factory) -> dict[str, str]:
    """A fresh Airflow home with a migrated SQLite database; nothing Airflow-related, and no
    PYTHONPATH, inherited."""
    home = tmp_path_factory.mktemp("airflow-home")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AIRFLOW") and k != "PYTHONPATH"}
    env.update(
        {
            "AIRFLOW_HOME": str(home),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}",
        }
    )
    _airflow(env, "db", "migrate")
    return env


def _airflow(env: dict[str, str], *arguments: str) -> str:
    """Runs `airflow` outside the repository, as a user would: a source checkout's folder on
    sys.path would also hold the editable install's hudi_airflow.egg-info, a second copy of
    the distribution's metadata (and of its plugin entry point)."""
    result = subprocess.run(
        [str(AIRFLOW), *arguments],
        env=env,
        cwd=env["AIRFLOW_HOME"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, f"airflow {' '.join(arguments)}:\n{result.stderr[-3000:]}"
    return result.stdout


def _json(output: str) -> list[dict]:
    """The JSON document of a command's output (Airflow may log lines before it)."""
    return json.loads(output[output.index("[") :])


def test_providers_list_shows_the_hudi_provider(airflow_env):
    providers = {
        p["package_name"]: p
        for p in _json(_airflow(airflow_env, "providers", "list", "-o", "json"))
    }
    assert PROVIDER in providers
    assert providers[PROVIDER]["version"] == get_provider_info()["versions"][0]


def test_a_hudi_connection_can_be_added_and_has_its_form(airflow_env):
    extra = {"options": {"hoodie.cleaner.commits.retained": "3"}, "lock_provider": "file_system"}
    _airflow(
        airflow_env,
        *("connections", "add", "test_hudi", "--conn-type", "hudi"),
        *("--conn-host", "/data/lake/trips", "--conn-extra", json.dumps(extra)),
    )
    (connection,) = _json(_airflow(airflow_env, "connections", "get", "test_hudi", "-o", "json"))
    assert connection["conn_type"] == "hudi" and connection["host"] == "/data/lake/trips"
    hooks = _json(_airflow(airflow_env, "providers", "hooks", "-o", "json"))
    (hudi,) = [hook for hook in hooks if hook["connection_type"] == "hudi"]
    assert hudi["class"] == "hudi_airflow.hooks.HudiTableHook"
    widgets = _airflow(airflow_env, "providers", "widgets", "-o", "json")
    assert {f"extra__hudi__{name}" for name in CONNECTION_FIELDS} <= {
        widget["connection_parameter_name"] for widget in _json(widgets)
    }


@pytest.mark.parametrize("lazy", ["True", "False"])
def test_the_ui_plugin_is_registered_once(airflow_env, lazy):
    """Airflow loads provider-declared plugins only with lazy_discover_providers off; the
    `airflow.plugins` entry point covers the default without registering it twice."""
    env = {**airflow_env, "AIRFLOW__CORE__LAZY_DISCOVER_PROVIDERS": lazy}
    code = (
        "from airflow import plugins_manager\n"
        "plugins, errors = plugins_manager._get_plugins()\n"
        "print([p.name for p in plugins], errors)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        cwd=env["AIRFLOW_HOME"],  # not the repository: see _airflow
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == "['hudi'] {}"


def test_the_dags_import_without_a_plugins_folder_on_sys_path(airflow_env, tmp_path):
    """In an isolated interpreter (-I: no PYTHONPATH, no current folder on sys.path), run from
    outside the repository: the DAG files find hudi_airflow as an installed package, and no
    folder of the repository (its plugins folder, its root) is on sys.path."""
    code = (
        "import sys\n"
        "from airflow.dag_processing.dagbag import DagBag\n"
        f"bag = DagBag(dag_folder={str(REPO / 'dags')!r})\n"
        "print(sorted(bag.dag_ids), bag.import_errors)\n"
        "print([p for p in sys.path if p.startswith(sys.argv[1]) and '.venv' not in p])\n"
    )
    env = {**airflow_env, "HUDI_TABLES_CONFIG": str(REPO / "dags" / "tables.yaml")}
    result = subprocess.run(
        [sys.executable, "-I", "-c", code, str(REPO)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    dags_line, plugins_line = result.stdout.strip().splitlines()[-2:]
    assert "'trips_ingest'" in dags_line and "{}" in dags_line, dags_line
    assert plugins_line == "[]"
