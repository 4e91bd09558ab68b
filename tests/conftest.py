"""Real databases for every test: a SQLite file and a fresh PostgreSQL database.

Both are built once per test session with the real Alembic migrations and wiped between
tests. PostgreSQL tests use the server named by ``RUNTIME_STORE_TEST_POSTGRES_URL`` and
skip when it does not answer, unless ``RUNTIME_STORE_REQUIRE_POSTGRES=1``.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine, make_url

from app.storage import SqlStore, create_engine, upgrade_schema
from app.storage.access.tokens import KEY_CHECK_NAME
from app.storage.database.tables import api_tokens, metadata, service_keys
from runtime_store_client import HttpStore
from tests.contract.builders import Backend, observed_in_process
from tests.replicas.cluster import StreamingPair, server_binaries, start_pair

DEFAULT_POSTGRES_URL = "postgresql://postgres@127.0.0.1:5432/postgres"


#: Tests that kill processes, cut connections, wait out retry windows or saturate the CPU on
#: purpose (marker ``serial``). ``./scripts/test`` runs them one at a time in a process of
#: their own, beside the two xdist workers that run everything else: they mostly wait, so
#: they would hold a worker idle, and two of them at once would disturb each other.
SERIAL_TESTS = (
    "tests/test_bench_smoke.py",
    "tests/reliability/",
    "tests/tail/",
    "tests/api/test_serve.py",
    "tests/api/test_connection_limits.py",
    "tests/api/test_docs_browser.py",
    "tests/observability/test_serve.py",
    "tests/console/test_console_browser.py",
    "tests/delivery/test_webhooks_live.py",
    # Mostly waiting too: clusters made and stopped, a big import's slices.
    "tests/replicas/test_routing.py",
    "tests/lifecycle/test_import_slices.py",
    "tests/delivery/test_webhooks_outage.py",  # marked in the module as well
    "tests/failover/",  # a Patroni cluster made, its leader killed, stopped and frozen
)
_ROOT = Path(__file__).resolve().parent.parent


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """``-m serial`` imports only the serial modules and ``-m "not serial"`` only the
    others (``./scripts/test`` runs both at once: collecting every module in each of its
    three processes cost as much CPU as many of the tests)."""
    wanted = config.option.markexpr
    if wanted not in ("serial", "not serial") or collection_path.suffix != ".py":
        return None
    if not collection_path.name.startswith("test_"):
        return None
    try:
        relative = collection_path.resolve().relative_to(_ROOT).as_posix()
    except ValueError:  # not one of this repository's tests
        return None
    serial = relative.startswith(SERIAL_TESTS)
    return (wanted == "serial") != serial or None


#: Contract modules of read operations, run once more over a service with a read replica
#: (the ``http-postgres-replica`` backend); the replica tests themselves are tests/replicas.
REPLICA_READ_MODULES = tuple(
    f"tests/contract/test_{name}.py"
    for name in (
        "cursors",
        "memory",
        "paging",
        "record_by_key",
        "search",
        "seed_reads",
        "sessions",
        "transcript_prefix",
    )
)
_REPLICA_BACKEND = "http-postgres-replica"

#: Contract modules of the writes PostgreSQL's fast path serves (appends, batches, starts,
#: terminal writes), run once more over a service with the fast path off (the
#: ``http-postgres-python`` backend): the Python path as the service awaits it.
PYTHON_PATH_WRITE_MODULES = tuple(
    f"tests/contract/test_{name}.py"
    for name in (
        "appends",
        "batch_append",
        "child_continuations",
        "child_starts",
        "continuations",
        "one_shot_starts",
        "payloads",
        "request_digests",
        "root_starts",
        "synchronous_starts",
        "terminal",
        "text",
    )
)
_PYTHON_PATH_BACKEND = "http-postgres-python"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.nodeid.startswith(SERIAL_TESTS):
            item.add_marker(pytest.mark.serial)
    deselected = [
        item
        for item in items
        if (
            f"[{_REPLICA_BACKEND}" in item.nodeid
            and not item.nodeid.startswith(REPLICA_READ_MODULES)
        )
        or (
            f"[{_PYTHON_PATH_BACKEND}" in item.nodeid
            and not item.nodeid.startswith(PYTHON_PATH_WRITE_MODULES)
        )
    ]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if item not in set(deselected)]
    items.sort(key=_start_order(items))


#: Modules of few but long tests, started first (longest first, as measured): the two
#: xdist workers take whole modules in the order collected (``--no-loadscope-reorder``),
#: and a long module taken last would leave one worker alone at the end.
LONG_MODULES_FIRST = (
    "tests/security/test_fuzz.py",
    "tests/console/test_console_run_browser.py",
    "tests/docs/test_readme.py",
    "tests/storage/test_fast_path_differential.py",
    "tests/security/test_bounded_cost.py",
    "tests/test_cli_errors.py",
    "tests/console/test_console_shell_browser.py",
    "tests/security/test_auth_mode.py",
    "tests/console/test_console_webhooks_browser.py",
    "tests/console/test_console_lists_browser.py",
    "tests/security/test_decoder_properties.py",
    "tests/test_cli_serve.py",
    "tests/client/test_generated_client.py",
)


def _start_order(items: list[pytest.Item]) -> Callable[[pytest.Item], tuple[int, int]]:
    """The long modules first, then every other module, those with more tests first."""
    counts = Counter(item.nodeid.split("::")[0] for item in items)

    def rank(item: pytest.Item) -> tuple[int, int]:
        module = item.nodeid.split("::")[0]
        if module in LONG_MODULES_FIRST:
            return (0, LONG_MODULES_FIRST.index(module))
        return (1, -counts[module])

    return rank


def postgres_server_url() -> str:
    return os.environ.get("RUNTIME_STORE_TEST_POSTGRES_URL", DEFAULT_POSTGRES_URL)


def _postgres_required() -> bool:
    return os.environ.get("RUNTIME_STORE_REQUIRE_POSTGRES") == "1"


def _admin_engine() -> Engine:
    return create_engine(postgres_server_url(), isolation_level="AUTOCOMMIT", pool_size=1)


@contextmanager
def new_postgres_database(*, migrated: bool = True) -> Iterator[str]:
    """The URL of a PostgreSQL database made for the caller (migrated to head unless told
    otherwise), dropped afterwards; skips (or fails, when required) without a server."""
    admin = _admin_engine()
    try:
        with admin.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
    except sa.exc.OperationalError as exc:
        admin.dispose()
        if _postgres_required():
            pytest.fail(f"PostgreSQL is required but does not answer: {exc}")
        pytest.skip("no PostgreSQL server answers; set RUNTIME_STORE_REQUIRE_POSTGRES=1 to fail")
    name = f"rs_test_{uuid.uuid4().hex[:12]}"
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = make_url(postgres_server_url()).set(database=name).render_as_string(hide_password=False)
    try:
        if migrated:
            upgrade_schema(url)
        yield url
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """URL of a PostgreSQL database created for this test session, migrated to head."""
    with new_postgres_database() as url:
        yield url


@pytest.fixture(scope="session")
def sqlite_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    """URL of a SQLite file created for this test session, migrated to head."""
    path: Path = tmp_path_factory.mktemp("sqlite") / "runtime-store.db"
    url = f"sqlite:///{path}"
    upgrade_schema(url)
    return url


def wipe(engine: Engine) -> None:
    """Delete every row, children first, so each test starts from an empty database.

    The service's keys stay: they are configuration, not data, and a live server with
    several workers keeps the cursor key it loaded (as a deployment does)."""
    tables = [table for table in reversed(metadata.sorted_tables) if table is not service_keys]
    with engine.begin() as conn:
        if engine.dialect.name == "postgresql":  # one round trip, not one per table
            conn.exec_driver_sql("; ".join(f'DELETE FROM "{table.name}"' for table in tables))
            return
        for table in tables:
            conn.execute(table.delete())


@pytest.fixture(scope="session")
def sqlite_engine(sqlite_url: str) -> Iterator[Engine]:
    engine = create_engine(sqlite_url)
    yield engine
    engine.dispose()


@pytest.fixture(scope="session")
def postgres_engine(postgres_url: str) -> Iterator[Engine]:
    engine = create_engine(postgres_url)
    yield engine
    engine.dispose()


def forget_tokens(engine: Engine) -> None:
    """No token and no token-key check left behind: on a shared database they would keep
    a later key-less (or differently keyed) server of another module from starting."""
    with engine.begin() as conn:
        conn.execute(api_tokens.delete())
        conn.execute(service_keys.delete().where(service_keys.c.name == KEY_CHECK_NAME))


@pytest.fixture(params=["sqlite", "postgres"])
def engine(request: pytest.FixtureRequest) -> Iterator[Engine]:
    """A clean engine on each database backend."""
    eng: Engine = request.getfixturevalue(f"{request.param}_engine")
    wipe(eng)
    yield eng
    forget_tokens(eng)


@pytest.fixture(
    params=[
        "sqlite",
        "postgres",
        "postgres-python",
        "http-sqlite",
        "http-postgres",
        _PYTHON_PATH_BACKEND,
        _REPLICA_BACKEND,
    ]
)
def store(request: pytest.FixtureRequest) -> Iterator[Backend]:
    """The store under test: the contract suite runs once per backend.

    ``sqlite`` and ``postgres`` are the in-process ``SqlStore``; ``postgres-python`` is
    ``SqlStore`` on PostgreSQL with its SQL fast path off (``RUNTIME_STORE_PG_FAST_PATH=off``:
    every write on the Python path); ``http-*`` is the real ``HttpStore`` talking to a live
    ``runtime-store serve`` on that database; ``http-postgres-python`` a live service on
    PostgreSQL with the fast path off (the write modules only); ``http-postgres-replica`` a
    live service on a PostgreSQL primary with a hot standby serving reads (the read modules
    only). Through a
    service, ``observe`` (did a refused write change nothing?) reads the database in process.
    """
    if request.param == _REPLICA_BACKEND:
        pair: StreamingPair = request.getfixturevalue("streaming_pair")
        wipe(request.getfixturevalue("replica_primary_engine"))
        pair.catch_up()
        replicated: LiveServer = request.getfixturevalue("replica_server")
        primary = SqlStore(request.getfixturevalue("replica_primary_engine"))
        with (
            HttpStore(replicated.base_url) as http_store,
            observed_in_process(http_store, primary),
        ):
            yield http_store
        return
    database = request.param.removeprefix("http-").removesuffix("-observed").removesuffix("-python")
    engine: Engine = request.getfixturevalue(f"{database}_engine")
    wipe(engine)
    if request.param.endswith("-observed"):
        with StatementObserver(engine) as observer:
            yield SqlStore(engine)
        observer.check()
        return
    if request.param == "postgres-python":
        yield SqlStore(engine, fast_path=False)
        return
    if request.param == database:
        yield SqlStore(engine)
        return
    server: LiveServer = request.getfixturevalue(
        "postgres_python_server" if request.param == _PYTHON_PATH_BACKEND else f"{database}_server"
    )
    with (
        HttpStore(server.base_url) as http_store,
        observed_in_process(http_store, SqlStore(engine)),
    ):
        yield http_store


class StatementObserver:
    """Statement events of an engine, as tracing instrumentation receives them.

    Used as the ``*-observed`` backends: the store runs the same code as unobserved (the
    PostgreSQL append path included), and every statement must reach the observer with
    its ``before`` and ``after`` events on one context.
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.before: list[tuple[str, int]] = []
        self.after: list[tuple[str, int]] = []

    def _before(
        self, _conn: Any, _cursor: Any, sql: str, _params: Any, context: Any, _many: bool
    ) -> None:
        self.before.append((sql, id(context)))

    def _after(
        self, _conn: Any, _cursor: Any, sql: str, _params: Any, context: Any, _many: bool
    ) -> None:
        self.after.append((sql, id(context)))

    def __enter__(self) -> StatementObserver:
        sa.event.listen(self.engine, "before_cursor_execute", self._before)
        sa.event.listen(self.engine, "after_cursor_execute", self._after)
        return self

    def __exit__(self, *_exc: object) -> None:
        sa.event.remove(self.engine, "before_cursor_execute", self._before)
        sa.event.remove(self.engine, "after_cursor_execute", self._after)

    def check(self) -> None:
        """Every statement seen before and after it ran (failed ones have no ``after``)."""
        assert self.before, "the observer saw no statement"
        assert set(self.after) <= set(self.before)


