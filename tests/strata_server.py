"""One `strata serve` process on a free loopback port, started and stopped by the pytest suites
(tests/integration's server fixtures, and tests/python where the module is compared with the
server), and plain HTTP requests to it."""
import json
import re
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request

import openai
import pytest

from pytest_paths import BINARY

READY = re.compile(r"ready: serving model '([^']*)' .* on http://([\d.]+):(\d+)/v1")


class Server:
    """One `strata serve` process; `url` is http://127.0.0.1:PORT."""

    def __init__(self, args, name):
        if not BINARY.exists():
            pytest.skip(f"{BINARY} is not built")
        self.log = []
        self.proc = subprocess.Popen([str(BINARY), "serve", "--port", "0", "--threads", "2", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.url, self.model = self._wait_ready(name)
        self._drain = threading.Thread(target=self._read_rest, daemon=True)
        self._drain.start()
        self._wait_healthy()

    def _wait_ready(self, name):
        deadline = time.time() + 120
        for line in self.proc.stdout:
            self.log.append(line)
            m = READY.search(line)
            if m:
                return f"http://{m.group(2)}:{m.group(3)}", m.group(1)
            if time.time() > deadline:
                break
        self.stop()
        raise RuntimeError(f"{name} server did not start:\n" + "".join(self.log))

    def _read_rest(self):
        for line in self.proc.stdout:
            self.log.append(line)

    def _wait_healthy(self):
        for _ in range(200):
            if get(self.url + "/health")[0] == 200:
                return
            time.sleep(0.05)
        raise RuntimeError("server never became healthy")

    def client(self, **kw):
        return openai.OpenAI(base_url=self.url + "/v1", api_key=kw.pop("api_key", "none"), max_retries=0,
                             timeout=kw.pop("timeout", 120), **kw)

    def metrics(self):
        values = {}
        for line in get(self.url + "/metrics")[1].splitlines():
            if line.startswith("strata:") and "_bucket" not in line:
                key, value = line.rsplit(" ", 1)
                values[key.split("{")[0]] = float(value)
        return values

    def stop(self, sig=signal.SIGTERM, timeout=30):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def request(url, body=None, method=None, headers=None, raw=None):
    """(status, text) of an HTTP request; body is JSON-encoded unless raw bytes are given."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(url, data=data, method=method or ("POST" if data is not None else "GET"),
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def get(url):
    try:
        return request(url)
    except OSError as e:
        return 0, str(e)
