"""`--data-parallel-size N`: N engine replicas (each its own KV cache, scheduler and engine
thread, sharing the weights on the CPU) behind one server. Greedy answers equal one engine's;
concurrent requests spread over the replicas (vLLM's per-engine metrics show it); a prompt that
shares a long prefix with an earlier one goes to the replica that cached it, even when that
replica is busier, and reports the cached tokens; a client that leaves cancels on its replica;
bad sizes are clear errors."""
import re
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pytest_paths import BINARY, FIXTURES, LOCAL_FIXTURES  # noqa: E402
from strata_server import Server, get  # noqa: E402

MODEL = FIXTURES / "hf" / "qwen3"
ARGS = ["--model", str(MODEL), "--max-model-len", "256", "--num-kv-blocks", "96", "--max-num-seqs", "16"]
PROMPTS = [[(i * 13 + j * 7 + 3) % 200 for i in range(12 + 3 * j)] for j in range(16)]
SHARED = [(i * 29 + 5) % 190 + 3 for i in range(64)]  # four whole blocks of 16


@pytest.fixture(scope="module")
def dp2():
    if not MODEL.exists():
        pytest.skip("fixture qwen3 is missing")
    server = Server([*ARGS, "--data-parallel-size", "2"], "dp2")
    yield server
    assert server.stop() == 0


def per_engine(server: Server, name: str) -> dict[int, float]:
    """vllm:NAME per replica, from its engine="i" label."""
    values = {}
    for line in get(server.url + "/metrics")[1].splitlines():
        m = re.match(r'vllm:' + name + r'\{.*engine="(\d+)"\} (\S+)$', line)
        if m:
            values[int(m.group(1))] = float(m.group(2))
    return values


def delta(after: dict[int, float], before: dict[int, float]) -> dict[int, float]:
    return {i: after[i] - before.get(i, 0) for i in after}


def completions(server: Server) -> list[str]:
    def one(prompt):
        reply = server.client().completions.create(model=server.model, prompt=prompt, max_tokens=24,
                                                   temperature=0, extra_body={"ignore_eos": True})
        return reply.choices[0].text
    with ThreadPoolExecutor(len(PROMPTS)) as pool:
        return list(pool.map(one, PROMPTS))


def test_replicas_answer_as_one_engine_and_share_the_load(dp2):
    one = Server(ARGS, "dp1")
    try:
        expected = completions(one)
    finally:
        one.stop()
    before = per_engine(dp2, "e2e_request_latency_seconds_count")
    prompt_before = per_engine(dp2, "prompt_tokens_total")
    assert completions(dp2) == expected
    finished = delta(per_engine(dp2, "e2e_request_latency_seconds_count"), before)
    prompt_tokens = delta(per_engine(dp2, "prompt_tokens_total"), prompt_before)
    assert sorted(finished) == [0, 1] and sum(finished.values()) == 16
    assert min(finished.values()) >= 4, finished  # 16 at once alternate between two idle replicas
    assert min(prompt_tokens.values()) > 0 and sum(prompt_tokens.values()) == sum(map(len, PROMPTS))
    assert dp2.metrics()["strata:num_requests_running"] == 0


def cached_tokens(reply) -> int:
    details = reply.usage.prompt_tokens_details
    return details.cached_tokens if details is not None else reply.usage.model_extra["prompt_tokens_details"]["cached_tokens"]


def test_a_shared_prefix_goes_to_the_replica_that_cached_it_even_when_busier(dp2):
    client = dp2.client()
    hits_before = per_engine(dp2, "prefix_cache_hits_total")
    first = client.completions.create(model=dp2.model, prompt=SHARED + [7], max_tokens=4, temperature=0)
    assert cached_tokens(first) == 0  # both replicas idle: the lowest index, replica 0, takes it
    # A long request keeps replica 0 busier than replica 1 (idle replicas tie, and 0 takes it).
    busy = client.completions.create(model=dp2.model, prompt=[9, 8, 7], max_tokens=200, temperature=0,
                                     stream=True, extra_body={"ignore_eos": True})
    next(iter(busy))
    second = client.completions.create(model=dp2.model, prompt=SHARED + [8], max_tokens=4, temperature=0)
    busy.close()
    assert cached_tokens(second) == 64  # four whole blocks; the last prompt token is computed
    assert delta(per_engine(dp2, "prefix_cache_hits_total"), hits_before) == {0: 64.0, 1: 0.0}


