"""`--expert-dispatch all-to-all` with `--enable-expert-parallel`: each rank routes its slice of a
step's tokens and sends each (token, expert) pair to the rank holding the expert. `strata generate`
over 2 and 4 ranks gives one rank's greedy tokens on qwen3_moe (8 experts: 4 and 2 a rank); the
ranks rank 0 starts get the flag; a bad value, or dispatch without experts by range, is a clear
error. Logits and served answers with dispatch: test_tensor_parallel.py."""
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pytest_paths import BINARY, FIXTURES  # noqa: E402

TOKENS = ",".join(str((i * 37 + 11) % 200) for i in range(21))  # 21 tokens: steps that leave ranks short
MODEL = FIXTURES / "hf" / "qwen3_moe"


def generate(*flags: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(BINARY), "generate", "--model", str(MODEL), "--device", "cpu", "--threads", "1",
                           "--prompt-ids", TOKENS, "--max-tokens", "16", "--temperature", "0", "--ignore-eos", *flags],
                          capture_output=True, text=True, timeout=180)


@pytest.fixture(autouse=True)
def needs_fixture():
    if not MODEL.exists():
        pytest.skip("fixture qwen3_moe is missing")


def test_dispatched_tokens_give_the_greedy_tokens_of_one_rank():
    whole = generate("--tensor-parallel-size", "1")
    assert whole.returncode == 0, whole.stderr
    assert len(whole.stdout.strip().split(",")) == 16
    for size in ("2", "4"):
        split = generate("--tensor-parallel-size", size, "--enable-expert-parallel", "--expert-dispatch", "all-to-all")
        assert split.returncode == 0, split.stderr
        assert split.stdout.strip() == whole.stdout.strip(), size


def test_a_bad_dispatch_is_refused():
    result = generate("--tensor-parallel-size", "2", "--enable-expert-parallel", "--expert-dispatch", "sideways")
    assert result.returncode != 0
    assert "--expert-dispatch sideways: expected all-reduce or all-to-all" in result.stderr


def test_dispatch_needs_experts_by_range():
    result = generate("--tensor-parallel-size", "2", "--expert-dispatch", "all-to-all")
    assert result.returncode != 0
    assert ("model.layers.0.mlp: --expert-dispatch all-to-all sends tokens to the ranks that hold their experts; "
            "add --enable-expert-parallel") in result.stderr
