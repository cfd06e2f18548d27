#!/usr/bin/env bash
# The one script for the GPU machine: CUDA tests, then Strata's benchmarks and transformers'
# on the same GPU, logs and a summary table in OUTDIR. Expects .gpu-bundle/ and .fixtures/
# and .fixtures-pack/ from bench/gpu/make_bundle.sh tests|bench (carried with the run; one
# kind a call, the carry limit is 64 MiB); builds there only as a fallback.
#   bench/gpu/run_all.sh OUTDIR [all|tests|bench|profile|hybrid|engine|lab|cli|serve]
# hybrid: the tests, then gpu_decode_bench and prefix_cache_bench on the 24-layer Qwen3-Next.
# engine: engine_throughput_bench (256 x 512 prompt / 128 output tokens through the serving
# engine), its transformers generate_batch peer, and `strata serve` start-up time, on Llama-3.1-8B.
# lab: the dense GEMV variants side by side (gpu_moe_bench, decode row counts). cli: `strata
# generate --timing` at batch 1 on Llama-3.1-8B (what a user runs) beside gpu_decode_bench.
# serve: `strata serve` on Llama-3.1-8B, `strata bench serve` (512-token prompts, 128 out) at
# concurrency 1, 16 and 64: TTFT and TPOT through HTTP streaming.
# Bench-run settings (not product options): TEST_FILTER, BENCH_MODELS, BENCH_ARGS, HF_TIMEOUT (0
# skips transformers), PROFILE_SPECS ("model batch prefill;..."), ENGINE_TIMEOUT, HF_ENGINE_TIMEOUT,
# HF_ENGINE_ARGS, STARTUP_TIMEOUT, SERVE_BENCH_ARGS (the serve mode's prompt set), CLI_ARGS (more
# `strata generate` flags), MOE_BENCH=0 (bench mode without gpu_moe_bench), LAB_ARGS. The device tool returns at most 8 files: run several modes into
# subfolders of $OUT and tar them into one file at the end of the call.
set -uo pipefail
OUT=${1:?usage: run_all.sh OUTDIR [all|tests|bench|profile|hybrid|engine|lab|cli|serve]}
WHAT=${2:-all}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$OUT"
LIBS=/tmp/strata-libs
rm -rf "$LIBS" && mkdir -p "$LIBS" &&
  python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$ROOT/.gpu-bundle/libs.tar.xz" "$LIBS"
CUDA_LIBS=""
for d in /usr/local/cuda/lib64 /usr/local/cuda/lib $(python3 -c 'import nvidia, os; p = os.path.dirname(nvidia.__path__[0]); print(" ".join(os.path.join(p, "nvidia", s, "lib") for s in ("cu13", "cublas", "cuda_runtime")))' 2>/dev/null); do
  [ -d "$d" ] && CUDA_LIBS="$CUDA_LIBS:$d"
done
BIN=/tmp/strata-bin/bin
rm -rf /tmp/strata-bin && mkdir -p /tmp/strata-bin &&
  python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$ROOT/.gpu-bundle/bin.tar.xz" /tmp/strata-bin
