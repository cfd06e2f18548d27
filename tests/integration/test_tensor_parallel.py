"""`--tensor-parallel-size N`: rank 0 starts N - 1 copies of itself, each loads its part of the
heads (attention's, Gated DeltaNet's, Mamba-2's), MLP columns, MoE experts (every expert's
columns, or whole experts with `--enable-expert-parallel`) and vocabulary rows. `strata logits`
equals one rank's logits (f32 within 1e-5) for prefill, chunked prefill and decode; `strata generate` and
`strata serve` give one rank's greedy tokens, with preemption and swap to host memory too; a size that does not fit the model is a clear error,
never a hang; no rank outlives the server."""
import json
import os
import signal
import struct
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pytest_paths import BINARY, FIXTURES, LOCAL_FIXTURES  # noqa: E402
from strata_server import Server, get, request  # noqa: E402

TOKENS = ",".join(str((i * 37 + 11) % 200) for i in range(40))


def read_logits(path: Path) -> np.ndarray:
    data = path.read_bytes()
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + header_len])
    entry = header["logits"]
    begin, end = entry["data_offsets"]
    raw = data[8 + header_len + begin:8 + header_len + end]
    return np.frombuffer(raw, dtype=np.float32).reshape(entry["shape"])


def fixture_dir(model: str) -> Path:
    """The shared fixture, or the one written for this repository."""
    path = FIXTURES / "hf" / model
    return path if path.exists() else LOCAL_FIXTURES / "hf" / model


