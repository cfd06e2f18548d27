"""Images under `--tensor-parallel-size 2`: rank 0 alone holds the vision tower and sends each
step's image embeddings (and every image's grid, for MRoPE) to the other rank with the step, so
an image prompt on the qwen3_5_vision fixture answers as one rank does: the same tokens and the
same logprobs (f32 on the CPU, within 1e-4), in chunks and over a prefix hit too."""
import base64

import pytest

from conftest import LOCAL_FIXTURES
from strata_server import Server

FOLDER = LOCAL_FIXTURES / "hf" / "qwen3_5_vision"


def data_url(name):
    return "data:image/png;base64," + base64.b64encode((FOLDER / name).read_bytes()).decode()


def ask(server, *images):
    content = [{"type": "text", "text": "Compare these, please."},
               *({"type": "image_url", "image_url": {"url": data_url(name)}} for name in images)]
    out = server.client().chat.completions.create(
        model=server.model, messages=[{"role": "user", "content": content}], max_tokens=12, temperature=0,
        logprobs=True, top_logprobs=3)
    choice = out.choices[0]
    return ([t.token for t in choice.logprobs.content], [t.logprob for t in choice.logprobs.content],
            out.usage.prompt_tokens_details.cached_tokens)


@pytest.fixture(scope="module")
def answers():
    # A 16-token step budget: the prompt's images arrive in different chunks.
    args = [str(FOLDER), "--device", "cpu", "--max-model-len", "256", "--max-num-batched-tokens", "16",
            "--limit-mm-per-prompt", '{"image": 2}']
    results = {}
    for size in (1, 2):
        server = Server([*args, "--tensor-parallel-size", str(size)], f"vision-tp{size}")
        try:
            results[size] = [ask(server, "image_0.png"), ask(server, "image_0.png", "image_1.png"),
                             ask(server, "image_0.png", "image_1.png")]
        finally:
            server.stop()
    return results


def test_image_prompts_over_two_ranks_answer_as_one(answers):
    for (tokens_1, logprobs_1, _), (tokens_2, logprobs_2, _) in zip(answers[1], answers[2]):
        assert tokens_2 == tokens_1
        assert max(abs(a - b) for a, b in zip(logprobs_1, logprobs_2)) < 1e-4


def test_a_repeated_image_prompt_is_a_prefix_hit_over_ranks(answers):
    assert answers[2][2][2] > 0
    assert answers[2][2][0] == answers[2][1][0]

