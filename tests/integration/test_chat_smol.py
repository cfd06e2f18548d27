"""Chat and text completions on SmolLM2 through the official openai client."""
import openai
import pytest
import concurrent.futures as cf
import math

from conftest import request

MESSAGES = [{"role": "system", "content": "You are a concise assistant."},
            {"role": "user", "content": "Name three colours."}]


def chat_text(client, **kw):
    r = client.chat.completions.create(model="smollm2-135m-instruct-q4_1.gguf", messages=kw.pop("messages", MESSAGES),
                                       **kw)
    return r


def stream_chat_text(client, **kw):
    chunks = list(client.chat.completions.create(model="smollm2-135m-instruct-q4_1.gguf",
                                                 messages=kw.pop("messages", MESSAGES), stream=True, **kw))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    finish = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    return text, finish, chunks


def test_chat_basic_and_usage(smol):
    r = chat_text(smol.client(), max_tokens=12, temperature=0)
    assert r.object == "chat.completion"
    assert r.choices[0].message.role == "assistant"
    assert r.choices[0].message.content
    assert r.choices[0].finish_reason in ("stop", "length")
    assert r.usage.completion_tokens <= 12
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens
    assert r.usage.prompt_tokens_details.cached_tokens >= 0


def test_content_parts_equal_string_content(smol):
    parts = [{"role": "user", "content": [{"type": "text", "text": "Name three colours."}]}]
    plain = [{"role": "user", "content": "Name three colours."}]
    a = request(smol.url + "/tokenize", {"messages": parts})[1]
    b = request(smol.url + "/tokenize", {"messages": plain})[1]
    assert a == b


def test_stream_reassembles_to_non_streamed_text(smol):
    client = smol.client()
    full = chat_text(client, max_tokens=16, temperature=0).choices[0].message.content
    text, finish, chunks = stream_chat_text(client, max_tokens=16, temperature=0)
    assert text == full
    assert len(finish) == 1
    assert chunks[0].choices[0].delta.role == "assistant"


def test_stream_include_usage(smol):
    text, _, chunks = stream_chat_text(smol.client(), max_tokens=6, temperature=0,
                                       stream_options={"include_usage": True})
    assert chunks[-1].choices == []
    usage = chunks[-1].usage
    assert text and 0 < usage.completion_tokens <= 6 and usage.prompt_tokens > 0
    assert all(c.usage is None for c in chunks[:-1])


def test_completions_text_stream_matches(smol):
    client = smol.client()
    full = client.completions.create(model=smol.model, prompt="The sky is", max_tokens=10, temperature=0)
    parts = list(client.completions.create(model=smol.model, prompt="The sky is", max_tokens=10, temperature=0,
                                           stream=True))
    assert "".join(p.choices[0].text for p in parts if p.choices) == full.choices[0].text
    echo = client.completions.create(model=smol.model, prompt="The sky is", max_tokens=10, temperature=0, echo=True)
    assert echo.choices[0].text == "The sky is" + full.choices[0].text


def test_completions_prompt_array_gives_choice_sets(smol):
    r = smol.client().completions.create(model=smol.model, prompt=["One", "Two"], max_tokens=3, temperature=0, n=2)
    assert [c.index for c in r.choices] == [0, 1, 2, 3]
    assert r.choices[0].text == r.choices[1].text  # greedy: both choices of a prompt agree


def test_n_choices(smol):
    r = chat_text(smol.client(), max_tokens=8, temperature=1.0, n=3, seed=5)
    assert sorted(c.index for c in r.choices) == [0, 1, 2]
    text, _, chunks = stream_chat_text(smol.client(), max_tokens=4, temperature=1.0, n=2, seed=5)
    assert {c.choices[0].index for c in chunks if c.choices} == {0, 1}


