"""`strata serve --speculative-config` (n-gram drafts, a draft model, the checkpoint's MTP layers, an
EAGLE-3 head): greedy completions, streamed or not, are the ones the server without speculation
returns, a seeded sampled request replays, and /metrics counts drafts, accepted drafts and
acceptance per position; `strata generate --speculative-config` with MTP or EAGLE-3 prints the
plain tokens; a head that does not fit its target is refused at start-up."""
import json
import random
import subprocess

from conftest import BINARY, FIXTURES, LOCAL_FIXTURES, Server
from test_tiny_model import complete, stream_complete


def repetitive_prompt(seed):
    rng = random.Random(seed)
    half = [rng.randrange(3, 500) for _ in range(6 + seed % 5)]
    return half + half


def test_greedy_output_equals_plain_server(tiny, tiny_speculative):
    for seed in range(6):
        prompt = repetitive_prompt(seed)
        want = complete(tiny.client(), tiny.model, prompt, max_tokens=40).choices[0].model_extra["token_ids"]
        got = complete(tiny_speculative.client(), tiny_speculative.model, prompt, max_tokens=40)
        assert got.choices[0].model_extra["token_ids"] == want, seed
        assert got.usage.completion_tokens == 40
        _, streamed = stream_complete(tiny_speculative.client(), tiny_speculative.model, prompt, max_tokens=40)
        assert streamed == want, seed
    m = tiny_speculative.metrics()
    assert m["strata:spec_decode_num_draft_tokens_total"] > 0
    assert 0 < m["strata:spec_decode_num_accepted_tokens_total"] <= m["strata:spec_decode_num_draft_tokens_total"]


def test_bad_speculative_config_names_the_problem():
    r = subprocess.run([str(BINARY), "serve", str(FIXTURES / "hf" / "qwen3"), "--speculative-config",
                        '{"method": "eagle", "num_speculative_tokens": 2}'], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "method 'eagle' is not supported" in r.stderr


def test_draft_model_greedy_output_equals_plain_server(tiny, tiny_draft):
    for seed in range(4):
        prompt = repetitive_prompt(seed)
        want = complete(tiny.client(), tiny.model, prompt, max_tokens=30).choices[0].model_extra["token_ids"]
        got = complete(tiny_draft.client(), tiny_draft.model, prompt, max_tokens=30)
        assert got.choices[0].model_extra["token_ids"] == want, seed
        _, streamed = stream_complete(tiny_draft.client(), tiny_draft.model, prompt, max_tokens=30)
        assert streamed == want, seed
    sampled = [complete(tiny_draft.client(), tiny_draft.model, [5, 6, 7], max_tokens=20, extra={"temperature": 1.0},
                        seed=11).choices[0].model_extra["token_ids"] for _ in range(2)]
    assert sampled[0] == sampled[1]
    m = tiny_draft.metrics()
    assert m["strata:spec_decode_num_drafts_total"] > 0
    assert m["strata:spec_decode_num_draft_tokens_total"] >= m["strata:spec_decode_num_drafts_total"]
    assert 0 < m["strata:spec_decode_num_accepted_tokens_total"] <= m["strata:spec_decode_num_draft_tokens_total"]


def test_draft_model_with_another_vocabulary_is_refused(tmp_path):
    config = json.loads((FIXTURES / "hf" / "qwen3" / "config.json").read_text())
    config["vocab_size"] = 1000
    (tmp_path / "config.json").write_text(json.dumps(config))
    r = subprocess.run([str(BINARY), "serve", str(FIXTURES / "hf" / "qwen3"), "--load-format", "dummy",
                        "--speculative-config", json.dumps({"model": str(tmp_path), "num_speculative_tokens": 2})],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "vocabulary of 1000 tokens" in r.stderr


def generate(model, *extra):
    r = subprocess.run([str(BINARY), "generate", "--model", str(model), "--prompt-ids", "5,9,14,3,77,5,9",
                        "--max-tokens", "24", "--temperature", "0", "--ignore-eos", *extra],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip().splitlines()[-1]


def served_metrics_with_plain_tokens(model, speculative, name):
    """Serves `model` with and without `speculative`; asserts equal greedy tokens; returns the metrics."""
    plain = Server(["--model", str(model), "--max-model-len", "256"], f"{name}_plain")
    server = Server(["--model", str(model), "--max-model-len", "256", "--speculative-config", speculative],
                    f"{name}_served")
    try:
        for seed in range(3):
            prompt = repetitive_prompt(seed)
            want = complete(plain.client(), plain.model, prompt, max_tokens=30).choices[0].model_extra["token_ids"]
            got = complete(server.client(), server.model, prompt, max_tokens=30)
            assert got.choices[0].model_extra["token_ids"] == want, seed
        return server.metrics()
    finally:
        plain.stop()
        server.stop()


def test_mtp_generate_and_serve_keep_greedy_tokens():
    model = LOCAL_FIXTURES / "hf" / "qwen3_next_mtp"
    mtp = json.dumps({"method": "mtp", "num_speculative_tokens": 2})
    assert generate(model, "--speculative-config", mtp) == generate(model)
    m = served_metrics_with_plain_tokens(model, mtp, "mtp")
    assert m["strata:spec_decode_num_draft_tokens_total"] >= m["strata:spec_decode_num_drafts_total"] > 0


def test_eagle3_generate_and_serve_keep_greedy_tokens():
    # The echo head's drafts are often kept (scripts/fixtures/make_eagle3_fixture.py --echo).
    model, head = FIXTURES / "hf" / "llama", LOCAL_FIXTURES / "hf" / "llama_eagle3_echo"
    eagle3 = json.dumps({"method": "eagle3", "model": str(head), "num_speculative_tokens": 3})
    assert generate(model, "--speculative-config", eagle3) == generate(model)
    m = served_metrics_with_plain_tokens(model, eagle3, "eagle3")
    assert m["strata:spec_decode_num_draft_tokens_total"] > m["strata:spec_decode_num_drafts_total"] > 0
    assert m["strata:spec_decode_num_accepted_tokens_total"] > 0


def test_eagle3_head_that_does_not_fit_is_refused(tmp_path):
    head = LOCAL_FIXTURES / "hf" / "llama_eagle3"
    config = json.loads((head / "config.json").read_text())
    config["target_hidden_size"] = 64
    (tmp_path / "config.json").write_text(json.dumps(config))
    (tmp_path / "model.safetensors").symlink_to(head / "model.safetensors")
    for path, message in ((tmp_path, "hidden size 64"), (tmp_path / "missing", "is not a folder")):
        r = subprocess.run([str(BINARY), "serve", str(FIXTURES / "hf" / "llama"), "--speculative-config",
                            json.dumps({"method": "eagle3", "model": str(path), "num_speculative_tokens": 2})],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode != 0
        assert message in r.stderr, r.stderr


def test_mtp_on_a_checkpoint_without_mtp_weights_is_refused():
    r = subprocess.run([str(BINARY), "serve", str(FIXTURES / "hf" / "qwen3_next"), "--speculative-config",
                        '{"method": "mtp", "num_speculative_tokens": 2}'], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "multi-token-prediction weights (mtp.*)" in r.stderr
