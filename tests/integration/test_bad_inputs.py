"""A corpus of bad inputs on every route of the SmolLM2 server: malformed and truncated JSON,
wrong types for every field, out-of-range and non-finite numbers, invalid UTF-8 and lone
surrogates, 10k-deep nesting in every object position, oversized bodies, huge stop lists and
tool schemas, token ids outside the vocabulary, prompts over the context, wrong methods.
Every case gets a 4xx OpenAI error body or a well-formed answer; the server stays healthy
(checked after each batch) and alive at the end. Transport cases (slow or idle connections,
conflicting Content-Length) belong to the HTTP server's own tests."""
import json
import time
import urllib.error
import urllib.request

import pytest

from conftest import get

CHAT, COMPLETIONS, TOKENIZE, DETOKENIZE = "/v1/chat/completions", "/v1/completions", "/tokenize", "/detokenize"
ANTHROPIC, COUNT_TOKENS, RESPONSES = "/v1/messages", "/v1/messages/count_tokens", "/v1/responses"
POST_ROUTES = (CHAT, COMPLETIONS, TOKENIZE, DETOKENIZE, ANTHROPIC, COUNT_TOKENS, RESPONSES)
ANTHROPIC_ROUTES = (ANTHROPIC, COUNT_TOKENS)  # errors in Anthropic's shape
MESSAGES = [{"role": "user", "content": "Say hi."}]
BASE = {
    CHAT: {"messages": MESSAGES, "max_tokens": 2},
    COMPLETIONS: {"prompt": "Hello", "max_tokens": 2},
    TOKENIZE: {"prompt": "Hello"},
    DETOKENIZE: {"tokens": [1, 2, 3]},
    ANTHROPIC: {"messages": MESSAGES, "max_tokens": 2},
    COUNT_TOKENS: {"messages": MESSAGES},
    RESPONSES: {"input": "Say hi.", "max_output_tokens": 2},
}
VOCAB = 49152  # SmolLM2
BATCH = 25     # /health after every this many cases

# A value of every JSON kind that is wrong somewhere, each field gets all of them.
WRONG = ["x", "", 1.5, -1, 0, True, None, [], [1], {}, {"a": 1}, 2**64, -2**63 - 1, 1e308]
CHAT_FIELDS = ["model", "messages", "max_tokens", "max_completion_tokens", "temperature", "top_p", "top_k", "min_p",
               "presence_penalty", "frequency_penalty", "repetition_penalty", "seed", "stop", "stop_token_ids", "n",
               "ignore_eos", "skip_special_tokens", "priority", "stream", "stream_options", "logprobs",
               "top_logprobs", "tools", "tool_choice", "response_format", "chat_template_kwargs",
               "add_generation_prompt", "user", "logit_bias", "parallel_tool_calls", "metadata", "store",
               "service_tier", "modalities", "reasoning_effort", "include_reasoning"]
COMPLETION_FIELDS = ["model", "prompt", "max_tokens", "temperature", "top_p", "top_k", "min_p", "presence_penalty",
                     "frequency_penalty", "repetition_penalty", "seed", "stop", "stop_token_ids", "n", "ignore_eos",
                     "skip_special_tokens", "priority", "stream", "stream_options", "logprobs", "echo", "suffix",
                     "return_token_ids", "best_of", "logit_bias", "user"]
TOKENIZE_FIELDS = ["model", "prompt", "messages", "add_special_tokens", "return_token_strs", "tools",
                   "chat_template_kwargs", "reasoning_effort"]
DETOKENIZE_FIELDS = ["model", "tokens"]
ANTHROPIC_FIELDS = ["model", "messages", "max_tokens", "system", "stop_sequences", "temperature", "top_p", "top_k",
                    "stream", "tools", "tool_choice", "thinking", "output_config", "chat_template_kwargs", "metadata",
                    "cache_control", "service_tier"]
COUNT_TOKENS_FIELDS = ["model", "messages", "system", "tools", "tool_choice", "thinking", "output_config"]
RESPONSES_FIELDS = ["model", "input", "instructions", "max_output_tokens", "temperature", "top_p", "tools",
                    "tool_choice", "parallel_tool_calls", "stream", "previous_response_id", "store", "text",
                    "reasoning", "metadata", "user", "truncation", "background", "include", "stream_options",
                    "service_tier"]


def deep(depth, leaf=1):
    """`depth` nested arrays around `leaf`, as JSON text."""
    return "[" * depth + json.dumps(leaf) + "]" * depth


