"""`strata serve --tensor-parallel-size 2 --lora-modules ...` and `--pipeline-parallel-size 2`:
every rank loads its part of each adapter (the ranks are copies of the command line, so the
slots agree; a stage holds its own layers' part), and completions on the base model and on both
adapters of the qwen3 fixture, sent concurrently, give one rank's tokens and logprobs (within 1e-4)."""
import concurrent.futures as cf

import pytest

from conftest import FIXTURES
from strata_server import Server
from test_tiny_model import PROMPTS


def answers(*parallel):
    model, lora = FIXTURES / "hf" / "qwen3", FIXTURES / "lora" / "qwen3"
    if not lora.exists():
        pytest.skip(f"LoRA fixtures {lora} are missing")
    server = Server(["--model", str(model), "--device", "cpu", "--max-model-len", "256", *parallel,
                     "--lora-modules", f"all_r8={lora / 'adapter_all_r8'}", f"attn_r4={lora / 'adapter_attn_r4'}"],
                    "lora" + "".join(parallel).replace("-", ""))
    try:
        client = server.client()
        jobs = [(name, prompt) for name in (server.model, "all_r8", "attn_r4") for prompt in PROMPTS[:3]]

        def ask(job):
            r = client.completions.create(model=job[0], prompt=job[1], max_tokens=10, temperature=0, logprobs=1,
                                          extra_body={"ignore_eos": True, "return_token_ids": True})
            return r.choices[0].model_extra["token_ids"], r.choices[0].logprobs.token_logprobs

        with cf.ThreadPoolExecutor(len(jobs)) as pool:
            return list(pool.map(ask, jobs))
    finally:
        server.stop()


@pytest.mark.parametrize("parallel", [["--tensor-parallel-size", "2"], ["--pipeline-parallel-size", "2"]])
def test_adapters_over_two_ranks_answer_as_one(parallel):
    one, two = answers(), answers(*parallel)
    assert any(one[i][0] != one[3 + i][0] for i in range(3))  # the adapters change the answers
    for (ids_1, logprobs_1), (ids_2, logprobs_2) in zip(one, two):
        assert ids_2 == ids_1
        assert max(abs(a - b) for a, b in zip(logprobs_1, logprobs_2)) < 1e-4
