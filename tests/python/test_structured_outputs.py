"""vLLM's StructuredOutputsParams (and the older GuidedDecodingParams) on LLM.generate with
SmolLM2: a regex, a choice, a GBNF grammar and a JSON schema hold in the text, and a bad
constraint raises StrataError naming the problem."""
import json
import re

import pytest

from conftest import strata


def generate(smol, constraint, max_tokens=40, field="structured_outputs"):
    params = strata.SamplingParams(temperature=0.8, seed=1, max_tokens=max_tokens, **{field: constraint})
    return smol.generate("Write something:", params)[0].outputs[0]


def test_regex_choice_and_grammar(smol):
    out = generate(smol, strata.StructuredOutputsParams(regex=r"[A-Z][a-z]{2,6} [0-9]{2}"))
    assert re.fullmatch(r"[A-Z][a-z]{2,6} [0-9]{2}", out.text) and out.finish_reason == "stop", out
    out = generate(smol, strata.GuidedDecodingParams(choice=["red", "green"]), field="guided_decoding")
    assert out.text in ("red", "green"), out
    out = generate(smol, strata.StructuredOutputsParams(grammar='root ::= "(" [0-9] ("," [0-9])* ")"'))
    assert re.fullmatch(r"\([0-9](,[0-9])*\)", out.text), out


def test_json_schema(smol):
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 9},
                                               "tags": {"type": "array", "items": {"type": "string", "maxLength": 8},
                                                        "maxItems": 2}},
              "required": ["n", "tags"]}
    out = generate(smol, strata.StructuredOutputsParams(json=schema), max_tokens=80)
    value = json.loads(out.text)
    assert 1 <= value["n"] <= 9 and len(value["tags"]) <= 2 and all(len(t) <= 8 for t in value["tags"])


def test_bad_constraints_raise(smol):
    with pytest.raises(strata.StrataError, match=r"regex: missing '\)' at position 2 of '\(a'"):
        generate(smol, strata.StructuredOutputsParams(regex="(a"))
    with pytest.raises(ValueError, match="exactly one of"):
        strata.StructuredOutputsParams(regex="a", choice=["a"])
