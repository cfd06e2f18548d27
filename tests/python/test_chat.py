"""LLM.chat through SmolLM2's chat template: the answer to the capital of France is Paris,
the prompt ids equal the template's rendering, and a batch of conversations keeps its order."""
from conftest import strata

QUESTION = [{"role": "user", "content": "What is the capital of France?"}]


def test_chat_answers_paris(smol):
    out = smol.chat(QUESTION, strata.SamplingParams(temperature=0, max_tokens=32))[0]
    assert "Paris" in out.outputs[0].text
    assert out.prompt.startswith("<|im_start|>") and out.prompt.endswith("<|im_start|>assistant\n")
    assert out.outputs[0].finish_reason in ("stop", "length")


def test_chat_batch_and_content_parts(smol):
    parts = [{"role": "user", "content": [{"type": "text", "text": "What is the capital of France?"}]}]
    other = [{"role": "user", "content": "Say hello."}]
    outs = smol.chat([QUESTION, other, parts], strata.SamplingParams(temperature=0, max_tokens=16))
    assert len(outs) == 3
    assert outs[0].prompt_token_ids == outs[2].prompt_token_ids
    assert outs[0].outputs[0].token_ids == outs[2].outputs[0].token_ids
    assert outs[1].prompt_token_ids != outs[0].prompt_token_ids
