"""Every refusal is an OpenAI error body with the right status, and nothing a client sends
takes the server down (a small random fuzz included)."""
import json
import random

import openai
import pytest

from conftest import request

GOOD = {"prompt": [1, 2, 3], "max_tokens": 2}


def error_of(status_body):
    status, body = status_body
    err = json.loads(body)["error"]
    assert set(err) == {"message", "type", "param", "code"}
    return status, err


@pytest.mark.parametrize("body,param", [
    ({**GOOD, "temperature": "hot"}, "temperature"),
    ({**GOOD, "temperature": -1}, "temperature"),
    ({**GOOD, "top_p": 1.5}, "top_p"),
    ({**GOOD, "top_p": 0}, "top_p"),
    ({**GOOD, "top_k": -5}, "top_k"),
    ({**GOOD, "min_p": 2}, "min_p"),
    ({**GOOD, "presence_penalty": 3}, "presence_penalty"),
    ({**GOOD, "frequency_penalty": -3}, "frequency_penalty"),
    ({**GOOD, "repetition_penalty": 0}, "repetition_penalty"),
    ({**GOOD, "n": 0}, "n"),
    ({**GOOD, "max_tokens": 0}, "max_tokens"),
    ({**GOOD, "max_tokens": 1.5}, "max_tokens"),
    ({**GOOD, "logprobs": 50}, "logprobs"),
    ({**GOOD, "stop": 5}, "stop"),
    ({**GOOD, "seed": "x"}, "seed"),
    ({**GOOD, "stream": "yes"}, "stream"),
    ({**GOOD, "suffix": "tail"}, "suffix"),
    ({**GOOD, "prompt": [1, -2]}, "prompt"),
    ({**GOOD, "prompt": [1, 100000]}, "prompt"),
    ({**GOOD, "prompt": {"a": 1}}, "prompt"),
    ({**GOOD, "prompt": []}, "prompt"),
    ({"max_tokens": 2}, "prompt"),
])
def test_bad_completion_fields_are_400(tiny, body, param):
    status, err = error_of(request(tiny.url + "/v1/completions", body))
    assert status == 400, err
    assert err["type"] == "invalid_request_error"
    assert err["param"] == param, err


def test_malformed_json_is_400(tiny):
    for raw in (b"{", b"[1,2]", b"null", b"\xff\xfe", b""):
        status, err = error_of(request(tiny.url + "/v1/completions", raw=raw))
        assert status == 400


def test_unknown_model_is_404_and_basename_accepted(tiny):
    status, err = error_of(request(tiny.url + "/v1/completions", {**GOOD, "model": "gpt-4"}))
    assert status == 404 and err["code"] == "model_not_found" and err["param"] == "model"
    assert request(tiny.url + "/v1/completions", {**GOOD, "model": "qwen3"})[0] == 200
    with pytest.raises(openai.NotFoundError):
        tiny.client().completions.create(model="nope", prompt=[1, 2], max_tokens=1)


def test_routes_and_methods(tiny):
    assert error_of(request(tiny.url + "/v1/nothing"))[0] == 404
    assert error_of(request(tiny.url + "/v1/completions", method="GET"))[0] == 405
    assert error_of(request(tiny.url + "/v1/models", {}, method="POST"))[0] == 405


def test_chat_message_errors(smol):
    cases = [
        {"messages": []},
        {"messages": "hi"},
        {"messages": [{"role": "wizard", "content": "hi"}]},
        {"messages": [{"role": "user", "content": 5}]},
        {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]},
        {"messages": [{"role": "user", "content": "hi"}], "top_logprobs": 2},
        {"messages": [{"role": "user", "content": "hi"}], "tool_choice": "sometimes"},
        {"messages": [{"role": "user", "content": "hi"}], "tools": [{"type": "function"}]},
        {"messages": [{"role": "user", "content": "hi"}], "response_format": {"type": "json_schema"}},
        {"messages": [{"role": "user", "content": "hi " * 2000}]},
    ]
    for body in cases:
        status, err = error_of(request(smol.url + "/v1/chat/completions", body))
        assert status == 400, (body, err)


def test_body_over_limit_is_413(tiny_with_key):
    status, err = error_of(request(tiny_with_key.url + "/v1/completions",
                                   {"prompt": [1] * 2000, "max_tokens": 1},
                                   headers={"Authorization": "Bearer sekret"}))
    assert status == 413 and err["code"] == "request_too_large"


def test_api_key(tiny_with_key):
    url = tiny_with_key.url + "/v1/completions"
    body = {"prompt": [1, 2], "max_tokens": 1, "model": "tiny-qwen"}
    assert error_of(request(url, body))[0] == 401
    assert error_of(request(url, body, headers={"Authorization": "Bearer wrong"}))[0] == 401
    assert error_of(request(url, body, headers={"Authorization": "sekret"}))[0] == 401
    assert request(url, body, headers={"Authorization": "Bearer sekret"})[0] == 200
    assert request(tiny_with_key.url + "/health")[0] == 200  # probes need no key
    with pytest.raises(openai.AuthenticationError):
        tiny_with_key.client(api_key="wrong").models.list()
    assert tiny_with_key.client(api_key="sekret").models.list().data[0].id == "tiny-qwen"


def random_json(rng, depth=0):
    kind = rng.randrange(8 if depth < 3 else 5)
    if kind == 0:
        return rng.choice([None, True, False])
    if kind == 1:
        return rng.choice([0, -1, 1, 2**31, -2**63, 2**64, 1e308, -0.5, 3])
    if kind == 2:
        return rng.choice(["", "x", "\u00e9\u4e2d", "<tool_call>", "\x00", "a" * 300])
    if kind in (3, 4):
        return rng.randrange(0, 600)
    if kind == 5:
        return [random_json(rng, depth + 1) for _ in range(rng.randrange(4))]
    keys = ["prompt", "messages", "max_tokens", "n", "stop", "temperature", "logprobs", "stream", "tools",
            "role", "content", "seed", "top_k", "echo", "tokens", "model", "stream_options"]
    return {rng.choice(keys): random_json(rng, depth + 1) for _ in range(rng.randrange(5))}


def test_fuzz_never_5xx(tiny, smol):
    rng = random.Random(7)
    for i in range(300):
        server = tiny if i % 2 else smol
        path = rng.choice(["/v1/completions", "/v1/chat/completions", "/tokenize", "/detokenize"])
        body = random_json(rng)
        if isinstance(body, dict) and rng.random() < 0.5:
            body.setdefault("max_tokens", 2)
        if isinstance(body, dict) and body.get("stream") is True:
            body["stream"] = False
        status, text = request(server.url + path, body)
        assert status < 500, (path, body, text)
    assert request(tiny.url + "/health")[0] == 200 and request(smol.url + "/health")[0] == 200
