"""Speculative decoding under `--tensor-parallel-size 2`, `--pipeline-parallel-size 2` or both. A draft
model (llama's fp8 copy) runs whole on rank 0 and the target (llama) verifies its guesses over
every rank (over the stages, as any step): greedy answers equal the plain server's token for token,
drafts kept and rejected alike. The checkpoint's MTP module, which rank 0 loads whole (layers,
embedding and LM head), reads the target's final-normed hidden states (over stages the last stage
sends them back with the logits): greedy tokens equal, drafts and acceptances equal one process's.
An EAGLE-3 head reads the split target's whole embedding under tensor parallelism; over stages the
chosen layers' input rows travel forward with the activations and come back after the logits."""
import json
import subprocess

import pytest

from conftest import BINARY, FIXTURES, LOCAL_FIXTURES
from strata_server import Server
from test_speculative import generate, repetitive_prompt
from test_tiny_model import complete

SPLITS = pytest.mark.parametrize("split", [["--tensor-parallel-size", "2"], ["--pipeline-parallel-size", "2"],
                                           ["--tensor-parallel-size", "2", "--pipeline-parallel-size", "2"]],
                                 ids=["tp2", "pp2", "tp2-pp2"])


def served_greedy_tokens(args, prompts, name):
    """Serves with `args`: each prompt's 30 greedy tokens, the metrics and the server's log."""
    server = Server(["--max-model-len", "256", *args], name)
    try:
        tokens = [complete(server.client(), server.model, p, max_tokens=30).choices[0].model_extra["token_ids"]
                  for p in prompts]
        return tokens, server.metrics(), server.log
    finally:
        server.stop()


@SPLITS
def test_a_draft_model_over_split_ranks_keeps_the_greedy_tokens(split):
    """llama's fp8 copy agrees with llama on most greedy tokens but not all: drafts kept and rejected."""
    model, draft = FIXTURES / "hf" / "llama", LOCAL_FIXTURES / "hf" / "llama_fp8"
    prompts = [repetitive_prompt(seed) for seed in range(3)]
    want, _, _ = served_greedy_tokens(["--model", str(model)], prompts, "spec_split_plain")
    speculative = json.dumps({"model": str(draft), "num_speculative_tokens": 3})
    got, m, _ = served_greedy_tokens(["--model", str(model), *split, "--speculative-config", speculative],
                                     prompts, "spec_split_draft")
    assert got == want
    assert 0 < m["strata:spec_decode_num_accepted_tokens_total"] < m["strata:spec_decode_num_draft_tokens_total"]


def test_an_eagle3_head_over_a_split_vocabulary_keeps_the_greedy_tokens():
    """The head has no embedding of its own: rank 0 loads the target's whole table for it, while the
    target's ranks hold their rows of it."""
    model, head = FIXTURES / "hf" / "llama", LOCAL_FIXTURES / "hf" / "llama_eagle3_echo"
    eagle3 = json.dumps({"method": "eagle3", "model": str(head), "num_speculative_tokens": 3})
    assert generate(model, "--speculative-config", eagle3, "--tensor-parallel-size", "2") == generate(model)


MTP = json.dumps({"method": "mtp", "num_speculative_tokens": 2})


@SPLITS
@pytest.mark.parametrize("fixture", ["qwen3_next_mtp", "qwen3_5_mtp"])
def test_mtp_over_split_ranks_generates_the_greedy_tokens(fixture, split):
    model = LOCAL_FIXTURES / "hf" / fixture
    assert generate(model, "--speculative-config", MTP, *split) == generate(model)


