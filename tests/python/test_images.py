"""Images in LLM.chat on the Qwen3.5 vision fixture (tests/fixtures/hf/qwen3_5_vision, CPU):
image_url parts as data: URLs and allowed file:// paths give the reply `strata serve` (and
`strata chat --image`) gives for the same image and question, a batch mixing image and text conversations equals each alone, and
images the server would refuse (too many, outside the allowed folder, too large, a text-only
model) raise its message."""
import base64
import subprocess

import pytest

from conftest import BINARY, LOCAL_FIXTURES, strata
from strata_server import Server

FOLDER = LOCAL_FIXTURES / "hf" / "qwen3_5_vision"
LIMITS = ["--max-model-len", "256", "--allowed-local-media-path", str(FOLDER), "--limit-mm-per-prompt",
          '{"image": 2}']
GREEDY = dict(temperature=0, max_tokens=6)


def data_url(name):
    return "data:image/png;base64," + base64.b64encode((FOLDER / name).read_bytes()).decode()


def question(*urls, text="What is in it?"):
    parts = [{"type": "text", "text": text}, *({"type": "image_url", "image_url": {"url": u}} for u in urls)]
    return [{"role": "user", "content": parts}]


@pytest.fixture(scope="module")
def vision_llm():
    return strata.LLM(str(FOLDER), device="cpu", threads=2, max_model_len=256, allowed_local_media_path=str(FOLDER),
                      limit_mm_per_prompt={"image": 2}, load_progress=False)


@pytest.fixture(scope="module")
def vision_server():
    server = Server([str(FOLDER), "--device", "cpu", *LIMITS], "vision")
    yield server
    server.stop()


def test_replies_equal_the_servers(vision_llm, vision_server):
    client = vision_server.client()
    for urls in [(data_url("image_0.png"),), (data_url("image_0.png"), f"file://{FOLDER}/image_1.jpg")]:
        mine = vision_llm.chat(question(*urls), strata.SamplingParams(logprobs=0, **GREEDY))[0]
        served = client.chat.completions.create(model=vision_server.model, messages=question(*urls), logprobs=True,
                                                **GREEDY)
        assert mine.outputs[0].text == served.choices[0].message.content
        # The random weights repeat a token or two: the logprobs say the same image was seen.
        assert [next(iter(p.values())).logprob for p in mine.outputs[0].logprobs] == \
            pytest.approx([t.logprob for t in served.choices[0].logprobs.content], abs=1e-5)
        assert len(mine.prompt_token_ids) == served.usage.prompt_tokens
        assert len(mine.outputs[0].token_ids) == served.usage.completion_tokens


def test_reply_equals_strata_chat_with_image(vision_llm):
    """`strata chat --image` puts the images before the text of the first user message."""
    cli = subprocess.run([str(BINARY), "chat", "--model", str(FOLDER), "--device", "cpu", "--threads", "2", "--image",
                          str(FOLDER / "image_1.jpg"), "-p", "What is in it?", "--max-tokens", "6"],
                         capture_output=True, text=True, check=True)
    parts = [{"type": "image_url", "image_url": {"url": f"file://{FOLDER}/image_1.jpg"}},
             {"type": "text", "text": "What is in it?"}]
    mine = vision_llm.chat([{"role": "user", "content": parts}], strata.SamplingParams(**GREEDY))[0]
    assert cli.stdout.endswith(mine.outputs[0].text + "\n") and mine.outputs[0].text


def test_data_and_file_urls_alike_and_batched_like_alone(vision_llm):
    params = strata.SamplingParams(**GREEDY)
    by_data = vision_llm.chat(question(data_url("image_0.png")), params)[0]
    by_file = vision_llm.chat(question(f"file://{FOLDER}/image_0.png"), params)[0]
    # 30 bytes of template text and question, 5 special tokens, 6 image tokens (6 x 4 patches merged by 2)
    assert len(by_data.prompt_token_ids) == 41
    assert (by_data.prompt_token_ids, by_data.outputs[0].token_ids) == (by_file.prompt_token_ids,
                                                                        by_file.outputs[0].token_ids)
    conversations = [question(data_url("image_0.png")), question(text="Hello"),
                     question(f"file://{FOLDER}/image_1.jpg")]
    scored = strata.SamplingParams(logprobs=0, **GREEDY)
    alone = [vision_llm.chat(c, scored)[0].outputs[0] for c in conversations]
    together = [o.outputs[0] for o in vision_llm.chat(conversations, scored)]
    assert [o.token_ids for o in together] == [o.token_ids for o in alone]
    assert [o.cumulative_logprob for o in together] == pytest.approx([o.cumulative_logprob for o in alone], abs=1e-4)
    # The random weights repeat one token; its probability shows the image was seen.
    assert abs(alone[0].cumulative_logprob - alone[2].cumulative_logprob) > 1e-3


def test_refused_images_raise_the_servers_message(vision_llm, smol):
    cases = [([data_url("image_0.png")] * 3, "3 images, more than the 2"),
             (["file:///etc/passwd"], "not a file under the allowed media folder"),
             (["https://example.com/a.png"], "only data: URLs"),
             (["data:image/png;base64,!!"], "not valid base64")]
    for urls, message in cases:
        with pytest.raises(strata.StrataError, match=message):
            vision_llm.chat(question(*urls))
    with pytest.raises(strata.StrataError, match="takes text only"):
        smol.chat(question(data_url("image_0.png")))
    with pytest.raises(ValueError, match="limit_mm_per_prompt"):
        strata.LLM(str(FOLDER), limit_mm_per_prompt={"video": 1})
