"""A stream reads only as fast as its client reads (CONTRACT.md 2.10): ``Outbox``."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import struct
import termios
from collections.abc import Callable
from typing import Any, Final


class Outbox:
    """What a stream sent that its client has not taken yet: the bytes still in the
    transport's buffer, plus those in the socket's send queue that the client has not
    acknowledged (Linux ``SIOCOUTQ``). A client's kernel acknowledges only what fits its
    receive window, which a client that does not read never empties."""

    #: Bytes the client may leave unacknowledged when the next page is read: a few
    #: events, so that a reading client's delayed acknowledgement of its last small
    #: segments does not hold its stream back; a page beyond it is never read until the
    #: client has taken the one before.
    ALLOWANCE: Final = 8 * 1024
    #: Polling of the send queue while the client is behind (there is no event for it).
    FIRST_POLL: Final = 0.005
    LAST_POLL: Final = 0.25

    def __init__(self, transport: Any) -> None:
        self._transport = transport
        sock = transport.get_extra_info("socket") if transport is not None else None
        self._fd = sock.fileno() if sock is not None else -1

    @classmethod
    def of_current_request(cls) -> Outbox:
        """The outbox of the request served by the current task: uvicorn runs each
        request in a task of its ``RequestResponseCycle.run_asgi``, which holds the
        connection's transport. Elsewhere (a test client) there is none to watch."""
        task = asyncio.current_task()
        frame = getattr(task.get_coro(), "cr_frame", None) if task is not None else None
        cycle = frame.f_locals.get("self") if frame is not None else None
        transport = getattr(cycle, "transport", None)
        if not callable(getattr(transport, "get_write_buffer_size", None)):
            transport = None
        return cls(transport)

    def pending(self) -> int:
        """Bytes sent to the client that it has not taken yet (0 when unknown)."""
        if self._transport is None or self._transport.is_closing():
            return 0
        size: int = self._transport.get_write_buffer_size()
        if self._fd >= 0:
            with contextlib.suppress(OSError):  # SIOCOUTQ is TIOCOUTQ on Linux
                queued = fcntl.ioctl(self._fd, termios.TIOCOUTQ, b"\0\0\0\0")
                size += struct.unpack("i", queued)[0]
        return size

    async def drained(self, stopping: Callable[[], bool]) -> None:
        """Until the client has taken all but ``ALLOWANCE`` bytes (or the stream stops)."""
        poll = self.FIRST_POLL
        while self.pending() > self.ALLOWANCE and not stopping():
            await asyncio.sleep(poll)
            poll = min(poll * 2, self.LAST_POLL)
