"""`strata serve --chat-template`: chats render with the given template (inline text or a file)
instead of the tokenizer's, on /tokenize and /v1/chat/completions; a value that is neither a
readable file nor template text stops the server with the reason."""
import subprocess

import pytest

from conftest import BINARY, Server, request
from fixture_folders import qwen3_with_tokenizer

# Writes only ids under the tiny Qwen3's 512-token vocabulary: '|' 91, 'a' 64, 'b' 65.
TEMPLATE = "{% for m in messages %}|{{ m.content }}{% endfor %}|"
MESSAGES = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]


@pytest.fixture(scope="module", params=["inline", "file"])
def templated(request, tmp_path_factory):
    folder = qwen3_with_tokenizer(tmp_path_factory.mktemp("qwen3_template"))
    value = TEMPLATE
    if request.param == "file":
        value = str(folder / "template.jinja")
        (folder / "template.jinja").write_text(TEMPLATE)
    server = Server([str(folder), "--max-model-len", "256", "--chat-template", value], "qwen3_template")
    yield server
    server.stop()


def test_chats_render_with_the_given_template(templated):
    import json
    status, body = request(templated.url + "/tokenize", {"messages": MESSAGES, "add_generation_prompt": False})
    assert status == 200 and json.loads(body)["tokens"] == [91, 64, 91, 65, 91]
    reply = templated.client().chat.completions.create(model=templated.model, messages=MESSAGES, max_tokens=3,
                                                      temperature=0)
    assert reply.usage.prompt_tokens == 5


def test_a_path_that_is_not_there_stops_the_server(tmp_path):
    r = subprocess.run([str(BINARY), "serve", "--chat-template", str(tmp_path / "missing.jinja")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "looks like a file path" in r.stderr, r.stderr


@pytest.fixture(scope="module")
def trusting(tmp_path_factory):
    folder = qwen3_with_tokenizer(tmp_path_factory.mktemp("qwen3_trusting"))
    server = Server([str(folder), "--max-model-len", "256", "--trust-request-chat-template"], "qwen3_trusting")
    yield server
    server.stop()


def test_a_request_template_needs_the_servers_trust(templated):
    import json
    status, body = request(templated.url + "/v1/chat/completions",
                           {"messages": MESSAGES, "max_tokens": 2, "chat_template": TEMPLATE})
    assert status == 400, body
    error = json.loads(body)["error"]
    assert error["param"] == "chat_template" and "--trust-request-chat-template" in error["message"]


def test_a_trusted_request_renders_with_its_own_template(trusting):
    reply = trusting.client().chat.completions.create(
        model=trusting.model, messages=MESSAGES, max_tokens=2, temperature=0,
        extra_body={"chat_template": TEMPLATE, "add_generation_prompt": False})
    assert reply.usage.prompt_tokens == 5  # | a | b |


def test_continue_final_message_ends_the_prompt_inside_the_last_message(templated):
    import json
    # "|a|b|" cut after the last message's text: "|a|b" (4 tokens).
    reply = templated.client().chat.completions.create(
        model=templated.model, messages=MESSAGES, max_tokens=2, temperature=0,
        extra_body={"continue_final_message": True, "add_generation_prompt": False})
    assert reply.usage.prompt_tokens == 4
    status, body = request(templated.url + "/v1/chat/completions",
                           {"messages": MESSAGES, "max_tokens": 2, "continue_final_message": True})
    assert status == 400 and json.loads(body)["error"]["param"] == "messages", body
