"""Tool-call arguments streamed as the model writes them, through `strata serve` and the real
clients, for every --tool-call-parser: the Qwen3 fixture with a byte-level tokenizer of its
vocabulary and a template that renders tools (fixture_folders.qwen3_with_tool_template) is forced to call a tool whose parameters are all bounded (an integer,
an enum, a boolean), greedy, so the output is short and the same each run. Streamed, the first
delta of the call carries index, id, type and name with arguments "", then several argument
pieces follow, and they add up exactly to the non-streamed call's arguments; the same for the
Responses API's function_call_arguments.delta events and Anthropic's input_json_delta events."""
import json

import anthropic
import pytest

from conftest import Server
from fixture_folders import qwen3_with_tool_template

ALARM = {"type": "function", "function": {"name": "set_alarm", "parameters": {
    "type": "object", "properties": {"hour": {"type": "integer"}, "period": {"type": "string", "enum": ["am", "pm"]},
                                     "loud": {"type": "boolean"}},
    "required": ["hour", "period", "loud"], "additionalProperties": False}}}
MESSAGES = [{"role": "user", "content": "Wake me at seven."}]
NAMED = {"type": "function", "function": {"name": "set_alarm"}}
PARSERS = ["hermes", "llama3_json", "mistral", "deepseek_v3", "qwen3_coder", "openai"]


@pytest.fixture(scope="module", params=PARSERS)
def served(request, tmp_path_factory):
    folder = qwen3_with_tool_template(tmp_path_factory.mktemp("qwen3_tools"))
    server = Server([str(folder), "--max-model-len", "1024", "--tool-call-parser", request.param],
                    f"tool_stream_{request.param}")
    server.parser = request.param
    yield server
    server.stop()


def create(server, **kw):
    return server.client().chat.completions.create(model=server.model, messages=MESSAGES, tools=[ALARM],
                                                   max_tokens=400, temperature=0, **kw)


def check_arguments(arguments):
    """The fixture's random weights pick the values; the schema bounds them."""
    args = json.loads(arguments)
    assert set(args) == {"hour", "period", "loud"}, arguments
    assert isinstance(args["hour"], int) and args["period"] in ("am", "pm") and isinstance(args["loud"], bool)


@pytest.mark.parametrize("tool_choice", [NAMED, "required"])
def test_streamed_pieces_add_up_to_the_whole_call(served, tool_choice):
    whole = create(served, tool_choice=tool_choice, parallel_tool_calls=False).choices[0]
    assert whole.finish_reason == "tool_calls", whole
    assert len(whole.message.tool_calls) == 1
    call = whole.message.tool_calls[0]
    check_arguments(call.function.arguments)
    heads, pieces, content, finish = [], [], "", None
    for chunk in create(served, tool_choice=tool_choice, parallel_tool_calls=False, stream=True):
        for c in chunk.choices:
            content += c.delta.content or ""
            finish = c.finish_reason or finish
            for d in c.delta.tool_calls or []:
                assert d.index == 0
                if d.id is not None:
                    assert not pieces, "the id and name come first"
                    heads.append((d.type, d.function.name, d.function.arguments))
                else:
                    assert d.function.name is None and d.function.arguments
                    pieces.append(d.function.arguments)
    assert heads == [("function", "set_alarm", "")]
    assert len(pieces) >= 2, pieces  # streamed as written, not whole at the end
    assert "".join(pieces) == call.function.arguments
    assert finish == "tool_calls" and content == ""


def test_responses_argument_deltas_add_up(served):
    kw = {"model": served.model, "input": "Wake me at seven.", "max_output_tokens": 400, "temperature": 0,
          "tools": [{"type": "function", **ALARM["function"]}], "tool_choice": {"type": "function", "name": "set_alarm"}}
    whole = served.client().responses.create(**kw)
    calls = [item for item in whole.output if item.type == "function_call"]
    assert len(calls) == 1 and calls[0].name == "set_alarm"
    deltas, done = [], None
    for event in served.client().responses.create(stream=True, **kw):
        if event.type == "response.function_call_arguments.delta":
            deltas.append(event.delta)
        elif event.type == "response.function_call_arguments.done":
            done = event.arguments
    assert len(deltas) >= 2, deltas
    assert "".join(deltas) == done == calls[0].arguments


def test_anthropic_input_json_deltas_add_up(served):
    client = anthropic.Anthropic(base_url=served.url, api_key="none", max_retries=0, timeout=120)
    kw = {"model": served.model, "max_tokens": 400, "extra_body": {"temperature": 0},  # the SDK has no temperature
          "messages": [{"role": "user", "content": "Wake me at seven."}],
          "tools": [{"name": "set_alarm", "input_schema": ALARM["function"]["parameters"]}],
          "tool_choice": {"type": "tool", "name": "set_alarm"}}
    whole = client.messages.create(**kw)
    uses = [block for block in whole.content if block.type == "tool_use"]
    assert whole.stop_reason == "tool_use" and len(uses) == 1
    pieces = []
    with client.messages.stream(**kw) as stream:
        for event in stream:
            if event.type == "content_block_delta" and event.delta.type == "input_json_delta":
                pieces.append(event.delta.partial_json)
        final = stream.get_final_message()
    assert len(pieces) >= 2, pieces
    assert json.loads("".join(pieces)) == uses[0].input
    assert [b.input for b in final.content if b.type == "tool_use"] == [uses[0].input]
