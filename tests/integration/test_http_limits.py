"""The HTTP transport under hostile clients, against a real `strata serve`: trickled heads,
idle keep-alive connections, bursts, oversized chunked bodies, bad framing, pipelining,
clients that leave while their request is generating or queued, and a quick shutdown.

Several tests open connections from other loopback addresses (127.0.0.x): each address is
its own client for the per-client connection cap. Every wait is bounded (seconds)."""
import json
import resource
import select
import signal
import socket
import threading
import time

import pytest

from conftest import FIXTURES, Server, get

MODEL = FIXTURES / "hf" / "qwen3"
LONG = {"prompt": [5, 6, 7], "max_tokens": 4000, "ignore_eos": True}


@pytest.fixture(scope="module", autouse=True)
def enough_descriptors():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 8192)), hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def start(name, *flags):
    if not MODEL.exists():
        pytest.skip(f"fixture model {MODEL} is missing")
    return Server([str(MODEL), "--max-model-len", "4096", *flags], name)


@pytest.fixture(scope="module")
def limited():
    server = start("limited", "--header-timeout", "2", "--body-timeout", "2", "--keep-alive-timeout", "1",
                   "--max-body-bytes", "65536", "--max-connections", "4000", "--max-connections-per-client", "64")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def one_seq():
    """One sequence at a time: a second request waits in the engine's queue."""
    server = start("one_seq", "--max-num-seqs", "1")
    yield server
    server.stop()


def port_of(server):
    return int(server.url.rsplit(":", 1)[1])


def connect(server, source="127.0.0.1"):
    s = socket.socket()
    s.bind((source, 0))
    s.settimeout(10)
    s.connect(("127.0.0.1", port_of(server)))
    return s


def post(path, body, extra=b""):
    data = json.dumps(body).encode()
    return (b"POST %s HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n%s"
            % (path.encode(), len(data), extra, data))


GET_HEALTH = b"GET /health HTTP/1.1\r\nHost: t\r\n\r\n"


def readable(sock, seconds):
    """poll(), not select(): the burst test's descriptors are past select's 1024."""
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(max(0, seconds) * 1000))


class Reader:
    """Reads HTTP responses off a raw socket (Content-Length or chunked bodies)."""

    def __init__(self, sock):
        self.sock, self.buf = sock, b""

    def _fill(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0 or not readable(self.sock, left):
            raise TimeoutError("no answer in time")
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError("closed before a whole answer")
        self.buf += data

    def _until(self, marker, deadline):
        while marker not in self.buf:
            self._fill(deadline)
        at = self.buf.index(marker)
        out, self.buf = self.buf[:at], self.buf[at + len(marker):]
        return out

    def _take(self, n, deadline):
        while len(self.buf) < n:
            self._fill(deadline)
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def response(self, timeout=10):
        deadline = time.monotonic() + timeout
        head = self._until(b"\r\n\r\n", deadline).decode().split("\r\n")
        headers = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in head[1:])}
        if "content-length" in headers:
            body = self._take(int(headers["content-length"]), deadline)
        else:
            body = b""
            while size := int(self._until(b"\r\n", deadline), 16):
                body += self._take(size, deadline)
                self._take(2, deadline)
            self._take(2, deadline)
        return int(head[0].split()[1]), headers, body.decode()


def status_of(sock, timeout=10):
    """The status of the first answer on `sock`, or None if it was closed or reset first."""
    try:
        return Reader(sock).response(timeout)[0]
    except (ConnectionError, OSError):
        return None


def closed_by_server(sock, timeout):
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if readable(sock, deadline - time.monotonic()) and not sock.recv(65536):
                return True
    except OSError:
        return True
    return False


def timed_health(server):
    t0 = time.monotonic()
    status = get(server.url + "/health")[0]
    return status, time.monotonic() - t0


def trickle(socks, data, stop, period=0.2):
    """Sends `data` one byte per socket every `period` until stopped (a per-read timeout never fires)."""
    for i in range(len(data)):
        if stop.is_set():
            return
        for s in socks:
            try:
                s.send(data[i:i + 1])
            except OSError:
                pass
        time.sleep(period)


def test_trickled_heads_hold_nothing_and_get_408(limited):
    socks = [connect(limited, "127.0.0.2") for _ in range(110)]
    stop = threading.Event()
    sender = threading.Thread(target=trickle, args=(socks, b"GET /health HTTP/1.1\r\nX-Pad: " + b"p" * 200, stop))
    sender.start()
    try:
        time.sleep(0.5)
        for _ in range(3):
            status, seconds = timed_health(limited)
            assert status == 200 and seconds < 1.0, seconds
        statuses = [status_of(s, timeout=6) for s in socks]
    finally:
        stop.set()
        sender.join()
    # 64 are let in and meet the 2 s header deadline; the rest are over the per-client cap.
    assert statuses.count(408) == 64, statuses
    assert statuses.count(503) == 46, statuses
    for s in socks:
        s.close()


