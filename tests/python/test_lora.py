"""LLM(enable_lora=True) with LoRARequest on the tiny Qwen3 and its PEFT adapters
(../shared/fixtures/lora/qwen3): each adapter gives the token ids `strata serve --lora-modules`
gives, a batch naming adapters per prompt equals each prompt alone, adapters swap through one
slot without leaving anything behind (and the prefix cache keeps them apart), chat() takes them too, and bad adapters raise the engine's
message."""
import random

import pytest

from conftest import FIXTURES, TINY, strata
from fixture_folders import qwen3_with_tokenizer
from strata_server import Server

LORA = FIXTURES / "lora" / "qwen3"
ADAPTERS = {"all_r8": 1, "attn_r4": 2}
PROMPTS = [[random.Random(i).randrange(1, 400) for _ in range(5 + i)] for i in range(4)]
GREEDY = dict(temperature=0, max_tokens=12, ignore_eos=True)


def lora(name):
    return strata.LoRARequest(name, ADAPTERS[name], str(LORA / f"adapter_{name}"))


def token_ids(outputs):
    return [o.outputs[0].token_ids for o in outputs]


@pytest.fixture(scope="module")
def lora_llm():
    if not LORA.exists():
        pytest.skip(f"LoRA fixtures {LORA} are missing")
    return strata.LLM(str(TINY), threads=2, enable_lora=True, max_loras=2, max_lora_rank=8, load_progress=False)


@pytest.fixture(scope="module")
def lora_server():
    if not LORA.exists():
        pytest.skip(f"LoRA fixtures {LORA} are missing")
    server = Server(["--model", str(TINY), "--max-model-len", "256", "--lora-modules",
                     *(f"{name}={LORA / f'adapter_{name}'}" for name in ADAPTERS)], "tiny_lora")
    yield server
    server.stop()


def test_each_adapter_gives_the_servers_tokens(lora_llm, lora_server):
    client = lora_server.client()
    params = strata.SamplingParams(**GREEDY)
    base = token_ids(lora_llm.generate(PROMPTS, params))
    for name in ADAPTERS:
        mine = token_ids(lora_llm.generate(PROMPTS, params, lora_request=lora(name)))
        served = [client.completions.create(model=name, prompt=p, max_tokens=12, temperature=0,
                                            extra_body={"ignore_eos": True, "return_token_ids": True})
                  .choices[0].model_extra["token_ids"] for p in PROMPTS]
        assert mine == served, name
        assert mine != base, f"{name} changed nothing"


def test_adapters_per_prompt_in_one_batch_equal_each_alone(lora_llm):
    params = strata.SamplingParams(**GREEDY)
    choices = [None, lora("all_r8"), lora("attn_r4")]
    alone = {(i, k): token_ids(lora_llm.generate([p], params, lora_request=c))[0]
             for i, p in enumerate(PROMPTS) for k, c in enumerate(choices)}
    jobs = [(i, k) for i in range(len(PROMPTS)) for k in range(len(choices))]
    together = token_ids(lora_llm.generate([PROMPTS[i] for i, _ in jobs], params,
                                           lora_request=[choices[k] for _, k in jobs]))
    assert together == [alone[job] for job in jobs]


def test_one_slot_swaps_adapters_cleanly(lora_llm):
    """attn_r4 (q and v only) loaded over all_r8 must leave none of all_r8's MLP deltas."""
    one_slot = strata.LLM(str(TINY), threads=2, enable_lora=True, max_lora_rank=8, load_progress=False)
    params = strata.SamplingParams(**GREEDY)
    for name in ["all_r8", "attn_r4", "all_r8", "attn_r4"]:
        assert (token_ids(one_slot.generate(PROMPTS, params, lora_request=lora(name))) ==
                token_ids(lora_llm.generate(PROMPTS, params, lora_request=lora(name)))), name
    with pytest.raises(strata.StrataError, match="uses 2 LoRA adapters, more than max_loras 1"):
        one_slot.generate(PROMPTS[:2], params, lora_request=[lora("all_r8"), lora("attn_r4")])


def test_prefix_cache_keeps_adapters_apart():
    """Blocks cached under an adapter serve it again after another took its slot, never the base."""
    one_slot = strata.LLM(str(TINY), threads=2, enable_lora=True, max_lora_rank=8, load_progress=False)
    params = strata.SamplingParams(**GREEDY)
    prompt = list(range(1, 40))
    runs = [(name, one_slot.generate([prompt], params, lora_request=name and lora(name))[0])
            for name in ["all_r8", "attn_r4", "all_r8", None]]
    assert [out.num_cached_tokens > 0 for _, out in runs] == [False, False, True, False]
    assert runs[2][1].outputs[0].token_ids == runs[0][1].outputs[0].token_ids  # a hit equals the miss
    assert runs[3][1].outputs[0].token_ids != runs[0][1].outputs[0].token_ids


def test_chat_takes_an_adapter(tmp_path_factory):
    """The real Qwen3 tokenizer on the tiny weights: a template writing only low ids (the vocabulary is 512)."""
    folder = qwen3_with_tokenizer(tmp_path_factory.mktemp("qwen3_lora_chat"))
    llm = strata.LLM(str(folder), threads=2, enable_lora=True, max_lora_rank=8, load_progress=False)
    template = "{% for m in messages %}|{{ m.content }}{% endfor %}|"
    messages = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    params = strata.SamplingParams(**GREEDY)
    chat = llm.chat(messages, params, lora_request=lora("all_r8"), chat_template=template)[0]
    assert chat.prompt == "|a|b|" and chat.prompt_token_ids == [91, 64, 91, 65, 91]
    plain = llm.generate({"prompt_token_ids": chat.prompt_token_ids}, params, lora_request=lora("all_r8"))[0]
    base = llm.chat(messages, params, chat_template=template)[0]
    assert chat.outputs[0].token_ids == plain.outputs[0].token_ids != base.outputs[0].token_ids


def test_bad_adapters_raise_the_engines_message(lora_llm, tmp_path):
    params = strata.SamplingParams(**GREEDY)
    with pytest.raises(strata.StrataError, match="cannot open adapter_config.json"):
        lora_llm.generate(PROMPTS[0], params, lora_request=strata.LoRARequest("missing", 7, str(tmp_path)))
    small = strata.LLM(str(TINY), threads=2, enable_lora=True, max_lora_rank=4, load_progress=False)
    with pytest.raises(strata.StrataError, match="has rank 8, more than max_lora_rank 4"):
        small.generate(PROMPTS[0], params, lora_request=lora("all_r8"))
    assert small.generate(PROMPTS[0], params, lora_request=lora("attn_r4"))  # rank 4 fits
    base_only = strata.LLM(str(TINY), threads=2, load_progress=False)
    with pytest.raises(ValueError, match="enable_lora=True"):
        base_only.generate(PROMPTS[0], params, lora_request=lora("attn_r4"))
    with pytest.raises(ValueError, match="2 given for 1 prompts"):
        lora_llm.generate(PROMPTS[0], params, lora_request=[lora("attn_r4")] * 2)
    with pytest.raises(ValueError, match="at least 1"):
        strata.LoRARequest("zero", 0, str(LORA / "adapter_attn_r4"))


def test_vllm_module_path():
    from strata.lora.request import LoRARequest
    assert LoRARequest is strata.LoRARequest
    r = LoRARequest("a", 3, "/x")
    assert (r.adapter_id, r.name, r.path) == (3, "a", "/x")
