"""`strata bench serve` against a live server (SmolLM2: its tokenizer makes the prompts), and
`strata bench latency` / `strata bench throughput` in-process on the tiny Qwen3 fixture."""
import json
import re
import subprocess

import pytest

from conftest import BINARY, FIXTURES

TINY = FIXTURES / "hf" / "qwen3"


def run(args, timeout=180):
    if not BINARY.exists():
        pytest.skip(f"{BINARY} is not built")
    return subprocess.run([str(BINARY), "bench", *args], capture_output=True, text=True, timeout=timeout)


def test_bench_serve_random_completions(smol, tmp_path):
    r = run(["serve", "--base-url", smol.url, "--num-prompts", "4", "--random-input-len", "32",
             "--random-output-len", "8", "--ignore-eos", "--max-concurrency", "2", "--seed", "1",
             "--percentile-metrics", "ttft,tpot,itl,e2el", "--metric-percentiles", "50,99", "--goodput", "e2el:600000",
             "--save-result", "--result-dir", str(tmp_path), "--result-filename", "serve.json"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "============ Serving Benchmark Result ============" in r.stdout
    assert re.search(r"Successful requests:\s+4\b", r.stdout)
    result = json.loads((tmp_path / "serve.json").read_text())
    assert result["completed"] == 4 and result["failed"] == 0
    assert result["num_prompts"] == 4 and result["max_concurrency"] == 2 and result["request_rate"] == "inf"
    assert result["total_output_tokens"] == 4 * 8  # ignore_eos: the server's usage counts every token
    assert 0 < result["total_input_tokens"] <= 4 * 32
    for key in ("mean_ttft_ms", "p99_ttft_ms", "mean_tpot_ms", "median_itl_ms", "p50_e2el_ms",
                "request_throughput", "output_throughput", "total_token_throughput"):
        assert result[key] > 0, key
    assert result["model_id"] == smol.model
    assert result["request_goodput"] == pytest.approx(result["request_throughput"])  # a 10-minute objective


def test_bench_serve_sharegpt_chat_paced(smol, tmp_path):
    turn = "Tell me something about the history of the city of Paris in a few words."
    data = [{"conversations": [{"from": "human", "value": f"{turn} ({i})"}, {"from": "gpt", "value": turn}]}
            for i in range(3)]
    (tmp_path / "sharegpt.json").write_text(json.dumps(data))
    r = run(["serve", "--base-url", smol.url, "--backend", "openai-chat", "--dataset-name", "sharegpt",
             "--dataset-path", str(tmp_path / "sharegpt.json"), "--sharegpt-output-len", "4", "--num-prompts", "3",
             "--request-rate", "20", "--burstiness", "2", "--save-detailed", "--result-dir", str(tmp_path),
             "--result-filename", "chat.json", "--metadata", "machine=ci", "--disable-tqdm"])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Request rate configured (RPS):           20.00" in r.stdout
    result = json.loads((tmp_path / "chat.json").read_text())
    assert result["completed"] == 3 and result["endpoint_type"] == "openai-chat"
    assert result["burstiness"] == 2.0 and result["request_rate"] == 20.0 and result["machine"] == "ci"
    assert len(result["ttfts"]) == 3 and all(t > 0 for t in result["ttfts"])
    assert all(0 < n <= 4 for n in result["output_lens"])


def test_bench_serve_token_id_prompts_without_a_tokenizer(tiny, tmp_path):
    """The tiny fixture has no tokenizer.json (as dummy-weight configs): prompts go as token ids."""
    r = run(["serve", "--base-url", tiny.url, "--num-prompts", "4", "--random-input-len", "16",
             "--random-output-len", "4", "--ignore-eos", "--save-result", "--result-filename",
             str(tmp_path / "tiny.json")])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "sending token-id prompts" in r.stdout
    result = json.loads((tmp_path / "tiny.json").read_text())
    assert result["completed"] == 4 and result["total_input_tokens"] == 4 * 16
    assert result["total_output_tokens"] == 4 * 4
    # As many in flight as the server takes connections from one client (64): connections are
    # reused, so none is refused while the server has yet to see an earlier one close.
    r = run(["serve", "--base-url", tiny.url, "--num-prompts", "256", "--random-input-len", "8",
             "--random-output-len", "2", "--max-concurrency", "64", "--disable-tqdm", "--save-result",
             "--result-filename", str(tmp_path / "tiny64.json")])
    assert r.returncode == 0, r.stdout + r.stderr
    result = json.loads((tmp_path / "tiny64.json").read_text())
    assert result["completed"] == 256 and result["failed"] == 0
    chat = run(["serve", "--base-url", tiny.url, "--num-prompts", "1", "--endpoint", "/v1/chat/completions"])
    assert chat.returncode != 0 and "--tokenizer" in chat.stderr


def test_bench_serve_without_a_server_says_so():
    r = run(["serve", "--port", "1", "--num-prompts", "1", "--tokenizer", str(TINY)], timeout=30)
    assert r.returncode != 0
    assert "/v1/models" in r.stderr


def test_bench_latency_and_throughput_in_process(tmp_path):
    if not TINY.exists():
        pytest.skip(f"fixture model {TINY} is missing")
    model = ["--model", str(TINY), "--device", "cpu", "--threads", "2"]
    r = run(["latency", *model, "--input-len", "16", "--output-len", "4", "--batch-size", "2",
             "--num-iters-warmup", "1", "--num-iters", "3", "--output-json", str(tmp_path / "latency.json")])
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"^Avg latency: [\d.e-]+ seconds$", r.stdout, re.M)
    assert "99% percentile latency:" in r.stdout
    latency = json.loads((tmp_path / "latency.json").read_text())
    assert len(latency["latencies"]) == 3 and latency["avg_latency"] > 0
    assert set(latency["percentiles"]) == {"10", "25", "50", "75", "90", "99"}

    r = run(["throughput", *model, "--input-len", "16", "--output-len", "4", "--num-prompts", "6",
             "--output-json", str(tmp_path / "throughput.json")])
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"^Throughput: [\d.]+ requests/s, [\d.]+ total tokens/s, [\d.]+ output tokens/s$", r.stdout, re.M)
    throughput = json.loads((tmp_path / "throughput.json").read_text())
    assert throughput["num_requests"] == 6 and throughput["total_num_tokens"] == 6 * (16 + 4)
    assert throughput["requests_per_second"] > 0 and throughput["elapsed_time"] > 0
