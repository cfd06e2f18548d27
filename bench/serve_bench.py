#!/usr/bin/env python3
"""Online serving benchmark for an OpenAI-compatible server, in the style of `vllm bench serve`.

Sends --num-prompts requests, either paced as a Poisson process (--request-rate, requests/s;
inf = all at once) and/or capped at --max-concurrency in flight, streams every response and
reports request throughput, output tokens/s, TTFT, TPOT and ITL (mean, median, p99).

Datasets: `random` (random token-id prompts of --random-input-len tokens to /v1/completions,
--random-output-len tokens each with ignore_eos, so lengths are exact) and `sharegpt-synthetic`
(chat conversations of English-like text with ShareGPT-like log-normal prompt and reply lengths).

    python3 bench/serve_bench.py --base-url http://127.0.0.1:8000 --num-prompts 64 --max-concurrency 8
"""
import argparse
import asyncio
import json
import math
import random
import statistics
import time

import httpx

WORDS = ("the of and to in is that for it as with was on be by this are from at or an have not they which "
         "one you had but all their were can there more when will would who so what about if out up time into "
         "model data system water people world number city music history light energy science").split()


def percentile(values, q):
    if not values:
        return float("nan")
    s = sorted(values)
    k = (len(s) - 1) * q / 100
    lo, hi = math.floor(k), math.ceil(k)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def make_requests(args, rng):
    reqs = []
    for _ in range(args.num_prompts):
        if args.dataset == "random":
            prompt = [rng.randrange(args.vocab_low, args.vocab_high) for _ in range(args.random_input_len)]
            reqs.append(("/v1/completions", {"prompt": prompt, "max_tokens": args.random_output_len,
                                             "ignore_eos": True}))
        else:
            n_in = max(4, min(args.max_input_len, int(rng.lognormvariate(math.log(args.random_input_len), 0.6))))
            n_out = max(1, min(args.max_output_len, int(rng.lognormvariate(math.log(args.random_output_len), 0.6))))
            text = " ".join(rng.choice(WORDS) for _ in range(n_in))
            reqs.append(("/v1/chat/completions", {"messages": [{"role": "user", "content": text}],
                                                  "max_tokens": n_out, "ignore_eos": True}))
    return reqs


async def one_request(client, args, path, body):
    body = {**body, "model": args.model, "stream": True, "temperature": args.temperature,
            "stream_options": {"include_usage": True}}
    start = time.perf_counter()
    ttft, last, itl, tokens, ok, err = None, start, [], 0, False, ""
    try:
        async with client.stream("POST", args.base_url + path, json=body) as resp:
            if resp.status_code != 200:
                return {"ok": False, "error": f"{resp.status_code} {(await resp.aread())[:200]!r}"}
            async for line in resp.aiter_lines():
                if not line.startswith("data: ") or line == "data: [DONE]":
                    continue
                chunk = json.loads(line[6:])
                if chunk.get("usage"):
                    tokens = chunk["usage"]["completion_tokens"]
                choices = chunk.get("choices") or []
                has_text = any((c.get("text") or (c.get("delta") or {}).get("content")) for c in choices)
                if has_text:
                    now = time.perf_counter()
                    if ttft is None:
                        ttft = now - start
                    else:
                        itl.append(now - last)
                    last = now
            ok = True
    except httpx.HTTPError as e:
        err = repr(e)
    latency = time.perf_counter() - start
    return {"ok": ok and ttft is not None, "error": err, "ttft": ttft, "itl": itl, "latency": latency,
            "output_tokens": tokens}


async def run(args):
    rng = random.Random(args.seed)
    requests = make_requests(args, rng)
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    headers = {"Authorization": f"Bearer {args.api_key}"} if args.api_key else {}
    async with httpx.AsyncClient(timeout=None, limits=limits, headers=headers) as client:
        if args.model is None:
            args.model = (await client.get(args.base_url + "/v1/models")).json()["data"][0]["id"]
        gate = asyncio.Semaphore(args.max_concurrency or len(requests))

        async def limited(path, body):
            async with gate:
                return await one_request(client, args, path, body)

        tasks = []
        start = time.perf_counter()
        for path, body in requests:
            tasks.append(asyncio.create_task(limited(path, body)))
            if args.request_rate != float("inf"):
                await asyncio.sleep(rng.expovariate(args.request_rate))
        results = await asyncio.gather(*tasks)
        duration = time.perf_counter() - start
    return results, duration


def report(args, results, duration):
    good = [r for r in results if r["ok"]]
    out_tokens = sum(r["output_tokens"] for r in good)
    ttft = [r["ttft"] * 1000 for r in good]
    tpot = [(r["latency"] - r["ttft"]) / (r["output_tokens"] - 1) * 1000 for r in good if r["output_tokens"] > 1]
    itl = [x * 1000 for r in good for x in r["itl"]]
    rows = [("Successful requests", len(good)), ("Failed requests", len(results) - len(good)),
            ("Benchmark duration (s)", duration), ("Total generated tokens", out_tokens),
            ("Request throughput (req/s)", len(good) / duration),
            ("Output token throughput (tok/s)", out_tokens / duration)]
    for name, values in (("TTFT (ms)", ttft), ("TPOT (ms)", tpot), ("ITL (ms)", itl)):
        rows += [(f"Mean {name}", statistics.fmean(values) if values else float("nan")),
                 (f"Median {name}", percentile(values, 50)), (f"P99 {name}", percentile(values, 99))]
    print(f"{' Serving Benchmark Result ':=^50}")
    for name, value in rows:
        print(f"{name + ':':<40}{value:>10.2f}" if isinstance(value, float) else f"{name + ':':<40}{value:>10}")
    print("=" * 50)
    for r in results:
        if not r["ok"]:
            print("error:", r.get("error"))
            break
    if args.json:
        with open(args.json, "w") as f:
            json.dump({k: v for k, v in rows}, f, indent=1)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--base-url", default="http://127.0.0.1:8000")
    p.add_argument("--model", default=None, help="default: the first of /v1/models")
    p.add_argument("--api-key", default=None)
    p.add_argument("--dataset", choices=["random", "sharegpt-synthetic"], default="random")
    p.add_argument("--num-prompts", type=int, default=64)
    p.add_argument("--random-input-len", type=int, default=128)
    p.add_argument("--random-output-len", type=int, default=32)
    p.add_argument("--max-input-len", type=int, default=1024)
    p.add_argument("--max-output-len", type=int, default=256)
    p.add_argument("--vocab-low", type=int, default=100, help="random prompts draw ids in [low, high)")
    p.add_argument("--vocab-high", type=int, default=10000)
    p.add_argument("--request-rate", type=float, default=float("inf"), help="requests/s (Poisson); inf: no pacing")
    p.add_argument("--max-concurrency", type=int, default=None, help="requests in flight at most")
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", default=None, help="also write the figures to this file")
    args = p.parse_args()
    results, duration = asyncio.run(run(args))
    report(args, results, duration)


if __name__ == "__main__":
    main()