def test_stop_string_never_appears(smol):
    client = smol.client()
    full = chat_text(client, max_tokens=24, temperature=0).choices[0].message.content
    words = full.split()
    assert len(words) >= 3, full
    stop = words[2]
    cut = chat_text(client, max_tokens=24, temperature=0, stop=[stop])
    assert stop not in cut.choices[0].message.content
    assert full.startswith(cut.choices[0].message.content)
    assert cut.choices[0].finish_reason == "stop"
    text, finish, _ = stream_chat_text(client, max_tokens=24, temperature=0, stop=stop)
    assert stop not in text and text == cut.choices[0].message.content
    assert finish == ["stop"]


def test_logprobs_and_top_logprobs(smol):
    r = chat_text(smol.client(), max_tokens=5, temperature=0, logprobs=True, top_logprobs=3)
    content = r.choices[0].logprobs.content
    assert len(content) == r.usage.completion_tokens
    for entry in content:
        assert len(entry.top_logprobs) == 3
        assert entry.logprob <= 0
        assert math.isclose(entry.logprob, entry.top_logprobs[0].logprob, abs_tol=1e-4)  # greedy picks the top
    c = smol.client().completions.create(model=smol.model, prompt="Hello", max_tokens=4, temperature=0, logprobs=2)
    assert len(c.choices[0].logprobs.tokens) == 4
    assert all(len(t) <= 2 for t in c.choices[0].logprobs.top_logprobs)


def test_seed_reproducible_alone_and_in_a_crowd(smol):
    client = smol.client()
    args = dict(max_tokens=8, temperature=1.0, top_p=0.95, seed=1234)
    alone = chat_text(client, **args).choices[0].message.content
    assert chat_text(client, **args).choices[0].message.content == alone
    with cf.ThreadPoolExecutor(16) as pool:
        others = [pool.submit(chat_text, client, max_tokens=8, temperature=1.0, seed=i) for i in range(15)]
        crowd = pool.submit(chat_text, client, **args)
        assert crowd.result().choices[0].message.content == alone
        for f in others:
            f.result()


def test_response_format_json_object_is_enforced(smol):
    import json
    ask = [{"role": "user", "content": "Give me a JSON object with the name and the age of a person called Alice, 30."}]
    for kw in ({"temperature": 0}, {"temperature": 1.0, "seed": 5}, {"temperature": 0, "stream": True}):
        if kw.pop("stream", False):
            chunks = list(smol.client().chat.completions.create(
                model=smol.model, messages=ask, max_tokens=200, response_format={"type": "json_object"}, stream=True,
                **kw))
            content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
            finish = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason][-1]
        else:
            r = chat_text(smol.client(), messages=ask, max_tokens=200, response_format={"type": "json_object"}, **kw)
            content, finish = r.choices[0].message.content, r.choices[0].finish_reason
        assert finish == "stop", content
        assert isinstance(json.loads(content), dict), content
    # Unconstrained, the model wraps its JSON in prose and code fences: not parseable.
    free = chat_text(smol.client(), messages=ask, max_tokens=80, temperature=0).choices[0].message.content
    with pytest.raises(ValueError):
        json.loads(free)


