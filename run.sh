#!/usr/bin/env bash
# The two commands of a fresh machine (Python 3.11 and Java 17 present, nothing else):
#   ./run.sh demo   install into .venv and run the demo (the main job)
#   ./run.sh test   install into .venv and run the whole test suite
# then, to look at the demo's DAG runs and task logs and the Hudi view in the Airflow UI:
#   ./run.sh ui     install like demo and run Airflow (scheduler, dag-processor, triggerer,
#                   api-server) on the demo's Airflow home (Ctrl-C stops them all)
# and, for development, the fast tier (no Spark, Hive, Airflow or browser; see tests/conftest.py):
#   ./run.sh test-fast   install only what it needs into .venv and run it on every core
# Extra arguments go to the demo, the UI (--workdir, --port) or pytest.
set -euo pipefail
cd "$(dirname "$0")"

PYTHON="${PYTHON:-$(command -v python3.11 || command -v python3)}"
VENV=.venv

install() {  # $1: the extras to install
    if [ ! -x "$VENV/bin/python" ]; then
        "$PYTHON" -m venv "$VENV"
    fi
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check uv
    "$VENV/bin/uv" pip install --quiet --python "$VENV/bin/python" -e ".[$1]"
}

restore_pyspark() {
    # The Airflow Spark provider pulls in pyspark-client, whose files share pyspark's paths;
    # if they were laid over pyspark's, Python UDFs fail. Put pyspark's own files back.
    if ! "$VENV/bin/python" -c "import pyspark, sys; sys.exit(pyspark.__version__ != '4.3.0')"; then
        "$VENV/bin/uv" pip install --quiet --python "$VENV/bin/python" --reinstall --no-deps \
            "pyspark==4.3.0"
    fi
}

compile_bytecode() {
    # Byte-compile the venv and the project once here: where PYTHONDONTWRITEBYTECODE is set,
    # every process (each spark-submit driver and Python worker) would otherwise compile the
    # sources of pyarrow, pyspark and the rest again, seconds each time. Up-to-date files are
    # skipped, so a second run costs only the checks.
    "$VENV/bin/python" -m compileall -q -j 0 "$VENV/lib" hudi_core spark_jobs hudi_airflow dags \
        >/dev/null 2>&1 || true
}

install_browser() {  # the browser tests' Chromium and ChromeDriver, from Debian's packages
    if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
        return
    fi
    local sudo=""
    if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium chromium-driver >/dev/null
}

install_postgres() {  # the deployment tests' PostgreSQL server binaries, from Debian's packages
    if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
        return
    fi
    local sudo=""
    if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql >/dev/null
}

command="${1:-}"
shift || true
case "$command" in
    demo)
        install demo
        restore_pyspark
        compile_bytecode
        exec "$VENV/bin/python" examples/pipeline.py "$@"
        ;;
    ui)
        install demo
        restore_pyspark
        compile_bytecode
        exec "$VENV/bin/python" examples/ui.py "$@"
        ;;
    test)
        install test
        restore_pyspark
        compile_bytecode
        install_browser
        install_postgres
        exec "$VENV/bin/python" -m pytest "$@"
        ;;
    test-fast)
        install fast
        compile_bytecode
        exec "$VENV/bin/python" -m pytest --fast -n auto "$@"
        ;;
    *)
        echo "usage: ./run.sh demo|ui|test|test-fast [arguments]" >&2
        exit 2
        ;;
esac