def test_a_client_that_leaves_cancels_on_its_replica(dp2):
    aborted = dp2.metrics().get("strata:request_aborted_total", 0)
    client = dp2.client()
    streams = [client.completions.create(model=dp2.model, prompt=[5 + i, 6, 7], max_tokens=200, temperature=0,
                                         stream=True, extra_body={"ignore_eos": True}) for i in range(2)]
    for stream in streams:
        next(iter(stream))
    for stream in streams:
        stream.close()
    deadline = time.time() + 30
    while time.time() < deadline and dp2.metrics().get("strata:request_aborted_total", 0) < aborted + 2:
        time.sleep(0.05)
    metrics = dp2.metrics()
    assert metrics["strata:request_aborted_total"] == aborted + 2
    assert metrics["strata:num_requests_running"] == 0


def test_n_choices_and_health_over_replicas(dp2):
    reply = dp2.client().completions.create(model=dp2.model, prompt=PROMPTS[3], max_tokens=8, temperature=0, n=2)
    assert len(reply.choices) == 2 and reply.choices[0].text == reply.choices[1].text
    assert get(dp2.url + "/health")[0] == 200


def test_embeddings_and_lora_adapters_over_replicas():
    """Pooling requests and per-request adapters live on whichever replica takes them."""
    embedding = LOCAL_FIXTURES / "hf" / "qwen3_embedding"
    tensors = load_file(str(embedding / "reference.safetensors"))
    server = Server([str(embedding), "--max-model-len", "256", "--data-parallel-size", "2"], "dp2-embed")
    try:
        ids = [tensors[f"tokens_{i}"].tolist() for i in range(4)]
        with ThreadPoolExecutor(4) as pool:
            got = list(pool.map(lambda i: server.client().embeddings.create(
                model=server.model, input=ids[i], encoding_format="float").data[0].embedding, range(4)))
        for i in range(4):
            assert np.abs(np.array(got[i]) - tensors[f"embedding_{i}"]).max() < 1e-4, i
    finally:
        assert server.stop() == 0
    lora = FIXTURES / "lora" / "qwen3"
    args = ["--model", str(MODEL), "--max-model-len", "256", "--lora-modules", f"all_r8={lora / 'adapter_all_r8'}"]
    answers = []
    for extra in [[], ["--data-parallel-size", "2"]]:
        server = Server([*args, *extra], "lora")
        try:
            with ThreadPoolExecutor(8) as pool:
                answers.append(list(pool.map(lambda job: server.client().completions.create(
                    model=job[0], prompt=PROMPTS[job[1]], max_tokens=12, temperature=0).choices[0].text,
                    [(name, i) for name in ["all_r8", server.model] for i in range(4)])))
        finally:
            server.stop()
    assert answers[1] == answers[0] and answers[0][:4] != answers[0][4:]


@pytest.mark.parametrize("size", ["0", "-1", "x"])
def test_a_bad_size_is_a_clear_error(size):
    result = subprocess.run([str(BINARY), "serve", "--model", str(MODEL), "--port", "0", f"--data-parallel-size={size}"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "--data-parallel-size" in result.stderr + result.stdout


def test_tensor_parallel_does_not_combine_yet():
    if not MODEL.exists():
        pytest.skip("fixture qwen3 is missing")
    result = subprocess.run([str(BINARY), "serve", "--model", str(MODEL), "--port", "0", "--data-parallel-size", "2",
                             "--tensor-parallel-size", "2"], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "--data-parallel-size 2 does not combine with --tensor-parallel-size 2 yet" in result.stderr
