"""What `strata serve` shows while it starts on the embedded SmolLM2: the weight-loading
progress (plain lines, since the output is a pipe), the start-up summary before the ready
line, and `--help` with its flags under vLLM's headings."""
import re
import subprocess

from conftest import BINARY


def startup_lines(server):
    ready = next(i for i, line in enumerate(server.log) if line.startswith("ready: "))
    return [line.rstrip("\n") for line in server.log[:ready + 1]]


def test_progress_lines_end_with_the_total(smol):
    lines = startup_lines(smol)
    assert "reading weight files: 98.4 MB in" in "\n".join(lines)
    done = [line for line in lines if line.startswith("loading weights: ")]
    assert len(done) == 1
    assert re.fullmatch(r"loading weights: 96\.6 MB in \d+\.\d s \([\d.]+ [kMGT]?B/s\)", done[0])
    quarters = [line for line in lines if re.match(r"loading weights +\d+% ", line)]
    assert [int(line.split()[2].rstrip("%")) for line in quarters] == [31, 50, 75]
    assert all("\r" not in line for line in lines)


def test_summary_precedes_the_ready_line(smol):
    lines = startup_lines(smol)
    first = next(i for i, line in enumerate(lines) if line.startswith("weights: "))
    summary = lines[first:]
    assert summary[0] == ("weights: 134515008 parameters, 96.6 MB in memory, stored as f32, q4_1, q8_0 "
                          "(smollm2-135m-instruct-q4_1.gguf (GGUF v3, llama, 272 tensors))")
    # --num-kv-blocks 2048: 8192 tokens take 512 blocks, 1024 take 64.
    assert summary[1] == ("KV cache (f32): 2048 blocks of 16 tokens (32768 tokens); 4 sequences fit at the model's "
                          "full context (8192 tokens), 32 at max_model_len 1024")
    assert summary[2].startswith("swap space: ")
    assert re.fullmatch(r"ready: serving model 'smollm2-135m-instruct-q4_1.gguf' \(max_model_len 1024\) "
                        r"on http://127\.0\.0\.1:\d+/v1", summary[-1])
    assert summary[-1].endswith(smol.url.split("//")[1] + "/v1")


def test_help_groups_the_flags():
    out = subprocess.run([str(BINARY), "serve", "--help"], capture_output=True, text=True, check=True).stdout
    headings = [line[:-1] for line in out.splitlines() if re.fullmatch(r"[A-Z][A-Za-z ]*:", line)]
    assert headings == ["Positionals", "Options", "Model", "Load", "Device", "Cache", "Parallel", "Frontend", "HTTP limits",
                        "Images", "Scheduler", "Speculative", "LoRA"]
    model = out.split("\nModel:\n")[1].split("\n\n")[0]
    assert "--max-model-len" in model and "--served-model-name" in model
    assert "--max-num-seqs" in out.split("\nScheduler:\n")[1].split("\n\n")[0]
