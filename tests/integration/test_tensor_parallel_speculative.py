"""Speculative decoding with a draft model under `--tensor-parallel-size 2`: the draft (the llama
fixture, same vocabulary) runs whole on rank 0, the target (qwen3) verifies its guesses over both
ranks, and greedy answers equal the plain server's token for token, drafts kept and rejected
alike; an EAGLE-3 head likewise, reading the split target's whole embedding. MTP stays refused with a message naming what combines."""
import json
import subprocess

import pytest

from conftest import BINARY, FIXTURES, LOCAL_FIXTURES
from strata_server import Server
from test_speculative import generate, repetitive_prompt
from test_tiny_model import complete


def test_a_draft_model_over_two_ranks_keeps_the_greedy_tokens():
    model, draft = FIXTURES / "hf" / "qwen3", FIXTURES / "hf" / "llama"
    if not draft.exists():
        pytest.skip(f"fixture model {draft} is missing")
    prompts = [repetitive_prompt(seed) for seed in range(3)]
    plain = Server(["--model", str(model), "--max-model-len", "256"], "spec_tp_plain")
    try:
        want = [complete(plain.client(), plain.model, p, max_tokens=30).choices[0].model_extra["token_ids"]
                for p in prompts]
    finally:
        plain.stop()
    speculative = json.dumps({"model": str(draft), "num_speculative_tokens": 3})
    server = Server(["--model", str(model), "--max-model-len", "256", "--tensor-parallel-size", "2",
                     "--speculative-config", speculative], "spec_tp_draft")
    try:
        got = [complete(server.client(), server.model, p, max_tokens=30).choices[0].model_extra["token_ids"]
               for p in prompts]
        m = server.metrics()
    finally:
        server.stop()
    assert got == want
    assert m["strata:spec_decode_num_draft_tokens_total"] > 0
    assert m["strata:spec_decode_num_accepted_tokens_total"] < m["strata:spec_decode_num_draft_tokens_total"]


def test_an_eagle3_head_over_a_split_vocabulary_keeps_the_greedy_tokens():
    """The head has no embedding of its own: rank 0 loads the target's whole table for it, while the
    target's ranks hold their rows of it."""
    model, head = FIXTURES / "hf" / "llama", LOCAL_FIXTURES / "hf" / "llama_eagle3_echo"
    eagle3 = json.dumps({"method": "eagle3", "model": str(head), "num_speculative_tokens": 3})
    assert generate(model, "--speculative-config", eagle3, "--tensor-parallel-size", "2") == generate(model)


def test_mtp_over_ranks_is_refused_with_what_combines():
    r = subprocess.run([str(BINARY), "generate", "--model", str(LOCAL_FIXTURES / "hf" / "qwen3_next_mtp"),
                        "--prompt-ids", "5,9,14", "--max-tokens", "4", "--tensor-parallel-size", "2",
                        "--speculative-config", '{"method": "mtp", "num_speculative_tokens": 2}'],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0
    assert "method 'mtp' does not combine with --tensor-parallel-size" in r.stderr
