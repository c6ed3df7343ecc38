"""The shipped HAProxy configuration retries a refused request (503) once, on another replica:
two replicas that refuse everything see one client request twice, never three times, and the
client gets the 503 with its ``Retry-After`` (a real HAProxy, two loopback replicas)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from toolmgmt_deploy.haproxy import LocalHAProxy

pytestmark = pytest.mark.timeout(60)


class _Refusing(BaseHTTPRequestHandler):
    """A replica that serves ``/healthz`` and refuses every request with 503."""

    posts: list[int]

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.posts.append(self.server.server_address[1])
        body = b'{"error": "full"}'
        self.send_response(503)
        self.send_header("Retry-After", "2")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def replicas() -> Iterator[tuple[list[ThreadingHTTPServer], list[int]]]:
    posts: list[int] = []
    handler = type("Refusing", (_Refusing,), {"posts": posts})
    servers = [ThreadingHTTPServer(("127.0.0.1", 0), handler) for _ in range(2)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield servers, posts
    for server in servers:
        server.shutdown()
        server.server_close()


def test_a_refused_request_is_retried_once_on_another_replica(
    haproxy_binary: str, replicas: tuple[list[ThreadingHTTPServer], list[int]]
) -> None:
    servers, posts = replicas
    addresses = [f"127.0.0.1:{s.server_address[1]}" for s in servers]
    with LocalHAProxy(addresses, binary=haproxy_binary) as proxy:
        for _ in range(3):
            posts.clear()
            answer = httpx.post(f"{proxy.url}/mcp", json={"jsonrpc": "2.0"}, timeout=20)
            assert answer.status_code == 503 and answer.headers["Retry-After"] == "2"
            assert len(posts) == 2 and len(set(posts)) == 2, posts  # once more, elsewhere
