"""Qwen4-Exp served on the CPU (tests/fixtures/hf/qwen4_exp: hyper-connections, PLE layers, QSA
attention, DeltaNet and MoE): greedy completions of the fixture's prompts, alone and side by side,
give transformers' greedy tokens."""
import concurrent.futures as cf

import pytest

from conftest import LOCAL_FIXTURES, Server, load_reference

MODEL = LOCAL_FIXTURES / "hf" / "qwen4_exp"


@pytest.fixture(scope="module")
def qwen4_exp():
    server = Server([str(MODEL), "--device", "cpu", "--max-model-len", "256"], "qwen4_exp")
    yield server
    server.stop()


def greedy(server, prompt, max_tokens):
    r = server.client().completions.create(model=server.model, prompt=prompt, max_tokens=max_tokens, temperature=0,
                                           extra_body={"ignore_eos": True, "return_token_ids": True})
    return r.choices[0].model_extra["token_ids"]


def test_greedy_tokens_equal_transformers(qwen4_exp):
    tensors, meta = load_reference(MODEL)
    cases = []
    for i, seq in enumerate(meta["sequences"]):
        tokens = tensors[f"tokens_{i}"].tolist()
        cases.append((tokens[:seq["prompt_len"]], seq["greedy"][:8]))
    assert greedy(qwen4_exp, cases[0][0], 8) == cases[0][1]
    with cf.ThreadPoolExecutor(len(cases)) as pool:
        got = list(pool.map(lambda case: greedy(qwen4_exp, case[0], 8), cases))
    assert got == [want for _, want in cases]
