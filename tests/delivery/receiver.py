"""A real webhook receiver on loopback: a threaded ``http.server`` that keeps what it was
sent and answers as the test scripts it (status codes in turn, or a hang)."""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes

    @property
    def event(self) -> dict[str, Any]:
        value: dict[str, Any] = json.loads(self.body)
        return value


@dataclass
class Receiver:
    """What the receiver got, and how it answers next."""

    port: int = 0
    #: Status codes to answer in turn; then ``default``.
    script: list[int] = field(default_factory=list)
    default: int = 200
    #: Seconds to wait before answering each request (a hang beyond the sender's 10 s).
    delay: float = 0.0
    received: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    def events(self) -> list[dict[str, Any]]:
        with self.lock:
            return [item.event for item in self.received]

    def wait_for(self, count: int, timeout: float = 30.0) -> list[Received]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if len(self.received) >= count:
                    return list(self.received)
            time.sleep(0.05)
        with self.lock:
            raise AssertionError(f"got {len(self.received)} of {count} deliveries in {timeout} s")


@contextmanager
def receiving(**options: Any) -> Iterator[Receiver]:
    receiver = Receiver(**options)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            body = self.rfile.read(length)
            if len(body) < length:
                # The sender died mid-request (a test kills it): no request arrived, as a
                # real server would see it; the sender never got an answer and sends again.
                return
            with receiver.lock:
                receiver.received.append(
                    Received({k.lower(): v for k, v in self.headers.items()}, body)
                )
                code = receiver.script.pop(0) if receiver.script else receiver.default
            if receiver.delay:
                time.sleep(receiver.delay)
            try:
                self.send_response(code)
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"ok")
            except OSError:
                pass

        def log_message(self, *_args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    receiver.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
