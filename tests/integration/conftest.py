"""Fixtures that start the real `strata serve` on a free loopback port and wait for /health.

Servers: `smol` (the embedded SmolLM2 GGUF from the default cache path; tests skip when it is
absent), `tiny` (the random-weight Qwen3 fixture, token-id prompts only: fast enough for the
64-stream tests), and small special-purpose ones (API key, body limit, CORS and ignored unknown
fields, the chat page off, a Qwen3 folder with a real tokenizer for the tools template), and the
pooling models `embedder` and `reranker` (tests/fixtures/hf). Fixtures come from ../shared/fixtures
beside the repo unless named otherwise.
"""
import json
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import threading
import time
import urllib.request
from pathlib import Path

import openai
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pytest_paths import BINARY, FIXTURES, LOCAL_FIXTURES, SMOL  # noqa: E402
READY = re.compile(r"ready: serving model '([^']*)' .* on http://([\d.]+):(\d+)/v1")


class Server:
    """One `strata serve` process; `url` is http://127.0.0.1:PORT."""

    def __init__(self, args, name):
        if not BINARY.exists():
            pytest.skip(f"{BINARY} is not built")
        self.log = []
        self.proc = subprocess.Popen([str(BINARY), "serve", "--port", "0", "--threads", "2", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.url, self.model = self._wait_ready(name)
        self._drain = threading.Thread(target=self._read_rest, daemon=True)
        self._drain.start()
        self._wait_healthy()

    def _wait_ready(self, name):
        deadline = time.time() + 120
        for line in self.proc.stdout:
            self.log.append(line)
            m = READY.search(line)
            if m:
                return f"http://{m.group(2)}:{m.group(3)}", m.group(1)
            if time.time() > deadline:
                break
        self.stop()
        raise RuntimeError(f"{name} server did not start:\n" + "".join(self.log))

    def _read_rest(self):
        for line in self.proc.stdout:
            self.log.append(line)

    def _wait_healthy(self):
        for _ in range(200):
            if get(self.url + "/health")[0] == 200:
                return
            time.sleep(0.05)
        raise RuntimeError("server never became healthy")

    def client(self, **kw):
        return openai.OpenAI(base_url=self.url + "/v1", api_key=kw.pop("api_key", "none"), max_retries=0,
                             timeout=kw.pop("timeout", 120), **kw)

    def metrics(self):
        values = {}
        for line in get(self.url + "/metrics")[1].splitlines():
            if line.startswith("strata:") and "_bucket" not in line:
                key, value = line.rsplit(" ", 1)
                values[key.split("{")[0]] = float(value)
        return values

    def stop(self, sig=signal.SIGTERM, timeout=30):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def load_reference(folder):
    """A fixture folder's reference.safetensors (as numpy arrays) and reference.json."""
    from safetensors.numpy import load_file
    return load_file(str(folder / "reference.safetensors")), json.loads((folder / "reference.json").read_text())


def request(url, body=None, method=None, headers=None, raw=None):
    """(status, text) of an HTTP request; body is JSON-encoded unless raw bytes are given."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(url, data=data, method=method or ("POST" if data is not None else "GET"),
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def get(url):
    try:
        return request(url)
    except OSError as e:
        return 0, str(e)


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
    folder = tmp_path_factory.mktemp("qwen3_tok")
    for name in ("config.json", "model.safetensors"):
        (folder / name).symlink_to(FIXTURES / "hf" / "qwen3" / name)
    with tarfile.open(FIXTURES / "tokenizers" / "qwen3.tar.gz") as tar:
        for member in tar.getmembers():
            if Path(member.name).name in ("tokenizer.json", "tokenizer_config.json") and member.isfile():
                with tar.extractfile(member) as src, open(folder / Path(member.name).name, "wb") as dst:
                    shutil.copyfileobj(src, dst)
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
