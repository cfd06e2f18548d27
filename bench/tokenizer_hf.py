#!/usr/bin/env python3
"""Times Hugging Face `tokenizers` (one thread) on the text tokenizer_bench encodes and prints
Strata's throughput next to it. Usage: bench/tokenizer_hf.py [build/bench/tokenizer_bench]
Needs `pip install tokenizers`."""
import json
import os
import subprocess
import sys
import tempfile
import time

os.environ["RAYON_NUM_THREADS"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"
from tokenizers import Tokenizer  # noqa: E402

NAMES = ["qwen3", "llama3_1", "llama2", "deepseek_v3"]
HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "shared", "fixtures", "tokenizers")


def hf_mb_per_s(tokenizer_json, text, min_seconds=1.0):
    tok = Tokenizer.from_file(tokenizer_json)
    tok.encode(text, add_special_tokens=False)  # warm up
    runs, start = 0, time.perf_counter()
    while time.perf_counter() - start < min_seconds or runs < 2:
        tok.encode(text, add_special_tokens=False)
        runs += 1
    return len(text.encode()) * runs / (time.perf_counter() - start) / 2**20


def main():
    bench = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "build", "bench", "tokenizer_bench")
    with tempfile.TemporaryDirectory() as tmp:
        text_path = os.path.join(tmp, "text.txt")
        subprocess.run([bench, f"--write_text={text_path}"], check=True)
        text = open(text_path, encoding="utf-8").read()
        out = subprocess.run([bench, "--benchmark_format=json"], check=True, capture_output=True, text=True).stdout
        strata = {b["name"].split("/")[1]: b["bytes_per_second"] / 2**20 for b in json.loads(out)["benchmarks"]}
        print(f"{'tokenizer':<12} {'strata MB/s':>12} {'HF MB/s':>10} {'ratio':>7}")
        for name in NAMES:
            subprocess.run(["tar", "-xzf", os.path.join(FIXTURES, f"{name}.tar.gz"), "-C", tmp], check=True)
            hf = hf_mb_per_s(os.path.join(tmp, "tokenizer.json"), text)
            print(f"{name:<12} {strata[name]:>12.1f} {hf:>10.1f} {strata[name] / hf:>7.2f}")


if __name__ == "__main__":
    main()
