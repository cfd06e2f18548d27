"""LLM(tensor_parallel_size=N, pipeline_parallel_size=M): the other ranks run as `strata rank`
child processes of this one. Greedy token ids of a batch equal one process's on a dense and a
hybrid fixture, and with LoRA adapters loaded on first use (the ranks load their part of each);
close(), del and interpreter exit leave no rank behind; a dead rank raises instead of hanging;
what cannot split raises the engine's message before any rank starts (Ctrl-C: test_interrupt.py)."""
import gc
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import BUILD, FIXTURES, strata

QWEN3 = FIXTURES / "hf" / "qwen3"
QWEN3_NEXT = FIXTURES / "hf" / "qwen3_next"
# Twelve prompts of 5 to 60 tokens: prefill chunks and decode rows of different lengths share steps.
PROMPTS = [[(i * 13 + j * 7 + 3) % 200 for i in range(5 + 5 * j)] for j in range(12)]
GREEDY = strata.SamplingParams(temperature=0, max_tokens=10, ignore_eos=True) if strata else None


def fixture(path):
    if not path.exists():
        pytest.skip(f"fixture {path} is missing")
    return str(path)


def llm(model, **kw):
    return strata.LLM(model, threads=1, max_num_seqs=8, max_num_batched_tokens=64, load_progress=False, **kw)


def child_ranks(parent=None):
    """pid -> command line of the live children of `parent` (this process)."""
    parent = parent or os.getpid()
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if int(stat[stat.rindex(")") + 2:].split()[1]) == parent:
            found[int(entry)] = cmdline
    return found


def token_ids(outputs):
    return [out.outputs[0].token_ids for out in outputs]


_whole = {}


def whole_tokens(model):
    """One process's greedy tokens for PROMPTS, computed once per model."""
    if model not in _whole:
        with llm(model) as one:
            _whole[model] = token_ids(one.generate(PROMPTS, GREEDY))
    return _whole[model]


@pytest.mark.parametrize("path,layout", [(QWEN3, (2, 1)), (QWEN3, (1, 2)), (QWEN3, (2, 2)), (QWEN3_NEXT, (2, 1)),
                                         (QWEN3_NEXT, (1, 2))],
                         ids=["qwen3-tp2", "qwen3-pp2", "qwen3-tp2-pp2", "qwen3_next-tp2", "qwen3_next-pp2"])
def test_split_ranks_give_the_tokens_of_one_process(path, layout):
    model = fixture(path)
    expected = whole_tokens(model)
    tp, pp = layout
    split = llm(model, tensor_parallel_size=tp, pipeline_parallel_size=pp)
    try:
        ranks = child_ranks()
        assert len(ranks) == tp * pp - 1, ranks
        assert all(" rank --model " in cmd for cmd in ranks.values()), ranks
        assert token_ids(split.generate(PROMPTS, GREEDY)) == expected
        assert token_ids(split.generate(PROMPTS[:3], GREEDY)) == expected[:3]  # the ranks keep serving
    finally:
        split.close()
    assert child_ranks() == {}
    with pytest.raises(strata.StrataError, match="this LLM was closed"):
        split.generate(PROMPTS[:1], GREEDY)


def test_expert_parallel_is_taken():
    model = fixture(FIXTURES / "hf" / "qwen3_moe")
    expected = whole_tokens(model)
    with llm(model, tensor_parallel_size=2, enable_expert_parallel=True) as split:
        assert " --enable-expert-parallel" in next(iter(child_ranks().values()))
        assert token_ids(split.generate(PROMPTS, GREEDY)) == expected
    assert child_ranks() == {}


def test_expert_dispatch_is_taken():
    model = fixture(FIXTURES / "hf" / "qwen3_moe")
    expected = whole_tokens(model)
    with llm(model, tensor_parallel_size=2, enable_expert_parallel=True, expert_dispatch="all-to-all") as split:
        assert " --expert-dispatch all-to-all" in next(iter(child_ranks().values()))
        assert token_ids(split.generate(PROMPTS, GREEDY)) == expected
    assert child_ranks() == {}


LORA = FIXTURES / "lora" / "qwen3"
# Batches over time on two slots: base and both adapters mixed, then adapters under new ids that
# take the slots over, then the first ones again (loaded a second time).
LORA_BATCHES = [[None, ("all_r8", 1), ("attn_r4", 2), None, ("all_r8", 1), ("attn_r4", 2)],
                [("attn_r4", 3), ("all_r8", 4), None],
                [("all_r8", 1), ("all_r8", 1), ("attn_r4", 2)]]
LORA_GREEDY = strata.SamplingParams(temperature=0, max_tokens=8, ignore_eos=True, logprobs=0) if strata else None


