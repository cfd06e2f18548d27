"""What prefix-aware routers and gateways read from a vLLM server, read from `strata serve`:
KV-cache events over ZeroMQ (--kv-events-config; a SUB socket, msgpack-decoded: BlockStored for
a prompt's full blocks, BlockRemoved when they are evicted, AllBlocksCleared at shutdown, replay
of past batches) and /metrics under vLLM's names. The random-weight Qwen3 fixture, token-id
prompts, a KV pool of 20 blocks of 16 tokens so that new prompts evict old ones."""
import json
import random
import time

import msgpack
import pytest
import zmq

from conftest import FIXTURES, Server, get

TOPIC = "kv-events"
BLOCK = 16


def prompt(seed, n):
    rng = random.Random(seed)
    return [rng.randrange(3, 500) for _ in range(n)]


class Subscriber:
    """A SUB socket on the server's events, and a DEALER on its replay socket."""

    def __init__(self, endpoint, replay_endpoint):
        self.ctx = zmq.Context()
        self.sub = self.ctx.socket(zmq.SUB)
        self.sub.setsockopt(zmq.SUBSCRIBE, TOPIC.encode())
        self.sub.connect(endpoint)
        self.replay = self.ctx.socket(zmq.DEALER)
        self.replay.connect(replay_endpoint)
        self.batches = []  # (seq, payload bytes, decoded)

    def receive(self, timeout_ms=200):
        while self.sub.poll(timeout_ms):
            topic, seq, payload = self.sub.recv_multipart()
            assert topic == TOPIC.encode() and len(seq) == 8
            self.batches.append((int.from_bytes(seq, "big"), payload, msgpack.unpackb(payload)))

    def events(self):
        return [e for _, _, batch in self.batches for e in batch[1]]

    def wait_for(self, predicate, timeout=20):
        deadline = time.time() + timeout
        while time.time() < deadline:
            self.receive()
            if predicate(self.events()):
                return True
        return False

    def request_replay(self, start):
        """vLLM's replay: [empty, 8-byte start] in, [empty, seq, payload]... then [empty, -1, b""] out."""
        self.replay.send_multipart([b"", start.to_bytes(8, "big")])
        replies = []
        while self.replay.poll(5000):
            _, seq, payload = self.replay.recv_multipart()
            if int.from_bytes(seq, "big", signed=True) == -1:
                assert payload == b""
                return replies
            replies.append((int.from_bytes(seq, "big"), payload))
        raise AssertionError("the replay never ended")

    def close(self):
        self.ctx.destroy(linger=0)


@pytest.fixture(scope="module")
def routed(tmp_path_factory):
    model = FIXTURES / "hf" / "qwen3"
    if not model.exists():
        pytest.skip(f"fixture model {model} is missing")
    folder = tmp_path_factory.mktemp("kv_events")
    config = {"enable_kv_cache_events": True, "publisher": "zmq", "endpoint": f"ipc://{folder}/events",
              "replay_endpoint": f"ipc://{folder}/replay", "topic": TOPIC}
    server = Server(["--model", str(model), "--max-model-len", "256", "--num-kv-blocks", "20", "--max-num-seqs", "4",
                     "--served-model-name", "tiny-routed", "--kv-events-config", json.dumps(config)], "routed")
    sub = Subscriber(config["endpoint"], config["replay_endpoint"])
    time.sleep(0.5)  # the subscription reaches the publisher
    yield server, sub
    sub.close()
    server.stop()


def complete(server, ids, max_tokens=4):
    return server.client().completions.create(model=server.model, prompt=ids, max_tokens=max_tokens, temperature=0,
                                              extra_body={"ignore_eos": True})


def stored_chain(events):
    """hash -> (parent, tokens) of every block a BlockStored named."""
    chain = {}
    for e in events:
        if e["type"] == "BlockStored":
            assert e["block_size"] == BLOCK and e["medium"] == "GPU" and e["lora_id"] is None
            assert len(e["token_ids"]) == BLOCK * len(e["block_hashes"])
            parent = e["parent_block_hash"]
            for i, h in enumerate(e["block_hashes"]):
                assert isinstance(h, int)
                chain[h] = (parent, e["token_ids"][i * BLOCK:(i + 1) * BLOCK])
                parent = h
    return chain


