"""--reasoning-parser through the real server: SmolLM2 (which never thinks) is asked for code
that prints think tags, and each parser's split of its answer, whole and streamed, must equal
the split of what the same request gives on a server without a parser. reasoning_effort and
chat_template_kwargs reach the template (a Qwen3 template that prints the effort)."""
import json
import subprocess
import tarfile

import pytest

from conftest import BINARY, FIXTURES, SMOL, Server, request

# Greedy SmolLM2 answers this with text around both tags, each cut over several tokens
# (checked below, so the test cannot pass on output without tags).
ASK = [{"role": "user", "content": "Print the strings '<think>' and '</think>' in Python."}]
BODY = {"messages": ASK, "max_tokens": 60, "temperature": 0}


def split(parser, text):
    """What each parser makes of a whole output (no tags in the prompt's tail)."""
    if parser == "qwen3":
        if "<think>" not in text:
            return None, text
        before, _, rest = text.partition("<think>")
        reasoning, closed, after = rest.partition("</think>")
        return reasoning.replace("<think>", ""), before + after
    head, closed, after = text.partition("</think>")
    return head.replace("<think>", ""), after if closed else ""


def start_smol(parser):
    if not SMOL.exists():
        pytest.skip(f"SmolLM2 is not at {SMOL}; run scripts/setup.sh")
    return Server(["--max-model-len", "512", "--reasoning-parser", parser], f"smol_{parser}")


@pytest.fixture(scope="module", params=["qwen3", "deepseek_r1"])
def parsed(request):
    server = start_smol(request.param)
    server.parser = request.param
    yield server
    server.stop()


def chat(server, body):
    status, text = request(server.url + "/v1/chat/completions", body)
    assert status == 200, text
    return json.loads(text)["choices"][0]


def stream(server, body):
    """The joined reasoning and content deltas, and every delta's keys."""
    status, text = request(server.url + "/v1/chat/completions", {**body, "stream": True})
    assert status == 200, text
    reasoning, content, keys = "", "", []
    for line in text.splitlines():
        if not line.startswith("data: {"):
            continue
        delta = json.loads(line[6:])["choices"][0]["delta"]
        keys.append(sorted(delta))
        reasoning += delta.get("reasoning_content") or ""
        content += delta.get("content") or ""
        assert delta.get("reasoning") == delta.get("reasoning_content")
    return reasoning, content, keys


def test_split_matches_the_unparsed_output(smol, parsed):
    raw = chat(smol, BODY)["message"]
    assert "reasoning_content" not in raw  # no parser: the reply is unchanged
    assert raw["content"].index("<think>") < raw["content"].index("</think>"), raw["content"]
    reasoning, content = split(parsed.parser, raw["content"])
    message = chat(parsed, BODY)["message"]
    assert message["reasoning_content"] == reasoning and message["reasoning"] == reasoning
    assert message["content"] == (content or None)
    streamed_reasoning, streamed_content, keys = stream(parsed, BODY)
    assert (streamed_reasoning, streamed_content) == (reasoning, content)
    # Thinking and answer come in separate deltas here (the tags fall between tokens).
    assert ["reasoning", "reasoning_content"] in keys and ["content"] in keys


def test_include_reasoning_false_drops_the_thinking(smol, parsed):
    reasoning, content = split(parsed.parser, chat(smol, BODY)["message"]["content"])
    body = {**BODY, "include_reasoning": False}
    message = chat(parsed, body)["message"]
    assert message["reasoning_content"] is None and message["content"] == (content or None)
    assert stream(parsed, body)[:2] == ("", content)


def test_text_without_tags(smol, parsed):
    body = {"messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 12, "temperature": 0}
    text = chat(smol, body)["message"]["content"]
    assert "think>" not in text
    message = chat(parsed, body)["message"]
    if parsed.parser == "qwen3":  # no <think>: all answer
        assert message["reasoning_content"] is None and message["content"] == text
    else:  # deepseek_r1 thinks until </think>, which never came
        assert message["reasoning_content"] == text and message["content"] is None


def test_bad_reasoning_effort_is_400(parsed):
    for value in ["extreme", 3]:
        status, text = request(parsed.url + "/v1/chat/completions", {**BODY, "reasoning_effort": value})
        assert status == 400 and json.loads(text)["error"]["param"] == "reasoning_effort", text
    assert chat(parsed, {**BODY, "max_tokens": 1, "reasoning_effort": "low"})["finish_reason"] == "length"


def test_unknown_parser_is_refused_at_start():
    result = subprocess.run([str(BINARY), "serve", "--reasoning-parser", "granite"], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode != 0
    assert "--reasoning-parser takes one of qwen3, deepseek_r1, openai_gptoss" in result.stdout + result.stderr


@pytest.fixture(scope="module")
def effort_template(tmp_path_factory):
    """The Qwen3 fixture with the real Qwen3 tokenizer and its template, which first prints
    the reasoning effort it was given."""
    folder = tmp_path_factory.mktemp("qwen3_effort")
    for name in ("config.json", "model.safetensors"):
        (folder / name).symlink_to(FIXTURES / "hf" / "qwen3" / name)
    with tarfile.open(FIXTURES / "tokenizers" / "qwen3.tar.gz") as tar:
        for member in tar.getmembers():
            name = member.name.rsplit("/", 1)[-1]
            if name == "tokenizer.json":
                (folder / name).write_bytes(tar.extractfile(member).read())
            if name == "tokenizer_config.json":
                config = json.load(tar.extractfile(member))
    config["chat_template"] = ("{%- if reasoning_effort is defined %}{{ 'effort=' + reasoning_effort + '\\n' }}"
                               "{%- endif %}" + config["chat_template"])
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    server = Server([str(folder), "--max-model-len", "256", "--reasoning-parser", "qwen3"], "qwen3_effort")
    yield server
    server.stop()


def rendered(server, **body):
    status, text = request(server.url + "/tokenize", {"messages": ASK, **body, "return_token_strs": True})
    assert status == 200, text
    return "".join(json.loads(text)["token_strs"])


def test_reasoning_effort_and_template_kwargs_reach_the_template(effort_template):
    plain = rendered(effort_template)
    assert not plain.startswith("effort=") and plain.endswith("<|im_start|>assistant\n")
    assert rendered(effort_template, reasoning_effort="high") == "effort=high\n" + plain
    # chat_template_kwargs wins over the field, as in vLLM.
    assert rendered(effort_template, reasoning_effort="high",
                    chat_template_kwargs={"reasoning_effort": "low"}) == "effort=low\n" + plain
    # enable_thinking false: the template closes the thinking in the prompt (the parser then
    # takes the whole output as the answer; tests/server/reasoning_parser_test.cpp).
    assert rendered(effort_template, chat_template_kwargs={"enable_thinking": False}) == \
        plain + "<think>\n\n</think>\n\n"
