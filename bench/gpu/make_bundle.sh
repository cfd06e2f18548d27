#!/usr/bin/env bash
# Run HERE (the build machine) before a GPU run: builds Release with CUDA into build-gpu,
# copies the binaries and the shared libraries they need that the GPU image lacks into
# .gpu-bundle/ (compressed), and the fixtures into .fixtures/. Carry both with the run.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTRATA_CUDA=ON > /dev/null
cmake --build build-gpu -j"${JOBS:-2}" --target strata_tests gpu_decode_bench prefix_cache_bench gpu_moe_bench \
  gpu_gdn_bench engine_throughput_bench strata
rm -rf .gpu-bundle && mkdir -p .gpu-bundle/bin .gpu-bundle/lib .gpu-bundle/fallback
cp build-gpu/tests/strata_tests build-gpu/bench/gpu_decode_bench build-gpu/bench/prefix_cache_bench \
  build-gpu/bench/gpu_moe_bench build-gpu/bench/gpu_gdn_bench build-gpu/bench/engine_throughput_bench \
  build-gpu/strata .gpu-bundle/bin/
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
# xz -9: the carried tree is limited to 64 MiB, and its 64 MiB window finds the CUDA code every
# binary links in once (20 MB at -6, 6 MB at -9); run_all.sh unpacks with python's lzma.
tar -C .gpu-bundle -cf - lib fallback | xz -9 -T2 > .gpu-bundle/libs.tar.xz && rm -rf .gpu-bundle/lib .gpu-bundle/fallback
tar -C .gpu-bundle -cf - bin | xz -9 -T2 > .gpu-bundle/bin.tar.xz && rm -rf .gpu-bundle/bin
rm -rf .fixtures && mkdir -p .fixtures
cp -r /work/shared/fixtures/hf /work/shared/fixtures/configs /work/shared/fixtures/lora .fixtures/
du -sh .gpu-bundle .fixtures
