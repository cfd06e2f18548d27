"""The API around generation: every request field is implemented, accepted as a hint, or
refused with a 400 naming it (unknown ones too, unless --ignore-unknown-fields: then logged
once); GET /v1/models/{id}; x-request-id echoed or made; CORS with --allowed-origins."""
import urllib.request

import openai
import pytest

from conftest import request

GOOD = {"prompt": [1, 2, 3], "max_tokens": 2}
ORIGIN = "http://localhost:3000"


def headers_of(url, method="GET", headers=None, body=None):
    """(status, headers) of a request, error statuses included."""
    req = urllib.request.Request(url, method=method, headers=headers or {}, data=body)
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, resp.headers
    except urllib.error.HTTPError as e:
        return e.code, e.headers


@pytest.mark.parametrize("field,value", [("frobnicate", 1), ("reasoning_effort", "low"), ("prompt_logprobs", 21),
                                         ("min_tokens", 1), ("response_format", {"type": "json_object"}),
                                         ("best_of", 3)])
def test_completion_fields_refused_by_name(tiny, field, value):
    with pytest.raises(openai.BadRequestError) as error:
        tiny.client().completions.create(model=tiny.model, prompt=[1, 2], max_tokens=1, extra_body={field: value})
    assert error.value.body["param"] == field, error.value.body


def test_chat_fields_refused_by_name(smol):
    chat = smol.client().chat.completions
    base = {"model": smol.model, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 1}
    for kw, param in [({"reasoning_effort": "extreme"}, "reasoning_effort"), ({"store": True}, "store"),
                      ({"service_tier": "flex"}, "service_tier"), ({"verbosity": "low"}, "verbosity"),
                      ({"functions": [{"name": "f"}]}, "functions"), ({"extra_body": {"temprature": 1}}, "temprature"),
                      ({"extra_body": {"echo": True}}, "echo")]:
        with pytest.raises(openai.BadRequestError) as error:
            chat.create(**base, **kw)
        assert error.value.body["param"] == param, error.value.body
    # Hints that change no output are accepted.
    reply = chat.create(**base, user="u", metadata={"k": "v"}, store=False, service_tier="auto",
                        safety_identifier="s", prompt_cache_key="p", parallel_tool_calls=True)
    assert reply.choices[0].finish_reason in ("stop", "length")


def test_ignore_unknown_fields_logs_once(tiny_cors):
    for _ in range(3):
        assert request(tiny_cors.url + "/v1/completions", {**GOOD, "frobnicate": 1})[0] == 200
    assert request(tiny_cors.url + "/v1/completions", {**GOOD, "min_tokens": 1})[0] == 400  # known, not ignored
    assert sum("frobnicate" in line for line in tiny_cors.log) == 1


def test_retrieve_model(tiny):
    model = tiny.client().models.retrieve(tiny.model)
    assert model.id == tiny.model and model.object == "model"
    with pytest.raises(openai.NotFoundError) as error:
        tiny.client().models.retrieve("gpt-4o")
    assert error.value.body["code"] == "model_not_found"


def test_request_id_echoed_or_made(tiny):
    raw = tiny.client().completions.with_raw_response.create(model=tiny.model, prompt=[1, 2], max_tokens=1,
                                                             extra_headers={"X-Request-Id": "trace-42"})
    assert raw.headers["x-request-id"] == "trace-42"
    made = headers_of(tiny.url + "/v1/models")[1]["x-request-id"]
    assert len(made) == 32 and made != headers_of(tiny.url + "/v1/models")[1]["x-request-id"]
    assert headers_of(tiny.url + "/v1/nothing")[1]["x-request-id"]  # refusals carry one too


def test_cors(tiny_cors, tiny):
    preflight = {"Origin": ORIGIN, "Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "authorization, content-type"}
    status, headers = headers_of(tiny_cors.url + "/v1/chat/completions", "OPTIONS", preflight)
    assert status == 204
    assert headers["Access-Control-Allow-Origin"] == ORIGIN
    assert "POST" in headers["Access-Control-Allow-Methods"] and "DELETE" in headers["Access-Control-Allow-Methods"]
    assert headers["Access-Control-Allow-Headers"] == "authorization, content-type"
    assert headers_of(tiny_cors.url + "/v1/models", "OPTIONS", {**preflight, "Origin": "http://evil"})[0] == 403
    status, headers = headers_of(tiny_cors.url + "/v1/completions", "POST",
                                 {"Origin": ORIGIN, "Content-Type": "application/json"}, b'{"prompt": [1], "max_tokens": 1}')
    assert status == 200 and headers["Access-Control-Allow-Origin"] == ORIGIN
    assert "Access-Control-Allow-Origin" not in headers_of(tiny_cors.url + "/v1/models", "GET",
                                                           {"Origin": "http://evil"})[1]
    # Without --allowed-origins there is no CORS: OPTIONS is a method the route does not take.
    assert headers_of(tiny.url + "/v1/chat/completions", "OPTIONS", preflight)[0] == 405
    assert "Access-Control-Allow-Origin" not in headers_of(tiny.url + "/v1/models", "GET", {"Origin": ORIGIN})[1]
