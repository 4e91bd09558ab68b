"""A live stream reads only as fast as its client reads (CONTRACT.md 2.10, 11.3).

Subscribers that open a session's stream and never read it: while the session's records
are written, their streams cost no database read beyond the page each is sending (the
worker's read transactions, from ``/metrics``). Before, every commit woke them into a read
until the socket buffers filled (90 to 100 reads for 20 such streams over 250 commits).
"""

from __future__ import annotations

import re
import socket
import time

import httpx
import pytest
from sqlalchemy.engine import Engine

from app.storage import SqlStore
from runtime_store_client import HttpStore, Record
from tests.conftest import LiveServer, wipe
from tests.contract.builders import new_session, record, start_root

READS = 'runtime_store_db_transaction_duration_seconds_count{mode="read"}'
STREAMS = 20


def reads(server: LiveServer) -> float:
    text = httpx.get(f"{server.base_url}/metrics", timeout=30).text
    found = re.search(rf"^{re.escape(READS)} ([0-9.e+]+)$", text, re.MULTILINE)
    assert found is not None
    return float(found.group(1))


def unread_stream(server: LiveServer, session_id: str) -> socket.socket:
    """A subscriber with a 4 KiB receive buffer that never reads."""
    host, port = server.base_url.removeprefix("http://").split(":")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((host, int(port)))
    sock.sendall(
        f"GET /v1/sessions/{session_id}/records/stream HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
    )
    return sock


@pytest.fixture(params=["sqlite", "postgres"])
def served(request: pytest.FixtureRequest) -> tuple[LiveServer, Engine]:
    """A live server and an engine on its (wiped) database."""
    engine: Engine = request.getfixturevalue(f"{request.param}_engine")
    wipe(engine)
    server: LiveServer = request.getfixturevalue(f"{request.param}_server")
    return server, engine


def test_unread_streams_cost_no_reads_beyond_the_page_they_are_sending(
    served: tuple[LiveServer, Engine],
) -> None:
    live_server, engine = served
    store = SqlStore(engine)
    session_id = new_session(store).id
    run = start_root(store, session_id).run
    streams = [unread_stream(live_server, session_id) for _ in range(STREAMS)]
    try:
        time.sleep(1.0)  # every stream has read its first page (the run_started record)
        before = reads(live_server)

        payload = b'{"text":"' + b"x" * 1000 + b'"}'
        with HttpStore(live_server.base_url) as http:  # each commit wakes the streams
            for commit in range(250):  # 5,000 records, 20 per commit: 20 KB a page
                batch: list[Record] = [
                    record(run, event_key=f"e{commit}-{i}", payload=payload) for i in range(20)
                ]
                http.append_run_records(run.run_id, batch)
        time.sleep(1.0)  # every wake-up has been served

        read = reads(live_server) - before
        assert read <= STREAMS, f"{STREAMS} unread streams read {read:.0f} pages"
    finally:
        for sock in streams:
            sock.close()


def test_a_reading_subscriber_still_gets_every_record(live_server: LiveServer) -> None:
    """The backpressure waits for the client, never past it: a client that reads gets
    the whole backlog and each new record."""
    with HttpStore(live_server.base_url) as http:
        run = start_root(http, new_session(http).id).run
        session_id = run.session_id
        payload = b'{"text":"' + b"y" * 1000 + b'"}'
        http.append_run_records(
            run.run_id, [record(run, event_key=f"b{i}", payload=payload) for i in range(900)]
        )
        for seen, item in enumerate(http.tail_session_run_records(session_id), start=1):
            if seen == 901:  # run_started and the backlog
                http.append_run_record(record(run, event_key="after", payload=payload))
            if seen == 902:
                assert item.event_key == "after"
                break
