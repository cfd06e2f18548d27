"""LLM.chat through SmolLM2's chat template: the answer to the capital of France is Paris,
the prompt ids equal the template's rendering, and a batch of conversations keeps its order;
a chat_template given renders instead (with add_generation_prompt, chat_template_kwargs), and
continue_final_message ends the prompt inside the last message as transformers does; the same
template answers as `strata serve --chat-template` does."""
import pytest

from conftest import strata
from fixture_folders import qwen3_with_tokenizer
from strata_server import Server

QUESTION = [{"role": "user", "content": "What is the capital of France?"}]


def test_chat_answers_paris(smol):
    out = smol.chat(QUESTION, strata.SamplingParams(temperature=0, max_tokens=32))[0]
    assert "Paris" in out.outputs[0].text
    assert out.prompt.startswith("<|im_start|>") and out.prompt.endswith("<|im_start|>assistant\n")
    assert out.outputs[0].finish_reason in ("stop", "length")


def test_chat_batch_and_content_parts(smol):
    parts = [{"role": "user", "content": [{"type": "text", "text": "What is the capital of France?"}]}]
    other = [{"role": "user", "content": "Say hello."}]
    outs = smol.chat([QUESTION, other, parts], strata.SamplingParams(temperature=0, max_tokens=16))
    assert len(outs) == 3
    assert outs[0].prompt_token_ids == outs[2].prompt_token_ids
    assert outs[0].outputs[0].token_ids == outs[2].outputs[0].token_ids
    assert outs[1].prompt_token_ids != outs[0].prompt_token_ids


TEMPLATE = ("{% for m in messages %}[{{ m.role }}]{{ m.content }}\n{% endfor %}"
            "{% if add_generation_prompt %}[assistant]{% endif %}{% if shout %}!{% endif %}")


def test_chat_template_renders_with_the_given_template(smol):
    params = strata.SamplingParams(temperature=0, max_tokens=4)
    out = smol.chat(QUESTION, params, chat_template=TEMPLATE)[0]
    assert out.prompt == "[user]What is the capital of France?\n[assistant]"
    assert out.prompt_token_ids == smol.get_tokenizer().encode(out.prompt, add_special_tokens=False)
    assert smol.chat(QUESTION, params, chat_template=TEMPLATE, add_generation_prompt=False)[0].prompt == \
        "[user]What is the capital of France?\n"
    shout = smol.chat(QUESTION, params, chat_template=TEMPLATE, chat_template_kwargs={"shout": True})[0]
    assert shout.prompt == "[user]What is the capital of France?\n[assistant]!"


def test_continue_final_message_ends_inside_the_last_message(smol):
    params = strata.SamplingParams(temperature=0, max_tokens=4)
    partial = QUESTION + [{"role": "assistant", "content": "The capital of France is"}]
    out = smol.chat(partial, params, chat_template=TEMPLATE, add_generation_prompt=False,
                    continue_final_message=True)[0]
    assert out.prompt == "[user]What is the capital of France?\n[assistant]The capital of France is"
    own = smol.chat(partial, params, add_generation_prompt=False, continue_final_message=True)[0]
    assert own.prompt.endswith("<|im_start|>assistant\nThe capital of France is")  # no <|im_end|> after it
    parts = [QUESTION[0], {"role": "assistant", "content": [{"type": "text", "text": "The capital of France is"}]}]
    assert smol.chat(parts, params, add_generation_prompt=False, continue_final_message=True)[0].prompt == own.prompt


def test_chat_template_errors_raise_the_engines_message(smol):
    with pytest.raises(strata.StrataError, match="continue_final_message and add_generation_prompt"):
        smol.chat(QUESTION, chat_template=TEMPLATE, continue_final_message=True)
    with pytest.raises(strata.StrataError, match="does not appear in the prompt"):
        smol.chat(QUESTION, chat_template="[nothing]", add_generation_prompt=False, continue_final_message=True)
    with pytest.raises(strata.StrataError):
        smol.chat(QUESTION, chat_template="{% for m in messages %}")  # never closed


def test_chat_template_equals_the_servers_chat_template(tmp_path_factory):
    """The tiny Qwen3 beside the real Qwen3 tokenizer, with a template writing only ids under its
    512-token vocabulary: LLM.chat(chat_template=T) answers as `strata serve --chat-template T`."""
    folder = qwen3_with_tokenizer(tmp_path_factory.mktemp("qwen3_chat_template"))
    template = "{% for m in messages %}|{{ m.content }}{% endfor %}|"
    messages = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    llm = strata.LLM(str(folder), threads=2, load_progress=False)
    mine = llm.chat(messages, strata.SamplingParams(temperature=0, max_tokens=6, logprobs=0),
                    chat_template=template)[0]
    assert mine.prompt_token_ids == [91, 64, 91, 65, 91]
    server = Server([str(folder), "--max-model-len", "256", "--chat-template", template], "qwen3_template")
    try:
        served = server.client().chat.completions.create(model=server.model, messages=messages, max_tokens=6,
                                                         temperature=0, logprobs=True)
    finally:
        server.stop()
    assert mine.outputs[0].text == served.choices[0].message.content
    assert [next(iter(p.values())).logprob for p in mine.outputs[0].logprobs] == \
        pytest.approx([t.logprob for t in served.choices[0].logprobs.content], abs=1e-5)
