"""tool_choice "required" and a named function through `strata serve` with SmolLM2, whose
template does not even render tools: constrained decoding makes it answer with a tool call
anyway, in the Hermes format, with arguments that follow the function's schema. Streamed and
not, n = 2, parallel_tool_calls, the openai client's .parse() with a pydantic tool, and the
400s of tool choices that cannot be honoured."""
import json
from typing import Literal

import openai
import pydantic
import pytest

MESSAGES = [{"role": "user", "content": "What is the weather in Paris?"}]
WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Weather for a city",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["city", "unit"]}}}
TIME = {"type": "function", "function": {
    "name": "get_time", "parameters": {"type": "object", "properties": {"zone": {"type": "string"}},
                                       "required": ["zone"]}}}
TOOLS = [WEATHER, TIME]


class Weather(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")
    city: str
    unit: Literal["celsius", "fahrenheit"]


class Time(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid")
    zone: str


ARGUMENTS = {"get_weather": Weather, "get_time": Time}
NAMED_TIME = {"type": "function", "function": {"name": "get_time"}}


def check_call(call, name=None):
    """A call of one of TOOLS (or of `name`) whose arguments follow its schema."""
    assert call.type == "function" and call.id.startswith("call_")
    assert call.function.name in ARGUMENTS and (name is None or call.function.name == name)
    ARGUMENTS[call.function.name].model_validate_json(call.function.arguments)


def create(smol, **kw):
    return smol.client().chat.completions.create(
        model=smol.model, messages=MESSAGES, tools=TOOLS, max_tokens=kw.pop("max_tokens", 100), **kw)


@pytest.mark.parametrize("tool_choice,name", [("required", None), (NAMED_TIME, "get_time")])
def test_forced_call_non_streamed(smol, tool_choice, name):
    reply = create(smol, tool_choice=tool_choice, parallel_tool_calls=False, temperature=0)
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls", choice
    assert choice.message.content is None
    assert len(choice.message.tool_calls) == 1
    check_call(choice.message.tool_calls[0], name)


def merge_call_deltas(calls, deltas):
    """Tool-call deltas merged by index as clients do: the first of a call carries its id and
    name, the later ones argument text."""
    for d in deltas:
        if d.id is not None:
            assert d.index == len(calls) and d.function.name, d
            calls.append(openai.types.chat.ChatCompletionMessageToolCall(
                id=d.id, type="function", function={"name": d.function.name, "arguments": ""}))
        calls[d.index].function.arguments += d.function.arguments or ""


@pytest.mark.parametrize("tool_choice,name", [("required", None), (NAMED_TIME, "get_time")])
def test_forced_call_streamed_with_n_2(smol, tool_choice, name):
    calls, finish, content = {0: [], 1: []}, {}, {0: "", 1: ""}
    for chunk in create(smol, tool_choice=tool_choice, parallel_tool_calls=False, n=2, temperature=0.8, seed=5,
                        stream=True):
        for c in chunk.choices:
            content[c.index] += c.delta.content or ""
            merge_call_deltas(calls[c.index], c.delta.tool_calls or [])
            if c.finish_reason:
                finish[c.index] = c.finish_reason
    assert finish == {0: "tool_calls", 1: "tool_calls"}
    for index in (0, 1):
        assert content[index] == ""
        assert len(calls[index]) == 1
        check_call(calls[index][0], name)


def test_named_call_with_n_2_non_streamed(smol):
    reply = create(smol, tool_choice=NAMED_TIME, n=2, temperature=1.0, seed=11)
    assert len(reply.choices) == 2
    for choice in reply.choices:
        assert choice.finish_reason == "tool_calls"
        assert len(choice.message.tool_calls) == 1  # a named function is called once
        check_call(choice.message.tool_calls[0], "get_time")


def test_required_with_parallel_calls_allowed(smol):
    """At least one call; after it the model may call again or end: right after the first call
    closes, the end of its turn is among the tokens the mask lets through. Greedy, this small
    model prefers a newline and another call, so it runs into max_tokens. Every complete call
    is valid."""
    reply = create(smol, tool_choice="required", temperature=0, max_tokens=120, logprobs=True, top_logprobs=5)
    choice = reply.choices[0]
    assert choice.finish_reason in ("tool_calls", "length")
    assert len(choice.message.tool_calls) >= 1
    for call in choice.message.tool_calls:
        check_call(call)
    text, tokens = "", choice.logprobs.content
    for i, token in enumerate(tokens):
        text += token.token
        if text.endswith("</tool_call>"):
            break
    after = {t.token: t.logprob for t in tokens[i + 1].top_logprobs}
    assert after.get("<|im_end|>") is not None and after["<|im_end|>"] > -5, after  # may end here


def test_pydantic_tool_with_parse(smol):
    """openai's .parse() with a strict pydantic tool: the named call comes back parsed."""
    tool = openai.pydantic_function_tool(Weather, name="report_weather")
    reply = smol.client().chat.completions.parse(
        model=smol.model, messages=MESSAGES, tools=[tool], max_tokens=100, temperature=0,
        tool_choice={"type": "function", "function": {"name": "report_weather"}})
    call = reply.choices[0].message.tool_calls[0]
    assert isinstance(call.function.parsed_arguments, Weather)


@pytest.mark.parametrize("body,param", [
    ({"tool_choice": {"type": "function", "function": {"name": "nope"}}}, "tool_choice"),
    ({"tool_choice": "required", "tools": None}, "tool_choice"),
    ({"tool_choice": "required", "extra_body": {"structured_outputs": {"regex": "a+"}}}, "structured_outputs"),
    ({"tool_choice": "required", "tools": [{"type": "function", "function": {
        "name": "f", "strict": True, "parameters": {"type": "object", "properties": {
            "a": {"type": "integer", "multipleOf": 3}}, "required": ["a"], "additionalProperties": False}}}]},
     "tools"),
])
def test_unhonourable_tool_choices_are_400(smol, body, param):
    full = {"model": smol.model, "messages": MESSAGES, "tools": TOOLS, "max_tokens": 5, **body}
    if full["tools"] is None:
        del full["tools"]
    with pytest.raises(openai.BadRequestError) as error:
        smol.client().chat.completions.create(**full)
    assert error.value.body["param"] == param, error.value.body


@pytest.mark.parametrize("response_format", [{"type": "json_object"}, {"type": "json_schema", "json_schema": {
    "name": "weather", "schema": Weather.model_json_schema()}}])
def test_forced_call_beside_a_json_response_format(smol, response_format):
    """The format shapes the assistant's text and a forced call's turn has none, so both hold
    (OpenAI takes the pair; instructor's RESPONSES_TOOLS mode sends it)."""
    reply = create(smol, tool_choice=NAMED_TIME, response_format=response_format, temperature=0)
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content is None, choice
    check_call(choice.message.tool_calls[0], "get_time")


def test_auto_and_none_still_answer_in_text(smol):
    for tool_choice in ("auto", "none"):
        reply = create(smol, tool_choice=tool_choice, temperature=0, max_tokens=12)
        assert reply.choices[0].message.content
        assert reply.choices[0].finish_reason in ("stop", "length")
        assert json.dumps(reply.choices[0].message.tool_calls) in ("null", "[]")
