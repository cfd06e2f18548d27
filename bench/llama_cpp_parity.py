#!/usr/bin/env python3
"""Strata against llama.cpp (PyPI llama-cpp-python) on the same GGUF, greedy, CPU.

For each of five chat prompts: both engines' 64 greedy tokens (where they part, the top-2
margin of the first differing step says whether that is a near tie); the logits of one
token sequence (prompt + Strata's tokens) teacher-forced through both; and the decode
tokens/s of both on the same thread count, measured alternately in this one run (best and
median of --repeats). llama.cpp's own prefill-vs-decode logit difference is printed as
the yardstick of its int8-activation noise.

  python3 bench/llama_cpp_parity.py [--strata build/strata] [--model X.gguf] [--threads 2]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

PROMPTS = [
    "What is the capital of France?",
    "Write a haiku about the sea.",
    "Explain in two sentences why the sky is blue.",
    "List three uses of a paperclip.",
    "What is 17 times 23? Show your steps.",
]
DEFAULT_MODEL = os.path.expanduser("~/.cache/strata/models/smollm2-135m-instruct-q4_1.gguf")


def strata_cmd(args, *rest):
    return subprocess.run([args.strata, *rest], check=True, capture_output=True, text=True)


def prompt_ids(args, text):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump([{"role": "user", "content": text}], f)
    rendered = strata_cmd(args, "render", "--tokenizer", args.model, "--messages", f.name,
                          "--add-generation-prompt").stdout
    os.unlink(f.name)
    out = subprocess.run([args.strata, "tokenize", "--tokenizer", args.model], input=rendered,
                         check=True, capture_output=True, text=True).stdout
    return [int(t) for t in re.findall(r"\d+", out)]


def strata_generate(args, ids):
    """Greedy tokens and decode tokens/s."""
    r = strata_cmd(args, "generate", "-m", args.model, "--prompt-ids", ",".join(map(str, ids)),
                   "--max-tokens", str(args.steps), "--ignore-eos", "--threads", str(args.threads),
                   "--num-kv-blocks", "64", "--timing")
    tokens = [int(t) for t in r.stdout.strip().split(",")]
    tps = float(re.search(r"([\d.]+) tokens/s", r.stderr).group(1))
    return tokens, tps


def strata_logits(args, ids, prefill):
    from safetensors.numpy import load_file
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "logits.safetensors")
        strata_cmd(args, "logits", "-m", args.model, "--tokens", ",".join(map(str, ids)),
                   "--prefill", str(prefill), "--threads", str(args.threads), "--num-kv-blocks", "64",
                   "--out", out)
        return load_file(out)["logits"]


def open_llama(args):
    import llama_cpp
    import llama_cpp.llama_cpp as lib
    # The AMX/repacked weight buffers crash in llama_decode on this VM (SIGSEGV in
    # ggml_backend_amx_mul_mat); plain CPU buffers run the ordinary AVX-512 kernels.
    default_params = lib.llama_model_default_params

    def no_extra_bufts():
        p = default_params()
        p.use_extra_bufts = False
        return p
    lib.llama_model_default_params = no_extra_bufts
    return llama_cpp.Llama(args.model, n_ctx=512, n_batch=512, n_threads=args.threads,
                           n_threads_batch=args.threads, logits_all=True, verbose=False)


def llama_generate(llm, ids, steps):
    """Greedy tokens and decode tokens/s (after the prompt's prefill)."""
    llm.reset()
    llm.eval(ids)
    tokens = [int(np.argmax(llm.scores[llm.n_tokens - 1]))]
    start = time.perf_counter()
    while len(tokens) < steps:
        llm.eval([tokens[-1]])
        tokens.append(int(np.argmax(llm.scores[llm.n_tokens - 1])))
    return tokens, (steps - 1) / (time.perf_counter() - start)


def llama_logits(llm, ids, prefill):
    llm.reset()
    llm.eval(ids[:prefill])
    for t in ids[prefill:]:
        llm.eval([t])
    return np.array(llm.scores[:len(ids)], dtype=np.float32)


def first_difference(a, b):
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)


