#!/usr/bin/env python3
"""Seconds from launching `strata serve` to the first answered /v1/completions request
(max_tokens 1): weight load, KV cache set-up, whatever the server captures before listening
and the first step all count. Prints (and writes with --json) one JSON object, then stops
the server. $STRATA_LD_LIBRARY_PATH, when set, is the server's LD_LIBRARY_PATH (only its).
  serve_startup.py --strata BIN --model DIR [--device cuda] [--load-format dummy] [--json FILE]
                   [--timeout-s 180] [-- extra serve flags]"""
import argparse
import json
import os
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def try_completion(port, model, timeout):
    """The HTTP status of one 1-token completion; None while nothing listens."""
    body = json.dumps({"model": model, "prompt": [1, 2, 3, 4], "max_tokens": 1}).encode()
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", data=body,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except (urllib.error.URLError, ConnectionError, socket.timeout):
        return None


def watch_output(proc, t0, marks, log):
    """Copies the server's output to `log` and notes when it says it is ready."""
    for line in proc.stdout:
        log.append(line.rstrip())
        if line.startswith("ready:") and "ready_s" not in marks:
            marks["ready_s"] = time.perf_counter() - t0


def stop(proc):
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def measure(a, extra):
    port = free_port()
    model_name = os.path.basename(os.path.normpath(a.model))
    cmd = [a.strata, "serve", "--model", a.model, "--device", a.device, "--load-format", a.load_format,
           "--host", "127.0.0.1", "--port", str(port)] + extra
    record = {"bench": "serve_startup", "model": a.model, "device": a.device, "command": " ".join(cmd)}
    log, marks = [], {}
    t0 = time.perf_counter()
    env = dict(os.environ)
    if os.environ.get("STRATA_LD_LIBRARY_PATH"):
        env["LD_LIBRARY_PATH"] = os.environ["STRATA_LD_LIBRARY_PATH"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    reader = threading.Thread(target=watch_output, args=(proc, t0, marks, log), daemon=True)
    reader.start()
    try:
        while True:
            elapsed = time.perf_counter() - t0
            if proc.poll() is not None:
                record["error"] = f"strata serve exited with {proc.returncode} before answering"
                break
            if elapsed > a.timeout_s:
                record["error"] = f"no answer within {a.timeout_s:.0f} s"
                break
            status = try_completion(port, model_name, timeout=max(1.0, a.timeout_s - elapsed))
            if status == 200:
                record["startup_s"] = time.perf_counter() - t0
                break
            if status is not None:
                record["error"] = f"/v1/completions answered {status}"
                break
            time.sleep(0.05)
    finally:
        stop(proc)
        reader.join(timeout=5)
    record.update(marks)
    if "error" in record:
        record["log_tail"] = log[-15:]
    return record


def main():
    p = argparse.ArgumentParser(usage=__doc__)
    p.add_argument("--strata", required=True, help="the strata binary")
    p.add_argument("--model", required=True)
    p.add_argument("--device", default="cuda")
    p.add_argument("--load-format", default="dummy")
    p.add_argument("--timeout-s", type=float, default=180)
    p.add_argument("--json", default="")
    a, extra = p.parse_known_args()
    extra = [x for x in extra if x != "--"]
    record = measure(a, extra)
    line = json.dumps(record)
    print(line, flush=True)
    if a.json:
        with open(a.json, "w") as f:
            f.write(line + "\n")
    return 0 if "startup_s" in record else 1


if __name__ == "__main__":
    raise SystemExit(main())
