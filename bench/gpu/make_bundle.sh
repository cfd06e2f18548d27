#!/usr/bin/env bash
# Run HERE (the build machine) before a GPU run: builds Release with CUDA into build-gpu, copies
# the binaries of one kind of run and the shared libraries the GPU image lacks into .gpu-bundle/
# (compressed), and the shared fixtures into .fixtures-pack/ (compressed). Carry both.
#   bench/gpu/make_bundle.sh [tests|bench] [EXTRA_BENCH...]
# tests: strata_tests (run_all.sh's tests mode); bench: the benchmarks and the strata command (its
# bench, hybrid, engine, lab, cli and serve modes). EXTRA_BENCH: more bench/ programs to pack
# (`tests gpu_moe_bench`: a test run with a lab beside it). The device tool carries at most
# 64 MiB with the tracked tree (~28 MB), so one call takes one kind; the script prints what
# would travel.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
KIND=${1:-tests}
shift || true
case "$KIND" in
  tests) TARGETS="strata_tests"; BINARIES="build-gpu/tests/strata_tests" ;;
  bench) TARGETS="gpu_decode_bench prefix_cache_bench gpu_moe_bench gpu_gdn_bench gpu_attention_bench engine_throughput_bench strata"
         BINARIES="build-gpu/bench/gpu_decode_bench build-gpu/bench/prefix_cache_bench build-gpu/bench/gpu_moe_bench
                   build-gpu/bench/gpu_gdn_bench build-gpu/bench/gpu_attention_bench build-gpu/bench/engine_throughput_bench
                   build-gpu/strata" ;;
  *) echo "usage: $0 [tests|bench] [EXTRA_BENCH...]" >&2; exit 2 ;;
esac
for extra in "$@"; do TARGETS="$TARGETS $extra"; BINARIES="$BINARIES build-gpu/bench/$extra"; done
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTRATA_CUDA=ON > /dev/null
# shellcheck disable=SC2086
cmake --build build-gpu -j"${JOBS:-2}" --target $TARGETS
rm -rf .gpu-bundle && mkdir -p .gpu-bundle/bin .gpu-bundle/lib .gpu-bundle/fallback
# shellcheck disable=SC2086
cp $BINARIES .gpu-bundle/bin/
strip .gpu-bundle/bin/*
# Everything ldd resolves outside CUDA and the C runtime; libstdc++/libgcc only as a fallback
# for an image whose own are older than the build's.
for bin in .gpu-bundle/bin/*; do
  ldd "$bin" | awk '/=> \// {print $3}'
done | sort -u | while read -r lib; do
  name=$(basename "$lib")
  case "$name" in
    libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|libcuda*|libcublas*|libcudart*) ;;
    libstdc++*|libgcc_s*) cp -L "$lib" .gpu-bundle/fallback/ ;;
    *) cp -L "$lib" .gpu-bundle/lib/ ;;
  esac
done
# xz -9: its 64 MiB window finds the CUDA code every binary links in once; run_all.sh unpacks
# with python's lzma.
tar -C .gpu-bundle -cf - lib fallback | xz -9 -T2 > .gpu-bundle/libs.tar.xz && rm -rf .gpu-bundle/lib .gpu-bundle/fallback
tar -C .gpu-bundle -cf - bin | xz -9e -T2 > .gpu-bundle/bin.tar.xz && rm -rf .gpu-bundle/bin
# The shared fixtures (random weights compress to about a third); run_all.sh unpacks them into
# .fixtures/ beside the repository's own tests/fixtures.
# The benchmarks read configs/ alone.
rm -rf .fixtures-pack && mkdir -p .fixtures-pack
FIXTURES="configs"; [ "$KIND" = tests ] && FIXTURES="hf configs lora"
# shellcheck disable=SC2086
tar -C /work/shared/fixtures -cf - $FIXTURES | xz -9 -T2 > .fixtures-pack/fixtures.tar.xz
tracked=$(git ls-files -z | xargs -0 du -cb | tail -1 | cut -f1)
carried=$(du -cb .gpu-bundle .fixtures-pack | tail -1 | cut -f1)
echo "carry [\".gpu-bundle\", \".fixtures-pack\"]: $(( (tracked + carried) >> 20 )) MiB with the tracked tree (limit 64;" \
  "a tests run of 2026-12-06 carried 61 MiB, one of 64 MiB was refused)"
