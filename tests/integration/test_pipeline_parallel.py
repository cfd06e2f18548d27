"""`--pipeline-parallel-size N`: rank 0 starts N - 1 copies of itself, stage s loads and runs its
layers, hidden states go forward and the logits come back to stage 0. `strata logits` equals one
process's logits bit for bit (and within 1e-5 with `--tp 2` inside each stage); `strata generate`
and `strata serve` give one process's greedy tokens, with one micro-batch in flight per stage (with
or without `--tp` inside the stages), with preemption, prefix hits, forks and n-gram speculation too (draft-model, MTP and EAGLE-3
speculation: test_tensor_parallel_speculative.py); sizes that do not fit are clear errors; no stage outlives the server, and a killed stage
fails requests and /health, not the server."""
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from pytest_paths import BINARY, FIXTURES  # noqa: E402
from strata_server import Server  # noqa: E402
from test_tensor_parallel import (NGRAM, PROMPTS, SHARED, TOKENS,  # noqa: E402
                                  expect_a_dead_rank_fails_requests_and_health, one_process_answers, rank_processes,
                                  read_logits)


def logits(tmp_path: Path, model: str, pp: int, tp: int = 1) -> np.ndarray:
    out = tmp_path / f"{model}-tp{tp}-pp{pp}.safetensors"
    result = subprocess.run([str(BINARY), "logits", "--model", str(FIXTURES / "hf" / model), "--device", "cpu",
                             "--threads", "1", "--tokens", TOKENS, "--prefill", "30", "--chunk", "8",
                             "--out", str(out), "--pipeline-parallel-size", str(pp), "--tp", str(tp)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return read_logits(out)


# Every stage count up to the fixture's layers (at most 4): llama 3, qwen3_next 4 (stage 0 of 2 holds
# no attention layer), mamba2 2, nemotron_h 4 (M-*-), deepseek_v3 3 (MLA, which tensor parallelism
# does not split).
@pytest.mark.parametrize("model,sizes", [("llama", (2, 3)), ("qwen3", (2, 3)), ("qwen3_moe", (2,)),
                                         ("qwen3_next", (2, 4)), ("mamba2", (2,)), ("nemotron_h", (2, 3, 4)),
                                         ("deepseek_v3", (2, 3))])
def test_stages_give_the_logits_of_one_process_bit_for_bit(tmp_path, model, sizes):
    if not (FIXTURES / "hf" / model).exists():
        pytest.skip(f"fixture {model} is missing")
    whole = logits(tmp_path, model, 1)
    for size in sizes:
        split = logits(tmp_path, model, size)
        assert split.shape == whole.shape
        assert np.array_equal(split, whole), size


@pytest.mark.parametrize("model", ["llama", "qwen3_next"])
def test_tensor_parallel_inside_each_stage(tmp_path, model):
    whole = logits(tmp_path, model, 1)
    split = logits(tmp_path, model, 2, tp=2)
    assert np.max(np.abs(split - whole)) < 1e-5
    assert not np.array_equal(split, whole)  # the heads did split (sums in another order)


def test_generate_over_stages_gives_the_tokens_of_one():
    def generate(pp: int) -> str:
        result = subprocess.run([str(BINARY), "generate", "--model", str(FIXTURES / "hf" / "llama"), "--device", "cpu",
                                 "--threads", "1", "--prompt-ids", TOKENS, "--max-tokens", "24", "--temperature", "0",
                                 "--ignore-eos", "--pp", str(pp)],
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        return result.stdout.strip()
    whole = generate(1)
    assert len(whole.split(",")) == 24
    assert generate(3) == whole


def completions(server: Server, prompts, n: int = 1) -> list[list[str]]:
    def one(prompt):
        reply = server.client().completions.create(model=server.model, prompt=prompt, max_tokens=40, n=n,
                                                   temperature=0, extra_body={"ignore_eos": True})
        return [choice.text for choice in sorted(reply.choices, key=lambda c: c.index)]
    with ThreadPoolExecutor(len(prompts)) as pool:
        return list(pool.map(one, prompts))


# (model, prompts, extra flags, layout): 24 blocks of 16 tokens cannot hold 12 sequences of up to 160
# tokens, so the scheduler preempts and swaps KV blocks and SSM slots of every stage to host memory
# and back, in the host rows stage 0 chose (qwen3_next's stage 0 holds no attention layer, stage 1
# the KV); hybrids take, free and copy SSM slots for prefix hits on every stage, and speculation
# rolls verify rows back.
SERVED = [
    ("qwen3", PROMPTS, ["--no-enable-prefix-caching"], ["--pp", "3"]),
    ("qwen3_next", SHARED, [], ["--pp", "2"]),
    ("mamba2", SHARED, ["--speculative-config", NGRAM], ["--pp", "2"]),
    ("qwen3", SHARED, [], ["--pp", "2", "--tp", "2"]),
]


@pytest.mark.parametrize("model,prompts,extra,layout", SERVED, ids=["qwen3-pp3", "qwen3_next-pp2", "mamba2-ngram-pp2",
                                                                    "qwen3-tp2-pp2"])
def test_serve_over_stages_answers_as_one_process_even_when_preempted(model, prompts, extra, layout):
    args, expected = one_process_answers(model, prompts, extra)
    split = Server([*args, *layout], "pp-split")
    try:
        sizes = dict(zip(layout[::2], layout[1::2]))
        num_ranks = int(sizes["--pp"]) * int(sizes.get("--tp", 1))
        assert len(rank_processes(split.proc.pid, "pipeline-parallel")) == num_ranks - 1
        assert [texts[0] for texts in completions(split, prompts)] == expected  # n = 1: one text each
        metrics = split.metrics()
        if "--speculative-config" not in extra:  # its point is the roll backs; whether it preempts depends on timing
            assert metrics["strata:num_preemptions_total"] > 0
            assert metrics["strata:swap_out_bytes_total"] > 0
        # Without speculation micro-batches run, at most one a stage, with or without --tp inside;
        # whether a third stage ever gets one depends on how the 12 requests meet the 24 blocks in
        # time (tests/engine/pipeline_micro_batches_test.cpp asserts one a stage exactly).
        in_flight = metrics["strata:pipeline_max_micro_batches_in_flight"]
        if "--speculative-config" in extra:
            assert in_flight == 0
        else:
            assert 2 <= in_flight <= int(sizes["--pp"])
    finally:
        assert split.stop() == 0
    time.sleep(0.5)
    assert rank_processes(split.proc.pid, "pipeline-parallel") == []


def test_forks_copy_kv_blocks_on_the_stage_that_holds_the_attention():
    """qwen3_next over 2 stages: the only attention layer is on stage 1; n = 2 forks a prompt whose last
    block is partial, and the copy of that block has to reach stage 1."""
    path = FIXTURES / "hf" / "qwen3_next"
    args = ["--model", str(path), "--max-model-len", "256", "--no-enable-prefix-caching"]
    prompts = [SHARED[0][:37], SHARED[5][:45]]
    one = Server(args, "pp1-fork")
    try:
        expected = completions(one, prompts, n=2)
    finally:
        one.stop()
    split = Server([*args, "--pp", "2"], "pp2-fork")
    try:
        assert completions(split, prompts, n=2) == expected
    finally:
        split.stop()


def test_a_dead_stage_fails_requests_and_health_but_not_the_server():
    expect_a_dead_rank_fails_requests_and_health(["--pp", "2"], "pipeline-parallel")


@pytest.mark.parametrize("flags,message", [
    (["--pp", "4"], "--pipeline-parallel-size 4 exceeds the model's 3 layers"),
])
def test_what_does_not_fit_is_an_error(tmp_path, flags, message):
    result = subprocess.run([str(BINARY), "generate", "--model", str(FIXTURES / "hf" / "llama"), "--device", "cpu",
                             "--prompt-ids", "1,2,3", "--max-tokens", "2", *flags],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert message in result.stderr


def test_data_parallel_with_stages_is_an_error():
    result = subprocess.run([str(BINARY), "serve", "--model", str(FIXTURES / "hf" / "qwen3"), "--device", "cpu",
                             "--pp", "2", "--dp", "2"], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "--data-parallel-size 2 does not combine with --pipeline-parallel-size 2 yet" in result.stderr
