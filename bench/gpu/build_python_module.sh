#!/usr/bin/env bash
# Run HERE after make_bundle.sh: builds the Python module strata._engine for the GPU machine's
# Python (3.12 there, 3.11 here) against build-gpu's static libraries, and lays out the package
# beside the `strata` command in OUTDIR/build (the layout tests/python finds through
# STRATA_BUILD_DIR). The other Python's headers come from the GPU machine: tar its
# sysconfig include folder into a call's $OUT; Debian-style images keep pyconfig.h under
# x86_64-linux-gnu/pythonX.Y/, which INCLUDE_ROOT must then hold too (not /usr/include itself:
# as -isystem it would hide the C library's headers; link the two folders into one of its own).
#   bench/gpu/build_python_module.sh INCLUDE_ROOT PYTHON_TAG OUTDIR
#   (e.g. /tmp/py312 cpython-312 /tmp/pyrun; INCLUDE_ROOT/python3.12/Python.h)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
INCLUDE_ROOT=${1:?usage: build_python_module.sh INCLUDE_ROOT PYTHON_TAG OUTDIR}
TAG=${2:?python tag, e.g. cpython-312}
OUT=${3:?output folder}
VERSION=$(echo "$TAG" | sed -E 's/cpython-([0-9])([0-9]+)/\1.\2/')
PYINC="$INCLUDE_ROOT/python$VERSION"
[ -f "$PYINC/Python.h" ] || { echo "no $PYINC/Python.h" >&2; exit 2; }
PYBIND=$(mktemp -d)
"$ROOT/.venv/bin/pip" download pybind11==3.1.0 --no-deps -q -d "$PYBIND"
python3 -m zipfile -e "$PYBIND"/pybind11-*.whl "$PYBIND/x" > /dev/null
B="$ROOT/build-gpu"; OBJ="$OUT/obj"; mkdir -p "$OBJ" "$OUT/build/python"
# The flags build-gpu compiles the library with, plus the other Python's and pybind11's headers.
FLAGS="-DFMT_SHARED -DSPDLOG_COMPILED_LIB -DSPDLOG_FMT_EXTERNAL -DSPDLOG_SHARED_LIB -DSTRATA_WITH_CUDA=1
  -I$ROOT/src -isystem /usr/local/cuda/include -isystem $PYINC -isystem $INCLUDE_ROOT
  -isystem $PYBIND/x/pybind11/include -O2 -DNDEBUG -fPIC -march=x86-64-v3 -fopenmp -std=gnu++20 -fvisibility=hidden"
PIDS=()
for source in "$ROOT"/src/strata/python/*.cpp; do
  # shellcheck disable=SC2086
  g++ $FLAGS -c "$source" -o "$OBJ/$(basename "$source" .cpp).o" &
  PIDS+=($!)
done
for pid in "${PIDS[@]}"; do wait "$pid"; done  # set -e: a failed compile ends the script
rm -rf "$OUT/build/python/strata" && cp -r "$ROOT/python/strata" "$OUT/build/python/strata"
# The libraries the strata command links (build-gpu/build.ninja), the model-opening code whole.
LINK=$(sed -n '/^build strata:/,/LINK_LIBRARIES/p' "$B/build.ninja" | sed -n 's/^ *LINK_LIBRARIES = //p' |
       sed -e 's#libstrata_model_opening.a#-Wl,--whole-archive '"$B"'/libstrata_model_opening.a -Wl,--no-whole-archive#' \
           -e 's# libstrata.a# '"$B"'/libstrata.a#' -e 's#-Wl,-rpath,[^ ]*##')
# shellcheck disable=SC2086
g++ -shared -o "$OUT/build/python/strata/_engine.$TAG-x86_64-linux-gnu.so" "$OBJ"/*.o $LINK
strip --strip-unneeded "$OUT/build/python/strata/_engine.$TAG-x86_64-linux-gnu.so"
cp "$B/strata" "$OUT/build/strata" && strip "$OUT/build/strata"
rm -rf "$PYBIND" "$OBJ"
ls -la "$OUT/build" "$OUT/build/python/strata"
