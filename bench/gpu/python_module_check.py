"""The Python module on the GPU (issue 22): LLM(device="cuda") against `strata generate --device cuda`
on the same machine. Prints one JSON line per check; a bench program, not a test (the GPU machine
runs it from a call's script with the module that build_python_module.sh laid out).
  python3 bench/gpu/python_module_check.py --build BUILD --tiny FIXTURE --dense CONFIG_DIR
BUILD: the folder with `strata` and python/strata; FIXTURE: a tiny HF folder (token-id prompts);
CONFIG_DIR: a real model's config.json, loaded with dummy weights for the speed comparison."""
import argparse
import json
import random
import re
import subprocess
import sys
import time
from pathlib import Path


def cli_tokens(binary, model, prompt, max_tokens, *extra):
    out = subprocess.run([str(binary), "generate", "--model", str(model), "--device", "cuda", "--prompt-ids",
                          ",".join(map(str, prompt)), "--max-tokens", str(max_tokens), "--ignore-eos", *extra],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"strata generate exited with {out.returncode}: {out.stderr[-2000:]}")
    return [int(t) for t in out.stdout.strip().split(",") if t], out.stderr


# Shares of the GPU's memory: the tiny model's engines (the module's, then a CLI's beside it: a
# share counts what is in use already, 4.5 GB on an H100 after the module's 0.1), then the 8B
# shape's (one at a time); an engine sizes its KV cache to its share.
TINY_MEMORY, TINY_CLI_MEMORY, DENSE_MEMORY = 0.1, 0.3, 0.6


def prompt_ids(seed, length, vocab=500):
    rng = random.Random(seed)
    return [rng.randrange(3, vocab) for _ in range(length)]


def check_tiny(strata, binary, tiny):
    """Greedy tokens of single prompts equal the CLI's; a batch of 64 comes back whole and in order."""
    llm = strata.LLM(str(tiny), device="cuda", load_progress=False, gpu_memory_utilization=TINY_MEMORY)
    greedy = strata.SamplingParams(temperature=0, max_tokens=16, ignore_eos=True)
    prompts = [prompt_ids(i, 5 + 7 * i) for i in range(4)]
    same = 0
    for p in prompts:
        got = llm.generate([p], greedy)[0].outputs[0].token_ids
        want, _ = cli_tokens(binary, tiny, p, 16, "--gpu-memory-utilization", str(TINY_CLI_MEMORY))
        same += got == want
    batch = [prompt_ids(100 + i, 4 + i % 13) for i in range(64)]
    outs = llm.generate(batch, greedy)
    in_order = [o.prompt_token_ids for o in outs] == batch and all(len(o.outputs[0].token_ids) == 16 for o in outs)
    alone_equal = sum(llm.generate([batch[i]], greedy)[0].outputs[0].token_ids == outs[i].outputs[0].token_ids
                      for i in (0, 31, 63))
    if hasattr(llm, "close"):
        llm.close()
    print(json.dumps({"check": "tiny", "single_equal_cli": f"{same}/{len(prompts)}", "batch64_whole_in_order": in_order,
                      "batch_equal_alone": f"{alone_equal}/3"}), flush=True)


def module_decode_rate(llm, strata, prompt, long_tokens):
    """Decode tokens/s from the difference of two runs (1 and 1 + long_tokens new tokens): prefill cancels."""
    def run(n):
        start = time.perf_counter()
        llm.generate([prompt], strata.SamplingParams(temperature=0, max_tokens=n, ignore_eos=True))
        return time.perf_counter() - start
    run(8)  # warm-up: graphs, allocations
    short, long = min(run(1) for _ in range(3)), min(run(1 + long_tokens) for _ in range(3))
    return long_tokens / (long - short)


def check_speed(strata, binary, dense, long_tokens):
    prompt = prompt_ids(7, 1024, vocab=32000)
    rates = []
    for _ in range(2):
        _, err = cli_tokens(binary, dense, prompt, 1 + long_tokens, "--load-format", "dummy", "--timing",
                            "--max-model-len", "4096", "--gpu-memory-utilization", str(DENSE_MEMORY))
        rates.append(float(re.search(r"([0-9.]+) tokens/s", err).group(1)))
    llm = strata.LLM(str(dense), device="cuda", load_format="dummy", load_progress=False, max_model_len=4096,
                     gpu_memory_utilization=DENSE_MEMORY)
    module = module_decode_rate(llm, strata, prompt, long_tokens)
    print(json.dumps({"check": "decode_speed", "model": Path(dense).name, "prompt_tokens": len(prompt),
                      "decode_tokens": long_tokens, "module_tok_s": round(module, 1), "cli_tok_s": round(max(rates), 1),
                      "module_over_cli": round(module / max(rates), 3)}), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", required=True, type=Path)
    parser.add_argument("--tiny", required=True, type=Path)
    parser.add_argument("--dense", type=Path)
    parser.add_argument("--decode-tokens", type=int, default=256)
    args = parser.parse_args()
    sys.path.insert(0, str(args.build / "python"))
    import strata  # noqa: E402 (the module the build laid out)
    check_tiny(strata, args.build / "strata", args.tiny)
    if args.dense:
        check_speed(strata, args.build / "strata", args.dense, args.decode_tokens)


if __name__ == "__main__":
    main()
