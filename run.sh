#!/usr/bin/env bash
# The two commands of a fresh machine (Python 3.11 and Java 17 present, nothing else):
#   ./run.sh demo   install into .venv and run the demo (the main job)
#   ./run.sh test   install into .venv and run the whole test suite
# Extra arguments go to the demo or to pytest.
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

command="${1:-}"
shift || true
case "$command" in
    demo)
        install demo
        exec "$VENV/bin/python" examples/demo.py "$@"
        ;;
    test)
        install test
        exec "$VENV/bin/python" -m pytest "$@"
        ;;
    *)
        echo "usage: ./run.sh demo|test [arguments]" >&2
        exit 2
        ;;
esac
