"""LLM.generate on the tiny fixture and SmolLM2: greedy tokens equal `strata generate`'s, a
batch of 64 prompts comes back in order with each prompt's own tokens, vLLM's prompt shapes,
n, seeds, logprobs, stop strings and stop token ids, and the GIL released while it runs."""
import random
import threading
import time

import pytest

from conftest import FIXTURES, LOCAL_FIXTURES, SMOL, TINY, cli_generate, strata


def random_prompt(seed):
    rng = random.Random(seed)
    return [rng.randrange(3, 500) for _ in range(5 + seed % 11)]


def greedy(max_tokens, **kw):
    return strata.SamplingParams(temperature=0, max_tokens=max_tokens, **kw)


def test_greedy_tokens_equal_strata_generate_on_the_tiny_fixture(tiny):
    prompts = [random_prompt(i) for i in range(3)]
    outputs = tiny.generate(prompts, greedy(12, ignore_eos=True))
    for prompt, out in zip(prompts, outputs):
        assert out.prompt_token_ids == prompt
        assert out.prompt is None
        assert out.outputs[0].token_ids == cli_generate(TINY, prompt, 12, "--ignore-eos")
        assert out.outputs[0].finish_reason == "length"


def test_greedy_tokens_equal_strata_generate_on_smollm2(smol):
    prompt = "The capital of France is"
    out = smol.generate(prompt, greedy(16))[0]
    assert out.prompt == prompt
    assert out.prompt_token_ids == smol.get_tokenizer().encode(prompt)
    assert out.outputs[0].token_ids == cli_generate(SMOL, out.prompt_token_ids, 16)
    assert out.outputs[0].text == smol.get_tokenizer().decode(out.outputs[0].token_ids)


def test_batch_of_64_prompts_in_order(tiny):
    prompts = [random_prompt(100 + i) for i in range(64)]
    params = [greedy(4 + i % 5, ignore_eos=True) for i in range(64)]
    outputs = tiny.generate(prompts, params)
    assert [o.prompt_token_ids for o in outputs] == prompts
    assert [len(o.outputs[0].token_ids) for o in outputs] == [4 + i % 5 for i in range(64)]
    for i in (0, 17, 63):  # alone, each gets what it got in the batch
        alone = tiny.generate([prompts[i]], params[i])[0]
        assert alone.outputs[0].token_ids == outputs[i].outputs[0].token_ids
    assert len({o.request_id for o in outputs}) == 64


def test_prompt_shapes(tiny):
    ids = random_prompt(7)
    want = tiny.generate([ids], greedy(5, ignore_eos=True))[0].outputs[0].token_ids
    for prompt in (ids, {"prompt_token_ids": ids}, [{"prompt_token_ids": ids}]):
        assert tiny.generate(prompt, greedy(5, ignore_eos=True))[0].outputs[0].token_ids == want
    assert tiny.generate([], greedy(5)) == []


def test_n_seeds_and_logprobs(tiny):
    params = strata.SamplingParams(n=3, temperature=1.0, seed=11, max_tokens=6, logprobs=2, ignore_eos=True)
    first = tiny.generate([random_prompt(3)], params)[0]
    again = tiny.generate([random_prompt(3)], params)[0]
    assert len(first.outputs) == 3
    assert [c.token_ids for c in first.outputs] == [c.token_ids for c in again.outputs]
    for choice in first.outputs:
        assert len(choice.logprobs) == 6
        for token, position in zip(choice.token_ids, choice.logprobs):
            assert token in position and len(position) >= 2
        assert choice.cumulative_logprob == pytest.approx(sum(p[t].logprob for t, p in zip(choice.token_ids, choice.logprobs)))
    unlogged = tiny.generate([random_prompt(3)], greedy(3))[0].outputs[0]
    assert unlogged.logprobs is None and unlogged.cumulative_logprob is None


def test_engine_seed_makes_unseeded_sampling_repeatable():
    def sample():
        llm = strata.LLM(str(TINY), threads=2, seed=5, load_progress=False)
        return llm.generate([random_prompt(1)], strata.SamplingParams(temperature=1.0, max_tokens=8,
                                                                       ignore_eos=True))[0].outputs[0].token_ids
    assert sample() == sample()