LIBPATH="$LIBS/lib$CUDA_LIBS"
PROBE=$(ls "$BIN"/* | head -1)  # any carried binary: they link the same libraries
if LD_LIBRARY_PATH="$LIBPATH" ldd "$PROBE" 2>&1 | grep -q "not found"; then
  LIBPATH="$LIBS/lib:$LIBS/fallback$CUDA_LIBS"  # the image's libstdc++ is older than the build's
fi
run_bin() { LD_LIBRARY_PATH="$LIBPATH" "$@"; }
{
  echo "date: $(date -u +%FT%TZ)"; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
  echo "LD_LIBRARY_PATH=$LIBPATH"; LD_LIBRARY_PATH="$LIBPATH" ldd "$PROBE"
} > "$OUT/env.txt" 2>&1
if LD_LIBRARY_PATH="$LIBPATH" ldd "$PROBE" | grep -q "not found" || { [ -x "$BIN/strata_tests" ] && ! run_bin "$BIN/strata_tests" --gtest_list_tests > /dev/null 2>&1; }; then
  echo "carried binaries do not run here; trying a local build (needs the -dev packages)" | tee -a "$OUT/env.txt"
  cmake -S "$ROOT" -B /tmp/strata-build -G Ninja -DCMAKE_BUILD_TYPE=Release >> "$OUT/env.txt" 2>&1 &&
    cmake --build /tmp/strata-build -j16 >> "$OUT/env.txt" 2>&1 || { echo "local build failed; see env.txt"; exit 1; }
  BIN=/tmp/strata-build; cp /tmp/strata-build/tests/strata_tests /tmp/strata-build/bench/gpu_decode_bench \
    /tmp/strata-build/bench/prefix_cache_bench /tmp/strata-build/bench/engine_throughput_bench "$BIN/" 2>/dev/null
fi
# The shared fixtures travel packed; the ones this repository adds travel in the tree (not
# carried twice): beside the shared ones.
if [ -f "$ROOT/.fixtures-pack/fixtures.tar.xz" ]; then
  mkdir -p "$ROOT/.fixtures" &&
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$ROOT/.fixtures-pack/fixtures.tar.xz" "$ROOT/.fixtures"
fi
mkdir -p "$ROOT/.fixtures/hf" && cp -r "$ROOT/tests/fixtures/hf/." "$ROOT/.fixtures/hf/"
export STRATA_FIXTURES_DIR="$ROOT/.fixtures" STRATA_TEST_TMP_DIR=/tmp/strata-test-tmp
STATUS=0
if [ "$WHAT" = all ] || [ "$WHAT" = tests ] || [ "$WHAT" = hybrid ]; then
  run_bin "$BIN/strata_tests" --gtest_filter="${TEST_FILTER:-Cuda*}" 2>&1 | tee "$OUT/tests.log" | grep -E "^\[ +(OK|FAILED|PASSED|SKIPPED) +\]|Failure|rel_l2|Expected|Which is|error"
  STATUS=${PIPESTATUS[0]}
fi
CONFIGS="$ROOT/.fixtures/configs"
if [ "$WHAT" = all ] || [ "$WHAT" = bench ]; then
  rm -f "$OUT/strata.jsonl" "$OUT/hf.jsonl"
  for model in ${BENCH_MODELS:-llama-3.1-8b qwen3-30b-a3b}; do
    run_bin "$BIN/gpu_decode_bench" --model "$CONFIGS/$model" --json "$OUT/strata.jsonl" ${BENCH_ARGS:-} 2>&1
  done
  [ -x "$BIN/gpu_moe_bench" ] && [ "${MOE_BENCH:-1}" != 0 ] && run_bin timeout 120 "$BIN/gpu_moe_bench" > "$OUT/moe_bench.jsonl" 2>&1
  [ "${HF_TIMEOUT:-300}" != 0 ] && PYTHONUNBUFFERED=1 timeout "${HF_TIMEOUT:-300}" python3 "$ROOT/bench/gpu/hf_baseline.py" --config "$CONFIGS/llama-3.1-8b" \
    --json "$OUT/hf.jsonl" ${HF_ARGS:-} 2>&1 | grep -v Warning | tail -40 > "$OUT/hf.log"
  HF_JSON="$OUT/hf.jsonl"; [ -s "$HF_JSON" ] || HF_JSON=""
  python3 "$ROOT/bench/gpu/summarize.py" "$OUT/strata.jsonl" $HF_JSON | tee "$OUT/summary.md"
fi
if [ "$WHAT" = hybrid ]; then
  HYBRID="$CONFIGS/${HYBRID_MODEL:-qwen3-next-80b-a3b-24l}"
  rm -f "$OUT/strata.jsonl"
  run_bin timeout 300 "$BIN/gpu_decode_bench" --model "$HYBRID" --json "$OUT/strata.jsonl" ${BENCH_ARGS:-} 2>&1
  python3 "$ROOT/bench/gpu/summarize.py" "$OUT/strata.jsonl" | tee "$OUT/summary.md"
  [ -x "$BIN/gpu_gdn_bench" ] && run_bin timeout 120 "$BIN/gpu_gdn_bench" > "$OUT/gdn_bench.jsonl" 2>&1
  run_bin timeout 180 "$BIN/prefix_cache_bench" --device cuda --model "$HYBRID" --load-format dummy 2>&1 | tee "$OUT/prefix_cache.md"
fi
if [ "$WHAT" = all ] || [ "$WHAT" = engine ]; then
  ENGINE_MODEL="$CONFIGS/${ENGINE_MODEL_NAME:-llama-3.1-8b}"
  rm -f "$OUT/engine.jsonl" "$OUT/engine.log" "$OUT/hf_engine.jsonl" "$OUT/startup.json"
  # The synchronous step loop first, for comparison; the summary's headline is the default run.
  for SCHEDULING in --no-async-scheduling ""; do
    run_bin timeout "${ENGINE_TIMEOUT:-300}" "$BIN/engine_throughput_bench" --model "$ENGINE_MODEL" --device cuda \
      --load-format dummy --requests 256 --prompt-tokens 512 --output-tokens 128 --json "$OUT/engine.jsonl" \
      $SCHEDULING ${ENGINE_ARGS:-} >> "$OUT/engine.log" 2>&1
  done
  tail -3 "$OUT/engine.log"
  [ "${HF_ENGINE_TIMEOUT:-240}" != 0 ] && PYTHONUNBUFFERED=1 timeout "${HF_ENGINE_TIMEOUT:-240}" python3 \
    "$ROOT/bench/gpu/hf_baseline.py" --config "$ENGINE_MODEL" --workload engine --requests 256 --prompt-tokens 512 \
    --output-tokens 128 --json "$OUT/hf_engine.jsonl" ${HF_ENGINE_ARGS:-} 2>&1 | grep -v Warning | tail -40 > "$OUT/hf_engine.log"
  STRATA_LD_LIBRARY_PATH="$LIBPATH" python3 "$ROOT/bench/gpu/serve_startup.py" --strata "$BIN/strata" \
    --model "$ENGINE_MODEL" --device cuda --load-format dummy --timeout-s "${STARTUP_TIMEOUT:-180}" \
    --json "$OUT/startup.json" ${STARTUP_ARGS:-} > "$OUT/startup.log" 2>&1
  python3 "$ROOT/bench/gpu/summarize.py" --engine "$OUT/engine.jsonl" --hf-engine "$OUT/hf_engine.jsonl" \
    --startup "$OUT/startup.json" | tee "$OUT/engine_summary.md"
fi
if [ "$WHAT" = lab ]; then
  run_bin timeout 240 "$BIN/gpu_moe_bench" ${LAB_ARGS:---tokens 1,8 --dense-rows 1,2,4,8} > "$OUT/lab.jsonl" 2>&1
  python3 "$ROOT/bench/gpu/summarize.py" --lab "$OUT/lab.jsonl" | tee "$OUT/lab.md"
fi
if [ "$WHAT" = cli ]; then
  CLI_MODEL="$CONFIGS/${CLI_MODEL_NAME:-llama-3.1-8b}"
  PROMPT=$(python3 -c 'print(",".join(str(100 + i) for i in range(128)))')
  for temperature in 0 1; do
    run_bin timeout 120 "$BIN/strata" generate --model "$CLI_MODEL" --device cuda --load-format dummy \
      --prompt-ids "$PROMPT" --max-tokens 256 --ignore-eos --temperature $temperature --timing ${CLI_ARGS:-} 2>&1 >/dev/null |
      sed "s/^/generate temperature $temperature: /" | tee -a "$OUT/cli.txt"
  done
fi
if [ "$WHAT" = serve ]; then
  SERVE_MODEL="$CONFIGS/${SERVE_MODEL_NAME:-llama-3.1-8b}"
  LD_LIBRARY_PATH="$LIBPATH" "$BIN/strata" serve "$SERVE_MODEL" --device cuda --load-format dummy --port 8765 \
    --max-num-seqs 64 > "$OUT/serve.log" 2>&1 &
  SERVER=$!
  for _ in $(seq 180); do python3 -c 'import urllib.request; urllib.request.urlopen("http://127.0.0.1:8765/health")' 2> /dev/null && break; sleep 1; done
  for conc in 1 16 64; do
    LD_LIBRARY_PATH="$LIBPATH" timeout 120 "$BIN/strata" bench serve --base-url http://127.0.0.1:8765 \
      --num-prompts $((conc * 4 > 16 ? conc * 4 : 16)) --max-concurrency $conc --ignore-eos --disable-tqdm \
      ${SERVE_BENCH_ARGS:---random-input-len 512 --random-output-len 128} --save-result \
      --result-filename "$OUT/serve_c$conc.json" 2>&1 | sed -n '/Serving Benchmark Result/,$p' | tee -a "$OUT/serve_bench.txt"
  done
  kill -TERM $SERVER; wait $SERVER; echo "serve exit status $?" | tee -a "$OUT/serve_bench.txt"
fi
if [ "$WHAT" = all ] || [ "$WHAT" = profile ]; then
  NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  : > "$OUT/profile.txt"
  IFS=';' read -ra SPECS <<< "${PROFILE_SPECS:-llama-3.1-8b 1 0;llama-3.1-8b 256 0;llama-3.1-8b 1 4096}"
  for spec in "${SPECS[@]}"; do
    set -- $spec
    model=$1; shift
    args="--batches $1 --steps 2 --ttft 0 --prefill $2 --profile"
    [ "$2" != 0 ] && args="--batches 0 --steps 2 --ttft 0 --prefill $2 --profile --context 16"
    LD_LIBRARY_PATH="$LIBPATH" timeout 90 "$NCU" --clock-control none --profile-from-start off --csv \
      --metrics gpu__time_duration.sum,dram__bytes_read.sum "$BIN/gpu_decode_bench" --model "$CONFIGS/$model" $args \
      > /tmp/ncu.csv 2>/tmp/ncu.err || tail -3 /tmp/ncu.err >> "$OUT/profile.txt"
    python3 "$ROOT/bench/gpu/kernel_summary.py" /tmp/ncu.csv "$model batch $1 prefill $2" >> "$OUT/profile.txt" 2>&1
  done
  cat "$OUT/profile.txt"
fi
exit $STATUS
