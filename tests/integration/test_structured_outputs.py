"""vLLM's structured outputs through `strata serve` with SmolLM2: `structured_outputs` regex,
choice, grammar (GBNF) and json, the older guided_* fields and llama.cpp's `grammar`, on chat
and completions, streamed and not; the json_schema keywords (format, pattern, bounds, item
counts, recursive $ref) hold in what the model writes; bad regexes, grammars and schemas get
a 400 naming the problem, and a constraint with no way to go on ends the request cleanly."""
import datetime
import json
import re
import uuid

import pytest

from conftest import request

ASK = [{"role": "user", "content": "Tell me about a person: their name, age and favourite colours."}]


def chat(smol, max_tokens=120, messages=ASK, **extra):
    reply = smol.client().chat.completions.create(model=smol.model, messages=messages, max_tokens=max_tokens,
                                                  extra_body=extra, temperature=0.7, seed=3)
    return reply.choices[0].message.content, reply.choices[0].finish_reason


@pytest.mark.parametrize("field", ["structured_outputs", "guided_regex"])
def test_regex_is_matched_whole(smol, field):
    pattern = r"(Mr|Ms)\. [A-Z][a-z]{1,10}, age \d{2}"
    extra = {"structured_outputs": {"regex": pattern}} if field == "structured_outputs" else {"guided_regex": pattern}
    text, finish = chat(smol, **extra)
    assert finish == "stop" and re.fullmatch(pattern, text), text


def test_regex_on_completions_streamed(smol):
    pattern = r"[0-9]{3}-[0-9]{4}"
    stream = smol.client().completions.create(model=smol.model, prompt="My phone number is", max_tokens=30,
                                              stream=True, extra_body={"structured_outputs": {"regex": pattern}})
    text = "".join(c.choices[0].text for c in stream)
    assert re.fullmatch(pattern, text), text


@pytest.mark.parametrize("field", ["structured_outputs", "guided_choice"])
def test_choice_is_one_of_the_list(smol, field):
    choices = ["positive", "negative", "neutral"]
    extra = {"structured_outputs": {"choice": choices}} if field == "structured_outputs" else {"guided_choice": choices}
    ask = [{"role": "user", "content": "Classify the sentiment: 'I love this phone!'"}]
    for seed in range(3):
        reply = smol.client().chat.completions.create(model=smol.model, messages=ask, max_tokens=10, seed=seed,
                                                      temperature=1.0, extra_body=extra)
        assert reply.choices[0].message.content in choices, reply


ARITHMETIC = r'''
root   ::= expr " = " number
expr   ::= term ([+*-] term){0,3}
term   ::= number | "(" expr ")"
number ::= [1-9] [0-9]{0,2}
'''


def check_arithmetic(text):
    assert re.fullmatch(r"[0-9+*() -]+ = [1-9][0-9]{0,2}", text), text
    left = text.split(" = ")[0]
    assert left.count("(") == left.count(")"), text


@pytest.mark.parametrize("field", ["structured_outputs", "guided_grammar", "grammar"])
def test_grammar_is_followed(smol, field):
    extra = {"structured_outputs": {"grammar": ARITHMETIC}} if field == "structured_outputs" else {field: ARITHMETIC}
    text, finish = chat(smol, messages=[{"role": "user", "content": "Write a sum and its result."}], **extra)
    assert finish == "stop", text
    check_arithmetic(text)


def test_grammar_on_completions(smol):
    status, body = request(f"{smol.url}/v1/completions", {
        "model": smol.model, "prompt": "2 + 2", "max_tokens": 40, "grammar": ARITHMETIC})
    assert status == 200, body
    check_arithmetic(json.loads(body)["choices"][0]["text"])


PERSON = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 2, "maxLength": 20},
        "age": {"type": "integer", "minimum": 18, "maximum": 99},
        "height_m": {"type": "number", "exclusiveMinimum": 0, "maximum": 2.5},
        "born": {"type": "string", "format": "date"},
        "id": {"type": "string", "format": "uuid"},
        "code": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{2}$"},
        "colours": {"type": "array", "items": {"type": "string", "maxLength": 12}, "minItems": 1, "maxItems": 3},
    },
    "required": ["name", "age", "height_m", "born", "id", "code", "colours"],
}


