#!/usr/bin/env bash
# On the GPU machine, after run_all.sh has unpacked Strata's binaries (any mode): writes a
# random-weight GGUF of real shapes and runs llama.cpp's llama-bench and Strata's
# gpu_decode_bench on that same file. Needs .device-carry/ (carried) with llamacpp.tar.xz,
# gguf_dummy.py and gguf-py/ from ../shared/peers and configs/ARCH/ from the fixtures.
#   bench/gpu/gguf_peer.sh OUTDIR [TYPE=q8_0] [ARCH=llama-3.1-8b]
set -uo pipefail
OUT=${1:?usage: gguf_peer.sh OUTDIR [TYPE] [ARCH]}
TYPE=${2:-q8_0}
ARCH=${3:-llama-3.1-8b}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CARRY="$ROOT/.device-carry"
mkdir -p "$OUT"
CUDA_LIBS=$(python3 -c 'import nvidia, os; p = list(nvidia.__path__)[0]; print(":".join(os.path.join(p, s, "lib") for s in ("cu13", "cublas", "cuda_runtime")))' 2>/dev/null)
LCP=/tmp/lcp-bin
[ -x "$LCP/llama-bench" ] ||
  python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall("/tmp")' "$CARRY/llamacpp.tar.xz"
FILE=/tmp/strata-peer-$ARCH-$TYPE.gguf
[ -s "$FILE" ] || PYTHONPATH="$CARRY/gguf-py" python3 "$CARRY/gguf_dummy.py" --out "$FILE" --arch "$ARCH" \
  --config "$CARRY/configs/$ARCH/config.json" --type "$TYPE" --workers "$(nproc)" > "$OUT/gen.log" 2>&1
ls -la "$FILE" | tee -a "$OUT/gen.log"
LD_LIBRARY_PATH="$LCP:/usr/local/cuda/lib64:$CUDA_LIBS" timeout 200 "$LCP/llama-bench" -m "$FILE" -ngl 99 -fa 1 \
  -p 512 -n 128 -r 3 -o md > "$OUT/llamacpp.md" 2>"$OUT/llamacpp.err"
cat "$OUT/llamacpp.md"
LD_LIBRARY_PATH="/tmp/strata-libs/lib:/usr/local/cuda/lib64:$CUDA_LIBS" timeout 200 /tmp/strata-bin/bin/gpu_decode_bench \
  --model "$FILE" --batches 1,8 --context 64 --steps 128 --prefill 512 --json "$OUT/strata.jsonl" > "$OUT/strata.log" 2>&1
grep -v '"setup"' "$OUT/strata.jsonl" 2>/dev/null || tail -5 "$OUT/strata.log"
