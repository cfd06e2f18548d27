"""logit_bias through `strata serve` with SmolLM2 (greedy, so the effect is exact): -100 on
the greedy answer's first token changes it, +100 on another token forces it, on chat and
completions, streamed too; ids outside the vocabulary, values outside [-100, 100] and other
shapes are 400s naming logit_bias."""
import json

import openai
import pytest

from conftest import request

QUESTION = [{"role": "user", "content": "What is the capital of France?"}]


def token_ids(smol, text):
    status, body = request(smol.url + "/tokenize", {"prompt": text, "add_special_tokens": False})
    assert status == 200, body
    return json.loads(body)["tokens"]


def first_chat_token(smol, **kw):
    reply = smol.client().chat.completions.create(model=smol.model, messages=QUESTION, max_tokens=1, temperature=0,
                                                  **kw)
    ids = token_ids(smol, reply.choices[0].message.content)
    assert len(ids) == 1, reply.choices[0].message.content
    return ids[0]


def first_completion_tokens(smol, **kw):
    reply = smol.client().completions.create(model=smol.model, prompt="The capital of France is", max_tokens=2,
                                             temperature=0, extra_body={"return_token_ids": True}, **kw)
    return reply.choices[0].model_extra["token_ids"]


def test_chat_ban_and_force(smol):
    greedy = first_chat_token(smol)
    assert first_chat_token(smol, logit_bias={str(greedy): -100}) != greedy
    forced = token_ids(smol, "Hello")[0]
    assert forced != greedy
    assert first_chat_token(smol, logit_bias={str(forced): 100}) == forced


def test_completion_ban_and_force_streamed_and_n(smol):
    greedy = first_completion_tokens(smol)[0]
    assert first_completion_tokens(smol, logit_bias={str(greedy): -100})[0] != greedy
    forced = token_ids(smol, " Rome")[0]
    text = ""
    for chunk in smol.client().completions.create(model=smol.model, prompt="The capital of France is", max_tokens=1,
                                                  temperature=0, stream=True, logit_bias={str(forced): 100}):
        text += chunk.choices[0].text if chunk.choices else ""
    assert text == " Rome"
    reply = smol.client().completions.create(model=smol.model, prompt="The capital of France is", max_tokens=1, n=3,
                                             temperature=1.0, seed=3, logit_bias={str(forced): 100})
    assert [c.text for c in reply.choices] == [" Rome"] * 3


@pytest.mark.parametrize("bias", [{"49152": 1}, {"-1": 1}, {"abc": 1}, {"5": 101}, {"5": -100.5}, {"5": "x"},
                                  {"5": None}, [1, 2], "5"])
def test_invalid_logit_bias_is_400(smol, bias):
    with pytest.raises(openai.BadRequestError) as error:
        smol.client().chat.completions.create(model=smol.model, messages=QUESTION, max_tokens=1, logit_bias=bias)
    assert error.value.body["param"] == "logit_bias"
