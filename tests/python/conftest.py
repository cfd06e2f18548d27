"""The package `strata` as the build laid it out (BUILD/python: the module strata._engine
beside python/strata/*.py), and session-wide LLMs over the tiny Qwen3 fixture and the
embedded SmolLM2. Tests skip when the module is not built (no pybind11 in .venv)."""
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from pytest_paths import BINARY, BUILD, FIXTURES, LOCAL_FIXTURES, SMOL  # noqa: E402,F401 (tests import them)

TINY = FIXTURES / "hf" / "qwen3"

sys.path.insert(0, str(BUILD / "python"))
try:
    import strata  # noqa: E402
except ImportError as e:  # the module is built only when .venv has pybind11
    strata = None
    IMPORT_ERROR = str(e)


def pytest_collection_modifyitems(config, items):
    if strata is None:
        skip = pytest.mark.skip(reason=f"strata module not importable from {BUILD / 'python'}: {IMPORT_ERROR}")
        for item in items:
            item.add_marker(skip)


def cli_generate(model, prompt_ids, max_tokens, *extra):
    """`strata generate`'s token ids for one prompt (greedy unless extra says otherwise)."""
    out = subprocess.run([str(BINARY), "generate", "--model", str(model), "--threads", "2",
                          "--prompt-ids", ",".join(map(str, prompt_ids)), "--max-tokens", str(max_tokens), *extra],
                         capture_output=True, text=True, check=True)
    return [int(t) for t in out.stdout.strip().split(",") if t]


@pytest.fixture(scope="session")
def tiny():
    """The random-weight Qwen3 fixture: token-id prompts only (no tokenizer.json)."""
    if not TINY.exists():
        pytest.skip(f"fixture model {TINY} is missing")
    return strata.LLM(str(TINY), threads=2, max_num_seqs=64, load_progress=False)


@pytest.fixture(scope="session")
def smol():
    """The embedded SmolLM2-135M-Instruct (LLM() with no model), with its tokenizer and template."""
    if not SMOL.exists():
        pytest.skip(f"{SMOL} is missing; scripts/setup.sh fetches it")
    return strata.LLM(threads=2, load_progress=False)
