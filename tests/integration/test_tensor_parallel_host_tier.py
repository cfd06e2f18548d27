"""The SSM snapshots' host tier (`--ssm-host-cache-gb`) under `--tensor-parallel-size 2` and
`--pipeline-parallel-size 2`: rank 0's tier decides, and every copy between a device slot and a
host row is repeated by the other rank on its own heads' (or its own layers') state. Four prompts with different 48-token prefixes push each other's
snapshots out of two device slots into host memory; each prefix's second prompt then hits there.
The answers equal one rank's, the hits are counted, and a rank whose copies were skipped would
answer differently."""
import pytest

from conftest import FIXTURES
from strata_server import Server

PREFIXES = [[(i * 11 + g) % 200 for i in range(48)] for g in range(4)]
FIRST = [p + [(i * 5 + 1) % 200 for i in range(10)] for p in PREFIXES]
SECOND = [p + [(i * 3 + 2) % 200 for i in range(14)] for p in PREFIXES]


def run(model, *parallel):
    args = ["--model", str(FIXTURES / "hf" / model), "--device", "cpu", "--max-model-len", "256",
            "--ssm-cache-slots", "2", "--ssm-host-cache-gb", "1", *parallel]
    server = Server(args, "host-tier" + "".join(parallel).replace("-", ""))
    try:
        client = server.client()
        texts = []
        for prompt in FIRST + SECOND:  # one at a time: each finds what the ones before it left
            reply = client.completions.create(model=server.model, prompt=prompt, max_tokens=16, temperature=0,
                                              logprobs=1, extra_body={"ignore_eos": True})
            texts.append((reply.choices[0].text, reply.choices[0].logprobs.token_logprobs,
                          reply.usage.prompt_tokens_details.cached_tokens))
        return texts, server.metrics()
    finally:
        server.stop()


@pytest.mark.parametrize("parallel", [["--tensor-parallel-size", "2"], ["--pipeline-parallel-size", "2"]])
@pytest.mark.parametrize("model", ["mamba2", "qwen3_next"])
def test_host_tier_hits_over_two_ranks_answer_as_one(model, parallel):
    if not (FIXTURES / "hf" / model).exists():
        pytest.skip(f"fixture {model} is missing")
    one, _ = run(model)
    two, metrics = run(model, *parallel)
    assert metrics["strata:ssm_host_restored_total"] > 0
    assert all(cached == 48 for _, _, cached in two[4:])
    for (text_1, logprobs_1, cached_1), (text_2, logprobs_2, cached_2) in zip(one, two):
        assert text_2 == text_1
        assert cached_2 == cached_1
        assert max(abs(a - b) for a, b in zip(logprobs_1, logprobs_2)) < 1e-4
