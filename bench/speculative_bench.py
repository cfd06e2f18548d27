#!/usr/bin/env python3
"""Speculative decoding (n-gram drafts) on the CPU through `strata serve`: output tokens per
second for greedy chat requests that quote their context (rewrite / copy tasks, where prompt
lookup pays), with and without --speculative-config, in the same run; plus the acceptance
rate from /metrics. The outputs must match token for token.
  python3 bench/speculative_bench.py [--model GGUF] [--threads 2] [--k 3]"""
import argparse
import json
import os
import re
import subprocess
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PASSAGE = ("The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs. "
           "How vexingly quick daft zebras jump! The five boxing wizards jump quickly. Sphinx of black "
           "quartz, judge my vow. Jackdaws love my big sphinx of quartz.")
TASKS = [f"Repeat the following text exactly, word for word:\n\n{PASSAGE}",
         f"Copy this text and change nothing:\n\n{PASSAGE}",
         f"Here is a text:\n\n{PASSAGE}\n\nWrite it again, exactly as it is."]


def start(binary, model, threads, extra):
    proc = subprocess.Popen([binary, "serve", model, "--port", "0", "--threads", str(threads), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in proc.stdout:
        m = re.search(r"on (http://[0-9.:]+)/v1", line)
        if m:
            return proc, m.group(1)
    raise RuntimeError("strata serve did not start")


def post(url, body):
    req = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.load(r)


def run(binary, model, threads, extra, max_tokens):
    proc, url = start(binary, model, threads, extra)
    try:
        outputs, tokens, seconds = [], 0, 0.0
        name = json.load(urllib.request.urlopen(url + "/v1/models"))["data"][0]["id"]
        for task in TASKS:
            body = {"model": name, "messages": [{"role": "user", "content": task}], "temperature": 0,
                    "max_tokens": max_tokens}
            t0 = time.perf_counter()
            r = post(url + "/v1/chat/completions", body)
            seconds += time.perf_counter() - t0
            outputs.append(r["choices"][0]["message"]["content"])
            tokens += r["usage"]["completion_tokens"]
        metrics = urllib.request.urlopen(url + "/metrics").read().decode()
        counts = {k: float(v) for k, v in re.findall(r"^strata:(spec_decode_\w+_total)(?:{[^}]*})? (\S+)$", metrics, re.M)}
        return outputs, tokens / seconds, counts
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main():
    p = argparse.ArgumentParser(usage=__doc__)
    cache = Path(os.environ.get("STRATA_CACHE_DIR", Path.home() / ".cache" / "strata"))
    p.add_argument("--model", default=str(cache / "models" / "smollm2-135m-instruct-q4_1.gguf"))
    p.add_argument("--binary", default=str(REPO / "build" / "strata"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--k", type=int, default=3)
    p.add_argument("--max-tokens", type=int, default=160)
    a = p.parse_args()
    plain, plain_rate, _ = run(a.binary, a.model, a.threads, [], a.max_tokens)
    spec_cfg = json.dumps({"method": "ngram", "num_speculative_tokens": a.k, "prompt_lookup_max": 4,
                           "prompt_lookup_min": 2})
    spec, spec_rate, counts = run(a.binary, a.model, a.threads, ["--speculative-config", spec_cfg], a.max_tokens)
    drafts = counts.get("spec_decode_num_draft_tokens_total", 0)
    accepted = counts.get("spec_decode_num_accepted_tokens_total", 0)
    print(json.dumps({"bench": "speculative_ngram", "model": Path(a.model).name, "threads": a.threads, "k": a.k,
                      "plain_tok_s": round(plain_rate, 1), "speculative_tok_s": round(spec_rate, 1),
                      "speedup": round(spec_rate / plain_rate, 3), "drafts": drafts, "accepted": accepted,
                      "acceptance": round(accepted / drafts, 3) if drafts else None,
                      "outputs_identical": plain == spec}))


if __name__ == "__main__":
    main()
