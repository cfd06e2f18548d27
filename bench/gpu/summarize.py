#!/usr/bin/env python3
"""Reads the JSON lines of gpu_decode_bench and hf_baseline.py and prints one markdown
table: Strata's figures, the roofline, and the ratio to transformers at the same point."""
import json
import sys


def load(path):
    try:
        with open(path) as f:
            return [json.loads(l) for l in f if l.strip().startswith("{")]
    except FileNotFoundError:
        return []


def main():
    strata, hf = load(sys.argv[1]), load(sys.argv[2]) if len(sys.argv) > 2 else []
    hf_decode = {}
    for r in hf:
        if r.get("bench") == "hf_decode" and "tok_s" in r:
            key = r["batch"]
            hf_decode[key] = max(hf_decode.get(key, 0), r["tok_s"])
    hf_prefill = next((r["tok_s"] for r in hf if r.get("bench") == "hf_prefill"), None)
    print("| bench | shape | Strata | roofline | of roofline | transformers (best) | Strata / transformers |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    model = ""
    for r in strata:
        b = r.get("bench")
        if b == "setup":
            model = r["model"].rstrip("/").split("/")[-1]
            ssm = f", {r['ssm_state_mb_per_seq']:.1f} MB SSM state per sequence" if r.get("ssm_state_mb_per_seq") else ""
            print(f"| **{model}** | {r['params'] / 1e9:.1f}B params, {r['weight_gb']:.1f} GB read per step{ssm} | | | | | |")
            continue
        hf_ok = model.startswith("llama")
        if b == "decode":
            other = hf_decode.get(r["batch"]) if hf_ok else None
            ratio = f"{r['tok_s'] / other:.2f}x" if other else "-"
            print(f"| decode tok/s | batch {r['batch']}, ctx {r['context']} | {r['tok_s']:.0f} "
                  f"({r['tok_s_with_logits_to_host']:.0f} with logits to host) | {r['roofline_tok_s']:.0f} | "
                  f"{r['fraction_of_roofline']:.0%} | {other and f'{other:.0f}' or '-'} | {ratio} |")
        elif b in ("prefill", "ttft"):
            other = hf_prefill if b == "prefill" and hf_ok else None
            ratio = f"{r['tok_s'] / other:.2f}x" if other else "-"
            print(f"| {b} | {r['tokens']} tokens | {r['tok_s']:.0f} tok/s ({r['ms']:.1f} ms) | "
                  f"{r['roofline_tok_s']:.0f} tok/s ({r['roofline_ms']:.1f} ms) | {r['fraction_of_roofline']:.0%} | "
                  f"{other and f'{other:.0f} tok/s' or '-'} | {ratio} |")
    for r in hf:
        if r.get("bench") in ("hf_generate_batch",) or "error" in r:
            print(f"\ntransformers: {json.dumps(r)}")


if __name__ == "__main__":
    main()
