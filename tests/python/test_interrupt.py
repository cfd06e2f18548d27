"""Ctrl-C during generate: the engine cancels the batch and Python raises KeyboardInterrupt
(the waiting thread checks for signals while the GIL is released)."""
import signal
import subprocess
import sys
import time

from conftest import BUILD, TINY

# The child sets Python's SIGINT handler itself: one started from a background job inherits
# SIGINT ignored, and Python then leaves it so.
SCRIPT = f"""
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.path.insert(0, {str(BUILD / 'python')!r})
import strata
llm = strata.LLM({str(TINY)!r}, threads=2, load_progress=False)
print("ready", flush=True)
try:
    llm.generate([[5, 6, 7]] * 8, strata.SamplingParams(max_tokens=None, ignore_eos=True))
except KeyboardInterrupt:
    print("interrupted", flush=True)
    out = llm.generate([[5, 6, 7]], strata.SamplingParams(temperature=0, max_tokens=3))
    print("still serving", len(out[0].outputs[0].token_ids), flush=True)
"""


def test_ctrl_c_cancels_the_batch():
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(1.0)
    start = time.time()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.split("\n")[:2] == ["interrupted", "still serving 3"], (out, err)
    assert time.time() - start < 10