def test_response_format_json_schema_is_enforced(smol):
    import json
    ask = [{"role": "user", "content": "Describe a person called Alice who is 30 and likes tea, as JSON."}]
    schema = {"type": "object", "properties": {
        "name": {"type": "string"}, "age": {"type": "integer"},
        "likes": {"type": "array", "items": {"type": "string"}},
        "mood": {"type": "string", "enum": ["happy", "sad"]}},
        "required": ["name", "age", "likes", "mood"], "additionalProperties": False}
    fmt = {"type": "json_schema", "json_schema": {"name": "person", "schema": schema, "strict": True}}
    for kw in ({"temperature": 0}, {"temperature": 1.0, "seed": 11}):
        r = chat_text(smol.client(), messages=ask, max_tokens=200, response_format=fmt, **kw)
        assert r.choices[0].finish_reason == "stop", r.choices[0].message.content
        value = json.loads(r.choices[0].message.content)
        assert list(value) == ["name", "age", "likes", "mood"]
        assert isinstance(value["name"], str) and isinstance(value["age"], int)
        assert all(isinstance(x, str) for x in value["likes"]) and value["mood"] in ("happy", "sad")
    # What pydantic writes for a nested model and an Optional field.
    nested = {"$defs": {"Pet": {"type": "object", "properties": {"kind": {"type": "string"}}, "required": ["kind"]}},
              "type": "object", "properties": {"owner": {"type": "string"},
                                               "pet": {"anyOf": [{"$ref": "#/$defs/Pet"}, {"type": "null"}]}},
              "required": ["owner", "pet"]}
    r = chat_text(smol.client(), messages=[{"role": "user", "content": "Alice has a cat. Answer in JSON."}],
                  max_tokens=120, temperature=0,
                  response_format={"type": "json_schema", "json_schema": {"name": "o", "schema": nested}})
    value = json.loads(r.choices[0].message.content)
    assert list(value) == ["owner", "pet"] and (value["pet"] is None or list(value["pet"]) == ["kind"])
    bad = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "array", "uniqueItems": True}}}
    with pytest.raises(openai.BadRequestError) as e:
        chat_text(smol.client(), messages=ask, max_tokens=5, response_format=bad)
    assert "'uniqueItems' is not supported" in str(e.value)


def test_response_format_optional_properties_and_maps(smol):
    """required and additionalProperties are honoured: optional keys may be left out (order kept),
    a map takes any keys with values of its schema."""
    import json
    schema = {"type": "object", "properties": {
        "name": {"type": "string"}, "nickname": {"type": "string"}, "age": {"type": "integer"},
        "scores": {"type": "object", "additionalProperties": {"type": "integer"}}},
        "required": ["name", "scores"], "additionalProperties": False}
    fmt = {"type": "json_schema", "json_schema": {"name": "p", "schema": schema}}
    ask = [{"role": "user", "content": "Alice scored 3 in chess and 5 in go. Answer in JSON."}]
    for kw in ({"temperature": 0}, {"temperature": 1.0, "seed": 3}, {"temperature": 1.0, "seed": 4}):
        r = chat_text(smol.client(), messages=ask, max_tokens=150, response_format=fmt, **kw)
        assert r.choices[0].finish_reason == "stop", r.choices[0].message.content
        value = json.loads(r.choices[0].message.content)
        keys = list(value)
        assert "name" in keys and "scores" in keys and keys == [k for k in schema["properties"] if k in keys]
        assert isinstance(value["name"], str) and isinstance(value["scores"], dict)
        assert all(isinstance(v, int) for v in value["scores"].values())
        assert "age" not in value or isinstance(value["age"], int)
    bad = {"type": "json_schema", "json_schema": {"name": "x", "schema": {
        "type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": True}}}
    with pytest.raises(openai.BadRequestError) as e:
        chat_text(smol.client(), messages=ask, max_tokens=5, response_format=bad)
    assert "additionalProperties" in str(e.value)


def test_models_health_metrics(smol):
    models = smol.client().models.list()
    assert [m.id for m in models.data] == [smol.model]
    assert request(smol.url + "/health")[0] == 200
    m = smol.metrics()
    for name in ("num_requests_running", "num_requests_waiting", "kv_cache_usage_perc", "prompt_tokens_total",
                 "generation_tokens_total", "num_preemptions_total", "prefix_cache_hits_total",
                 "prefix_cache_queries_total", "time_to_first_token_seconds_count",
                 "inter_token_latency_seconds_count", "e2e_request_latency_seconds_count", "num_swapped_out_total",
                 "num_swapped_in_total", "swap_space_used_bytes", "ssm_host_restored_total"):
        assert "strata:" + name in m


def test_tokenize_detokenize_round_trip(smol):
    status, body = request(smol.url + "/tokenize", {"prompt": "Hello world", "add_special_tokens": False})
    assert status == 200
    import json
    tokens = json.loads(body)["tokens"]
    status, body = request(smol.url + "/detokenize", {"tokens": tokens})
    assert status == 200 and json.loads(body)["prompt"] == "Hello world"
