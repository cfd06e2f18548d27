"""Token-id serving on the random-weight Qwen3 fixture: batching under load (64 streams),
client disconnects, seeds among concurrent requests, text requests refused without a tokenizer."""
import concurrent.futures as cf
import random
import time

import httpx
import openai
import pytest

from conftest import request

def random_prompt(seed):
    rng = random.Random(seed)
    return [rng.randrange(3, 500) for _ in range(5 + seed % 7)]


PROMPTS = [random_prompt(i) for i in range(16)]


def complete(client, model, prompt, **kw):
    r = client.completions.create(model=model, prompt=prompt, max_tokens=kw.pop("max_tokens", 8), temperature=0,
                                  extra_body={"ignore_eos": True, "return_token_ids": True, **kw.pop("extra", {})},
                                  **kw)
    return r


def stream_complete(client, model, prompt, max_tokens=8):
    text, ids = "", []
    for chunk in client.completions.create(model=model, prompt=prompt, max_tokens=max_tokens, temperature=0,
                                           stream=True, extra_body={"ignore_eos": True, "return_token_ids": True}):
        if chunk.choices:
            text += chunk.choices[0].text
            ids += getattr(chunk.choices[0], "token_ids", None) or chunk.choices[0].model_extra.get("token_ids", [])
    return text, ids


def test_token_id_prompts(tiny):
    r = complete(tiny.client(), tiny.model, PROMPTS[0])
    choice = r.choices[0]
    assert r.usage.prompt_tokens == len(PROMPTS[0])
    assert r.usage.completion_tokens == 8 and choice.finish_reason == "length"
    ids = choice.model_extra["token_ids"]
    assert choice.text == "".join(f"<{t}>" for t in ids)
    batch = complete(tiny.client(), tiny.model, PROMPTS[:3], n=2)
    assert len(batch.choices) == 6
    assert batch.choices[0].text == choice.text


def test_echo_with_token_ids(tiny):
    r = complete(tiny.client(), tiny.model, PROMPTS[1], echo=True, max_tokens=2)
    assert r.choices[0].text.startswith("".join(f"<{t}>" for t in PROMPTS[1]))


def test_text_prompt_refused_without_tokenizer(tiny):
    with pytest.raises(openai.BadRequestError) as e:
        tiny.client().completions.create(model=tiny.model, prompt="hello", max_tokens=2)
    assert "token ids" in str(e.value)
    with pytest.raises(openai.BadRequestError):
        tiny.client().chat.completions.create(model=tiny.model, messages=[{"role": "user", "content": "hi"}])


def test_64_concurrent_streams_match_alone(tiny):
    client = tiny.client()
    alone = [complete(client, tiny.model, p).choices[0].text for p in PROMPTS]
    jobs = [PROMPTS[i % len(PROMPTS)] for i in range(64)]
    with cf.ThreadPoolExecutor(64) as pool:
        results = list(pool.map(lambda p: stream_complete(client, tiny.model, p), jobs))
    for i, (text, ids) in enumerate(results):
        assert text == alone[i % len(PROMPTS)], f"stream {i}"
        assert len(ids) == 8


def test_seed_same_alone_and_among_64(tiny):
    client = tiny.client()
    seeded = dict(max_tokens=8, temperature=1.0, seed=99, extra_body={"ignore_eos": True})
    alone = client.completions.create(model=tiny.model, prompt=PROMPTS[2], **seeded).choices[0].text
    with cf.ThreadPoolExecutor(64) as pool:
        noise = [pool.submit(client.completions.create, model=tiny.model, prompt=PROMPTS[i % 16], max_tokens=8,
                             temperature=1.0, seed=i, extra_body={"ignore_eos": True}) for i in range(63)]
        crowd = pool.submit(client.completions.create, model=tiny.model, prompt=PROMPTS[2], **seeded)
        assert crowd.result().choices[0].text == alone
        for f in noise:
            f.result()


def wait_idle(server, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        m = server.metrics()
        if m["strata:num_requests_running"] == 0 and m["strata:num_requests_waiting"] == 0 \
                and m["strata:kv_cache_usage_perc"] == 0:
            return m
        time.sleep(0.1)
    raise AssertionError(f"engine never went idle: {server.metrics()}")


def test_disconnect_mid_stream_frees_blocks(tiny):
    body = {"prompt": PROMPTS[3], "max_tokens": 240, "stream": True, "ignore_eos": True, "temperature": 0}
    before = wait_idle(tiny)["strata:generation_tokens_total"]
    with httpx.Client(timeout=30) as http:
        with http.stream("POST", tiny.url + "/v1/completions", json=body) as resp:
            lines = resp.iter_lines()
            got = [next(lines) for _ in range(6)]
            assert any(line.startswith("data: ") for line in got)
            running = tiny.metrics()["strata:num_requests_running"]
            assert running >= 1
    generated = wait_idle(tiny)["strata:generation_tokens_total"] - before
    assert generated < 240, "the request ran to its end instead of being cancelled"
    # The server still serves afterwards.
    assert complete(tiny.client(), tiny.model, PROMPTS[0], max_tokens=2).choices[0].finish_reason == "length"


def test_many_disconnects_leave_nothing_running(tiny):
    body = {"prompt": PROMPTS[4], "max_tokens": 240, "stream": True, "ignore_eos": True}

    def hang_up():
        with httpx.Client(timeout=30) as http, http.stream("POST", tiny.url + "/v1/completions", json=body) as resp:
            next(resp.iter_lines())

    with cf.ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda _: hang_up(), range(16)))
    wait_idle(tiny)


def test_prompt_over_context_is_400(tiny):
    status, body = request(tiny.url + "/v1/completions", {"prompt": [5] * 300, "max_tokens": 1})
    assert status == 400 and "maximum context length" in body
    status, body = request(tiny.url + "/v1/completions", {"prompt": [5] * 100, "max_tokens": 200})
    assert status == 400 and "max_tokens" in body


def test_prefix_cache_hit_reports_cached_tokens_and_same_output(tiny):
    client = tiny.client()
    shared = [(i * 37 + 11) % 500 + 3 for i in range(48)]
    before = tiny.metrics()
    first = client.completions.create(model=tiny.model, prompt=shared + [7], max_tokens=6, temperature=0)
    second = client.completions.create(model=tiny.model, prompt=shared + [7], max_tokens=6, temperature=0)
    details = second.usage.prompt_tokens_details
    cached = details.cached_tokens if details is not None else second.usage.model_extra["prompt_tokens_details"]["cached_tokens"]
    assert cached == 48  # three full blocks; the last prompt token is always recomputed
    assert second.choices[0].text == first.choices[0].text
    after = tiny.metrics()
    assert after["strata:prefix_cache_hits_total"] - before.get("strata:prefix_cache_hits_total", 0) >= 48
    assert after["strata:prefix_cached_blocks"] >= 3
