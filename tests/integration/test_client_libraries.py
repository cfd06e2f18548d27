"""The client libraries people point at an OpenAI-compatible server, used as their quick-starts
show against `strata serve` with SmolLM2: litellm (plain, streamed, a forced tool call),
LangChain's ChatOpenAI (invoke, stream, bind_tools, with_structured_output by function calling
and json_schema, on chat and on the Responses API) and instructor (TOOLS, JSON_SCHEMA, JSON and
RESPONSES_TOOLS modes, a streamed partial). Greedy text must equal the plain openai client's; forced
calls and schemas are held by constrained decoding, so the checks are of shape and validity."""
import os
from typing import Literal

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # its price list, else fetched at import

import instructor  # noqa: E402
import litellm  # noqa: E402
import openai  # noqa: E402
import pydantic  # noqa: E402
import pytest  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402

pytestmark = pytest.mark.filterwarnings(  # litellm's own pydantic usage, nothing of the server's
    "ignore::UserWarning:pydantic._internal._generate_schema", "ignore::DeprecationWarning:litellm")

ASK = "What is the weather in Paris?"
MESSAGES = [{"role": "user", "content": ASK}]
MAX_TOKENS = 100  # a forced call takes about 60 of SmolLM2's tokens, the tags included


class Forecast(pydantic.BaseModel):
    """The weather forecast for a city."""
    city: str
    unit: Literal["celsius", "fahrenheit"]
    days: int = pydantic.Field(ge=1, le=14)


FORECAST_TOOL = {"type": "function", "function": {
    "name": "get_forecast", "description": "The weather forecast for a city",
    "parameters": Forecast.model_json_schema()}}
NAMED_FORECAST = {"type": "function", "function": {"name": "get_forecast"}}


def openai_answer(smol, max_tokens=30):
    """The plain openai client's greedy answer to ASK: what every library must reproduce."""
    reply = smol.client().chat.completions.create(model=smol.model, messages=MESSAGES, max_tokens=max_tokens,
                                                  temperature=0)
    return reply.choices[0].message.content, reply.choices[0].finish_reason


# litellm: the "openai/" prefix routes to any OpenAI-compatible api_base.

def litellm_args(smol, **kw):
    return {"model": "openai/" + smol.model, "api_base": smol.url + "/v1", "api_key": "none",
            "messages": MESSAGES, "temperature": 0, **kw}


def test_litellm_completion_matches_openai(smol):
    text, finish = openai_answer(smol)
    reply = litellm.completion(**litellm_args(smol, max_tokens=30))
    choice = reply.choices[0]
    assert choice.message.content == text and choice.finish_reason == finish
    assert reply.usage.completion_tokens <= 30 and reply.usage.prompt_tokens > 0


def test_litellm_streamed(smol):
    text, finish = openai_answer(smol)
    chunks = list(litellm.completion(**litellm_args(smol, max_tokens=30, stream=True,
                                                    stream_options={"include_usage": True})))
    streamed = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert streamed == text
    rebuilt = litellm.stream_chunk_builder(chunks)
    assert rebuilt.choices[0].message.content == text and rebuilt.choices[0].finish_reason == finish
    assert 0 < rebuilt.usage.completion_tokens <= 30


@pytest.mark.parametrize("stream", [False, True])
def test_litellm_forced_tool_call(smol, stream):
    args = litellm_args(smol, max_tokens=MAX_TOKENS, tools=[FORECAST_TOOL], tool_choice=NAMED_FORECAST)
    reply = litellm.completion(**args, stream=True) if stream else litellm.completion(**args)
    if stream:
        reply = litellm.stream_chunk_builder(list(reply))
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls", choice
    [call] = choice.message.tool_calls
    assert call.function.name == "get_forecast" and call.id
    Forecast.model_validate_json(call.function.arguments)


# LangChain: ChatOpenAI with base_url; max_tokens goes out as max_completion_tokens.

def chat_model(smol, **kw):
    return ChatOpenAI(base_url=smol.url + "/v1", api_key="none", model=smol.model, temperature=0,
                      max_retries=0, timeout=120, **kw)


