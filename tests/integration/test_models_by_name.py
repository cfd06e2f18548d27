"""`strata info -m org/name` end to end: the CLI fetches a repo from a Hub stand-in (HF_ENDPOINT)
into a scratch HF_HUB_CACHE laid out as huggingface_hub lays it out, then runs offline from it."""
import hashlib
import json
import os
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from conftest import BINARY, FIXTURES, Server

REPO_ID = "tiny-org/tiny-llama"
COMMIT = "89abcdef0123456789abcdef0123456789abcdef"
FILES = {name: (FIXTURES / "hf" / "llama" / name).read_bytes()
         for name in ("config.json", "generation_config.json", "model.safetensors")}


class StandIn(BaseHTTPRequestHandler):
    """The revision API and the resolve route; every file answered directly with its sha256 ETag."""
    requests = []

    def log_message(self, *args):
        pass

    def _file(self):
        prefix = f"/{REPO_ID}/resolve/{COMMIT}/"
        return FILES.get(self.path[len(prefix):]) if self.path.startswith(prefix) else None

    def _answer(self, send_body):
        StandIn.requests.append((self.command, self.path))
        if self.path in (f"/api/models/{REPO_ID}/revision/main", f"/api/models/{REPO_ID}/revision/{COMMIT}"):
            body = json.dumps({"sha": COMMIT, "siblings": [{"rfilename": n} for n in FILES]}).encode()
            etag = None
        else:
            body = self._file()
            if body is None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            etag = hashlib.sha256(body).hexdigest()
        self.send_response(200)
        if etag:
            self.send_header("ETag", f'"{etag}"')
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if send_body:
            self.wfile.write(body)

    def do_GET(self):
        self._answer(True)

    def do_HEAD(self):
        self._answer(False)


@pytest.fixture
def hub():
    server = ThreadingHTTPServer(("127.0.0.1", 0), StandIn)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    StandIn.requests = []
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def run_info(env):
    if not BINARY.exists():
        pytest.skip(f"{BINARY} is not built")
    return subprocess.run([str(BINARY), "info", "-m", REPO_ID], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env})


def test_info_by_repo_id_downloads_then_runs_offline(hub, tmp_path):
    env = {"HF_ENDPOINT": hub, "HF_HUB_CACHE": str(tmp_path), "HF_HUB_OFFLINE": "0"}
    r = run_info(env)
    assert r.returncode == 0, r.stderr
    assert "model_type:      llama" in r.stdout
    repo = tmp_path / "models--tiny-org--tiny-llama"
    assert (repo / "refs" / "main").read_text() == COMMIT
    for name, data in FILES.items():
        link = repo / "snapshots" / COMMIT / name
        assert os.readlink(link) == f"../../blobs/{hashlib.sha256(data).hexdigest()}"
        assert link.read_bytes() == data
    assert sorted(p for m, p in StandIn.requests if m == "GET") == sorted(
        [f"/api/models/{REPO_ID}/revision/main"] + [f"/{REPO_ID}/resolve/{COMMIT}/{n}" for n in FILES])

    StandIn.requests = []
    r = run_info({**env, "HF_HUB_OFFLINE": "1"})
    assert r.returncode == 0, r.stderr
    assert "model_type:      llama" in r.stdout
    assert StandIn.requests == []


def test_offline_without_the_files_says_so(hub, tmp_path):
    r = run_info({"HF_ENDPOINT": hub, "HF_HUB_CACHE": str(tmp_path), "HF_HUB_OFFLINE": "1"})
    assert r.returncode != 0
    repo = tmp_path / "models--tiny-org--tiny-llama"
    assert (f"HF_HUB_OFFLINE is set and tiny-org/tiny-llama at revision main is not complete in the cache {repo} "
            "(refs/main is missing); unset HF_HUB_OFFLINE to download it") in r.stderr
    assert StandIn.requests == []


def test_serve_by_repo_id_serves_under_the_repo_id(hub, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", hub)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    server = Server([REPO_ID, "--revision", COMMIT], "by repo id")
    try:
        assert server.model == REPO_ID
        assert not (tmp_path / "models--tiny-org--tiny-llama" / "refs").exists()  # a commit keeps no ref
    finally:
        server.stop()