@pytest.mark.parametrize("how", ["structured_outputs", "guided_json", "response_format"])
def test_schema_keywords_hold(smol, how):
    if how == "response_format":
        extra = {"response_format": {"type": "json_schema", "json_schema": {"name": "p", "schema": PERSON}}}
    else:
        extra = {"structured_outputs": {"json": PERSON}} if how == "structured_outputs" else {"guided_json": PERSON}
    text, finish = chat(smol, max_tokens=300, **extra)
    assert finish == "stop", text
    p = json.loads(text)
    assert 2 <= len(p["name"]) <= 20 and 18 <= p["age"] <= 99 and 0 <= p["height_m"] < 3
    datetime.date.fromisoformat(p["born"])
    uuid.UUID(p["id"])
    assert re.fullmatch(r"[A-Z]{3}-[0-9]{2}", p["code"])
    assert 1 <= len(p["colours"]) <= 3 and all(len(c) <= 12 for c in p["colours"])


def test_recursive_ref(smol):
    # SmolLM2 nests a linked list until the recogniser's depth limit (32) leaves it only null.
    node = {"type": "object", "properties": {"value": {"type": "integer", "minimum": 0, "maximum": 9},
                                             "next": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}},
            "required": ["value", "next"]}
    reply = smol.client().chat.completions.create(
        model=smol.model, messages=[{"role": "user", "content": "Count from 1 to 3 as a linked list."}],
        max_tokens=900, temperature=0, extra_body={"structured_outputs": {"json": node}})
    text, finish = reply.choices[0].message.content, reply.choices[0].finish_reason
    assert finish == "stop", text
    depth, item = 0, json.loads(text)
    while item is not None:
        assert set(item) == {"value", "next"} and 0 <= item["value"] <= 9, item
        depth, item = depth + 1, item["next"]
    assert 2 <= depth <= 32


def test_dead_end_ends_the_request(smol):
    # JSON strings cannot hold a raw control byte and patterns take no \u escape: after the
    # opening quote no token can follow, and the request must end, not hang.
    schema = {"type": "string", "pattern": "\\x01"}
    text, finish = chat(smol, max_tokens=50, structured_outputs={"json": schema})
    assert (text, finish) == ('"', "stop")


@pytest.mark.parametrize("extra,fragment", [
    ({"structured_outputs": {"regex": "(ab"}}, "'structured_outputs.regex': regex: missing ')' at position 3 of '(ab'"),
    ({"guided_regex": "a{5,2}"}, "a repetition {5,2} is out of range"),
    ({"structured_outputs": {"grammar": "root ::= root \"a\" | \"b\""}}, "rule 'root' is left-recursive"),
    ({"grammar": "root ::= item\n"}, "rule 'item' is used but never defined"),
    ({"guided_choice": []}, "'guided_choice' must be a non-empty array of strings"),
    ({"structured_outputs": {"json": {"type": "string", "format": "hostname"}}}, "format 'hostname' is not supported"),
    ({"structured_outputs": {"regex": "a", "choice": ["a"]}}, "asks for a second output constraint"),
    ({"guided_regex": "a", "response_format": {"type": "json_object"}}, "give only one of them"),
    ({"structured_outputs": {"structural_tag": "x"}}, "'structured_outputs.structural_tag' is not supported"),
    ({"guided_whitespace_pattern": " "}, "'guided_whitespace_pattern' (a vLLM extension) is not supported"),
])
def test_bad_constraints_get_a_400(smol, extra, fragment):
    status, body = request(f"{smol.url}/v1/chat/completions",
                           {"model": smol.model, "messages": ASK, "max_tokens": 5, **extra})
    assert status == 400, body
    assert fragment in json.loads(body)["error"]["message"], body
