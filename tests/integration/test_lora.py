"""`strata serve --lora-modules name=path ...`: adapters listed by /v1/models, chosen per
request by `model`, answering under their own name; requests on different adapters batched
together give what each gives alone; bad adapter flags stop the server with the reason."""
import concurrent.futures as cf
import subprocess

from conftest import BINARY, FIXTURES, get
from test_tiny_model import PROMPTS, complete


def test_models_lists_the_adapters(tiny_lora):
    import json
    cards = json.loads(get(tiny_lora.url + "/v1/models")[1])["data"]
    assert [c["id"] for c in cards][1:] == ["all_r8", "attn_r4"]
    assert all(c["parent"] == cards[0]["id"] for c in cards[1:])


def test_adapters_change_the_output_and_batch_like_alone(tiny_lora):
    client = tiny_lora.client()
    names = [tiny_lora.model, "all_r8", "attn_r4"]
    alone = {}
    for name in names:
        for i, prompt in enumerate(PROMPTS[:4]):
            r = complete(client, name, prompt, max_tokens=12)
            assert r.model == name
            alone[name, i] = r.choices[0].model_extra["token_ids"]
    assert any(alone["all_r8", i] != alone[tiny_lora.model, i] for i in range(4))
    assert any(alone["attn_r4", i] != alone[tiny_lora.model, i] for i in range(4))
    jobs = [(name, i) for i in range(4) for name in names] * 2
    with cf.ThreadPoolExecutor(len(jobs)) as pool:
        together = list(pool.map(
            lambda job: complete(client, job[0], PROMPTS[job[1]], max_tokens=12).choices[0].model_extra["token_ids"],
            jobs))
    for job, ids in zip(jobs, together):
        assert ids == alone[job], job


def test_bad_lora_modules_name_the_problem():
    base = FIXTURES / "hf" / "qwen3"
    for flag, message in [("just-a-path", "name=path"), (f"x={base}", "adapter_config.json")]:
        r = subprocess.run([str(BINARY), "serve", str(base), "--lora-modules", flag], capture_output=True, text=True,
                           timeout=60)
        assert r.returncode != 0 and message in r.stderr, r.stderr