def run_lora_batches(split):
    """Each batch's (token ids, their logprobs) per prompt."""
    runs = []
    for batch in LORA_BATCHES:
        loras = [c and strata.LoRARequest(c[0], c[1], str(LORA / f"adapter_{c[0]}")) for c in batch]
        outputs = split.generate(PROMPTS[:len(batch)], LORA_GREEDY, lora_request=loras)
        runs.append([(o.outputs[0].token_ids, [p[t].logprob for t, p in zip(o.outputs[0].token_ids,
                                                                             o.outputs[0].logprobs)])
                     for o in outputs])
    return runs


@pytest.mark.parametrize("layout", [(2, 1), (1, 2)], ids=["tp2", "pp2"])
def test_lora_adapters_give_the_tokens_of_one_process(layout):
    """Skipping the ranks' adapter loads changes these tokens (their slots stay empty)."""
    model = fixture(QWEN3)
    if not LORA.exists():
        pytest.skip(f"LoRA fixtures {LORA} are missing")
    kw = dict(enable_lora=True, max_loras=2, max_lora_rank=8)
    with llm(model, **kw) as one:
        expected = run_lora_batches(one)
    base = [tokens for tokens, _ in expected[0]]
    assert base[1] != base[0] and base[2] != base[0] and base[1] != base[2], "the adapters changed nothing"
    tp, pp = layout
    with llm(model, tensor_parallel_size=tp, pipeline_parallel_size=pp, **kw) as split:
        assert " --max-loras 2 --max-lora-rank 8" in next(iter(child_ranks().values()))
        got = run_lora_batches(split)
    assert [[tokens for tokens, _ in batch] for batch in got] == [[tokens for tokens, _ in batch] for batch in expected]
    for mine, theirs in zip(got, expected):
        for (_, a), (_, b) in zip(mine, theirs):
            assert a == pytest.approx(b, abs=1e-4)
    assert child_ranks() == {}


def test_del_stops_the_ranks():
    split = llm(fixture(QWEN3), tensor_parallel_size=2)
    assert len(child_ranks()) == 1
    del split
    gc.collect()
    assert child_ranks() == {}


def test_a_dead_rank_raises_and_close_does_not_hang():
    split = llm(fixture(QWEN3), tensor_parallel_size=2)
    (rank,) = child_ranks()
    os.kill(rank, signal.SIGKILL)
    time.sleep(0.2)
    lost = r"tensor-parallel group is lost; restart the server \(in Python: make a new LLM\)"
    with pytest.raises(strata.StrataError, match=lost):
        split.generate(PROMPTS[:2], GREEDY)
    start = time.time()
    split.close()
    assert time.time() - start < 5
    assert child_ranks() == {}


@pytest.mark.parametrize("path,kw,message", [
    (QWEN3, {"pipeline_parallel_size": 4}, "--pipeline-parallel-size 4 exceeds the model's 3 layers"),
    (QWEN3_NEXT, {"tensor_parallel_size": 4}, r"--tensor-parallel-size 4 does not divide linear_num_key_heads \(2\)"),
])
def test_what_cannot_split_raises_the_engine_message(path, kw, message):
    with pytest.raises(strata.StrataError, match=message):
        llm(fixture(path), **kw)
    gc.collect()
    assert child_ranks() == {}


def test_sizes_out_of_range_are_refused_by_name():
    with pytest.raises(ValueError, match=r"tensor_parallel_size=0.*\[1, 64\]"):
        strata.LLM(str(QWEN3), tensor_parallel_size=0)
    with pytest.raises(ValueError, match=r"pipeline_parallel_size=65"):
        strata.LLM(str(QWEN3), pipeline_parallel_size=65)


EXIT_SCRIPT = f"""
import sys
sys.path.insert(0, {str(BUILD / 'python')!r})
import strata
llm = strata.LLM({str(QWEN3)!r}, threads=1, tensor_parallel_size=2, load_progress=False)
print(llm.generate([[5, 6, 7]], strata.SamplingParams(temperature=0, max_tokens=3))[0].outputs[0].token_ids, flush=True)
sys.stdin.readline()  # exits without close(): atexit (or else the kernel) ends the rank
"""


def test_interpreter_exit_stops_the_ranks():
    fixture(QWEN3)
    proc = subprocess.Popen([sys.executable, "-c", EXIT_SCRIPT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert len(proc.stdout.readline().split(",")) == 3
    ranks = child_ranks(proc.pid)
    assert len(ranks) == 1, ranks
    out, err = proc.communicate("\n", timeout=60)
    assert proc.returncode == 0, err
    assert "did not take the stop message" not in err, err  # atexit stopped it in order
    for pid in ranks:
        assert not os.path.exists(f"/proc/{pid}"), f"rank {pid} outlived the interpreter"
