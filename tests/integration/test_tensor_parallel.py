"""`strata logits --tensor-parallel-size N`: rank 0 starts N - 1 copies of itself, each loads its
part of the heads and MLP columns, and the logits equal one rank's (f32 within 1e-5) for prefill,
chunked prefill and decode; a size that does not fit the model is a clear error, never a hang."""
import json
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pytest_paths import BINARY, FIXTURES  # noqa: E402

TOKENS = ",".join(str((i * 37 + 11) % 200) for i in range(40))


def read_logits(path: Path) -> np.ndarray:
    data = path.read_bytes()
    (header_len,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + header_len])
    entry = header["logits"]
    begin, end = entry["data_offsets"]
    raw = data[8 + header_len + begin:8 + header_len + end]
    return np.frombuffer(raw, dtype=np.float32).reshape(entry["shape"])


def logits(tmp_path: Path, model: str, size: int) -> np.ndarray:
    out = tmp_path / f"{model}-tp{size}.safetensors"
    result = subprocess.run([str(BINARY), "logits", "--model", str(FIXTURES / "hf" / model), "--device", "cpu",
                             "--threads", "1", "--tokens", TOKENS, "--prefill", "30", "--chunk", "8",
                             "--out", str(out), "--tensor-parallel-size", str(size)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return read_logits(out)


# MoE models split their experts by range (expert parallelism): 8, 4 and 4 experts here.
@pytest.mark.parametrize("model", ["llama", "qwen3", "qwen3_moe", "mixtral", "gpt_oss"])
def test_split_ranks_give_the_logits_of_one(tmp_path, model):
    if not (FIXTURES / "hf" / model).exists():
        pytest.skip(f"fixture {model} is missing")
    whole = logits(tmp_path, model, 1)
    for size in (2, 4):
        split = logits(tmp_path, model, size)
        assert split.shape == whole.shape
        assert np.max(np.abs(split - whole)) < 1e-5, size
        assert np.array_equal(np.argmax(split, axis=1), np.argmax(whole, axis=1))


def test_a_size_that_does_not_divide_the_heads_is_an_error(tmp_path):
    result = subprocess.run([str(BINARY), "logits", "--model", str(FIXTURES / "hf" / "llama"), "--device", "cpu",
                             "--tokens", "1,2,3", "--out", str(tmp_path / "x.safetensors"),
                             "--tensor-parallel-size", "3"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "--tensor-parallel-size 3 does not divide num_attention_heads (4)" in result.stderr
    assert not (tmp_path / "x.safetensors").exists()


def test_a_model_whose_layers_do_not_split_is_an_error(tmp_path):
    """Qwen3-Next's Gated DeltaNet layers do not split (its MoE layers would)."""
    result = subprocess.run([str(BINARY), "logits", "--model", str(FIXTURES / "hf" / "qwen3_next"), "--device", "cpu",
                             "--tokens", "1,2,3", "--out", str(tmp_path / "x.safetensors"),
                             "--tensor-parallel-size", "2"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "does not split over tensor-parallel ranks yet" in result.stderr
