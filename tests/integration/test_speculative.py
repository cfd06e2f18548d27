"""`strata serve --speculative-config` (n-gram drafts): greedy completions, streamed or not,
are the ones the server without speculation returns, and /metrics counts accepted drafts."""
import random
import subprocess

from conftest import BINARY, FIXTURES
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
