"""Fixtures that start the real `strata serve` on a free loopback port and wait for /health.

Servers: `smol` (the embedded SmolLM2 GGUF from the default cache path; tests skip when it is
absent), `tiny` (the random-weight Qwen3 fixture, token-id prompts only: fast enough for the
64-stream tests), and small special-purpose ones (API key, body limit, CORS and ignored unknown
fields, the chat page off, a Qwen3 folder with a real tokenizer for the tools template), and the
pooling models `embedder` and `reranker` (tests/fixtures/hf). Fixtures come from ../shared/fixtures
beside the repo unless named otherwise.
"""
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pytest_paths import BINARY, FIXTURES, LOCAL_FIXTURES, SMOL  # noqa: E402
from fixture_folders import qwen3_with_tokenizer  # noqa: E402
from strata_server import Server, get, request  # noqa: E402,F401 (tests import them from here)


@pytest.fixture(scope="session")
def smol():
    if not SMOL.exists():
        pytest.skip(f"SmolLM2 is not at {SMOL}; run scripts/setup.sh")
    server = Server(["--max-model-len", "1024", "--num-kv-blocks", "2048", "--max-num-seqs", "64"], "smol")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def tiny():
    model = FIXTURES / "hf" / "qwen3"
    if not model.exists():
        pytest.skip(f"fixture model {model} is missing")
    server = Server(["--model", str(model), "--max-model-len", "256", "--num-kv-blocks", "2048",
                    "--max-num-seqs", "64"], "tiny")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def tiny_speculative():
    """The tiny fixture with n-gram speculative decoding on."""
    model = FIXTURES / "hf" / "qwen3"
    if not model.exists():
        pytest.skip(f"fixture model {model} is missing")
    server = Server(["--model", str(model), "--max-model-len", "256", "--speculative-config",
                     '{"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_min": 1, "prompt_lookup_max": 3}'],
                    "tiny_speculative")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def tiny_draft():
    """The tiny fixture with the llama fixture (same vocabulary) as its draft model."""
    model, draft = FIXTURES / "hf" / "qwen3", FIXTURES / "hf" / "llama"
    if not draft.exists():
        pytest.skip(f"fixture model {draft} is missing")
    server = Server(["--model", str(model), "--max-model-len", "256", "--speculative-config",
                     json.dumps({"model": str(draft), "num_speculative_tokens": 3})], "tiny_draft")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def tiny_lora():
    """The tiny fixture serving two PEFT adapters beside the base model."""
    model, lora = FIXTURES / "hf" / "qwen3", FIXTURES / "lora" / "qwen3"
    if not lora.exists():
        pytest.skip(f"LoRA fixtures {lora} are missing")
    server = Server(["--model", str(model), "--max-model-len", "256", "--lora-modules",
                     f"all_r8={lora / 'adapter_all_r8'}", f"attn_r4={lora / 'adapter_attn_r4'}"], "tiny_lora")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def tiny_with_key():
    server = Server([str(FIXTURES / "hf" / "qwen3"), "--api-key", "sekret", "--max-body-bytes", "2048",
                    "--served-model-name", "tiny-qwen", "--max-model-len", "128"], "tiny_with_key")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def tiny_cors():
    """The tiny fixture letting one browser origin in and ignoring unknown request fields."""
    server = Server([str(FIXTURES / "hf" / "qwen3"), "--max-model-len", "128", "--allowed-origins",
                     "http://localhost:3000", "--ignore-unknown-fields"], "tiny_cors")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def tiny_no_ui():
    """The tiny fixture with the chat page turned off."""
    server = Server([str(FIXTURES / "hf" / "qwen3"), "--max-model-len", "128", "--no-ui"], "tiny_no_ui")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def qwen3_tokenizer_model(tmp_path_factory):
    """The Qwen3 fixture weights beside the real Qwen3 tokenizer (whose template uses tools)."""
    folder = qwen3_with_tokenizer(tmp_path_factory.mktemp("qwen3_tok"))
    server = Server([str(folder), "--max-model-len", "256"], "qwen3_tokenizer")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def vision():
    """The Qwen3.5 fixture with a vision tower (tests/fixtures/hf/qwen3_5_vision) on the CPU,
    its own folder allowed for file:// images, at most 2 images of 10000 pixels a prompt."""
    model = LOCAL_FIXTURES / "hf" / "qwen3_5_vision"
    server = Server([str(model), "--device", "cpu", "--max-model-len", "256", "--allowed-local-media-path",
                     str(model), "--limit-mm-per-prompt", '{"image": 2}', "--max-image-pixels", "10000"], "vision")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def embedder():
    """The Qwen3-Embedding-style fixture (a sentence-transformers folder: pooling found from it),
    with a 16-token step budget so longer inputs run in chunks."""
    model = LOCAL_FIXTURES / "hf" / "qwen3_embedding"
    server = Server([str(model), "--max-model-len", "256", "--max-num-batched-tokens", "16",
                     "--served-model-name", "tiny-embed"], "embedder")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def reranker():
    """The one-label Qwen3ForSequenceClassification fixture (a cross-encoder)."""
    model = LOCAL_FIXTURES / "hf" / "qwen3_reranker"
    server = Server([str(model), "--max-model-len", "256", "--served-model-name", "tiny-rerank"], "reranker")
    yield server
    server.stop()


def load_reference(folder):
    """A fixture folder's reference.safetensors (as numpy arrays) and reference.json."""
    from safetensors.numpy import load_file
    return load_file(str(folder / "reference.safetensors")), json.loads((folder / "reference.json").read_text())
