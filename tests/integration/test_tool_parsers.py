"""--tool-call-parser through `strata serve` with SmolLM2 and the openai client: forced calls
in Llama 3's JSON and Mistral's list format (constrained decoding writes them, the parser of
that family reads them back), whole and streamed (an id/name delta, then the arguments,
merged by index as clients do), on Anthropic's /v1/messages too; gpt-oss's harmony (openai)
forces a named call by ending the prompt with its header; qwen3_coder's XML calls are forced
through a grammar; the parser in use is logged
at start-up, chosen from the template (Qwen3's writes <tool_call>: hermes; SmolLM2's names
none: hermes) when the flag is absent."""
import json

import openai
import pytest

from conftest import SMOL, Server, request
from test_tool_choice import MESSAGES, NAMED_TIME, TOOLS, check_call, merge_call_deltas


def serve_smol(parser):
    if not SMOL.exists():
        pytest.skip(f"SmolLM2 is not at {SMOL}; run scripts/setup.sh")
    return Server(["--max-model-len", "1024", "--num-kv-blocks", "512", "--tool-call-parser", parser,
                   "--enable-auto-tool-choice"], f"smol_{parser}")


@pytest.fixture(scope="module", params=["llama3_json", "mistral"])
def forcing(request):
    server = serve_smol(request.param)
    server.parser = request.param
    yield server
    server.stop()


@pytest.fixture(scope="module")
def coder():
    server = serve_smol("qwen3_coder")
    yield server
    server.stop()


def create(server, **kw):
    return server.client().chat.completions.create(model=server.model, messages=MESSAGES, tools=TOOLS,
                                                   max_tokens=kw.pop("max_tokens", 100), **kw)


def test_the_parser_is_logged(forcing, smol, qwen3_tokenizer_model):
    assert f"tool-call parser: {forcing.parser} (--tool-call-parser)\n" in forcing.log
    assert ("tool-call parser: hermes (the chat template names no known tool-call format; --tool-call-parser "
            "picks another)\n") in smol.log
    assert ("tool-call parser: hermes (the chat template writes <tool_call>; --tool-call-parser picks another)\n"
            in qwen3_tokenizer_model.log)


@pytest.mark.parametrize("tool_choice,name", [("required", None), (NAMED_TIME, "get_time")])
def test_forced_call_in_the_parsers_format(forcing, tool_choice, name):
    reply = create(forcing, tool_choice=tool_choice, parallel_tool_calls=False, temperature=0)
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls", choice
    assert choice.message.content is None
    assert len(choice.message.tool_calls) == 1
    call = choice.message.tool_calls[0]
    if forcing.parser == "mistral":  # Mistral's templates want 9-character ids back
        assert len(call.id) == 9 and call.id.isalnum(), call.id
        call.id = "call_" + call.id
    check_call(call, name)


def test_streamed_deltas_merge_to_the_same_call(forcing):
    whole = create(forcing, tool_choice=NAMED_TIME, temperature=0).choices[0].message.tool_calls
    calls, content, finish = [], "", None
    for chunk in create(forcing, tool_choice=NAMED_TIME, temperature=0, stream=True):
        for c in chunk.choices:
            content += c.delta.content or ""
            merge_call_deltas(calls, c.delta.tool_calls or [])
            finish = c.finish_reason or finish
    assert finish == "tool_calls" and content == ""
    assert [(c.function.name, c.function.arguments) for c in calls] == \
        [(c.function.name, c.function.arguments) for c in whole]


# get_time's parameters with the zone's length bounded: greedy, the tiny model's Mistral string
# never closes within max_tokens (sampled it closed only most of the time).
BOUNDED_TIME_SCHEMA = {**TOOLS[1]["function"]["parameters"],
                       "properties": {**TOOLS[1]["function"]["parameters"]["properties"],
                                      "zone": {"type": "string", "maxLength": 12}}}


def test_anthropic_messages_use_the_parser(forcing):
    status, body = request(forcing.url + "/v1/messages", {
        "model": forcing.model, "max_tokens": 100, "temperature": 0,
        "messages": [{"role": "user", "content": "Time in Tokyo?"}],
        "tool_choice": {"type": "tool", "name": "get_time"},
        "tools": [{"name": "get_time", "input_schema": BOUNDED_TIME_SCHEMA}]})
    assert status == 200, body
    reply = json.loads(body)
    assert reply["stop_reason"] == "tool_use"
    uses = [block for block in reply["content"] if block["type"] == "tool_use"]
    assert len(uses) == 1 and uses[0]["name"] == "get_time" and isinstance(uses[0]["input"]["zone"], str)


def test_harmony_forces_a_named_call_but_not_a_choice():
    server = serve_smol("openai")
    try:
        for stream in (False, True):
            reply = create(server, tool_choice=NAMED_TIME, temperature=0, stream=stream)
            if stream:
                calls, finish = [], None
                for chunk in reply:
                    for c in chunk.choices:
                        merge_call_deltas(calls, c.delta.tool_calls or [])
                        finish = c.finish_reason or finish
            else:
                calls, finish = reply.choices[0].message.tool_calls, reply.choices[0].finish_reason
            assert finish == "tool_calls" and len(calls) == 1
            check_call(calls[0], "get_time")
        with pytest.raises(openai.BadRequestError) as error:
            create(server, tool_choice="required", max_tokens=5)
        assert "name one function in tool_choice" in error.value.body["message"]
    finally:
        server.stop()


# Values of bounded types, so the XML call closes within max_tokens (free text may not).
ZONE_TOOL = {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {
    "zone": {"type": "string", "enum": ["UTC", "CET", "JST"]}, "offset": {"type": "integer"}},
    "required": ["zone", "offset"]}}}


def test_qwen3_coder_forces_its_xml_calls(coder):
    """qwen3_coder's XML calls are forced through a grammar of the tools: the parser reads the
    call back with the schema's types."""
    for tool_choice in ("required", NAMED_TIME):
        reply = coder.client().chat.completions.create(
            model=coder.model, messages=[{"role": "user", "content": "Time in Tokyo?"}], tools=[ZONE_TOOL],
            tool_choice=tool_choice, parallel_tool_calls=False, temperature=0, max_tokens=100)
        choice = reply.choices[0]
        assert choice.finish_reason == "tool_calls", choice
        assert choice.message.content is None and len(choice.message.tool_calls) == 1
        call = choice.message.tool_calls[0]
        args = json.loads(call.function.arguments)
        assert call.function.name == "get_time" and list(args) == ["zone", "offset"], call
        assert args["zone"] in ("UTC", "CET", "JST") and isinstance(args["offset"], int)
    reply = create(coder, tool_choice="auto", max_tokens=5)
    assert reply.choices[0].finish_reason in ("stop", "length")
