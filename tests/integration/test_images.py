"""Images on a live `strata serve` (the qwen3_5_vision fixture on the CPU): image_url parts as
data: URLs and allowed file:// paths answer through the openai client, the same image twice is a
prefix-cache hit, /v1/models says the model takes images, and bad images are 400s that leave the
server healthy."""
import base64
import json

from conftest import LOCAL_FIXTURES, request

FOLDER = LOCAL_FIXTURES / "hf" / "qwen3_5_vision"


def error_of(status_body):
    status, body = status_body
    return status, json.loads(body)["error"]


def data_url(name):
    return "data:image/png;base64," + base64.b64encode((FOLDER / name).read_bytes()).decode()


def chat_body(*parts):
    content = [{"type": "text", "text": "What is in it?"}, *({"type": "image_url", "image_url": {"url": u}}
                                                           for u in parts)]
    return {"messages": [{"role": "user", "content": content}], "max_tokens": 4, "temperature": 0}


def test_data_and_file_urls_answer_alike(vision):
    client = vision.client()
    by_data = client.chat.completions.create(model="qwen3_5_vision", **chat_body(data_url("image_0.png")))
    by_file = client.chat.completions.create(model="qwen3_5_vision",
                                             **chat_body(f"file://{FOLDER}/image_0.png"))
    assert by_data.choices[0].message.content == by_file.choices[0].message.content
    # 30 bytes of template text and question, 5 special tokens, 6 image tokens (6 x 4 patches merged by 2)
    assert by_data.usage.prompt_tokens == by_file.usage.prompt_tokens == 41
    assert by_file.usage.prompt_tokens_details.cached_tokens > 0  # the same image: a prefix hit


def test_models_lists_image_input(vision):
    status, body = request(vision.url + "/v1/models")
    assert status == 200 and json.loads(body)["data"][0]["input_modalities"] == ["text", "image"]


def test_bad_images_are_400s(vision):
    cases = [chat_body("https://example.com/a.png"), chat_body("data:image/png;base64,!!"),
             chat_body("file:///etc/passwd"), chat_body(data_url("image_1.png")),  # 131 x 83 > 10000 pixels
             chat_body(*[data_url("image_0.png")] * 3)]
    for body in cases:
        status, err = error_of(request(vision.url + "/v1/chat/completions", body))
        assert status == 400 and err["param"] == "messages", err
    assert request(vision.url + "/health")[0] == 200