# --- live servers ----------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class LiveServer:
    """A ``runtime-store serve`` process on 127.0.0.1, over one test database."""

    base_url: str
    database_url: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def start_server(
    database_url: str, log_path: Path, *extra_args: str, env: dict[str, str] | None = None
) -> LiveServer:
    """Start ``runtime-store serve`` and wait until ``/healthz`` answers.

    One worker unless the test asks for more (``--workers`` in ``extra_args``, or
    ``RUNTIME_STORE_WORKERS`` in ``env``): on PostgreSQL ``serve`` would start one per
    core, each importing the whole app, for tests that are not about workers. No webhook
    dispatcher unless the test asks (``RUNTIME_STORE_WEBHOOK_DISPATCH=on``): its polls are
    database reads, which tests that count reads (metrics, backpressure) would count too."""
    port = free_port()
    env = {
        **os.environ,
        "RUNTIME_STORE_WORKERS": "1",
        "RUNTIME_STORE_WEBHOOK_DISPATCH": "off",
        **(env or {}),
        "RUNTIME_STORE_DATABASE_URL": database_url,
    }
    log_file = log_path.open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "app", "serve", "--port", str(port), "--no-migrate", *extra_args],
        env=env,
        stdout=log_file,
        stderr=subprocess.STDOUT,
    )
    server = LiveServer(f"http://127.0.0.1:{port}", database_url, process, log_path)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}:\n{server.log()}")
        try:
            if httpx.get(f"{server.base_url}/healthz", timeout=1).status_code == 200:
                return server
        except httpx.TransportError:
            time.sleep(0.1)
    stop_server(server)
    raise RuntimeError(f"server did not answer within 30 s:\n{server.log()}")


