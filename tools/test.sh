#!/usr/bin/env bash
# The whole test suite: ruff, mypy, unit tests and (as root) the integration tests that deploy
# real switches and send real frames. Arguments are passed to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/setup.sh --test
echo "== ruff"; .venv/bin/ruff check vsperf tests bench
echo "== mypy"; .venv/bin/mypy
echo "== pytest"; exec .venv/bin/pytest -ra "$@"