def top2_margin(row):
    top = np.partition(row, -2)[-2:]
    return float(top[1] - top[0])


def compare_prompt(args, llm, text):
    ids = prompt_ids(args, text)
    s_tokens, s_tps = strata_generate(args, ids)
    l_tokens, l_tps = llama_generate(llm, ids, args.steps)
    seq = ids + s_tokens[:-1]  # every position whose next token Strata chose
    s_log = strata_logits(args, seq, len(ids))
    l_log = llama_logits(llm, seq, len(ids))
    l_pre = llama_logits(llm, seq, len(seq))  # llama.cpp's own prefill vs decode: its noise
    n = len(ids)
    diff = np.abs(s_log - l_log).max(axis=1)
    first = first_difference(s_tokens, l_tokens)
    margin = top2_margin(s_log[n - 1 + first]) if first is not None else None
    return {
        "prompt": text, "prompt_tokens": n,
        "same_tokens": first is None, "first_difference": first, "margin_there": margin,
        "logit_maxdiff": float(diff.max()), "logit_maxdiff_median_row": float(np.median(diff)),
        "argmax_agree": float((s_log.argmax(1) == l_log.argmax(1)).mean()),
        "llama_self_noise": float(np.abs(l_pre - l_log).max()),
        "llama_self_noise_median_row": float(np.median(np.abs(l_pre - l_log).max(axis=1))),
        "strata_tps": [s_tps], "llama_tps": [l_tps], "ids": ids,
    }


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--strata", default="build/strata")
    ap.add_argument("--model", default=DEFAULT_MODEL)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=3, help="extra alternating speed runs per prompt")
    ap.add_argument("--prompts", type=int, default=len(PROMPTS), help="use the first N prompts")
    ap.add_argument("--speed-only", action="store_true",
                    help="only the alternating decode tokens/s runs (--repeats of them per prompt)")
    return ap.parse_args(argv)


def run(args):
    try:
        llm = open_llama(args)
    except ImportError:
        sys.exit("llama_cpp is not installed: pip install llama-cpp-python")
    if args.speed_only:
        results = [{"ids": prompt_ids(args, p), "strata_tps": [], "llama_tps": []} for p in PROMPTS[:args.prompts]]
    else:
        results = [compare_prompt(args, llm, p) for p in PROMPTS[:args.prompts]]
    for _ in range(args.repeats):  # alternate the engines so both see the same machine load
        for r in results:
            r["strata_tps"].append(strata_generate(args, r["ids"])[1])
            r["llama_tps"].append(llama_generate(llm, r["ids"], args.steps)[1])
    report(args, results)
    return results


def main():
    print(f"load average before: {os.getloadavg()}")
    run(parse_args())
    print(f"load average after: {os.getloadavg()}")


def report(args, results):
    print(f"model {args.model}, {args.threads} threads, {args.steps} greedy steps")
    if not args.speed_only:
        print("| prompt | same 64 tokens | first diff (margin) | max abs logit diff (median row) "
              "| argmax agree | llama.cpp prefill vs decode (median row) |")
        print("| --- | --- | --- | --- | --- | --- |")
    for r in [] if args.speed_only else results:
        diff = "-" if r["same_tokens"] else f"{r['first_difference']} ({r['margin_there']:.3f})"
        print(f"| {r['prompt'][:32]} | {r['same_tokens']} | {diff} | {r['logit_maxdiff']:.3f} "
              f"({r['logit_maxdiff_median_row']:.3f}) | {r['argmax_agree']:.3f} | {r['llama_self_noise']:.3f} "
              f"({r['llama_self_noise_median_row']:.3f}) |")
    s_all = [t for r in results for t in r["strata_tps"]]
    l_all = [t for r in results for t in r["llama_tps"]]
    print(f"decode tokens/s, {len(s_all)} runs each: strata best {max(s_all):.1f} median "
          f"{statistics.median(s_all):.1f} ({', '.join(f'{t:.0f}' for t in s_all)}); llama.cpp best "
          f"{max(l_all):.1f} median {statistics.median(l_all):.1f} ({', '.join(f'{t:.0f}' for t in l_all)})")


if __name__ == "__main__":
    main()
