"""The chat page's routes over HTTP: GET / and every file it references are embedded and
served with their content types and ETags (304 on revalidation), HEAD gives the headers
without a body, the page needs no API key while the API still does, and --no-ui turns it off."""
import http.client
import re
from urllib.parse import urlparse

from conftest import request

ASSET_TYPES = {
    "/ui/style.css": "text/css; charset=utf-8",
    "/ui/chat.js": "text/javascript; charset=utf-8",
    "/ui/favicon.svg": "image/svg+xml",
}
MODULES = ("api.js", "attachments.js", "chat.js", "markdown.js", "message_view.js", "sse.js", "store.js")


def fetch(url, path, method="GET", headers=None):
    """(status, headers as a lower-cased dict, body bytes) of one request on its own connection."""
    parsed = urlparse(url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    try:
        conn.request(method, path, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def page_references(html):
    """Every src= and href= of the page."""
    return re.findall(r'(?:src|href)="([^"]+)"', html)


def module_imports(js):
    return re.findall(r'from "\./([\w.]+)"', js)


def test_page_is_served_as_html(tiny):
    status, headers, body = fetch(tiny.url, "/")
    assert status == 200
    assert headers["content-type"] == "text/html; charset=utf-8"
    assert re.fullmatch(r'"[0-9a-f]{16}"', headers["etag"])
    assert headers["cache-control"] == "no-cache"
    assert headers["content-length"] == str(len(body))
    assert b'<select id="model">' in body


def test_page_references_only_embedded_assets(tiny):
    html = fetch(tiny.url, "/")[2].decode()
    refs = page_references(html)
    assert sorted(refs) == ["/ui/chat.js", "/ui/favicon.svg", "/ui/style.css"]
    for ref in refs:
        status, headers, body = fetch(tiny.url, ref)
        assert (status, headers["content-type"]) == (200, ASSET_TYPES[ref]), ref
        assert body, ref


def test_every_module_the_scripts_import_is_served(tiny):
    seen, pending = set(), ["chat.js"]
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        status, headers, body = fetch(tiny.url, "/ui/" + name)
        assert (status, headers["content-type"]) == (200, "text/javascript; charset=utf-8"), name
        assert b"http://" not in body and b"https://" not in body, name  # nothing fetched from elsewhere
        pending += module_imports(body.decode())
    assert sorted(seen) == sorted(MODULES)


def test_etag_revalidation_gives_304_without_a_body(tiny):
    status, headers, body = fetch(tiny.url, "/ui/style.css")
    etag = headers["etag"]
    status, headers, body = fetch(tiny.url, "/ui/style.css", headers={"If-None-Match": etag})
    assert (status, body, headers["etag"]) == (304, b"", etag)
    status, _, body = fetch(tiny.url, "/ui/style.css", headers={"If-None-Match": '"0000000000000000"'})
    assert status == 200 and body


def test_head_gives_the_headers_without_a_body(tiny):
    _, get_headers, get_body = fetch(tiny.url, "/ui/chat.js")
    status, headers, body = fetch(tiny.url, "/ui/chat.js", method="HEAD")
    assert (status, body) == (200, b"")
    assert headers["content-length"] == str(len(get_body))
    assert headers["etag"] == get_headers["etag"]
    # The connection stays usable after a HEAD: a second request on it is answered.
    parsed = urlparse(tiny.url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    conn.request("HEAD", "/")
    first = conn.getresponse()
    assert (first.status, first.read()) == (200, b"")
    conn.request("GET", "/health")
    assert conn.getresponse().status == 200
    conn.close()


def test_unknown_asset_and_wrong_method(tiny):
    status, headers, body = fetch(tiny.url, "/ui/missing.js")
    assert (status, headers["content-type"]) == (404, "application/json")
    assert b"no route GET /ui/missing.js" in body
    assert fetch(tiny.url, "/ui/")[0] == 404
    status, headers, _ = fetch(tiny.url, "/", method="POST")
    assert (status, headers["allow"]) == (405, "GET, HEAD")
    assert fetch(tiny.url, "/v1/models", method="HEAD")[0] == 405


def test_page_needs_no_api_key_but_the_api_does(tiny_with_key):
    assert fetch(tiny_with_key.url, "/")[0] == 200
    assert fetch(tiny_with_key.url, "/ui/chat.js")[0] == 200
    assert request(tiny_with_key.url + "/v1/models")[0] == 401
    assert request(tiny_with_key.url + "/v1/models", headers={"Authorization": "Bearer sekret"})[0] == 200


def test_no_ui_answers_404(tiny_no_ui):
    for path in ("/", "/ui/chat.js", "/ui/style.css"):
        status, headers, body = fetch(tiny_no_ui.url, path)
        assert (status, headers["content-type"]) == (404, "application/json"), path
        assert f"no route GET {path}".encode() in body
    assert request(tiny_no_ui.url + "/v1/models")[0] == 200
