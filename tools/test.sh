#!/usr/bin/env bash
# The whole test suite: ruff, mypy, unit tests and (as root) the integration tests that deploy
# real switches and send real frames. Arguments are passed to pytest.
set -euo pipefail
# Root is needed (packages, namespaces, switches): as root, run as is (sudo may not even be
# installed); otherwise run again under sudo.
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        exec sudo -- "$(cd "$(dirname "$0")" && pwd)/$(basename "$0")" "$@"
    fi
    echo "$(basename "$0"): needs root: run it as root (sudo is not installed)" >&2
    exit 2
fi
cd "$(dirname "$0")/.."
tools/setup.sh --test
echo "== ruff"; .venv/bin/ruff check vsperf tests bench
echo "== mypy"; .venv/bin/mypy
echo "== pytest"; exec .venv/bin/pytest -ra --durations=25 "$@"
