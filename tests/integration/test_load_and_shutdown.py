"""Load, disconnects and shutdown on the embedded SmolLM2, each on a server of its own and
bounded in time: 256 concurrent streams all complete with the right number of tokens and
leave the engine idle (nothing running or waiting, no KV block held); 100 streams cut by the
client after their first chunks leave it idle just as fast and are not counted as successes;
SIGTERM during 20 streams lets them finish, answers new requests with 503 and exits 0."""
import concurrent.futures as cf
import json
import signal
import time

import httpx
import pytest

from conftest import SMOL, Server, request

PROMPT = "Hi"  # one token: the CPU time goes to the streams, not to prefill


@pytest.fixture
def smol_server():
    if not SMOL.exists():
        pytest.skip(f"SmolLM2 is not at {SMOL}; run scripts/setup.sh")
    servers = []

    def start(*args):
        # All clients come from 127.0.0.1: lift the per-client connection cap past the 256 streams.
        servers.append(Server(["--max-model-len", "256", "--num-kv-blocks", "2048",
                               "--max-connections-per-client", "512", *args], "load"))
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


def wait_idle(server, timeout):
    """The metrics once nothing runs or waits and every KV block is free; fails at `timeout` s."""
    deadline = time.time() + timeout
    while True:
        m = server.metrics()
        if m["strata:num_requests_running"] == 0 and m["strata:num_requests_waiting"] == 0 \
                and m["strata:kv_cache_usage_perc"] == 0:
            return m
        if time.time() > deadline:
            raise AssertionError(f"not idle {timeout} s after the load: running {m['strata:num_requests_running']}, "
                                 f"waiting {m['strata:num_requests_waiting']}, "
                                 f"kv usage {m['strata:kv_cache_usage_perc']}")
        time.sleep(0.2)


def stream(url, max_tokens, stop_after_chunks=None, timeout=120):
    """One streamed completion: (the choice's text deltas, finish reason, usage), or, with
    stop_after_chunks, the connection closed after that many data chunks."""
    body = {"prompt": PROMPT, "max_tokens": max_tokens, "stream": True, "ignore_eos": True, "temperature": 0,
            "stream_options": {"include_usage": True}}
    deltas, finish, usage = [], None, None
    with httpx.Client(timeout=timeout) as http, http.stream("POST", url + "/v1/completions", json=body) as resp:
        assert resp.status_code == 200, resp.read()
        for line in resp.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            for choice in chunk["choices"]:
                deltas.append(choice["text"])
                finish = choice["finish_reason"] or finish
            usage = chunk.get("usage") or usage
            if stop_after_chunks is not None and len(deltas) >= stop_after_chunks:
                return deltas, None, None  # leaving the with-blocks closes the connection
    return deltas, finish, usage


def test_256_concurrent_streams_complete_and_leave_the_engine_idle(smol_server):
    server = smol_server()  # 64 sequences at once (the default): the others queue
    max_tokens = 4
    started = time.time()
    with cf.ThreadPoolExecutor(256) as pool:
        results = list(pool.map(lambda _: stream(server.url, max_tokens), range(256)))
    for i, (deltas, finish, usage) in enumerate(results):
        assert finish == "length", f"stream {i}: finish {finish}"
        assert usage["completion_tokens"] == max_tokens, f"stream {i}: {usage}"
    assert len({"".join(d) for d, _, _ in results}) == 1, "greedy streams of one prompt differ"
    print(f"256 streams x {max_tokens} tokens in {time.time() - started:.1f} s")
    m = wait_idle(server, timeout=10)
    assert m["strata:generation_tokens_total"] == 256 * max_tokens


def test_100_streams_cut_after_first_chunks_leave_the_engine_idle(smol_server):
    server = smol_server()
    before = server.metrics()["strata:request_success_total"]
    started = time.time()
    with cf.ThreadPoolExecutor(100) as pool:
        cut = list(pool.map(lambda _: stream(server.url, 200, stop_after_chunks=2), range(100)))
    assert all(len(deltas) == 2 for deltas, _, _ in cut)
    m = wait_idle(server, timeout=30)
    print(f"100 cut streams idle after {time.time() - started:.1f} s, {m['strata:generation_tokens_total']} tokens")
    # 100 x 200 tokens would take minutes here: the cut requests were cancelled, not run out.
    assert m["strata:generation_tokens_total"] < 100 * 200 / 4
    assert m["strata:request_success_total"] == before, "cancelled requests were counted as successes"
    _, finish, usage = stream(server.url, 4)  # still serving (the finish may come in a chunk of its own)
    assert finish == "length" and usage["completion_tokens"] == 4


def test_sigterm_during_20_streams_finishes_them_refuses_new_and_exits_0(smol_server):
    server = smol_server("--max-num-seqs", "32")
    max_tokens = 24
    with cf.ThreadPoolExecutor(20) as pool:
        futures = [pool.submit(stream, server.url, max_tokens) for _ in range(20)]
        deadline = time.time() + 30
        while server.metrics()["strata:num_requests_running"] < 20 and time.time() < deadline:
            time.sleep(0.05)
        server.proc.send_signal(signal.SIGTERM)
        deadline = time.time() + 10
        while not any("shutting down" in line for line in server.log) and time.time() < deadline:
            time.sleep(0.02)
        status, text = request(server.url + "/v1/completions", {"prompt": PROMPT, "max_tokens": 2})
        assert status == 503, text
        assert json.loads(text)["error"]["type"] == "service_unavailable"
        results = [f.result(timeout=60) for f in futures]
    for i, (deltas, finish, usage) in enumerate(results):
        assert finish == "length" and usage["completion_tokens"] == max_tokens, f"stream {i}: {finish} {usage}"
    assert server.proc.wait(timeout=30) == 0
