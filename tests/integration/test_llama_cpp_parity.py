"""Strata vs llama.cpp on the real SmolLM2 GGUF (bench/llama_cpp_parity.py, shortened).

Skipped with a message when llama-cpp-python or the model is missing. llama.cpp's int8
activations move its logits by ~1-1.5 between its own prefill and decode on this model, so
the bounds here are that noise, not Strata's (its prefill-vs-decode gap is 0.014).
"""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (pip install llama-cpp-python)")
import llama_cpp_parity  # noqa: E402


def test_greedy_tokens_and_logits_match_llama_cpp():
    args = llama_cpp_parity.parse_args(["--steps", "16", "--repeats", "0", "--prompts", "2"])
    args.strata = os.path.join(os.environ.get("STRATA_BUILD_DIR", os.path.join(ROOT, "build")), "strata")
    if not os.path.exists(args.model):
        pytest.skip(f"no {args.model}; run scripts/setup.sh")
    for r in llama_cpp_parity.run(args):
        assert r["logit_maxdiff"] < 2 * r["llama_self_noise"] + 0.1, r["prompt"]
        assert r["argmax_agree"] > 0.9, r["prompt"]
        if not r["same_tokens"]:  # parting only where llama.cpp's noise can flip the choice
            assert r["margin_there"] < r["llama_self_noise"], r["prompt"]
