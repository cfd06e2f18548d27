"""`--nnodes 2 --node-rank R --master-addr A --master-port P`: two "nodes" on this machine, each
started by hand, each starting only its own ranks; the ranks meet rank 0 over TCP. `strata
logits`, `strata generate` and `strata serve` over two nodes give one process's logits and greedy
tokens (--tp 2, and --tp 2 --pp 2); a node that never comes, a rank 0 nobody can reach, flags that
differ and an uneven split are clear errors in bounded time; a node that loses rank 0 exits saying so,
and a dead node 1 fails requests and /health on node 0, naming its rank."""
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from pytest_paths import BINARY, FIXTURES  # noqa: E402
from strata_server import Server, get, request  # noqa: E402
from test_tensor_parallel import PROMPTS, TOKENS, completions, one_process_answers, read_logits  # noqa: E402

LAYOUTS = {"tp2": ["--tp", "2"], "tp2-pp2": ["--tp", "2", "--pp", "2"]}


def free_port() -> int:
    """A port nobody listens on now; node 0 binds it a moment later (another test's pick differs)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def node_flags(rank: int, port: int, timeout: float = 60) -> list[str]:
    return ["--nnodes", "2", "--node-rank", str(rank), "--master-addr", "127.0.0.1", "--master-port", str(port),
            "--dist-timeout", str(timeout)]


def model_path(model: str) -> Path:
    path = FIXTURES / "hf" / model
    if not path.exists():
        pytest.skip(f"fixture {model} is missing")
    if not BINARY.exists():
        pytest.skip(f"{BINARY} is not built")
    return path


def run_on_two_nodes(args: list[str], timeout: float = 60) -> tuple[subprocess.CompletedProcess, str]:
    """Node 1 in the background, node 0 in the foreground; node 0's result and node 1's stderr."""
    port = free_port()
    node1 = subprocess.Popen([str(BINARY), *args, *node_flags(1, port, timeout)], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    try:
        node0 = subprocess.run([str(BINARY), *args, *node_flags(0, port, timeout)], capture_output=True, text=True,
                               timeout=120)
        _, node1_err = node1.communicate(timeout=60)
    finally:
        node1.kill()
        node1.wait()
    assert node0.returncode == 0, node0.stderr
    assert node1.returncode == 0, node1_err
    return node0, node1_err


def generate_args(model: str, layout: list[str]) -> list[str]:
    return ["generate", "--model", str(model_path(model)), "--device", "cpu", "--threads", "1", "--prompt-ids",
            TOKENS, "--max-tokens", "24", "--temperature", "0", "--ignore-eos", *layout]


@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=LAYOUTS.keys())
def test_generate_over_two_nodes_gives_the_tokens_of_one_process(layout):
    one = subprocess.run([str(BINARY), *generate_args("llama", [])], capture_output=True, text=True, timeout=120)
    assert one.returncode == 0, one.stderr
    assert len(one.stdout.strip().split(",")) == 24
    node0, _ = run_on_two_nodes(generate_args("llama", layout))
    assert node0.stdout.strip() == one.stdout.strip()


@pytest.mark.parametrize("layout", LAYOUTS.values(), ids=LAYOUTS.keys())
def test_logits_over_two_nodes_equal_one_process(tmp_path, layout):
    def args(out: Path, extra: list[str]) -> list[str]:
        return ["logits", "--model", str(model_path("qwen3")), "--device", "cpu", "--threads", "1", "--tokens",
                TOKENS, "--prefill", "30", "--chunk", "8", "--out", str(out), *extra]
    one = subprocess.run([str(BINARY), *args(tmp_path / "one.safetensors", [])], capture_output=True, text=True,
                         timeout=120)
    assert one.returncode == 0, one.stderr
    run_on_two_nodes(args(tmp_path / "nodes.safetensors", layout))
    whole, split = read_logits(tmp_path / "one.safetensors"), read_logits(tmp_path / "nodes.safetensors")
    assert split.shape == whole.shape
    assert np.max(np.abs(split - whole)) < 1e-5
    assert np.array_equal(np.argmax(split, axis=1), np.argmax(whole, axis=1))


def test_serve_over_two_nodes_answers_as_one_process_and_node_1_stops_with_it():
    model_path("qwen3")
    args, expected = one_process_answers("qwen3", PROMPTS, ["--no-enable-prefix-caching"])
    port = free_port()
    node1 = subprocess.Popen([str(BINARY), "serve", "--port", "0", "--threads", "2", *args, "--tp", "2", "--pp", "2",
                              *node_flags(1, port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        node0 = Server([*args, "--tp", "2", "--pp", "2", *node_flags(0, port)], "node 0")
        try:
            assert completions(node0, PROMPTS) == expected
            assert node0.metrics()["strata:num_preemptions_total"] > 0
        finally:
            assert node0.stop() == 0
        _, err = node1.communicate(timeout=30)
        assert node1.returncode == 0, err
    finally:
        node1.kill()
        node1.wait()


def test_a_node_that_loses_rank_0_exits_saying_so():
    model_path("llama")
    port = free_port()
    args = ["--model", str(FIXTURES / "hf" / "llama"), "--tp", "2"]
    node1 = subprocess.Popen([str(BINARY), "serve", "--port", "0", "--threads", "1", *args, *node_flags(1, port)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        node0 = Server([*args, *node_flags(0, port)], "node 0")
        node0.proc.kill()  # no stop message: node 1 only sees the link close
        node0.proc.wait()
        _, err = node1.communicate(timeout=30)
    finally:
        node1.kill()
        node1.wait()
    assert node1.returncode != 0
    assert f"rank 1: rank 0 (at 127.0.0.1:{port}) is gone during broadcast_bytes" in err


def test_a_dead_node_1_fails_requests_and_health_naming_its_rank():
    model_path("qwen3")
    port = free_port()
    args = ["--model", str(FIXTURES / "hf" / "qwen3"), "--max-model-len", "256", "--tp", "2"]
    node1 = subprocess.Popen([str(BINARY), "serve", "--port", "0", "--threads", "1", *args, *node_flags(1, port)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        node0 = Server([*args, *node_flags(0, port)], "node 0")
        try:
            node1.kill()
            node1.wait()
            status, body = request(node0.url + "/v1/completions",
                                   {"model": node0.model, "prompt": [1, 2, 3], "max_tokens": 4})
            assert status >= 500
            assert "the tensor-parallel group is lost" in body
            assert "rank 1 (node 1, 127.0.0.1:" in body
            assert get(node0.url + "/health")[0] == 503
        finally:
            node0.stop()
    finally:
        node1.kill()
        node1.wait()


def alone(node_rank: int) -> tuple[str, int]:
    """One node started without the other (a 2 s timeout): its stderr and the port; it must fail in bounded time."""
    port = free_port()
    start = time.monotonic()
    result = subprocess.run([str(BINARY), *generate_args("llama", ["--tp", "2"]), *node_flags(node_rank, port, 2)],
                            capture_output=True, text=True, timeout=60)
    assert time.monotonic() - start < 20
    assert result.returncode != 0
    return result.stderr, port


def test_a_node_that_never_comes_is_a_clear_error_in_bounded_time():
    err, port = alone(0)
    assert (f"multi-node start: node 1 (rank 1) did not arrive at 127.0.0.1:{port} within 2 s: start every node with "
            "the same --nnodes, --master-addr and --master-port and its own --node-rank") in err


def test_a_node_that_cannot_reach_rank_0_is_a_clear_error_in_bounded_time():
    err, port = alone(1)
    assert f"could not reach 127.0.0.1:{port} within" in err
    assert f"start node 0 with --master-addr 127.0.0.1 --master-port {port}" in err


def test_nodes_started_with_different_flags_are_refused_naming_the_flag():
    port = free_port()
    node1 = subprocess.Popen([str(BINARY), *generate_args("llama", ["--tp", "2", "--kv-cache-dtype", "fp8"]),
                              *node_flags(1, port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        node0 = subprocess.run([str(BINARY), *generate_args("llama", ["--tp", "2"]), *node_flags(0, port)],
                               capture_output=True, text=True, timeout=60)
        _, node1_err = node1.communicate(timeout=30)
    finally:
        node1.kill()
        node1.wait()
    want = ("multi-node start: node 1 was started with --kv-cache-dtype fp8, node 0 with --kv-cache-dtype auto: "
            "start every node with the same model and parallel flags")
    assert node0.returncode != 0 and want in node0.stderr
    assert node1.returncode != 0 and want in node1_err


@pytest.mark.parametrize("extra,message", [
    (["--tp", "2", "--nnodes", "3"], "--nnodes 3 does not split the 2 ranks (--tensor-parallel-size x "
                                     "--pipeline-parallel-size) evenly"),
    (["--nnodes", "2"], "--nnodes 2 spreads tensor- and pipeline-parallel ranks over machines; give "
                        "--tensor-parallel-size or --pipeline-parallel-size too"),
    (["--tp", "2", "--nnodes", "2", "--node-rank", "2"], "--node-rank 2 is not one of the 2 nodes: give 0 to 1"),
    (["--node-rank", "1"], "--node-rank 1 needs --nnodes"),
], ids=["uneven", "no-split", "node-rank-too-big", "node-rank-alone"])
def test_node_flags_that_do_not_fit_are_refused(extra, message):
    result = subprocess.run([str(BINARY), *generate_args("llama", extra)], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert message in result.stderr


@pytest.mark.parametrize("command", ["serve", "generate", "chat", "logits"])
def test_help_lists_the_node_flags_under_parallel(command):
    out = subprocess.run([str(BINARY), command, "--help"], capture_output=True, text=True, check=True).stdout
    parallel = out.split("\nParallel:\n")[1].split("\n\n")[0]
    for flag in ("--tensor-parallel-size", "--pipeline-parallel-size", "--nnodes", "--node-rank", "--master-addr",
                 "--master-port", "--dist-timeout"):
        assert flag in parallel, (command, flag)