def blocks_of(chain, ids):
    """The hashes of the chain that spell ids' full blocks from the start, or None."""
    by_parent = {(parent, tuple(tokens)): h for h, (parent, tokens) in chain.items()}
    hashes, parent = [], None
    for b in range(len(ids) // BLOCK):
        h = by_parent.get((parent, tuple(ids[b * BLOCK:(b + 1) * BLOCK])))
        if h is None:
            return None
        hashes.append(h)
        parent = h
    return hashes


def test_a_prompt_s_full_blocks_are_stored_then_evicted_and_replayed(routed):
    server, sub = routed
    first = prompt(1, 40)  # two full blocks
    complete(server, first)
    assert sub.wait_for(lambda ev: (blocks_of(stored_chain(ev), first[:32]) or []) != []), sub.events()
    first_blocks = blocks_of(stored_chain(sub.events()), first[:32])
    assert len(first_blocks) == 2
    batch = sub.batches[0][2]
    assert isinstance(batch[0], float) and abs(batch[0] - time.time()) < 60 and batch[2] == 0  # [ts, events, rank]

    # 20 blocks in all: three other 150-token prompts need them, and the least recently freed go first.
    for seed in (2, 3, 4):
        complete(server, prompt(seed, 150))
    assert sub.wait_for(lambda ev: set(first_blocks) <= {h for e in ev if e["type"] == "BlockRemoved"
                                                         for h in e["block_hashes"]}), sub.events()
    stored = stored_chain(sub.events())
    removed = [h for e in sub.events() if e["type"] == "BlockRemoved" for h in e["block_hashes"]]
    assert set(removed) <= set(stored)  # only what was stored is removed
    assert all(e["medium"] == "GPU" for e in sub.events() if e["type"] == "BlockRemoved")

    sub.receive(timeout_ms=500)  # the last requests' batches
    seqs = [seq for seq, _, _ in sub.batches]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # one apart, none lost
    replayed = sub.request_replay(seqs[0])
    assert replayed == [(seq, payload) for seq, payload, _ in sub.batches]


def vllm_metrics(server):
    """{name: value} of the vllm: samples, with the labels vLLM puts on them checked."""
    values = {}
    for line in get(server.url + "/metrics")[1].splitlines():
        if not line.startswith("vllm:"):
            continue
        key, value = line.rsplit(" ", 1)
        name, labels = key.split("{", 1)
        assert labels.startswith(f'model_name="{server.model}",engine="0"'), line
        if "_bucket" not in name:
            values[name] = float(value)
    return values


def test_metrics_under_vllm_names(routed):
    server, _ = routed
    repeated = prompt(9, 48)
    for _ in range(2):  # the second one hits the first's blocks
        complete(server, repeated, max_tokens=6)
    m = vllm_metrics(server)
    assert m["vllm:num_requests_running"] == 0 and m["vllm:num_requests_waiting"] == 0
    assert 0 <= m["vllm:kv_cache_usage_perc"] <= 1
    assert m["vllm:prompt_tokens_total"] >= 2 * len(repeated)
    assert m["vllm:generation_tokens_total"] >= 2 * 6
    assert m["vllm:prefix_cache_hits_total"] >= 32
    assert m["vllm:prefix_cache_queries_total"] >= m["vllm:prefix_cache_hits_total"]
    for histogram in ("time_to_first_token_seconds", "e2e_request_latency_seconds",
                      "request_time_per_output_token_seconds"):
        assert m[f"vllm:{histogram}_count"] >= 2 and m[f"vllm:{histogram}_sum"] > 0, histogram
    assert m["vllm:inter_token_latency_seconds_count"] >= 2 * 5


def test_all_blocks_cleared_at_shutdown(routed):
    server, sub = routed  # runs last in this module: it stops the server
    assert server.stop() == 0
    assert sub.wait_for(lambda ev: bool(ev) and ev[-1] == {"type": "AllBlocksCleared"}, timeout=10), sub.events()[-3:]
