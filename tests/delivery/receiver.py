"""A real webhook receiver on loopback: a threaded ``http.server`` that keeps what it was
sent and answers as the test scripts it (status codes in turn, a hang, or an answer
dripped one byte at a time), noting when each request arrived and when its exchange
ended (answered, or cut off by the sender)."""

from __future__ import annotations

import http.server
import json
import select
import socket
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
    #: ``time.monotonic()`` when the request had arrived, and when its exchange ended
    #: (``None``: not yet); ``cut``: the sender closed the connection before the answer
    #: was whole.
    at: float = field(default_factory=time.monotonic)
    ended_at: float | None = None
    cut: bool = False

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
    #: Drip the answer one byte every ``drip_seconds``: ``"body"`` sends the status line
    #: and headers at once, then a body of ``drip_bytes`` bytes; ``"head"`` drips the
    #: status line and headers too.
    drip: str = ""
    drip_bytes: int = 30
    drip_seconds: float = 1.0
    received: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: Set when the receiver closes: answers still dripping are cut off.
    closed: threading.Event = field(default_factory=threading.Event)

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


def _answer(handler: http.server.BaseHTTPRequestHandler, receiver: Receiver, code: int) -> bool:
    """Answer ``code`` as the receiver is scripted to; whether the sender closed the
    connection before the answer was whole."""
    try:
        if receiver.drip:
            return not _drip(handler, receiver, code)
        handler.send_response(code)
        handler.send_header("content-length", "2")
        handler.end_headers()
        handler.wfile.write(b"ok")
    except OSError:
        return True
    return False


def _drip(handler: http.server.BaseHTTPRequestHandler, receiver: Receiver, code: int) -> bool:
    """The answer, one byte every ``drip_seconds``; whether it went out whole (false: the
    sender closed the connection first)."""
    body = b"x" * receiver.drip_bytes
    head = f"HTTP/1.1 {code} OK\r\ncontent-length: {len(body)}\r\n\r\n".encode()
    if receiver.drip == "body":
        handler.wfile.write(head)
        dripped = body
    else:
        dripped = head + body
    for n, byte in enumerate(dripped):
        if n and _closed_within(handler.connection, receiver.drip_seconds, receiver.closed):
            return False
        handler.wfile.write(bytes([byte]))
    return True


def _closed_within(connection: socket.socket, seconds: float, closing: threading.Event) -> bool:
    """Whether the sender closes its side of the connection within ``seconds`` (or the
    receiver closes)."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        if closing.is_set():
            return True
        readable, _, _ = select.select([connection], [], [], min(left, 0.1))
        if readable:
            try:
                return connection.recv(1, socket.MSG_PEEK) == b""
            except OSError:
                return True
    return False


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
            item = Received({k.lower(): v for k, v in self.headers.items()}, body)
            with receiver.lock:
                receiver.received.append(item)
                code = receiver.script.pop(0) if receiver.script else receiver.default
            if receiver.delay:
                time.sleep(receiver.delay)
            cut = _answer(self, receiver, code)
            with receiver.lock:
                item.ended_at, item.cut = time.monotonic(), cut

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
        receiver.closed.set()
        server.shutdown()
        server.server_close()
