#!/usr/bin/env python3
"""transformers on the same GPU and config as gpu_decode_bench: a random-init bf16 model,
`generate` at batch 1 and 32 (eager dynamic cache; static cache + torch.compile), the
continuous-batching `generate_batch` where this transformers has it, and one long forward.
Prints and appends JSON lines (same keys as gpu_decode_bench where they compare).
--workload engine: only the peer of engine_throughput_bench (N prompts of P random tokens,
O new tokens each, eos off, all through one `generate_batch`), as one "engine_throughput" line."""
import argparse
import inspect
import json
import time

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM, GenerationConfig


START = time.perf_counter()


def emit(path, record):
    line = json.dumps(record)
    print(line, flush=True)
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")


def timed(fn):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    out = fn()
    torch.cuda.synchronize()
    return time.perf_counter() - t0, out


def generate_rate(model, batch, context, new_tokens, vocab, label, out_path):
    ids = torch.randint(100, vocab - 100, (batch, context), device="cuda")
    mask = torch.ones_like(ids)
    cfg = dict(do_sample=False, min_new_tokens=new_tokens, max_new_tokens=new_tokens, pad_token_id=0)
    one = dict(cfg, min_new_tokens=1, max_new_tokens=1)
    for _ in range(2):  # warm-up (compiles where torch.compile is on)
        model.generate(ids, attention_mask=mask, **cfg)
    t_prefill, _ = timed(lambda: model.generate(ids, attention_mask=mask, **one))
    t_total, _ = timed(lambda: model.generate(ids, attention_mask=mask, **cfg))
    decode_s = max(t_total - t_prefill, 1e-9)
    emit(out_path, {"bench": "hf_decode", "mode": label, "batch": batch, "context": context,
                    "new_tokens": new_tokens, "step_ms": 1e3 * decode_s / (new_tokens - 1),
                    "tok_s": batch * (new_tokens - 1) / decode_s, "total_s": t_total})


def generate_batch_rate(model, batch, context, new_tokens, vocab, out_path):
    if not hasattr(model, "generate_batch"):
        emit(out_path, {"bench": "hf_generate_batch", "skipped": "no generate_batch in this transformers"})
        return
    prompts = [torch.randint(100, vocab - 100, (context,)).tolist() for _ in range(batch)]
    gen = GenerationConfig(max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False,
                           eos_token_id=-1, pad_token_id=0)
    try:
        model.generate_batch(inputs=prompts[:2], generation_config=gen)  # warm-up
        t, _ = timed(lambda: model.generate_batch(inputs=prompts, generation_config=gen))
        emit(out_path, {"bench": "hf_generate_batch", "batch": batch, "context": context,
                        "new_tokens": new_tokens, "total_s": t, "tok_s_incl_prefill": batch * new_tokens / t})
    except Exception as e:  # the API moved between releases: record, do not fail the run
        emit(out_path, {"bench": "hf_generate_batch", "error": repr(e)[:300]})


def batch_call(model, prompts, new_tokens):
    """One generate_batch over `prompts`, eos off (-1 matches no token); (seconds, tokens
    out), the tokens None where the outputs do not say."""
    gen = GenerationConfig(max_new_tokens=new_tokens, do_sample=False, eos_token_id=-1, pad_token_id=0)
    kwargs = {"progress_bar": False} if "progress_bar" in inspect.signature(model.generate_batch).parameters else {}
    t, out = timed(lambda: model.generate_batch(inputs=prompts, generation_config=gen, **kwargs))
    if not isinstance(out, dict) or not all(hasattr(o, "generated_tokens") for o in out.values()):
        return t, None
    return t, sum(len(o.generated_tokens) for o in out.values())


