"""Export and import of a session over HTTP (CONTRACT.md 11.4), streamed both ways.

The generated client cannot stream, so these speak to the same ``httpx`` client directly
(its response hook turns a problem body into the contract error, as for every call).

* **Export** writes the NDJSON body to a binary file as it arrives, never holding it
  whole. A transient failure before the first byte is retried as any read; once bytes
  were written it is ``UnavailableError`` (the file holds a partial export). A body that
  does not end with its trailer line (the connection dropped) is ``UnavailableError``
  too, never a silent partial file.
* **Import** sends the file in chunks and waits for the one transaction to answer. It is
  never retried: if the answer was lost after a commit, a second import would be refused
  with ``import_conflict``. After ``UnavailableError``, look whether the session exists.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from typing import Final
from urllib.parse import quote

import httpx

from .._generated.models import SessionBody
from ..errors import StoreError, UnavailableError
from ..protocols import BinaryReader, BinaryWriter
from ..types import Session
from ._convert import session
from ._requests import path_id
from ._retry import Attempts, RetryPolicy, transport_error

NDJSON: Final = "application/x-ndjson"
IMPORT_PATH: Final = "/v1/sessions/import"
#: Bytes of the file sent per chunk.
CHUNK_BYTES: Final = 256 * 1024
#: Seconds an export may go without a byte before it counts as dropped.
EXPORT_READ_TIMEOUT: Final = 120.0
#: Seconds an import may take to answer once its file is sent (the whole transaction).
IMPORT_READ_TIMEOUT: Final = 3600.0
#: How a complete export ends: its trailer line.
_TRAILER: Final = b'{"end":'


def export_path(session_id: str) -> str:
    return f"/v1/sessions/{quote(path_id(session_id, 'session_id'), safe='')}/export"


def _timeout(client: httpx.Client | httpx.AsyncClient, read: float) -> httpx.Timeout:
    return httpx.Timeout(client.timeout.connect or 10.0, read=read, write=read, pool=read)


class _Tail:
    """The last bytes written, to tell a complete export from one cut short."""

    def __init__(self) -> None:
        self.tail = b""
        self.written = 0

    def add(self, chunk: bytes) -> None:
        self.written += len(chunk)
        self.tail = (self.tail + chunk)[-4096:]

    def check(self) -> None:
        body = self.tail.rstrip(b"\n")
        last = body[body.rfind(b"\n") + 1 :]
        if not self.tail.endswith(b"\n") or not last.startswith(_TRAILER):
            raise UnavailableError("the export was cut short (no trailer line): export again")


# --- sync ----------------------------------------------------------------------------------


def export_session(
    client: httpx.Client, policy: RetryPolicy, session_id: str, file: BinaryWriter
) -> None:
    """Write the session's export to ``file``; see the module docstring."""
    request = client.build_request(
        "GET",
        export_path(session_id),
        headers={"Accept": NDJSON},
        timeout=_timeout(client, EXPORT_READ_TIMEOUT),
    )
    attempts = Attempts(policy)
    while True:
        tail = _Tail()
        try:
            response = client.send(request, stream=True)
            try:
                for chunk in response.iter_bytes():
                    file.write(chunk)
                    tail.add(chunk)
            finally:
                response.close()
            tail.check()
            return
        except (httpx.TransportError, StoreError) as exc:
            # Bytes given to ``file`` cannot be taken back: a failure after them is final.
            time.sleep(attempts.after(exc, final=bool(tail.written)))


def _chunks(file: BinaryReader) -> Iterator[bytes]:
    while chunk := file.read(CHUNK_BYTES):
        yield chunk


def import_session(client: httpx.Client, file: BinaryReader) -> Session:
    """Send ``file`` to be imported in one transaction; the imported session."""
    try:
        response = client.post(
            IMPORT_PATH,
            content=_chunks(file),
            headers={"Content-Type": NDJSON},
            timeout=_timeout(client, IMPORT_READ_TIMEOUT),
        )
    except httpx.TransportError as exc:
        raise transport_error(exc) from exc
    return session(SessionBody.from_dict(response.json()))


# --- async ---------------------------------------------------------------------------------


async def export_session_async(
    client: httpx.AsyncClient, policy: RetryPolicy, session_id: str, file: BinaryWriter
) -> None:
    """As ``export_session``, on an ``httpx.AsyncClient`` (writes to ``file`` are plain
    blocking writes: a local file)."""
    request = client.build_request(
        "GET",
        export_path(session_id),
        headers={"Accept": NDJSON},
        timeout=_timeout(client, EXPORT_READ_TIMEOUT),
    )
    attempts = Attempts(policy)
    while True:
        tail = _Tail()
        try:
            response = await client.send(request, stream=True)
            try:
                async for chunk in response.aiter_bytes():
                    file.write(chunk)
                    tail.add(chunk)
            finally:
                await response.aclose()
            tail.check()
            return
        except (httpx.TransportError, StoreError) as exc:
            # Bytes given to ``file`` cannot be taken back: a failure after them is final.
            await asyncio.sleep(attempts.after(exc, final=bool(tail.written)))


async def _chunks_async(file: BinaryReader) -> AsyncIterator[bytes]:
    while chunk := file.read(CHUNK_BYTES):
        yield chunk


async def import_session_async(client: httpx.AsyncClient, file: BinaryReader) -> Session:
    """As ``import_session``, on an ``httpx.AsyncClient``."""
    try:
        response = await client.post(
            IMPORT_PATH,
            content=_chunks_async(file),
            headers={"Content-Type": NDJSON},
            timeout=_timeout(client, IMPORT_READ_TIMEOUT),
        )
    except httpx.TransportError as exc:
        raise transport_error(exc) from exc
    return session(SessionBody.from_dict(response.json()))