def test_langchain_invoke_and_stream(smol):
    text, finish = openai_answer(smol)
    llm = chat_model(smol, max_tokens=30, stream_usage=True)
    message = llm.invoke(ASK)
    assert message.content == text and message.response_metadata["finish_reason"] == finish
    assert 0 < message.usage_metadata["output_tokens"] <= 30
    streamed = None
    for chunk in llm.stream(ASK):
        streamed = chunk if streamed is None else streamed + chunk
    assert streamed.content == text
    assert streamed.usage_metadata["output_tokens"] == message.usage_metadata["output_tokens"]


def test_langchain_bind_tools_named(smol):
    llm = chat_model(smol, max_tokens=MAX_TOKENS).bind_tools([Forecast], tool_choice="Forecast")
    message = llm.invoke(ASK)
    assert message.response_metadata["finish_reason"] == "tool_calls"
    [call] = message.tool_calls
    assert call["name"] == "Forecast" and call["id"]
    Forecast.model_validate(call["args"])
    assert message.content == "" and not message.invalid_tool_calls


@pytest.mark.parametrize("use_responses_api", [False, True])
@pytest.mark.parametrize("method", ["function_calling", "json_schema"])
def test_langchain_structured_output(smol, method, use_responses_api):
    llm = chat_model(smol, max_tokens=MAX_TOKENS, use_responses_api=use_responses_api)
    llm = llm.with_structured_output(Forecast, method=method, include_raw=True)
    result = llm.invoke(ASK)
    assert result["parsing_error"] is None, result
    assert isinstance(result["parsed"], Forecast), result
    assert 1 <= result["parsed"].days <= 14


# instructor: a patched openai client; response_model is validated, max_retries=0 asks once.

def instructor_client(smol, mode):
    return instructor.from_openai(openai.OpenAI(base_url=smol.url + "/v1", api_key="none", max_retries=0),
                                  mode=mode)


@pytest.mark.parametrize("mode", [instructor.Mode.TOOLS, instructor.Mode.JSON_SCHEMA])
def test_instructor_modes(smol, mode):
    forecast = instructor_client(smol, mode).chat.completions.create(
        model=smol.model, response_model=Forecast, messages=MESSAGES, max_tokens=MAX_TOKENS, temperature=0,
        max_retries=0)
    assert isinstance(forecast, Forecast) and 1 <= forecast.days <= 14


def test_instructor_responses_tools(smol):
    """RESPONSES_TOOLS sends a forced call and text.format together on /v1/responses."""
    forecast = instructor_client(smol, instructor.Mode.RESPONSES_TOOLS).responses.create(
        model=smol.model, response_model=Forecast, input=ASK, max_output_tokens=MAX_TOKENS, temperature=0,
        max_retries=0)
    assert isinstance(forecast, Forecast) and 1 <= forecast.days <= 14


def test_instructor_json_mode(smol):
    """Mode.JSON asks for response_format json_object, which holds the answer to JSON but to no
    schema: the schema is only in instructor's system prompt. SmolLM2 is too small to follow
    that alone, so one example turn shows it the shape."""
    example = Forecast(city="London", unit="celsius", days=3).model_dump_json()
    messages = [{"role": "user", "content": "What is the 3-day forecast for London?"},
                {"role": "assistant", "content": example},
                {"role": "user", "content": "What is the 5-day forecast for Paris?"}]
    client = instructor_client(smol, instructor.Mode.JSON)
    forecast, completion = client.chat.completions.create_with_completion(
        model=smol.model, response_model=Forecast, messages=messages, max_tokens=MAX_TOKENS, temperature=0,
        max_retries=0)
    assert isinstance(forecast, Forecast)
    assert completion.choices[0].finish_reason == "stop"
    assert Forecast.model_validate_json(completion.choices[0].message.content).model_dump() == forecast.model_dump()


def test_instructor_partial_stream(smol):
    """create_partial streams the forced call's argument deltas and parses each prefix."""
    client = instructor_client(smol, instructor.Mode.TOOLS)
    partials = list(client.chat.completions.create_partial(
        model=smol.model, response_model=Forecast, messages=MESSAGES, max_tokens=MAX_TOKENS, temperature=0,
        max_retries=0))
    assert len(partials) > 1
    final = Forecast.model_validate(partials[-1].model_dump())
    assert final.unit in ("celsius", "fahrenheit") and 1 <= final.days <= 14