def test_stop_token_ids_and_max_tokens_none(tiny):
    prompt = random_prompt(9)
    free = tiny.generate([prompt], greedy(10, ignore_eos=True))[0].outputs[0].token_ids
    stop = free[4]
    out = tiny.generate([prompt], greedy(10, ignore_eos=True, stop_token_ids=[stop]))[0].outputs[0]
    assert out.token_ids == free[:free.index(stop) + 1]
    assert out.finish_reason == "stop" and out.stop_reason == stop
    short = strata.LLM(str(TINY), threads=2, max_model_len=40, load_progress=False)
    longest = short.generate([prompt], strata.SamplingParams(temperature=0, max_tokens=None, ignore_eos=True))[0]
    assert len(prompt) + len(longest.outputs[0].token_ids) == short.max_model_len == 40


def test_stop_strings_on_smollm2(smol):
    full = smol.generate("Count: one, two, three,", greedy(12))[0].outputs[0].text
    word = full.strip().split()[0]
    out = smol.generate("Count: one, two, three,", greedy(12, stop=word))[0].outputs[0]
    assert word not in out.text and out.finish_reason == "stop" and out.stop_reason == word


def test_generate_releases_the_gil(tiny):
    ticks = 0
    done = threading.Event()

    def count():
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            time.sleep(0.001)

    counter = threading.Thread(target=count)
    counter.start()
    start = time.time()
    tiny.generate([random_prompt(i) for i in range(16)], greedy(24, ignore_eos=True))
    elapsed = time.time() - start
    done.set()
    counter.join()
    assert ticks >= max(5, 0.1 * elapsed / 0.001), (ticks, elapsed)  # held GIL: next to none


def test_prompt_logprobs_and_logit_bias(tiny):
    prompt = random_prompt(4)
    out = tiny.generate([prompt], greedy(2, prompt_logprobs=1, ignore_eos=True))[0]
    assert out.prompt_logprobs[0] is None and len(out.prompt_logprobs) == len(prompt)
    for token, entry in zip(prompt[1:], out.prompt_logprobs[1:]):
        assert token in entry and entry[token].rank >= 1
    forced = tiny.generate([prompt], greedy(3, logit_bias={77: 100.0}, ignore_eos=True))[0].outputs[0]
    assert forced.token_ids == [77, 77, 77]


def test_speculative_config_with_a_draft_model_keeps_greedy_tokens(tiny):
    draft = FIXTURES / "hf" / "llama"
    if not draft.exists():
        pytest.skip(f"fixture model {draft} is missing")
    llm = strata.LLM(str(TINY), speculative_config={"model": str(draft), "num_speculative_tokens": 3},
                     max_model_len=256)
    prompts = [random_prompt(i) for i in range(3)]
    want = [o.outputs[0].token_ids for o in tiny.generate(prompts, greedy(16, ignore_eos=True))]
    got = [o.outputs[0].token_ids for o in llm.generate(prompts, greedy(16, ignore_eos=True))]
    assert got == want
    sampled = strata.SamplingParams(temperature=1.0, seed=4, max_tokens=16, ignore_eos=True)
    assert llm.generate(prompts, sampled)[0].outputs[0].token_ids == llm.generate(prompts, sampled)[0].outputs[0].token_ids


def assert_speculation_keeps_greedy_tokens(model, speculative_config):
    plain = strata.LLM(str(model), max_model_len=256)
    llm = strata.LLM(str(model), speculative_config=speculative_config, max_model_len=256)
    prompts = [random_prompt(i) for i in range(3)]
    want = [o.outputs[0].token_ids for o in plain.generate(prompts, greedy(16, ignore_eos=True))]
    got = [o.outputs[0].token_ids for o in llm.generate(prompts, greedy(16, ignore_eos=True))]
    assert got == want


def test_speculative_config_mtp_keeps_greedy_tokens():
    model = LOCAL_FIXTURES / "hf" / "qwen3_next_mtp"
    assert_speculation_keeps_greedy_tokens(model, {"method": "mtp", "num_speculative_tokens": 2})
    with pytest.raises(strata.StrataError, match=r"mtp\.\*"):
        strata.LLM(str(FIXTURES / "hf" / "qwen3_next"), speculative_config={"method": "mtp", "num_speculative_tokens": 1})


def test_speculative_config_eagle3_keeps_greedy_tokens():
    model, head = FIXTURES / "hf" / "llama", LOCAL_FIXTURES / "hf" / "llama_eagle3_echo"
    if not model.exists():
        pytest.skip(f"fixture model {model} is missing")
    config = {"method": "eagle3", "model": str(head), "num_speculative_tokens": 3}
    assert_speculation_keeps_greedy_tokens(model, config)
    with pytest.raises(strata.StrataError, match="is not a folder"):
        strata.LLM(str(model), speculative_config={**config, "model": str(head / "missing")})
