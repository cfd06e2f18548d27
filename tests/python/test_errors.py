"""Errors: what the engine refuses surfaces as strata.StrataError (a ValueError) with the
engine's own message; unknown or unsupported arguments are refused by name."""
import pytest

from conftest import SMOL, TINY, strata


def test_prompt_over_the_context_carries_the_engine_message(tiny):
    too_long = [5] * (tiny.max_model_len + 1)
    with pytest.raises(strata.StrataError, match=r"prompt 1 of 2: the prompt has \d+ tokens, but the maximum "
                                                 r"context length is \d+ tokens"):
        tiny.generate([[5, 6, 7], too_long], strata.SamplingParams(max_tokens=4))
    assert tiny.generate([[5, 6, 7]], strata.SamplingParams(temperature=0, max_tokens=2))  # still serving


def test_empty_prompt_and_bad_sampling_values(tiny):
    with pytest.raises(ValueError, match="the prompt is empty"):
        tiny.generate([[]])
    with pytest.raises(strata.StrataError, match="top_p"):
        tiny.generate([[5, 6]], strata.SamplingParams(top_p=1.5))


def test_text_prompt_without_a_tokenizer(tiny):
    with pytest.raises(strata.StrataError, match="has no tokenizer.json; give token-id prompts"):
        tiny.generate("hello")


def test_missing_model_names_the_path():
    with pytest.raises(strata.StrataError, match="/no/such/model"):
        strata.LLM("/no/such/model", threads=2, load_progress=False)


def test_engine_arguments_are_checked_by_name():
    with pytest.raises(TypeError, match="unexpected keyword argument.*max_num_seq\\b"):
        strata.LLM(str(TINY), max_num_seq=4)
    with pytest.raises(ValueError, match="tensor_parallel_size=0"):
        strata.LLM(str(TINY), tensor_parallel_size=0)
    with pytest.raises(ValueError, match="data_parallel_size=2.*leave it at 1"):
        strata.LLM(str(TINY), data_parallel_size=2)
    with pytest.raises(ValueError, match="device='tpu'"):
        strata.LLM(str(TINY), device="tpu")
    with pytest.raises(strata.StrataError, match="--max-num-seqs is 0; it must be between 1"):
        strata.LLM(str(TINY), max_num_seqs=0, threads=2, load_progress=False)


def test_sampling_params_refuse_what_strata_lacks():
    with pytest.raises(TypeError):
        strata.SamplingParams(temprature=0.5)
    with pytest.raises(ValueError, match="min_tokens"):
        strata.SamplingParams(min_tokens=3)
    assert strata.SamplingParams(min_tokens=0, best_of=2, n=2).n == 2


def test_token_ids_outside_the_vocabulary_are_refused(tiny):
    with pytest.raises(strata.StrataError, match=r"prompt 0 of 1: prompt token id 600 is outside the model's vocabulary"):
        tiny.generate([[600, 5]])


def test_skip_tokenizer_init_takes_token_ids_only():
    if not SMOL.exists():
        pytest.skip(f"{SMOL} is missing")
    llm = strata.LLM(str(SMOL), skip_tokenizer_init=True, threads=2, load_progress=False)
    assert len(llm.generate([[1, 2, 3]], strata.SamplingParams(temperature=0, max_tokens=2))[0].outputs[0].token_ids) == 2
    with pytest.raises(strata.StrataError, match="skip_tokenizer_init=True; give token-id prompts"):
        llm.generate("hello")


def test_engine_argument_ranges():
    with pytest.raises(ValueError, match=r"gpu_memory_utilization=1.5\): give a value in \[0.05, 1.0\]"):
        strata.LLM(str(TINY), gpu_memory_utilization=1.5)
    with pytest.raises(ValueError, match=r"threads=-1"):
        strata.LLM(str(TINY), threads=-1)
