"""POST /v1/messages and /v1/messages/count_tokens through `strata serve` with SmolLM2, driven
by the `anthropic` package: text whole and streamed (the same greedy text, the SDK's event
accumulator), max_tokens, stop sequences, forced tool calls (tool_choice any and a named
tool), a tool_use / tool_result conversation, token counts, x-api-key, and the 400s in
Anthropic's error shape."""
import json

import anthropic
import pydantic
import pytest

from conftest import request

HELLO = [{"role": "user", "content": "Write one sentence about the sea."}]
TIME_TOOL = {"name": "get_time", "description": "The time in a zone",
             "input_schema": {"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]}}
WEATHER_TOOL = {"name": "get_weather", "description": "Weather for a city",
                "input_schema": {"type": "object", "properties": {
                    "city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                    "required": ["city", "unit"]}}


class Time(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")
    zone: str


class Weather(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")
    city: str
    unit: str


INPUTS = {"get_time": Time, "get_weather": Weather}


def client(server, **kw):
    return anthropic.Anthropic(base_url=server.url, api_key=kw.pop("api_key", "none"), max_retries=0, timeout=120, **kw)


GREEDY = {"temperature": 0}  # this SDK version has no temperature argument: sent as an extra field


def create(smol, **kw):
    kw.setdefault("messages", HELLO)
    kw.setdefault("max_tokens", 24)
    kw["extra_body"] = {**GREEDY, **kw.get("extra_body", {})}
    return client(smol).messages.create(model=smol.model, **kw)


def text_of(message):
    return "".join(block.text for block in message.content if block.type == "text")


def test_text_non_streamed(smol):
    message = create(smol)
    assert message.type == "message" and message.role == "assistant" and message.id.startswith("msg_")
    assert message.model == smol.model
    assert [block.type for block in message.content] == ["text"]
    assert message.content[0].text.strip()
    assert message.stop_reason in ("end_turn", "max_tokens") and message.stop_sequence is None
    count = client(smol).messages.count_tokens(model=smol.model, messages=HELLO).input_tokens
    assert message.usage.input_tokens + message.usage.cache_read_input_tokens == count
    assert message.usage.cache_creation_input_tokens == 0
    assert 0 < message.usage.output_tokens <= 24


def test_streamed_text_equals_the_whole_answer(smol):
    whole = create(smol)
    with client(smol).messages.stream(model=smol.model, max_tokens=24, messages=HELLO, extra_body=GREEDY) as stream:
        streamed = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert streamed == text_of(whole)
    assert text_of(final) == text_of(whole)
    assert final.stop_reason == whole.stop_reason
    assert final.usage.output_tokens == whole.usage.output_tokens
    assert final.usage.input_tokens + final.usage.cache_read_input_tokens == (
        whole.usage.input_tokens + whole.usage.cache_read_input_tokens)


def test_raw_event_sequence(smol):
    events = list(client(smol).messages.create(model=smol.model, max_tokens=5, messages=HELLO, extra_body=GREEDY,
                                               stream=True))
    types = [e.type for e in events]
    assert types == (["message_start", "content_block_start"] + ["content_block_delta"] * (len(types) - 5) +
                     ["content_block_stop", "message_delta", "message_stop"])
    assert events[0].message.content == [] and events[0].message.stop_reason is None
    assert events[1].index == 0 and events[1].content_block.type == "text" and events[1].content_block.text == ""
    assert all(e.delta.type == "text_delta" and e.index == 0 for e in events[2:-3])
    assert events[-2].delta.stop_reason == "max_tokens" and events[-2].usage.output_tokens == 5


def test_max_tokens(smol):
    message = create(smol, max_tokens=3)
    assert message.stop_reason == "max_tokens"
    assert message.usage.output_tokens == 3


def test_stop_sequence(smol):
    text = text_of(create(smol))
    stop = text.split()[2]
    message = create(smol, stop_sequences=["never-written", stop])
    assert message.stop_reason == "stop_sequence"
    assert message.stop_sequence == stop
    assert text_of(message) == text[:text.index(stop)]
    with client(smol).messages.stream(model=smol.model, max_tokens=24, messages=HELLO, extra_body=GREEDY,
                                      stop_sequences=[stop]) as stream:
        final = stream.get_final_message()
    assert (final.stop_reason, final.stop_sequence, text_of(final)) == ("stop_sequence", stop, text_of(message))


@pytest.mark.parametrize("tool_choice,name", [({"type": "any"}, None), ({"type": "tool", "name": "get_time"}, "get_time")])
def test_forced_tool_use(smol, tool_choice, name):
    message = create(smol, messages=[{"role": "user", "content": "What is the weather in Paris?"}],
                     tools=[WEATHER_TOOL, TIME_TOOL], tool_choice={**tool_choice, "disable_parallel_tool_use": True},
                     max_tokens=100)
    assert message.stop_reason == "tool_use"
    assert [block.type for block in message.content] == ["tool_use"]
    call = message.content[0]
    assert call.id.startswith("toolu_") and call.name in INPUTS and (name is None or call.name == name)
    INPUTS[call.name].model_validate(call.input)


def test_forced_tool_use_streamed(smol):
    with client(smol).messages.stream(model=smol.model, max_tokens=100, extra_body=GREEDY, tools=[TIME_TOOL],
                                      tool_choice={"type": "tool", "name": "get_time"},
                                      messages=[{"role": "user", "content": "What time is it in Tokyo?"}]) as stream:
        events = list(stream)
        final = stream.get_final_message()
    whole = create(smol, max_tokens=100, tools=[TIME_TOOL], tool_choice={"type": "tool", "name": "get_time"},
                   messages=[{"role": "user", "content": "What time is it in Tokyo?"}])
    assert final.stop_reason == "tool_use"
    assert [(b.type, b.name, b.input) for b in final.content] == [(b.type, b.name, b.input) for b in whole.content]
    Time.model_validate(final.content[0].input)
    starts = [e for e in events if e.type == "content_block_start"]
    assert [(s.index, s.content_block.type, s.content_block.input) for s in starts] == [(0, "tool_use", {})]


def test_tool_result_conversation(smol):
    messages = [
        {"role": "user", "content": "What time is it in Tokyo?"},
        {"role": "assistant", "content": [{"type": "text", "text": "Let me check."},
                                          {"type": "tool_use", "id": "toolu_1", "name": "get_time",
                                           "input": {"zone": "Asia/Tokyo"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                      "content": [{"type": "text", "text": "09:30"}]},
                                     {"type": "text", "text": "Answer briefly.", "cache_control": {"type": "ephemeral"}}]},
    ]
    message = create(smol, messages=messages, tools=[TIME_TOOL],
                     system=[{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral"}}],
                     metadata={"user_id": "u1"})
    assert message.content[0].type == "text" and message.stop_reason in ("end_turn", "max_tokens")
    count = client(smol).messages.count_tokens(model=smol.model, messages=messages, tools=[TIME_TOOL],
                                               system="You are terse.").input_tokens
    assert message.usage.input_tokens + message.usage.cache_read_input_tokens == count


def test_count_tokens(smol):
    c = client(smol)
    plain = c.messages.count_tokens(model=smol.model, messages=HELLO).input_tokens
    with_system = c.messages.count_tokens(model=smol.model, messages=HELLO, system="Be brief.").input_tokens
    status, body = request(smol.url + "/tokenize", {"messages": [{"role": "system", "content": "Be brief."}] + HELLO})
    assert status == 200
    assert with_system == json.loads(body)["count"]
    assert plain > 0 and with_system != plain


@pytest.mark.parametrize("body,field", [
    ({"messages": HELLO}, "max_tokens"),
    ({"max_tokens": 5, "messages": [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}]}]}, "image"),
    ({"max_tokens": 5, "messages": HELLO, "bogus_field": 1}, "bogus_field"),
    ({"max_tokens": 5, "messages": HELLO, "tools": [{"type": "web_search_20250305", "name": "web_search"}]},
     "web_search_20250305"),
    ({"max_tokens": 5, "messages": [{"role": "system", "content": "hi"}]}, "system"),
    ({"max_tokens": 5, "messages": HELLO, "tool_choice": {"type": "tool"}}, "tool_choice"),
    ({"max_tokens": 5, "messages": HELLO, "stop_sequences": "x"}, "stop_sequences"),
    ({"max_tokens": 5, "messages": HELLO, "mcp_servers": []}, "mcp_servers"),
    ({"max_tokens": 5, "messages": HELLO + [{"role": "assistant", "content": "The sea"}]}, "prefill"),
])
def test_bad_requests_get_anthropic_errors(smol, body, field):
    status, text = request(smol.url + "/v1/messages", body)
    assert status == 400, text
    error = json.loads(text)
    assert error["type"] == "error" and error["error"]["type"] == "invalid_request_error"
    assert field in error["error"]["message"]


def test_sdk_raises_bad_request_and_not_found(smol):
    with pytest.raises(anthropic.BadRequestError) as e:
        create(smol, extra_body={"bogus_field": 1})
    assert e.value.body["error"]["type"] == "invalid_request_error" and "bogus_field" in e.value.body["error"]["message"]
    with pytest.raises(anthropic.NotFoundError) as e:
        client(smol).messages.create(model="claude-nope", max_tokens=5, messages=HELLO)
    assert e.value.body["error"]["type"] == "not_found_error"


def test_x_api_key(tiny_with_key):
    url = tiny_with_key.url + "/v1/messages"
    body = {"max_tokens": 5, "messages": HELLO}
    status, text = request(url, body)
    assert status == 401 and json.loads(text)["error"]["type"] == "authentication_error"
    status, text = request(url, body, headers={"x-api-key": "wrong"})
    assert status == 401
    # Past the key; the tiny fixture has no tokenizer, so the text is refused.
    status, text = request(url, body, headers={"x-api-key": "sekret", "anthropic-version": "2023-06-01"})
    assert status == 400 and json.loads(text)["error"]["type"] == "invalid_request_error", text
    assert request(tiny_with_key.url + "/v1/models", headers={"x-api-key": "sekret"})[0] == 200
