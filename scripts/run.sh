#!/usr/bin/env bash
# Sets everything up (packages, build, the SmolLM2 GGUF) and serves the embedded default
# model on the CPU through the OpenAI-compatible API. Extra arguments go to `strata serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec "${STRATA_BUILD_DIR:-build}/strata" serve "$@"
