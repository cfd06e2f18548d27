"""Prompt logprobs on SmolLM2: the legacy completions' echo with logprobs and max_tokens 0 (how
lm-eval scores loglikelihoods), vLLM's prompt_logprobs on completions and chat, prompt
logprobs equal the logprobs of the same tokens generated, and bad values get a 400."""
import math

import openai
import pytest

PROMPT = "The capital of France is Paris. The capital of Italy is"


def test_echo_with_logprobs_and_no_tokens_scores_the_prompt(smol):
    r = smol.client().completions.create(model=smol.model, prompt=PROMPT, max_tokens=0, echo=True, logprobs=2)
    c = r.choices[0]
    assert c.text == PROMPT
    assert c.finish_reason == "length"
    lp = c.logprobs
    assert "".join(lp.tokens) == PROMPT
    n = len(lp.tokens)
    assert n == r.usage.prompt_tokens and r.usage.completion_tokens == 0
    assert lp.token_logprobs[0] is None and lp.top_logprobs[0] is None
    assert len(lp.token_logprobs) == len(lp.top_logprobs) == len(lp.text_offset) == n
    assert all(x is not None and x <= 0 for x in lp.token_logprobs[1:])
    assert all(len(t) == 2 for t in lp.top_logprobs[1:])
    assert lp.text_offset == [sum(len(t) for t in lp.tokens[:i]) for i in range(n)]
    # A longer prompt scores its shared prefix the same.
    more = smol.client().completions.create(model=smol.model, prompt=PROMPT + " Rome", max_tokens=0, echo=True,
                                            logprobs=1)
    assert more.choices[0].logprobs.tokens[:n] == lp.tokens
    assert more.choices[0].logprobs.token_logprobs[1:n] == pytest.approx(lp.token_logprobs[1:], abs=1e-4)


def test_echo_logprobs_cover_prompt_then_generated(smol):
    client = smol.client()
    plain = client.completions.create(model=smol.model, prompt=PROMPT, max_tokens=4, temperature=0, logprobs=0)
    echo = client.completions.create(model=smol.model, prompt=PROMPT, max_tokens=4, temperature=0, logprobs=0,
                                     echo=True)
    lp = echo.choices[0].logprobs
    n = echo.usage.prompt_tokens
    assert echo.choices[0].text == PROMPT + plain.choices[0].text
    assert lp.tokens[n:] == plain.choices[0].logprobs.tokens
    assert lp.token_logprobs[n:] == pytest.approx(plain.choices[0].logprobs.token_logprobs, abs=1e-4)
    assert lp.text_offset[n] == len(PROMPT)


def test_prompt_logprobs_equal_generated_logprobs(smol):
    client = smol.client()
    gen = client.completions.create(model=smol.model, prompt=PROMPT, max_tokens=6, temperature=0, logprobs=0,
                                    extra_body={"return_token_ids": True, "ignore_eos": True})
    c = gen.choices[0]
    ids = c.model_extra["prompt_token_ids"] + c.model_extra["token_ids"]
    scored = client.completions.create(model=smol.model, prompt=ids, max_tokens=1, temperature=0,
                                       extra_body={"prompt_logprobs": 3})
    plp = scored.choices[0].model_extra["prompt_logprobs"]
    assert len(plp) == len(ids) and plp[0] is None
    for pos in range(1, len(ids)):
        entry = plp[pos]
        assert str(ids[pos]) in entry and 3 <= len(entry) <= 4
        assert {1, 2, 3} <= {v["rank"] for v in entry.values()}
    for t in range(6):
        pos = len(ids) - 6 + t
        got = plp[pos][str(ids[pos])]
        assert got["logprob"] == pytest.approx(c.logprobs.token_logprobs[t], abs=1e-4)
        assert got["rank"] == 1  # greedy picked it
        assert got["decoded_token"] == c.logprobs.tokens[t]


def test_prompt_logprobs_on_chat(smol):
    r = smol.client().chat.completions.create(model=smol.model, messages=[{"role": "user", "content": "Hi"}],
                                              max_tokens=2, temperature=0, extra_body={"prompt_logprobs": 0})
    plp = r.model_extra["prompt_logprobs"]
    assert len(plp) == r.usage.prompt_tokens and plp[0] is None
    for entry in plp[1:]:
        assert len(entry) == 1
        (value,) = entry.values()
        assert value["logprob"] <= 0 and value["rank"] >= 1 and math.isfinite(value["logprob"])


@pytest.mark.parametrize("route,body,param", [
    ("completions", {"prompt": "Hi", "max_tokens": 1, "prompt_logprobs": 21}, "prompt_logprobs"),
    ("completions", {"prompt": "Hi", "max_tokens": 1, "prompt_logprobs": -1}, "prompt_logprobs"),
    ("completions", {"prompt": "Hi", "max_tokens": 1, "prompt_logprobs": "3"}, "prompt_logprobs"),
    ("completions", {"prompt": "Hi", "max_tokens": 0}, "max_tokens"),
    ("completions", {"prompt": "Hi", "max_tokens": -1, "echo": True}, "max_tokens"),
    ("completions", {"prompt": "Hi", "max_tokens": 1, "prompt_logprobs": 1, "stream": True}, "prompt_logprobs"),
    ("completions", {"prompt": "Hi", "max_tokens": 1, "echo": True, "logprobs": 1, "stream": True}, "echo"),
    ("chat", {"messages": [{"role": "user", "content": "Hi"}], "prompt_logprobs": 21}, "prompt_logprobs"),
    ("chat", {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 0}, "max_tokens"),
])
def test_bad_values_are_refused(smol, route, body, param):
    client = smol.client()
    with pytest.raises(openai.BadRequestError) as error:
        if route == "chat":
            client.chat.completions.create(model=smol.model, messages=body.pop("messages"), extra_body=body)
        else:
            client.completions.create(model=smol.model, prompt=body.pop("prompt"), extra_body=body)
    assert error.value.body["param"] == param, error.value.body
    health = client.completions.create(model=smol.model, prompt="Hi", max_tokens=1)
    assert len(health.choices) == 1
