"""Engine limits and failures end to end (docs/serving.md, "Engine limits and failures"): a step
that fails is a 500 (an error event when streamed) and the server keeps serving; a lost device
turns /health 503 and the process exits non-zero; what the engine could never serve is a 400
naming the flag; SIGTERM with a queued request of several choices still exits."""
import json
import signal
import threading
import time

from conftest import FIXTURES, Server, get, request

PROMPT = {"prompt": [5, 6, 7], "max_tokens": 5, "ignore_eos": True}


def tiny_server(name, *args):
    return Server([str(FIXTURES / "hf" / "qwen3"), "--max-model-len", "256", *args], name)


def error_message(text):
    return json.loads(text)["error"]["message"]


def test_a_failed_step_is_a_500_and_the_server_keeps_serving():
    server = tiny_server("step_fault", "--inject-step-fault", "2")  # the first request's first decode
    try:
        status, text = request(server.url + "/v1/completions", PROMPT)
        assert status == 500 and "injected fault in step 2" in error_message(text), text
        status, text = request(server.url + "/v1/completions", PROMPT)
        assert status == 200, text
        status, text = request(server.url + "/v1/completions", {**PROMPT, "stream": True})
        assert status == 200 and text.rstrip().endswith("data: [DONE]"), text
        assert get(server.url + "/health")[0] == 200
        metrics = server.metrics()
        assert metrics["strata:request_failed_total"] == 1
        assert metrics["strata:request_success_total"] == 2
        assert metrics["strata:num_requests_running"] == 0
        assert metrics["strata:kv_cache_usage_perc"] == 0
    finally:
        assert server.stop() == 0
    assert any("request 1 failed: injected fault in step 2" in line for line in server.log)


def test_a_lost_device_fails_requests_turns_health_503_and_exits_non_zero():
    server = tiny_server("device_lost", "--inject-step-fault", "2:sticky")
    status, text = request(server.url + "/v1/completions", PROMPT)
    assert status == 500 and "injected fault" in error_message(text), text
    assert get(server.url + "/health")[0] in (503, 0)  # 0: already gone
    assert server.proc.wait(timeout=30) != 0
    assert any("device failure" in line for line in server.log), "".join(server.log)


def test_a_prompt_over_the_step_budget_without_chunked_prefill_is_a_400():
    server = tiny_server("no_chunking", "--no-enable-chunked-prefill", "--max-num-batched-tokens", "32")
    try:
        status, text = request(server.url + "/v1/completions", {**PROMPT, "prompt": list(range(1, 41))})
        assert status == 400 and "--max-num-batched-tokens 32" in error_message(text), text
        assert request(server.url + "/v1/completions", {**PROMPT, "prompt": list(range(1, 31))})[0] == 200
    finally:
        assert server.stop() == 0


def test_prompts_times_n_is_bounded(tiny):
    status, text = request(tiny.url + "/v1/completions", {"prompt": [[1, 2]] * 9, "n": 128, "max_tokens": 1})
    assert status == 400, text
    err = json.loads(text)["error"]
    assert err["param"] == "n" and "1152" in err["message"] and "256" in err["message"]


def test_sigterm_with_a_queued_request_of_several_choices_exits():
    server = Server([str(FIXTURES / "hf" / "qwen3"), "--max-model-len", "4096", "--max-num-seqs", "1"], "queued_n")
    results = {}

    def send(key, body):
        results[key] = request(server.url + "/v1/completions", body)

    running = threading.Thread(target=send, args=("running", {**PROMPT, "max_tokens": 4000}))
    running.start()
    time.sleep(0.3)
    queued = threading.Thread(target=send, args=("queued", {**PROMPT, "max_tokens": 4000, "n": 3}))
    queued.start()
    time.sleep(0.3)
    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(timeout=40) == 0
    running.join(timeout=10)
    queued.join(timeout=10)
    status, text = results["queued"]
    assert status == 200, text
    choices = json.loads(text)["choices"]
    assert len(choices) == 3 and all(c["finish_reason"] in ("length", "abort") for c in choices)
