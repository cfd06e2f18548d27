#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ (clang, ASan + UBSan) into build-fuzz/ and runs each
# for SECONDS (default 20) from its seed corpus in fuzz/corpus/. Fails on the first crash,
# leak, sanitizer report or slow input; the reproducer lands in build-fuzz/run/<target>/.
# Usage: scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-20}"
BUILD_DIR="${STRATA_FUZZ_BUILD_DIR:-build-fuzz}"

CC=clang CXX=clang++ cmake -S fuzz -B "$BUILD_DIR" -G Ninja >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)"

export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
status=0
for target in fuzz_tokenizer fuzz_jinja fuzz_gguf fuzz_request; do
  work="$BUILD_DIR/run/$target"  # the grown corpus lives here; fuzz/corpus keeps only seeds
  mkdir -p "$work/corpus" "$work/artifacts"
  dict=()
  [ -f "fuzz/${target#fuzz_}.dict" ] && dict=("-dict=fuzz/${target#fuzz_}.dict")
  if "$BUILD_DIR/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$work/artifacts/" "${dict[@]}" "$work/corpus" "fuzz/corpus/$target" \
      >"$work/log" 2>&1; then
    echo "fuzz: $target ok ($(grep -o 'Done [0-9]* runs' "$work/log" || echo '? runs') in ${seconds}s)"
  else
    tail -n 80 "$work/log"
    echo "fuzz: $target FAILED; reproducer: $(ls -t "$work"/artifacts/* 2>/dev/null | head -n 1)" >&2
    echo "fuzz: rerun it with $BUILD_DIR/$target <file>" >&2
    status=1
  fi
done
exit $status