@SPLITS
def test_mtp_over_split_ranks_serves_the_greedy_tokens_and_one_process_drafts(split):
    """qwen3_5_mtp's target keeps some of its module's drafts after the last prompt (the engine tests'
    engine_prompt(7, 7)); qwen3_next_mtp's module, a random model's layer, gets none kept. The drafts
    and acceptances equal one process's MTP speculation's, so the module read the target's hidden
    states (over stages: the last stage's, sent back to stage 0)."""
    model = LOCAL_FIXTURES / "hf" / "qwen3_5_mtp"
    prompts = [repetitive_prompt(seed) for seed in range(2)] + [[(7 * 131 + i * 17) % 500 + 3 for i in range(7)]]
    want, _, _ = served_greedy_tokens(["--model", str(model)], prompts, "spec_split_mtp_plain")
    _, one, _ = served_greedy_tokens(["--model", str(model), "--speculative-config", MTP], prompts, "spec_one_mtp")
    got, m, log = served_greedy_tokens(["--model", str(model), *split, "--speculative-config", MTP], prompts,
                                       "spec_split_mtp")
    assert got == want
    assert 0 < m["strata:spec_decode_num_accepted_tokens_total"] < m["strata:spec_decode_num_draft_tokens_total"]
    for name in ("strata:spec_decode_num_draft_tokens_total", "strata:spec_decode_num_accepted_tokens_total"):
        assert m[name] == one[name]
    assert any("MTP module: 1 layers, whole on rank 0" in line for line in log)


STAGES = pytest.mark.parametrize("split", [["--pipeline-parallel-size", "2"],
                                           ["--tensor-parallel-size", "2", "--pipeline-parallel-size", "2"]],
                                 ids=["pp2", "tp2-pp2"])


@STAGES
@pytest.mark.parametrize("head", ["llama_eagle3", "llama_eagle3_2layer", "llama_eagle3_echo"])
def test_an_eagle3_head_over_pipeline_stages_serves_the_greedy_tokens_and_one_process_drafts(head, split):
    """llama's 3 layers over 2 stages: the head reads the inputs of layers 0 and 1 (stage 0's) and 2
    (stage 1's, sent back after the logits). Greedy tokens equal the plain server's, drafts and
    acceptances one process's EAGLE-3 run's (the echo head's drafts are kept). These catch a lost or
    misordered hand-off (the ranks would hang or fail); they do not catch layer 2's slot holding
    stage 1's output instead of its input (the random heads' drafts are seldom kept, the echo head
    reads layer 0): the seeded test below and PipelineParallel.StageZeroGetsTheEagle3AuxLayersRowsOfOne do."""
    model = FIXTURES / "hf" / "llama"
    eagle3 = json.dumps({"method": "eagle3", "model": str(LOCAL_FIXTURES / "hf" / head), "num_speculative_tokens": 3})
    prompts = [repetitive_prompt(seed) for seed in range(3)]
    want, _, _ = served_greedy_tokens(["--model", str(model)], prompts, "spec_stages_eagle3_plain")
    _, one, _ = served_greedy_tokens(["--model", str(model), "--speculative-config", eagle3], prompts,
                                     "spec_one_eagle3")
    got, m, _ = served_greedy_tokens(["--model", str(model), *split, "--speculative-config", eagle3], prompts,
                                     "spec_stages_eagle3")
    assert got == want
    for name in ("strata:spec_decode_num_draft_tokens_total", "strata:spec_decode_num_accepted_tokens_total"):
        assert m[name] == one[name], name
    assert m["strata:spec_decode_num_draft_tokens_total"] > 0
    if head == "llama_eagle3_echo":
        assert m["strata:spec_decode_num_accepted_tokens_total"] > 0


@STAGES
@pytest.mark.parametrize("head", ["llama_eagle3", "llama_eagle3_2layer", "llama_eagle3_echo"])
def test_an_eagle3_head_over_pipeline_stages_samples_one_process_tokens_under_a_seed(head, split):
    """Rejection sampling draws on the head's probabilities, so seeded tokens equal one process's
    EAGLE-3 run's only if stage 0 got the right rows: putting stage 1's output in layer 2's slot
    (instead of its input) changes them for each head."""
    model = FIXTURES / "hf" / "llama"
    eagle3 = json.dumps({"method": "eagle3", "model": str(LOCAL_FIXTURES / "hf" / head), "num_speculative_tokens": 3})

    def sampled(*extra):
        r = subprocess.run([str(BINARY), "generate", "--model", str(model), "--prompt-ids", "5,9,14,3,77,5,9",
                            "--max-tokens", "40", "--temperature", "1", "--seed", "7", "--ignore-eos",
                            "--speculative-config", eagle3, *extra], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        return r.stdout.strip().splitlines()[-1]

    assert sampled(*split) == sampled()
