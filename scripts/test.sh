#!/usr/bin/env bash
# Sets up, builds and runs every test: a short run of the fuzzers (scripts/fuzz.sh), the
# ctest suite (unit, op and fixture tests), the Python module's tests (tests/python, the module
# from the same build) and the pytest integration tests against a live server, with the Python
# of the project virtualenv (.venv) that setup.sh made.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
BUILD_DIR="${STRATA_BUILD_DIR:-build}"
scripts/fuzz.sh "${STRATA_FUZZ_SECONDS:-20}"  # tokenizer, Jinja, GGUF and request fuzzers, briefly
(cd "$BUILD_DIR" && ctest --output-on-failure -j "$(nproc)")
STRATA_BUILD_DIR="$BUILD_DIR" .venv/bin/python -m pytest -q tests/python
if [ -d tests/integration ] && ls tests/integration/test_*.py >/dev/null 2>&1; then
  STRATA_BUILD_DIR="$BUILD_DIR" .venv/bin/python -m pytest -q tests/integration
fi