def stop_server(server: LiveServer) -> None:
    server.process.send_signal(signal.SIGINT)
    try:
        server.process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait()


@pytest.fixture(scope="session")
def sqlite_server(
    sqlite_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    server = start_server(sqlite_url, tmp_path_factory.mktemp("logs") / "sqlite-server.log")
    yield server
    stop_server(server)


@pytest.fixture(scope="session")
def postgres_server(
    postgres_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    server = start_server(postgres_url, tmp_path_factory.mktemp("logs") / "postgres-server.log")
    yield server
    stop_server(server)


@pytest.fixture(scope="session")
def postgres_python_server(
    postgres_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    """A service on the test database with PostgreSQL's fast path off."""
    server = start_server(
        postgres_url,
        tmp_path_factory.mktemp("logs") / "postgres-python-server.log",
        env={"RUNTIME_STORE_PG_FAST_PATH": "off"},
    )
    yield server
    stop_server(server)


@pytest.fixture(scope="session")
def streaming_pair() -> Iterator[StreamingPair]:
    """A PostgreSQL primary and its hot standby, made for this test session."""
    binaries = server_binaries()
    if binaries is None:
        if _postgres_required():
            pytest.fail("PostgreSQL's server binaries (initdb, pg_basebackup) are required")
        pytest.skip("PostgreSQL's server binaries (initdb, pg_basebackup) are not installed")
    pair = start_pair(binaries)
    yield pair
    pair.remove()


@pytest.fixture(scope="session")
def replica_primary_url(streaming_pair: StreamingPair) -> str:
    name = f"rs_test_{uuid.uuid4().hex[:12]}"
    streaming_pair.create_database(name)
    url = streaming_pair.primary_url(name)
    upgrade_schema(url)
    return url


@pytest.fixture(scope="session")
def replica_primary_engine(replica_primary_url: str) -> Iterator[Engine]:
    engine = create_engine(replica_primary_url)
    yield engine
    engine.dispose()


@pytest.fixture(scope="session")
def replica_server(
    streaming_pair: StreamingPair,
    replica_primary_url: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[LiveServer]:
    """A live service on the pair's primary whose reads the standby may serve."""
    streaming_pair.catch_up()
    database = make_url(replica_primary_url).database or ""
    server = start_server(
        replica_primary_url,
        tmp_path_factory.mktemp("logs") / "replica-server.log",
        env={"RUNTIME_STORE_READ_DATABASE_URLS": streaming_pair.standby_url(database)},
    )
    yield server
    stop_server(server)


@pytest.fixture(params=["sqlite", "postgres"])
def live_server(request: pytest.FixtureRequest) -> LiveServer:
    """A live server on each backend, its database wiped for this test."""
    server: LiveServer = request.getfixturevalue(f"{request.param}_server")
    wipe(request.getfixturevalue(f"{request.param}_engine"))
    return server