def deep_objects(depth):
    return '{"a":' * depth + "1" + "}" * depth


def raw_case(route, raw, name, method="POST"):
    return {"route": route, "raw": raw, "name": name, "method": method}


def body_case(route, body, name):
    return raw_case(route, json.dumps(body).encode(), name)


def with_field(route, field, value):
    body = dict(BASE[route])
    body[field] = value
    if field != "max_tokens":
        body.setdefault("max_tokens", 2) if route in (CHAT, COMPLETIONS) else None
    return body


def malformed_cases():
    good = json.dumps(BASE[COMPLETIONS]).encode()
    texts = [b"", b" ", b"{", b"}", b"[", b"null", b"1", b'"x"', b"[1,2]", b"true", b'{"a":}', b'{"a" 1}',
             b"{'a': 1}", b'{"a":1,}', b'{"a":1}}', b'{"a":1} trailing', b'{"a":1}{"b":2}', b"\xff\xfe",
             b"\xef\xbb\xbf" + good, b'{"prompt": "a\x00b", "max_tokens": 1}', b"{\x00}", b'{"a": 01}',
             b'{"a": .5}', b'{"a": 1.}', b'{"a": +1}', b'{"a": 0x10}', b'{"a": "\\x41"}', b'{"a": "\\u12"}',
             b'{"a": "line\nbreak"}', b'{a: 1}', b'{"a": tru}', b'{"a": nul}']
    texts += [good[:cut] for cut in (1, 5, 10, len(good) // 2, len(good) - 1)]
    return [raw_case(route, t, f"malformed {t[:20]!r}") for route in POST_ROUTES for t in texts]


def wrong_type_cases():
    cases = []
    for route, fields in ((CHAT, CHAT_FIELDS), (COMPLETIONS, COMPLETION_FIELDS), (TOKENIZE, TOKENIZE_FIELDS),
                          (DETOKENIZE, DETOKENIZE_FIELDS), (ANTHROPIC, ANTHROPIC_FIELDS),
                          (COUNT_TOKENS, COUNT_TOKENS_FIELDS), (RESPONSES, RESPONSES_FIELDS)):
        for field in fields:
            for value in WRONG:
                if field == "stream" and value is True:
                    continue  # a valid stream: covered by the stream cases
                cases.append(body_case(route, with_field(route, field, value), f"{route} {field}={value!r}"[:80]))
    return cases


def number_cases():
    cases = []
    for literal in (b"NaN", b"Infinity", b"-Infinity", b"1e999", b"-1e999", b"1" + b"0" * 400, b"1e-400",
                    b"-0", b"9223372036854775808", b"-9223372036854775809", b"18446744073709551616"):
        for field in ("temperature", "max_tokens", "seed", "top_k", "n", "top_p"):
            body = b'{"prompt": "Hi", "max_tokens": 2, "' + field.encode() + b'": ' + literal + b"}"
            if field == "max_tokens":
                body = b'{"prompt": "Hi", "max_tokens": ' + literal + b"}"
            cases.append(raw_case(COMPLETIONS, body, f"number {field}={literal[:20]!r}"))
    return cases


def text_encoding_cases():
    cases = []
    bad_strings = [b'"\\ud800"', b'"\\udc00"', b'"a\\ud800b"', b'"\\ud800\\u0041"', b'"\\udbff\\udfff"',
                   b'"\xff"', b'"\xc0\xaf"', b'"\xed\xa0\x80"', b'"\xf4\x90\x80\x80"', b'"\xe2\x82"', b'"\x80abc"',
                   b'"\\u0000"', b'"\xf0\x9f\x98\x80"']
    for s in bad_strings:
        cases.append(raw_case(COMPLETIONS, b'{"prompt": ' + s + b', "max_tokens": 2}', f"utf8 prompt {s!r}"))
        cases.append(raw_case(CHAT, b'{"messages": [{"role": "user", "content": ' + s + b'}], "max_tokens": 2}',
                              f"utf8 content {s!r}"))
        cases.append(raw_case(COMPLETIONS, b'{"prompt": "Hi", "max_tokens": 2, "stop": [' + s + b"]}",
                              f"utf8 stop {s!r}"))
        cases.append(raw_case(TOKENIZE, b'{"prompt": ' + s + b"}", f"utf8 tokenize {s!r}"))
        cases.append(raw_case(CHAT, b'{"messages": [{"role": "user", "content": "hi"}], "model": ' + s + b"}",
                              f"utf8 model {s!r}"))
    return cases


def nesting_cases():
    cases = []
    for depth in (10_000, 100_000):
        d = deep(depth).encode()
        o = deep_objects(depth).encode()
        msg = b'[{"role": "user", "content": "hi"'
        positions = {
            CHAT: [b'{"messages": ' + msg + b'}], "max_tokens": 2, "chat_template_kwargs": {"x": ' + d + b"}}",
                   b'{"messages": ' + msg + b', "extra": ' + o + b"}], \"max_tokens\": 2}",
                   b'{"messages": ' + msg + b'}], "max_tokens": 2, "tools": [{"type": "function", "function": '
                   b'{"name": "f", "parameters": ' + o + b"}}]}",
                   b'{"messages": ' + msg + b'}], "max_tokens": 2, "response_format": {"type": "json_schema", '
                   b'"json_schema": {"name": "s", "schema": ' + o + b"}}}",
                   b'{"messages": ' + msg + b'}], "max_tokens": ' + d + b"}",
                   b'{"messages": ' + d + b', "max_tokens": 2}',
                   b'{"messages": ' + msg + b'}], "max_tokens": 2, "stop": ' + d + b"}",
                   b'{"messages": ' + msg + b'}], "max_tokens": 2, "logit_bias": ' + o + b"}",
                   b'{"messages": ' + msg + b'}], "max_tokens": 2, "stream_options": ' + o + b"}"],
            COMPLETIONS: [b'{"prompt": ' + d + b', "max_tokens": 2}',
                          b'{"prompt": "Hi", "temperature": ' + d + b"}",
                          b'{"prompt": "Hi", "max_tokens": 2, "unknown": ' + o + b"}",
                          b'{"prompt": "Hi", "max_tokens": 2, "stop_token_ids": ' + d + b"}"],
            TOKENIZE: [b'{"prompt": ' + d + b"}", b'{"messages": ' + msg + b'}], "chat_template_kwargs": ' + o + b"}"],
            DETOKENIZE: [b'{"tokens": ' + d + b"}"],
        }
        for route, bodies in positions.items():
            cases += [raw_case(route, b, f"nesting {depth} {route} #{i}") for i, b in enumerate(bodies)]
        cases.append(raw_case(COMPLETIONS, d, f"nesting {depth} whole body"))
    # Deep JSON text inside a string the server parses: assistant tool-call arguments.
    calls = [{"id": "c", "type": "function", "function": {"name": "f", "arguments": deep(20_000)}}]
    cases.append(body_case(CHAT, {"messages": MESSAGES + [{"role": "assistant", "content": None,
                                                           "tool_calls": calls}], "max_tokens": 2}, "deep arguments"))
    return cases


def size_cases():
    big_tools = [{"type": "function", "function": {"name": f"f{i}", "description": "d" * 200, "parameters": {
        "type": "object", "properties": {f"p{k}": {"type": "string"} for k in range(20)}}}} for i in range(200)]
    return [
        raw_case(COMPLETIONS, b'{"prompt": "' + b"a" * (5 << 20) + b'"}', "body over 4 MiB"),
        raw_case(CHAT, b"[" * (5 << 20), "5 MiB of brackets"),
        body_case(COMPLETIONS, {"prompt": "Hi", "max_tokens": 2, "stop": ["x"] * 10_000}, "10k stop strings"),
        body_case(COMPLETIONS, {"prompt": "Hi", "max_tokens": 2, "stop": ["x" * 100_000]}, "100 KB stop string"),
        body_case(COMPLETIONS, {"prompt": "Hi", "max_tokens": 2, "stop_token_ids": list(range(20_000))},
                  "20k stop token ids"),
        body_case(CHAT, {"messages": MESSAGES, "max_tokens": 2, "tools": big_tools}, "200 big tools"),
        body_case(CHAT, {"messages": MESSAGES, "max_tokens": 2, "tools": big_tools, "tool_choice": "required"},
                  "200 big tools forced"),
        body_case(CHAT, {"messages": MESSAGES * 2000, "max_tokens": 2}, "2000 messages"),
        body_case(COMPLETIONS, {"prompt": "hello " * 5000, "max_tokens": 2}, "prompt over the context"),
        body_case(COMPLETIONS, {"prompt": [1] * 2000, "max_tokens": 2}, "token prompt over the context"),
        body_case(COMPLETIONS, {"prompt": [1, 2], "max_tokens": 5000}, "max_tokens over the context"),
        body_case(CHAT, {"messages": [{"role": "user", "content": "hi " * 3000}], "max_tokens": 2}, "chat over"),
        body_case(COMPLETIONS, {"prompt": ["Hi"] * 300, "max_tokens": 1}, "300 prompts"),
        body_case(COMPLETIONS, {"prompt": ["Hi"] * 256, "max_tokens": 1, "n": 128}, "256 prompts x n=128"),
        body_case(TOKENIZE, {"prompt": "word " * 200_000}, "1 MB to tokenize"),
        body_case(DETOKENIZE, {"tokens": [100] * 200_000}, "200k tokens to detokenize"),
        body_case(CHAT, {"messages": MESSAGES, "max_tokens": 2, "chat_template_kwargs": {
            f"k{i}": i for i in range(20_000)}}, "20k template variables"),
    ]


def token_id_cases():
    bad_ids = [[-1], [VOCAB], [VOCAB + 1], [2**31], [2**31 - 1], [2**63], [2**64], [1.0], ["1"], [None], [[1]],
               [1, -5, 2], [True]]
    cases = []
    for ids in bad_ids:
        cases.append(body_case(COMPLETIONS, {"prompt": ids, "max_tokens": 2}, f"prompt ids {ids}"))
        cases.append(body_case(COMPLETIONS, {"prompt": [ids, [1, 2]], "max_tokens": 2}, f"prompt [ids] {ids}"))
        cases.append(body_case(DETOKENIZE, {"tokens": ids}, f"detokenize {ids}"))
        cases.append(body_case(COMPLETIONS, {"prompt": "Hi", "max_tokens": 2, "stop_token_ids": ids},
                               f"stop ids {ids}"))
    cases.append(body_case(COMPLETIONS, {"prompt": [[]], "max_tokens": 2}, "empty inner prompt"))
    cases.append(body_case(COMPLETIONS, {"prompt": [[], [1]], "max_tokens": 2}, "one empty inner prompt"))
    return cases


def chat_shape_cases():
    bodies = [
        {"messages": [{"content": "hi"}]}, {"messages": [{"role": "user"}]}, {"messages": [{}]},
        {"messages": [None]}, {"messages": [[]]}, {"messages": [{"role": ["user"], "content": "hi"}]},
        {"messages": [{"role": "user", "content": [{"type": "text"}]}]},
        {"messages": [{"role": "user", "content": [{"type": "text", "text": 5}]}]},
        {"messages": [{"role": "user", "content": [None]}]},
        {"messages": [{"role": "user", "content": {"text": "hi"}}]},
        {"messages": [{"role": "assistant", "content": None, "tool_calls": "x"}]},
        {"messages": [{"role": "assistant", "content": None, "tool_calls": [None, 5, {"function": "f"}]}]},
        {"messages": [{"role": "assistant", "content": None, "tool_calls": [
            {"function": {"name": "f", "arguments": "{not json"}}]}]},
        {"messages": [{"role": "tool", "content": "x", "tool_call_id": {"a": 1}}]},
        {"messages": MESSAGES, "tools": [{"type": "function", "function": {"name": "f", "parameters": "x"}}]},
        {"messages": MESSAGES, "tools": [{"type": "retrieval"}]},
        {"messages": MESSAGES, "tools": [None]},
        {"messages": MESSAGES, "tool_choice": {"type": "function"}},
        {"messages": MESSAGES, "tool_choice": {"type": "function", "function": {"name": 5}}},
        {"messages": MESSAGES, "response_format": {"type": "json_schema", "json_schema": {"schema": 5}}},
        {"messages": MESSAGES, "response_format": {"type": "json_schema", "json_schema": {"schema": {
            "type": "string", "pattern": "(a+"}}}},
        {"messages": MESSAGES, "response_format": {"type": "json_schema", "json_schema": {"schema": {
            "$defs": {"A": {"$ref": "#/$defs/A"}}, "$ref": "#/$defs/A"}}}},
        {"messages": MESSAGES, "response_format": {"type": "json_schema", "json_schema": {"schema": {
            "type": "object", "properties": {"a": {"type": "string"}}, "required": ["zz"]}}}},
        {"messages": MESSAGES, "response_format": {"type": "json_schema", "json_schema": {"schema": {
            "$defs": {f"L{i}": {"type": "object", "properties": {f"p{k}": {"$ref": f"#/$defs/L{i + 1}"}
                                                                for k in range(8)}} for i in range(40)},
            "$ref": "#/$defs/L0"}}}},
        {"messages": MESSAGES, "response_format": {"type": "xml"}},
        {"messages": MESSAGES, "response_format": "json"},
        {"messages": MESSAGES, "chat_template_kwargs": {"messages": 5}},
        {"messages": MESSAGES, "chat_template_kwargs": {"add_generation_prompt": [1]}},
        {"messages": MESSAGES, "top_logprobs": 5},
        {"messages": MESSAGES, "logprobs": True, "top_logprobs": 21},
        {"messages": MESSAGES, "n": 129},
        {"messages": MESSAGES, "model": "gpt-4"},
        {"messages": MESSAGES, "tool_choice": "required"},
        {"messages": MESSAGES, "tool_choice": {"type": "function", "function": {"name": "f"}}, "tools": [
            {"type": "function", "function": {"name": "g"}}]},
        {"messages": MESSAGES, "tool_choice": "required", "tools": [
            {"type": "function", "function": {"name": "a\"b"}}]},
        {"messages": MESSAGES, "tool_choice": "required", "tools": [
            {"type": "function", "function": {"name": "f", "strict": True, "parameters": {"type": "string"}}}]},
        {"messages": MESSAGES, "tool_choice": "required", "tools": [
            {"type": "function", "function": {"name": "f"}}, {"type": "function", "function": {"name": "f"}}]},
        {"messages": MESSAGES, "tool_choice": {"type": "allowed_tools", "allowed_tools": {"mode": "required"}}},
        {"messages": MESSAGES, "logit_bias": {str(VOCAB): 1}},
        {"messages": MESSAGES, "logit_bias": {str(i): -100 for i in range(2000)}},
        {"messages": MESSAGES, "frobnicate": 1, "x" * 100_000: 2},
    ]
    return [body_case(CHAT, {"max_tokens": 2, **b}, f"chat shape #{i}") for i, b in enumerate(bodies)]


def block_cases():
    """Every wrong value in each place of an Anthropic content block and a Responses input item."""
    cases = []
    for value in WRONG:
        blocks = [value, {"type": value}, {"type": "text", "text": value},
                  {"type": "tool_result", "tool_use_id": value, "content": "x"},
                  {"type": "tool_result", "tool_use_id": "t", "content": value},
                  {"type": "tool_use", "id": "t", "name": "f", "input": value}]
        for i, block in enumerate(blocks):
            role = "assistant" if i == 5 else "user"
            body = {"max_tokens": 2, "messages": [{"role": role, "content": [block]}], "system": value}
            cases.append(body_case(ANTHROPIC, body, f"block #{i} {value!r}"[:80]))
            cases.append(body_case(ANTHROPIC, {**body, "system": "s"}, f"block #{i} {value!r} system s"[:80]))
        items = [value, {"role": value, "content": "x"}, {"role": "user", "content": value},
                 {"role": "user", "content": [{"type": "input_text", "text": value}]},
                 {"type": "function_call", "call_id": value, "name": "f", "arguments": "{}"},
                 {"type": "function_call_output", "call_id": "c", "output": value}, {"type": value}]
        for i, item in enumerate(items):
            cases.append(body_case(RESPONSES, {"max_output_tokens": 2, "input": [item]}, f"item #{i} {value!r}"[:80]))
    return cases


def method_cases():
    cases = [raw_case(route, None, f"GET {route}", method="GET") for route in POST_ROUTES]
    cases += [raw_case(route, b"{}", f"POST {route}", method="POST") for route in ("/v1/models", "/health",
                                                                                   "/metrics")]
    cases += [raw_case(route, b"{}", f"{m} {route}", method=m) for route in (CHAT, COMPLETIONS) for m in ("PUT",
                                                                                                           "DELETE")]
    cases += [raw_case(path, b"{}", f"unknown {path}") for path in ("/v1/chat", "/v1/completion", "/", "/v2/models",
                                                                    "/tokenize/x", "/v1/chat/completions/")]
    return cases


def valid_cases():
    """Well-formed requests in the same run: a correct answer is the expected outcome."""
    bodies = [
        (CHAT, {"messages": MESSAGES, "max_tokens": 2, "stream": True}),
        (COMPLETIONS, {"prompt": "Hi", "max_tokens": 2, "stream": True, "stream_options": {"include_usage": True}}),
        (COMPLETIONS, {"prompt": ["Hi", [1, 2]], "max_tokens": 1, "n": 2}),
        (CHAT, {"messages": MESSAGES, "max_tokens": 4, "response_format": {"type": "json_object"}}),
        (CHAT, {"messages": MESSAGES, "max_tokens": 4, "response_format": {"type": "json_schema", "json_schema": {
            "name": "m", "schema": {"type": "object", "additionalProperties": {"type": "integer"}}}}}),
        (CHAT, {"messages": MESSAGES, "max_tokens": 8, "tool_choice": "required", "tools": [
            {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
                "a": {"type": "integer"}}, "required": ["a"]}}}]}),
        (CHAT, {"messages": MESSAGES, "max_tokens": 2, "logit_bias": {"0": 100}, "stream": True}),
        (TOKENIZE, {"messages": MESSAGES, "return_token_strs": True}),
        (DETOKENIZE, {"tokens": [VOCAB - 1, 0]}),
        (ANTHROPIC, {"messages": MESSAGES, "max_tokens": 2, "stream": True}),
        (ANTHROPIC, {"messages": MESSAGES, "max_tokens": 8, "tool_choice": {"type": "any"}, "tools": [
            {"name": "f", "input_schema": {"type": "object", "properties": {"a": {"type": "integer"}}}}]}),
        (RESPONSES, {"input": "Hi", "max_output_tokens": 2, "stream": True}),
    ]
    return [body_case(route, body, f"valid {route} #{i}") for i, (route, body) in enumerate(bodies)]