def test_idle_keepalive_connections_delay_nothing_and_are_closed(limited):
    socks = []
    for i in range(300):
        s = connect(limited, f"127.0.0.{3 + i % 6}")
        s.sendall(GET_HEALTH)
        assert status_of(s) == 200
        socks.append(s)
    status, seconds = timed_health(limited)
    assert status == 200 and seconds < 1.0, seconds
    closed = [closed_by_server(s, 4) for s in socks]  # --keep-alive-timeout 1
    assert all(closed)
    for s in socks:
        s.close()


def test_burst_of_connections_is_all_answered(limited):
    socks = [connect(limited, f"127.0.1.{1 + i % 20}") for i in range(1200)]  # 60 per client
    for s in socks:
        s.sendall(GET_HEALTH)
    statuses = [status_of(s) for s in socks]
    for s in socks:
        s.close()
    assert statuses.count(200) == 1200, {x: statuses.count(x) for x in set(statuses)}


def test_chunked_body_over_limit_is_413_without_reading_it(limited):
    s = connect(limited)
    s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
    chunk = b"10000\r\n" + b"1" * 0x10000 + b"\r\n"
    sent = [0]

    def send_512_mb():
        try:
            while sent[0] < 512 << 20:
                s.sendall(chunk)
                sent[0] += len(chunk)
        except OSError:
            pass

    sender = threading.Thread(target=send_512_mb)
    sender.start()
    status, _, body = Reader(s).response(timeout=10)
    sender.join(timeout=20)
    s.close()
    assert status == 413 and json.loads(body)["error"]["code"] == "request_too_large"
    assert not sender.is_alive() and sent[0] < 64 << 20, sent[0]
    assert get(limited.url + "/health")[0] == 200


@pytest.mark.parametrize("framing,expected", [
    (b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}", 400),
    (b"Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n{}", 400),
    (b"Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n", 400),
    (b"Content-Length: 100000\r\n\r\n", 413),
    (b"X-Big: " + b"a" * 70000 + b"\r\n\r\n", 431),
])
def test_bad_framing_is_refused(limited, framing, expected):
    s = connect(limited)
    s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: t\r\n" + framing)
    status, headers, body = Reader(s).response()
    assert status == expected and headers["connection"] == "close"
    assert json.loads(body)["error"]["type"] == "invalid_request_error"
    assert closed_by_server(s, 3)
    s.close()


def test_pipelined_requests_are_all_answered_in_order(limited):
    s = connect(limited)
    s.sendall(post("/v1/completions", {"prompt": [1, 2], "max_tokens": 3, "ignore_eos": True}) + GET_HEALTH
              + post("/v1/completions", {"prompt": [3], "max_tokens": 1}))
    reader = Reader(s)
    first, health, last = reader.response(), reader.response(), reader.response()
    s.close()
    assert first[0] == 200 and json.loads(first[2])["usage"]["completion_tokens"] == 3
    assert health[:1] == (200,) and health[2] == "{}"
    assert last[0] == 200 and json.loads(last[2])["usage"]["prompt_tokens"] == 1


def wait_for(predicate, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_non_streamed_client_that_leaves_is_cancelled(one_seq):
    before = one_seq.metrics()["strata:generation_tokens_total"]
    s = connect(one_seq)
    s.sendall(post("/v1/completions", LONG))
    assert wait_for(lambda: one_seq.metrics()["strata:generation_tokens_total"] > before, 10)
    s.close()
    assert wait_for(lambda: one_seq.metrics()["strata:num_requests_running"] == 0, 2)
    settled = one_seq.metrics()["strata:generation_tokens_total"]
    time.sleep(0.5)
    assert one_seq.metrics()["strata:generation_tokens_total"] == settled  # stopped generating
    assert settled - before < LONG["max_tokens"]


@pytest.mark.parametrize("stream", [False, True])
def test_queued_request_whose_client_left_is_cancelled(one_seq, stream):
    running = connect(one_seq)
    running.sendall(post("/v1/completions", LONG))
    assert wait_for(lambda: one_seq.metrics()["strata:num_requests_running"] == 1, 10)
    queued = connect(one_seq)
    queued.sendall(post("/v1/completions", {**LONG, "stream": stream}))
    assert wait_for(lambda: one_seq.metrics()["strata:num_requests_waiting"] == 1, 10)
    queued.close()
    # Gone from the queue while the running request still holds the only sequence.
    assert wait_for(lambda: one_seq.metrics()["strata:num_requests_waiting"] == 0, 2)
    assert one_seq.metrics()["strata:num_requests_running"] == 1
    running.close()
    assert wait_for(lambda: one_seq.metrics()["strata:num_requests_running"] == 0, 2)


def test_shutdown_with_trickling_and_idle_clients_is_quick():
    server = start("quick_stop")
    idle = [connect(server) for _ in range(20)]
    for s in idle:
        s.sendall(GET_HEALTH)
        assert status_of(s) == 200
    slow = [connect(server) for _ in range(20)]
    stop = threading.Event()
    sender = threading.Thread(target=trickle, args=(slow, b"POST /v1/completions HTTP/1.1\r\n" + b"x" * 200, stop))
    sender.start()
    try:
        time.sleep(0.5)
        t0 = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        code = server.proc.wait(timeout=30)
        seconds = time.monotonic() - t0
    finally:
        stop.set()
        sender.join()
    for s in idle + slow:
        s.close()
    assert code == 0
    assert seconds < 3.0, seconds
