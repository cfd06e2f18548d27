"""Tools reach the chat template; graceful shutdown on SIGTERM."""
import json
import signal
import threading
import time

import httpx

from conftest import FIXTURES, Server, request

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
MESSAGES = [{"role": "user", "content": "Weather in Paris?"}]


def count(server, **body):
    status, text = request(server.url + "/tokenize", {"messages": MESSAGES, **body, "return_token_strs": True})
    assert status == 200, text
    return json.loads(text)


def test_tools_reach_the_template(qwen3_tokenizer_model):
    plain = count(qwen3_tokenizer_model)
    with_tools = count(qwen3_tokenizer_model, tools=TOOLS)
    assert with_tools["count"] > plain["count"] + 20
    text = "".join(with_tools["token_strs"])
    assert "get_weather" in text and "<tools>" in text
    # Key order of the schema is kept (ordered JSON): "type" before "properties".
    assert text.index('"type": "object"') < text.index('"properties"')
    # tool_choice "none" still renders the tools, as vLLM does by default; no call is parsed then.
    assert count(qwen3_tokenizer_model, tools=TOOLS, tool_choice="none")["count"] == with_tools["count"]


def test_assistant_tool_call_history_renders(qwen3_tokenizer_model):
    history = MESSAGES + [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}]
    status, text = request(qwen3_tokenizer_model.url + "/tokenize",
                           {"messages": history, "tools": TOOLS, "return_token_strs": True})
    assert status == 200, text
    rendered = "".join(json.loads(text)["token_strs"])
    assert '"city": "Paris"' in rendered and "sunny" in rendered


def test_tokenizer_larger_than_model_vocab_is_400(qwen3_tokenizer_model):
    status, text = request(qwen3_tokenizer_model.url + "/v1/chat/completions", {"messages": MESSAGES})
    assert status == 400 and "vocabulary" in text


def test_sigterm_drains_running_stream_then_exits():
    server = Server([str(FIXTURES / "hf" / "qwen3"), "--max-model-len", "512"], "drain")
    body = {"prompt": [5, 6, 7], "max_tokens": 300, "stream": True, "ignore_eos": True}
    lines = []

    def consume():
        with httpx.Client(timeout=60) as http, http.stream("POST", server.url + "/v1/completions", json=body) as r:
            lines.extend(r.iter_lines())

    reader = threading.Thread(target=consume)
    reader.start()
    time.sleep(0.3)
    server.proc.send_signal(signal.SIGTERM)
    reader.join(timeout=30)
    assert server.proc.wait(timeout=30) == 0
    data = [line for line in lines if line.startswith("data: ")]
    assert data[-1] == "data: [DONE]"
    finishes = [json.loads(d[6:])["choices"][0]["finish_reason"] for d in data[:-1]
                if json.loads(d[6:])["choices"]]
    assert finishes[-1] in ("length", "abort")
    assert any("shutting down" in line for line in server.log)