def engine_workload(model, a, vocab):
    """The engine_throughput_bench workload. A probe of min(N, 32) requests estimates the
    full run (linearly: an upper bound, batching only helps); when that would overrun the
    time left before --deadline-s (or --time-budget-s), the largest of N/2, N/4, ... that
    fits runs instead, and the line says so."""
    base = {"bench": "engine_throughput", "impl": "transformers generate_batch", "transformers": transformers.__version__,
            "prompt_tokens": a.prompt_tokens, "output_tokens": a.output_tokens, "requests_asked": a.requests}
    if not hasattr(model, "generate_batch"):
        emit(a.json, dict(base, error=f"transformers {transformers.__version__} has no generate_batch "
                                      "(continuous batching); no peer figure for the engine workload"))
        return
    rand = lambda n: [torch.randint(100, vocab - 100, (a.prompt_tokens,)).tolist() for _ in range(n)]
    try:
        setup_s, _ = batch_call(model, [p[:16] for p in rand(2)], 1)  # manager set-up + warm-up alone
        probe = min(a.requests, 32)
        probe_s, probe_tokens = batch_call(model, rand(probe), a.output_tokens)
        budget = a.deadline_s - (time.perf_counter() - START) - 5
        if a.time_budget_s > 0:
            budget = min(budget, a.time_budget_s)
        n = a.requests
        while n > probe and probe_s * n / probe > budget:
            n //= 2
        n = max(n, probe)
        wall, tokens = (probe_s, probe_tokens) if n == probe else batch_call(model, rand(n), a.output_tokens)
        counted = tokens is not None
        tokens = tokens if counted else n * a.output_tokens
        record = dict(base, requests=n, total_output_tokens=tokens, wall_s=wall, output_tok_s=tokens / wall,
                      total_tok_s=(tokens + n * a.prompt_tokens) / wall, setup_s=setup_s,
                      output_tok_s_excl_setup=tokens / max(wall - setup_s, 1e-9), probe_requests=probe, probe_s=probe_s,
                      tokens_counted=counted)
        if n != a.requests:
            record["note"] = (f"measured {n} requests, not {a.requests}: the {probe}-request probe took "
                              f"{probe_s:.1f} s, so {a.requests} would not fit the {budget:.0f} s left")
        if tokens != n * a.output_tokens:
            record["warning"] = f"generated {tokens} tokens, expected {n * a.output_tokens}"
        emit(a.json, record)
    except Exception as e:  # the API moved between releases: record, do not fail the run
        emit(a.json, dict(base, error=repr(e)[:400]))


def forward_rate(model, tokens, vocab, out_path):
    ids = torch.randint(100, vocab - 100, (1, tokens), device="cuda")
    with torch.no_grad():
        for _ in range(2):
            model(ids, logits_to_keep=1)
        times = sorted(timed(lambda: model(ids, logits_to_keep=1))[0] for _ in range(3))
    emit(out_path, {"bench": "hf_prefill", "tokens": tokens, "ms": 1e3 * times[1], "tok_s": tokens / times[1]})


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--config", required=True)
    p.add_argument("--json", default="")
    p.add_argument("--context", type=int, default=1024)
    p.add_argument("--new-tokens", type=int, default=64)
    p.add_argument("--batches", default="1,32")
    p.add_argument("--prefill", type=int, default=4096)
    p.add_argument("--compile", action="store_true", help="also static cache + torch.compile")
    p.add_argument("--workload", choices=("all", "engine"), default="all",
                   help="engine: only the engine_throughput_bench peer (generate_batch)")
    p.add_argument("--requests", type=int, default=256, help="engine workload: requests")
    p.add_argument("--prompt-tokens", type=int, default=512, help="engine workload: prompt tokens each")
    p.add_argument("--output-tokens", type=int, default=128, help="engine workload: new tokens each")
    p.add_argument("--deadline-s", type=float, default=225,
                   help="engine workload: the script should end this long after its start; fewer "
                        "requests run when the probe says N would not fit")
    p.add_argument("--time-budget-s", type=float, default=0, help="engine workload: also cap the timed run (0: off)")
    a = p.parse_args()
    torch.manual_seed(0)
    config = AutoConfig.from_pretrained(a.config)
    t0 = time.perf_counter()
    with torch.device("cuda"):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16)
    model.eval()
    emit(a.json, {"bench": "hf_setup", "transformers": transformers.__version__, "torch": torch.__version__,
                  "gpu": torch.cuda.get_device_name(), "init_s": time.perf_counter() - t0})
    vocab = config.vocab_size
    if a.workload == "engine":
        with torch.no_grad():
            engine_workload(model, a, vocab)
        return
    batches = [int(b) for b in a.batches.split(",")]
    with torch.no_grad():
        forward_rate(model, a.prefill, vocab, a.json)
        for b in batches:
            generate_rate(model, b, a.context, a.new_tokens, vocab, "eager", a.json)
        generate_batch_rate(model, max(batches), a.context, a.new_tokens, vocab, a.json)
        if a.compile:
            model.generation_config.cache_implementation = "static"
            # reduce-overhead's CUDA graphs failed inside generate on transformers 5.17
            # ("output of CUDAGraphs ... overwritten by a subsequent run"): compile without them.
            model.forward = torch.compile(model.forward, mode="default")
            for b in batches:
                try:
                    generate_rate(model, b, a.context, a.new_tokens, vocab, "static+compile", a.json)
                except Exception as e:
                    emit(a.json, {"bench": "hf_decode", "mode": "static+compile", "batch": b, "error": repr(e)[:300]})


if __name__ == "__main__":
    main()
