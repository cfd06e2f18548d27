"""Every fixture architecture through the module: greedy tokens equal `strata generate`'s."""
import json

import pytest

from conftest import FIXTURES, LOCAL_FIXTURES, cli_generate, strata

# Generative fixtures: the pooling ones (embedding, cross-encoder) have their own tests
# (test_embed_score.py here, tests/integration/test_pooling.py).
MODELS = sorted(c for c in [*(FIXTURES / "hf").glob("*/config.json"), *(LOCAL_FIXTURES / "hf").glob("*/config.json")]
                if (c.parent / "reference.json").exists()  # an EAGLE-3 head alone has none
                and "sequences" in json.loads((c.parent / "reference.json").read_text()))
PROMPT = [11, 42, 7, 300, 5, 99, 23]


@pytest.mark.parametrize("model", [m.parent for m in MODELS], ids=lambda m: m.name)
def test_fixture_greedy_equals_strata_generate(model):
    llm = strata.LLM(str(model), threads=2, max_num_seqs=4, load_progress=False)
    params = strata.SamplingParams(temperature=0, max_tokens=6, ignore_eos=True)
    got = llm.generate([PROMPT, PROMPT[:3]], params)
    assert got[0].outputs[0].token_ids == cli_generate(model, PROMPT, 6, "--ignore-eos")
    assert got[1].outputs[0].token_ids == cli_generate(model, PROMPT[:3], 6, "--ignore-eos")