def logits(tmp_path: Path, model: str, size: int, extra=(), model_dir: Path | None = None) -> np.ndarray:
    out = tmp_path / f"{model}-tp{size}{''.join(extra)}.safetensors"
    result = subprocess.run([str(BINARY), "logits", "--model", str(model_dir or fixture_dir(model)), "--device",
                             "cpu", "--threads", "1", "--tokens", TOKENS, "--prefill", "30", "--chunk", "8",
                             "--out", str(out), "--tensor-parallel-size", str(size), *extra],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return read_logits(out)


MOE = ["qwen3_moe", "mixtral", "gpt_oss", "qwen3_next", "deepseek_v3", "deepseek_v4"]
# Whole experts by range, each rank routing its slice of the tokens and sending them to their experts' ranks.
DISPATCH = ["--enable-expert-parallel", "--expert-dispatch", "all-to-all"]


# MoE models split every expert's intermediate columns (64, 256, 256, 64, 64, 32 here), or with
# --enable-expert-parallel their experts by range (8, 4, 4, 8, 8, 8), with or without the tokens
# dispatched to their experts' ranks (--expert-dispatch all-to-all); DeepSeek-V3 its latent
# attention's heads too, DeepSeek-V4 its query heads by output group (40 tokens close 10 CSA
# windows, more than index_topk 3). Hybrid models split their recurrent heads too; Qwen3-Next's
# 2 Gated DeltaNet key heads and DeepSeek-V4's 2 o_groups stop at 2 ranks.
@pytest.mark.parametrize("model", ["llama", "qwen3", *MOE, "mamba2", "nemotron_h"])
def test_split_ranks_give_the_logits_of_one(tmp_path, model):
    if not fixture_dir(model).exists():
        pytest.skip(f"fixture {model} is missing")
    whole = logits(tmp_path, model, 1)
    for extra in ([], ["--enable-expert-parallel"], DISPATCH) if model in MOE else ([],):
        for size in (2,) if model in ("qwen3_next", "deepseek_v4") else (2, 4):
            split = logits(tmp_path, model, size, extra)
            assert split.shape == whole.shape
            assert np.max(np.abs(split - whole)) < 1e-5, (size, extra)
            assert np.array_equal(np.argmax(split, axis=1), np.argmax(whole, axis=1))


def refused_logits(tmp_path: Path, model_dir: Path, size: int) -> str:
    """`strata logits` over `size` ranks, which must fail without writing its output: its stderr."""
    out = tmp_path / "x.safetensors"
    result = subprocess.run([str(BINARY), "logits", "--model", str(model_dir), "--device", "cpu", "--tokens", "1,2,3",
                             "--out", str(out), "--tensor-parallel-size", str(size)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert not out.exists()
    return result.stderr


def test_experts_that_do_not_split_by_columns_suggest_expert_parallelism(tmp_path):
    """FP8 experts of 128 columns: two ranks would cut down_proj's 128-value blocks (and this
    fixture's o_proj too, so it does not split at all)."""
    stderr = refused_logits(tmp_path, LOCAL_FIXTURES / "hf" / "qwen3_moe_fp8", 2)
    assert ("which --tensor-parallel-size 2 cuts into 64 columns a rank; choose a size that keeps blocks whole (1), "
            "or add --enable-expert-parallel to give each rank 4 of the 8 experts whole") in stderr


def test_a_padded_vocabulary_splits_too(tmp_path):
    """300 tokens: padded to 384 rows over 2 ranks and 512 over 4 (rank 3 holds padding only);
    qwen3 ties its LM head to the embedding, llama does not. Dummy weights."""
    for model in ("qwen3", "llama"):
        config = json.loads((FIXTURES / "hf" / model / "config.json").read_text())
        config["vocab_size"] = 300
        model_dir = tmp_path / f"{model}-vocab-300"
        model_dir.mkdir()
        (model_dir / "config.json").write_text(json.dumps(config))
        whole = logits(tmp_path, model, 1, ("--load-format", "dummy"), model_dir)
        assert whole.shape == (40, 300)
        for size in (2, 4):
            split = logits(tmp_path, model, size, ("--load-format", "dummy"), model_dir)
            assert split.shape == whole.shape
            assert np.max(np.abs(split - whole)) < 1e-5 * max(1.0, np.max(np.abs(whole))), (model, size)


def test_a_size_that_does_not_divide_the_heads_is_an_error(tmp_path):
    stderr = refused_logits(tmp_path, FIXTURES / "hf" / "llama", 3)
    assert "--tensor-parallel-size 3 does not divide num_attention_heads (4)" in stderr


def test_a_model_whose_layers_do_not_split_is_an_error(tmp_path):
    """ModernBERT's fused Wqkv and Wi do not split yet."""
    stderr = refused_logits(tmp_path, fixture_dir("modernbert_embedding"), 2)
    assert "does not split over tensor-parallel ranks yet" in stderr


def test_a_size_that_does_not_divide_the_output_groups_is_an_error(tmp_path):
    """DeepSeek-V4's ranks take whole groups of its output projection: 4 do not divide its 2."""
    stderr = refused_logits(tmp_path, fixture_dir("deepseek_v4"), 4)
    assert "--tensor-parallel-size 4 does not divide o_groups (2)" in stderr


def generate(model: str, size: int) -> str:
    result = subprocess.run([str(BINARY), "generate", "--model", str(FIXTURES / "hf" / model), "--device", "cpu",
                             "--threads", "1", "--prompt-ids", TOKENS, "--max-tokens", "24", "--temperature", "0",
                             "--ignore-eos", "--tensor-parallel-size", str(size)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_generate_over_ranks_gives_the_tokens_of_one():
    if not (FIXTURES / "hf" / "llama").exists():
        pytest.skip("fixture llama is missing")
    whole = generate("llama", 1)
    assert len(whole.split(",")) == 24
    assert generate("llama", 2) == whole


def rank_processes(group_of: int, kind: str = "tensor-parallel") -> list[str]:
    """The command lines of live ranks that rank 0 (pid group_of) started."""
    short = "tp" if kind == "tensor-parallel" else "pp"
    found = subprocess.run(["pgrep", "-a", "-f", f"{kind}-group strata-{short}-{group_of}-"],
                           capture_output=True, text=True).stdout
    return [line for line in found.splitlines() if "pgrep" not in line]


PROMPTS = [[(i * 13 + j * 7 + 3) % 200 for i in range(20 + 9 * j)] for j in range(12)]
# Four groups of three prompts that share 48 tokens: prefix hits, and on hybrids SSM snapshots.
SHARED = [[(i * 11 + g) % 200 for i in range(48)] + [(i * 5 + j) % 200 for i in range(10 + 7 * j)]
          for g in range(4) for j in range(3)]


def completions(server: Server, prompts) -> list[str]:
    def one(prompt):
        reply = server.client().completions.create(model=server.model, prompt=prompt, max_tokens=40,
                                                   temperature=0, extra_body={"ignore_eos": True})
        return reply.choices[0].text
    with ThreadPoolExecutor(len(prompts)) as pool:
        return list(pool.map(one, prompts))


def one_process_answers(model, prompts, extra) -> tuple[list[str], list[str]]:
    """The serve flags of a 24-block pool that preempts and swaps, and one process's answers with them."""
    path = fixture_dir(model)
    if not path.exists():
        pytest.skip(f"fixture {model} is missing")
    args = ["--model", str(path), "--max-model-len", "256", "--num-kv-blocks", "24", "--max-num-seqs", "12",
            "--swap-space", "1", *extra]
    one = Server(args, "one-process")
    try:
        return args, completions(one, prompts)
    finally:
        one.stop()


NGRAM = '{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_min": 1, "prompt_lookup_max": 3}'
# (model, prompts, extra flags): a pool of 24 blocks of 16 tokens cannot hold 12 sequences of up to
# 160 tokens at once, so the scheduler preempts and swaps KV blocks (and SSM slots) of every rank
# to host memory and back; hybrids also take, free and copy SSM slots for prefix hits, and
# speculation rolls their verify rows back.
SERVED = [
    ("qwen3", PROMPTS, ["--no-enable-prefix-caching"]),
    ("qwen3_moe", PROMPTS, []),
    ("qwen3_moe", PROMPTS, ["--enable-expert-parallel"]),
    ("qwen3_moe", PROMPTS, DISPATCH),
    ("qwen3_next", SHARED, []),
    ("mamba2", SHARED, []),
    ("mamba2", SHARED, ["--speculative-config", NGRAM]),
    ("qwen4_exp", SHARED, []),  # hyper-connection streams, PLE carries and QSA over 2 ranks
    ("deepseek_v4", SHARED, []),  # mHC streams, CSA / HCA with the indexer whole, heads by output group
]


@pytest.mark.parametrize("model,prompts,extra", SERVED,
                         ids=["qwen3", "qwen3_moe", "qwen3_moe-ep", "qwen3_moe-a2a", "qwen3_next", "mamba2",
                              "mamba2-ngram", "qwen4_exp", "deepseek_v4"])
def test_serve_over_ranks_answers_as_one_rank_even_when_preempted_and_swapped(model, prompts, extra):
    args, expected = one_process_answers(model, prompts, extra)
    split = Server([*args, "--tensor-parallel-size", "2"], "tp2")
    try:
        assert len(rank_processes(split.proc.pid)) == 1
        assert completions(split, prompts) == expected
        metrics = split.metrics()
        assert metrics["strata:num_preemptions_total"] > 0
        assert metrics["strata:swap_out_bytes_total"] > 0
    finally:
        assert split.stop() == 0
    time.sleep(0.5)
    assert rank_processes(split.proc.pid) == []


def expect_a_dead_rank_fails_requests_and_health(flags: list[str], kind: str):
    """Serves qwen3 split by `flags` into two processes and kills the one rank 0 started."""
    model = FIXTURES / "hf" / "qwen3"
    if not model.exists():
        pytest.skip("fixture qwen3 is missing")
    server = Server(["--model", str(model), "--max-model-len", "256", *flags], f"{kind}-dead-rank")
    try:
        (rank,) = rank_processes(server.proc.pid, kind)
        os.kill(int(rank.split()[0]), signal.SIGKILL)
        time.sleep(0.2)
        reply = request(server.url + "/v1/completions", {"model": server.model, "prompt": [1, 2, 3], "max_tokens": 4})
        assert reply[0] >= 500
        assert f"{kind} group is lost" in reply[1]
        assert get(server.url + "/health")[0] == 503
        assert server.proc.poll() is None
    finally:
        server.stop()


def test_a_dead_rank_fails_requests_and_health_but_not_the_server():
    expect_a_dead_rank_fails_requests_and_health(["--tensor-parallel-size", "2"], "tensor-parallel")