def all_cases():
    return (malformed_cases() + wrong_type_cases() + number_cases() + text_encoding_cases() + nesting_cases() +
            size_cases() + token_id_cases() + chat_shape_cases() + block_cases() + method_cases() + valid_cases())


def send(url, case):
    req = urllib.request.Request(url + case["route"], data=case["raw"], method=case["method"],
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, resp.headers.get("Content-Type", ""), resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read()


def check_answer(case, status, content_type, body):
    """A 4xx error body (OpenAI's shape, or Anthropic's on its routes), or a 200 answer of the route's shape."""
    anthropic = case["route"] in ANTHROPIC_ROUTES
    if 400 <= status < 500:
        answer = json.loads(body)
        err = answer["error"]
        if anthropic:
            assert answer["type"] == "error" and set(err) == {"type", "message"}, answer
        else:
            assert set(err) == {"message", "type", "param", "code"}
        assert isinstance(err["message"], str)
        assert len(err["message"]) < 2000, "an error message grew with the input"
        return
    assert status == 200, f"status {status}: {body[:300]!r}"
    if content_type.startswith("text/event-stream"):
        end = {ANTHROPIC: b'{"type":"message_stop"}', RESPONSES: b'"status":"'}.get(case["route"], b"data: [DONE]")
        assert end in body[-3000:], body[-200:]
        return
    answer = json.loads(body)
    key = {CHAT: "choices", COMPLETIONS: "choices", TOKENIZE: "tokens", DETOKENIZE: "prompt", ANTHROPIC: "content",
           COUNT_TOKENS: "input_tokens", RESPONSES: "output"}[case["route"]]
    assert key in answer, answer


def test_bad_input_corpus(smol):
    cases = all_cases()
    assert len(cases) >= 300
    failures = []
    for i, case in enumerate(cases):
        try:
            check_answer(case, *send(smol.url, case))
        except (AssertionError, ValueError, KeyError, OSError) as e:
            failures.append(f"{case['name']}: {type(e).__name__} {str(e)[:300]}")
        if i % BATCH == BATCH - 1 or i == len(cases) - 1:
            assert smol.proc.poll() is None, f"the server died at case {i} ({case['name']}):\n" + "".join(
                smol.log[-30:])
            assert get(smol.url + "/health")[0] == 200, f"unhealthy after case {i} ({case['name']})"
    assert not failures, f"{len(failures)} of {len(cases)} cases failed:\n" + "\n".join(failures[:50])
    # The gauges follow the engine loop's iteration, a moment after the last answer went out.
    for _ in range(100):
        metrics = smol.metrics()
        if metrics["strata:num_requests_running"] == 0 and metrics["strata:num_requests_waiting"] == 0:
            break
        time.sleep(0.02)
    assert metrics["strata:num_requests_running"] == 0 and metrics["strata:num_requests_waiting"] == 0
