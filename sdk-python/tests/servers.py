"""Local servers for the transport tests, on 127.0.0.1: a scripted HTTP server, a proxy that
hides the service's first answer to a create behind a 503, and a TCP proxy that cuts an event
stream after its first step."""

from __future__ import annotations

import http.client
import json
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit


@dataclass
class Answer:
    status: int
    body: object = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


Handler = Callable[[BaseHTTPRequestHandler, Seen], None]


@contextmanager
def http_server(handle: Handler) -> Iterator[tuple[str, list[Seen]]]:
    """Serves each request with `handle`; yields the URL and the requests seen."""
    seen: list[Seen] = []

    class RequestHandler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _any(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            request = Seen(self.command, self.path, {name.lower(): value for name, value in self.headers.items()}, body)
            seen.append(request)
            handle(self, request)

        do_GET = do_POST = do_DELETE = do_PATCH = _any

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), RequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def reply(handler: BaseHTTPRequestHandler, answer: Answer) -> None:
    body = b"" if answer.body is None else json.dumps(answer.body).encode()
    handler.send_response(answer.status)
    for name, value in {"content-type": "application/json", **answer.headers}.items():
        handler.send_header(name, value)
    handler.send_header("content-length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


@contextmanager
def scripted(answers: list[Answer]) -> Iterator[tuple[str, list[Seen]]]:
    """Answers requests in order with `answers` (500 once they run out)."""
    queue = list(answers)
    with http_server(lambda handler, _: reply(handler, queue.pop(0) if queue else Answer(500))) as served:
        yield served


def error_body(code: str, **extra: str) -> dict[str, object]:
    return {"error": {"code": code, "message": "No.", "request_id": "req_scripted", **extra}}


@contextmanager
def losing_first_create(upstream: str) -> Iterator[tuple[str, list[Seen], list[int]]]:
    """Forwards every request to the service, but the answer to the first `POST /v1/devices`
    is replaced by a 503, as if the response had been lost on the way back. Yields the URL,
    the requests seen and the statuses the service answered."""
    target = urlsplit(upstream)
    statuses: list[int] = []
    lost = threading.Event()

    def forward(handler: BaseHTTPRequestHandler, request: Seen) -> None:
        connection = http.client.HTTPConnection(target.hostname or "127.0.0.1", target.port, timeout=60)
        headers = {name: value for name, value in request.headers.items() if name not in ("host", "content-length")}
        connection.request(request.method, request.path, body=request.body, headers=headers)
        response = connection.getresponse()
        payload = response.read()
        connection.close()
        statuses.append(response.status)
        if request.method == "POST" and request.path == "/v1/devices" and not lost.is_set():
            lost.set()
            reply(handler, Answer(503, error_body("service_unavailable"), {"retry-after": "0"}))
            return
        handler.send_response(response.status)
        for name, value in response.getheaders():
            if name.lower() not in ("transfer-encoding", "connection", "content-length", "keep-alive"):
                handler.send_header(name, value)
        handler.send_header("content-length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)

    with http_server(forward) as (url, seen):
        yield url, seen, statuses


def hang_up(connection: socket.socket) -> None:
    """Closes at once: `shutdown` also wakes the other pump's `recv` on this socket (a bare
    `close` leaves the connection open until that `recv` returns)."""
    try:
        connection.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    connection.close()


@dataclass
class CuttingProxy:
    url: str
    event_requests: list[str]
    cut: threading.Event


@contextmanager
def cutting_proxy(upstream: str) -> Iterator[CuttingProxy]:
    """A TCP proxy to the service that cuts the first event-stream connection right after the
    first `step` frame it carries, as a dropped connection or a restarted server would."""
    target = urlsplit(upstream)
    listener = socket.create_server(("127.0.0.1", 0))
    proxy = CuttingProxy(f"http://127.0.0.1:{listener.getsockname()[1]}", [], threading.Event())

    def pump_up(client: socket.socket, server: socket.socket, events: threading.Event) -> None:
        try:
            while chunk := client.recv(65536):
                line = chunk.split(b"\r\n", 1)[0].decode("latin-1")
                if line.startswith("GET ") and "/events" in line:
                    events.set()
                    proxy.event_requests.append(line.split(" ")[1])
                server.sendall(chunk)
        except OSError:
            pass
        finally:
            hang_up(server)

    def pump_down(client: socket.socket, server: socket.socket, events: threading.Event) -> None:
        seen = b""
        try:
            while chunk := server.recv(65536):
                if not events.is_set() or proxy.cut.is_set():
                    client.sendall(chunk)
                    continue
                seen += chunk
                step = seen.find(b"event: step")
                end = -1 if step < 0 else seen.find(b"\n\n", step)
                if end < 0:
                    client.sendall(chunk)
                    continue
                # Forward up to the end of the first step frame, then drop both sides.
                already = len(seen) - len(chunk)
                client.sendall(chunk[: end + 2 - already])
                proxy.cut.set()
                break
        except OSError:
            pass
        finally:
            hang_up(client)
            hang_up(server)

    def accept() -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            server = socket.create_connection((target.hostname or "127.0.0.1", target.port or 80))
            events = threading.Event()
            threading.Thread(target=pump_up, args=(client, server, events), daemon=True).start()
            threading.Thread(target=pump_down, args=(client, server, events), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield proxy
    finally:
        listener.close()
