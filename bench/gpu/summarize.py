#!/usr/bin/env python3
"""Reads the JSON lines of gpu_decode_bench and hf_baseline.py and prints one markdown
table: Strata's figures, the roofline, and the ratio to transformers at the same point.
With --engine / --hf-engine / --startup: the engine workload (engine_throughput_bench
against transformers' generate_batch, the 20x target) and serve start-up (the 15 s target).
With --lab: gpu_moe_bench's dense kernels side by side, TB/s per shape and row count.
  summarize.py [STRATA_JSONL [HF_JSONL]] [--engine F] [--hf-engine F] [--startup F] [--lab F]"""
import argparse
import json

ENGINE_TARGET_RATIO = 20.0  # Strata / transformers output tok/s on the engine workload
STARTUP_TARGET_S = 15.0     # launch to the first answered completion


def load(path):
    try:
        with open(path) as f:
            return [json.loads(l) for l in f if l.strip().startswith("{")]
    except FileNotFoundError:
        return []


def last(records, bench):
    return next((r for r in reversed(records) if r.get("bench") == bench), None)


def engine_table(engine_path, hf_path, startup_path):
    runs = [r for r in load(engine_path) if r.get("bench") == "engine_throughput"] if engine_path else []
    ours = runs[-1] if runs else None
    sync = next((r for r in reversed(runs) if r.get("async_scheduling") is False), None)
    peer = last(load(hf_path), "engine_throughput") if hf_path else None
    start = last(load(startup_path), "serve_startup") if startup_path else None
    print("| engine workload | Strata | transformers | Strata / transformers | target |")
    print("| --- | --- | --- | --- | --- |")
    if ours:
        shape = f"{ours['requests']} x {ours['prompt_tokens']} prompt -> {ours['output_tokens']} tokens"
        peer_ok = peer and "output_tok_s" in peer
        ratio = ours["output_tok_s"] / peer["output_tok_s"] if peer_ok else None
        verdict = f"{ENGINE_TARGET_RATIO:.0f}x: {'met' if ratio >= ENGINE_TARGET_RATIO else 'missed'}" if ratio else \
            f"{ENGINE_TARGET_RATIO:.0f}x"
        peer_txt = f"{peer['output_tok_s']:.0f} ({peer['requests']} requests)" if peer_ok else "-"
        ratio_txt = f"{ratio:.2f}x" if ratio else "-"
        mode = "async scheduling" if ours.get("async_scheduling") else "synchronous step loop"
        print(f"| output tok/s, {shape}, {mode} | {ours['output_tok_s']:.0f} | {peer_txt} | {ratio_txt} | {verdict} |")
        if sync and sync is not ours:
            print(f"| output tok/s, synchronous step loop | {sync['output_tok_s']:.0f} | | "
                  f"async / sync {ours['output_tok_s'] / sync['output_tok_s']:.3f}x | |")
        peer_total = f"{peer['total_tok_s']:.0f}" if peer_ok else "-"
        peer_wall = f"{peer['wall_s']:.2f}" if peer_ok else "-"
        print(f"| total tok/s | {ours['total_tok_s']:.0f} | {peer_total} | | |")
        print(f"| wall s | {ours['wall_s']:.2f} | {peer_wall} | | |")
        print(f"| TTFT ms mean / p50 / p99 | {ours['ttft_ms_mean']:.0f} / {ours['ttft_ms_p50']:.0f} / "
              f"{ours['ttft_ms_p99']:.0f} | | | |")
        print(f"| TPOT ms mean / p50 / p99 | {ours['tpot_ms_mean']:.2f} / {ours['tpot_ms_p50']:.2f} / "
              f"{ours['tpot_ms_p99']:.2f} | | | |")
    else:
        print("| output tok/s | no engine_throughput line | | | |")
    if start:
        got = start.get("startup_s")
        verdict = f"{STARTUP_TARGET_S:.0f} s: {'met' if got is not None and got <= STARTUP_TARGET_S else 'missed'}"
        got_txt = f"{got:.1f}" if got is not None else start.get("error", "failed")
        print(f"| serve start-up s (launch to first completion) | {got_txt} | | | {verdict} |")
    if hf_path and not peer:
        print(f"\ntransformers: no engine_throughput line in {hf_path} (see hf_engine.log beside it)")
    for r in (ours, peer, start):
        if r and ("error" in r or "note" in r or "warning" in r):
            print(f"\n{r['bench']}: {json.dumps({k: r[k] for k in ('error', 'note', 'warning', 'log_tail') if k in r})}")


def main():
    p = argparse.ArgumentParser(usage=__doc__)
    p.add_argument("strata", nargs="?", default="")
    p.add_argument("hf", nargs="?", default="")
    p.add_argument("--engine", default="")
    p.add_argument("--hf-engine", default="")
    p.add_argument("--startup", default="")
    p.add_argument("--lab", default="")
    a = p.parse_args()
    if a.lab:
        lab_table(load(a.lab))
    if a.engine or a.hf_engine or a.startup:
        engine_table(a.engine, a.hf_engine, a.startup)
    if a.strata:
        decode_table(load(a.strata), load(a.hf) if a.hf else [])


def lab_table(records):
    """One row per (shape, rows) of the dense linears, one column per kernel, in TB/s."""
    dense = [r for r in records if "pairs" not in r and "kernel" in r]
    kernels = list(dict.fromkeys(r["kernel"] for r in dense))
    cells = {}
    for r in dense:
        cells.setdefault((r["shape"], r["tokens"]), {})[r["kernel"]] = r
    print("| shape | rows | " + " | ".join(kernels) + " |")
    print("| --- | --- | " + " | ".join("---" for _ in kernels) + " |")
    for (shape, rows), by_kernel in cells.items():
        row = [f"{by_kernel[k]['tb_s']:.2f} ({by_kernel[k]['us']:.0f} us)" if k in by_kernel else "-" for k in kernels]
        print(f"| {shape} | {rows} | " + " | ".join(row) + " |")


def decode_table(strata, hf):
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
