"""A server that stops answering (a frozen machine: its kernel still takes TCP) bounds
every request (CONTRACT.md 16): a write or a read past the read deadline probes its
server, and a server that does not answer has the connection cut: ``unavailable`` at once,
the pool's connections to it dropped. A slow write on a server that answers runs on.

A relay on loopback stands for the machine: it forwards to the test PostgreSQL until it
is frozen, then keeps every socket open, accepts new ones and forwards nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import socket
import threading
import time
from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from prometheus_client import REGISTRY
from sqlalchemy.engine import make_url

from app.storage import SqlStore
from app.storage.database.engines import CONNECT_TIMEOUT_SECONDS, create_engine
from app.storage.database.read_deadlines import DatabaseUnresponsive, unanswered_bound
from app.storage.database.server_probes import PROBE_TIMEOUT_SECONDS, probe
from runtime_store_client import UnavailableError
from tests.contract.builders import new_session

pytestmark = [pytest.mark.postgres]

DEADLINE = 1.0


class Relay:
    """TCP relay to ``target``; ``frozen`` stops every byte, in both directions."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.frozen = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            self.sockets.append(client)
            if self.frozen.is_set():
                continue  # accepted by the kernel, never answered
            server = socket.create_connection(self.target)
            self.sockets.append(server)
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                while self.frozen.is_set():
                    time.sleep(0.05)
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self.frozen.clear()
        self.listener.close()
        for sock in self.sockets:
            sock.close()


@pytest.fixture
def relay(postgres_url: str) -> Iterator[Relay]:
    url = make_url(postgres_url)
    made = Relay((url.host or "127.0.0.1", url.port or 5432))
    yield made
    made.close()


def through(postgres_url: str, relay: Relay) -> str:
    url = make_url(postgres_url).set(host="127.0.0.1", port=relay.port)
    return url.render_as_string(hide_password=False)


def test_the_probe_tells_a_live_server_from_a_frozen_one(postgres_url: str, relay: Relay) -> None:
    assert probe("127.0.0.1", relay.port)
    relay.frozen.set()
    started = time.monotonic()
    assert not probe("127.0.0.1", relay.port)
    assert time.monotonic() - started < PROBE_TIMEOUT_SECONDS + 2.0  # its own timeout
    closed = socket.create_server(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    assert not probe("127.0.0.1", port)  # refused


def test_a_write_to_a_frozen_server_is_cut_and_answers_unavailable(
    postgres_url: str, relay: Relay
) -> None:
    engine = create_engine(through(postgres_url, relay), read_timeout_seconds=DEADLINE)
    store = SqlStore(engine)
    try:
        session = new_session(store)  # a pooled connection through the relay
        relay.frozen.set()
        counted = _unavailable_counted()
        started = time.monotonic()
        with pytest.raises(DatabaseUnresponsive):
            new_session(store)
        took = time.monotonic() - started
        assert DEADLINE <= took < DEADLINE + 3.0
        # Its 503 is counted as a transaction given up.
        assert _unavailable_counted() == counted + 1
        # Reads too: a cut connection, a new one that times out, then unavailable.
        started = time.monotonic()
        with pytest.raises(UnavailableError):
            store.load_session(session.id)
        assert time.monotonic() - started < DEADLINE + 5.0
        relay.frozen.clear()
        new_session(store)  # thawed: the next call reconnects by itself
    finally:
        engine.dispose()


def _unavailable_counted() -> float:
    return REGISTRY.get_sample_value("runtime_store_db_transactions_unavailable_total") or 0.0


def test_the_retention_lock_on_a_frozen_server_answers_within_the_deadline(
    postgres_url: str, relay: Relay
) -> None:
    """The lock's query is bounded like any other: a frozen primary does not hold the
    sweeper until it resumes; a lock whose server froze counts as lost."""
    engine = create_engine(through(postgres_url, relay), read_timeout_seconds=DEADLINE)
    dialect = SqlStore(engine)._ctx.uow.dialect
    try:
        with dialect.exclusive(engine, "test frozen lock") as mine:
            assert mine
            assert mine.still_held()
            relay.frozen.set()
            started = time.monotonic()
            assert not mine.still_held()
            assert time.monotonic() - started < DEADLINE + 3.0
            assert mine.lost
        relay.frozen.set()  # a new connection: the connect timeout, then unavailable
        started = time.monotonic()
        with (
            pytest.raises((UnavailableError, sa.exc.OperationalError)),
            dialect.exclusive(engine, "test frozen lock"),
        ):
            pass
        assert time.monotonic() - started < DEADLINE + CONNECT_TIMEOUT_SECONDS + 3.0
    finally:
        relay.frozen.clear()
        engine.dispose()


def test_a_lock_lost_with_its_connection_stops_the_sweep_and_frees_it_for_another(
    postgres_url: str,
) -> None:
    """A failover ends the lock's session: the next ``still_held`` says so, and another
    process may take the lock (on the new primary) while the old holder has stopped."""
    engine = create_engine(postgres_url)
    dialect = SqlStore(engine)._ctx.uow.dialect
    try:
        with dialect.exclusive(engine, "test lost lock") as mine:
            assert mine.still_held()
            with dialect.exclusive(engine, "test lost lock") as other:
                assert not other
                assert not other.still_held()
            key = hashlib.sha256(b"test lost lock").digest()[:8]
            with engine.connect() as conn:  # the lock's backend ends (its server went)
                ended = conn.execute(
                    sa.text(
                        "SELECT pg_terminate_backend(pid) FROM pg_locks"
                        " WHERE locktype = 'advisory' AND objsubid = 1"
                        " AND classid = CAST(:high AS oid) AND objid = CAST(:low AS oid)"
                    ),
                    {"high": int.from_bytes(key[:4]), "low": int.from_bytes(key[4:])},
                ).scalars()
                assert list(ended) == [True]
            time.sleep(0.2)
            assert not mine.still_held()
            with dialect.exclusive(engine, "test lost lock") as other:
                assert other
                assert other.still_held()
            assert not mine.still_held()  # lost for good, even on a fresh connection
    finally:
        engine.dispose()


def test_a_slow_write_on_a_live_server_is_not_cut(postgres_url: str, relay: Relay) -> None:
    engine = create_engine(through(postgres_url, relay), read_timeout_seconds=DEADLINE)
    try:
        with engine.connect() as conn, conn.begin(), unanswered_bound(conn, engine):
            conn.execute(sa.text("SELECT pg_sleep(:s)"), {"s": 2.5 * DEADLINE})
    finally:
        engine.dispose()
