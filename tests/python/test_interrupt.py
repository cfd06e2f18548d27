"""Ctrl-C during generate: the engine cancels the batch and Python raises KeyboardInterrupt
(the waiting thread checks for signals while the GIL is released). With the model split over
ranks, a terminal's Ctrl-C reaches the whole process group: the ranks ignore it and keep serving."""
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import BUILD, TINY

# The child sets Python's SIGINT handler itself: one started from a background job inherits
# SIGINT ignored, and Python then leaves it so.
SCRIPT = """
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.path.insert(0, {python!r})
import strata
llm = strata.LLM({model!r}, threads={threads}, tensor_parallel_size={tp}, load_progress=False)
print("ready", flush=True)
try:
    llm.generate([[5, 6, 7]] * 8, strata.SamplingParams(max_tokens=None, ignore_eos=True))
except KeyboardInterrupt:
    print("interrupted", flush=True)
    out = llm.generate([[5, 6, 7]], strata.SamplingParams(temperature=0, max_tokens=3))
    print("still serving", len(out[0].outputs[0].token_ids), flush=True)
"""


@pytest.mark.parametrize("tp", [1, 2], ids=["one-process", "tp2-ctrl-c-to-the-group"])
def test_ctrl_c_cancels_the_batch(tp):
    script = SCRIPT.format(python=str(BUILD / "python"), model=str(TINY), threads=2 if tp == 1 else 1, tp=tp)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(1.0)
    start = time.time()
    if tp == 1:
        proc.send_signal(signal.SIGINT)
    else:
        os.killpg(proc.pid, signal.SIGINT)  # as a terminal does: the ranks get it too
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.split("\n")[:2] == ["interrupted", "still serving 3"], (out, err)
    assert time.time() - start < 10
