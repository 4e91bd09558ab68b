"""The fast path answers as the Python path does: a differential state-machine test.

Hypothesis draws sequences of operations over a few session, run, agent and event-key
names (so starts collide, retries repeat exactly or with a change or a new time, with or
without request digests, engine and synchronous starts name one run ID, children continue
under other parents, parents stop, sessions end and are purged) and applies each step to
two ``SqlStore``s on two PostgreSQL databases: one with the SQL fast path on
(``RUNTIME_STORE_PG_FAST_PATH`` default), one with it off. Every answer must be equal
(the same result, or the same error class and code), and after every sequence every table
row must be equal. Both stores share one fixed clock
per step, so ``updated_at`` is compared too.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any, ClassVar

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    rule,
    run_state_machine_as_test,
)
from sqlalchemy.engine import Engine, make_url

from app.storage import SqlStore, create_engine, upgrade_schema
from app.storage.database.tables import metadata, service_keys
from runtime_store_client import Record, RunStart, RunStatus, StoreError
from tests.conftest import postgres_server_url, wipe
from tests.contract.builders import (
    T0,
    at,
    canceled_record,
    cancellation_record,
    checkpoint,
    link_record,
    record,
    started_record,
    suspended_record,
    terminal_record,
)

#: Sequences per CI run, new ones every run (``RUNTIME_STORE_DIFFERENTIAL_EXAMPLES`` raises it
#: for a long hunt).
EXAMPLES = int(os.environ.get("RUNTIME_STORE_DIFFERENTIAL_EXAMPLES", "100"))

SESSIONS = st.sampled_from(["s1", "s2"])
RUNS = st.sampled_from(["r1", "r1", "r2", "r3", "r4"])
AGENTS = st.sampled_from(["agent-1", "agent-1", "agent-1", "agent-2"])
LABELS = st.sampled_from([{}, {}, {"team": "a"}])
STARTED_AT = st.sampled_from([T0, T0, T0 + timedelta(milliseconds=1)])
KEYS = st.sampled_from(["k1", "k2", "k3"])
PAYLOADS = st.sampled_from([b'{"n":1}', b'{"n":2}'])
REASONS = st.sampled_from(["user_requested", "engine_canceled", "session_ended", "other"])
TERMINALS = st.sampled_from([RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELED])
LIFECYCLE_KEYS = st.sampled_from(["life-1", "life-2"])
#: Request digests (12.1): mostly none, else one of two.
DIGESTS = st.sampled_from([None, None, bytes(range(1, 33)), bytes(range(2, 34))])
#: How a record's owner differs from its run's: mostly not at all.
TWISTS = st.sampled_from(["", "", "", "", "", "agent", "session", "labels"])


def _start(
    run_id: str,
    agent_id: str,
    session_id: str,
    parent_run_id: str,
    predecessor_run_id: str,
    started_at: Any,
    labels: dict[str, str],
) -> RunStart:
    return RunStart(
        run_id=run_id,
        agent_id=agent_id,
        session_id=session_id,
        parent_run_id=parent_run_id,
        predecessor_run_id=predecessor_run_id,
        started_at=started_at,
        labels=labels,
    )


def _answer(call: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return ("ok", call())
    except StoreError as exc:
        return ("error", (type(exc).__name__, exc.code))


def _rows(engine: Engine) -> dict[str, list[str]]:
    """Every row of every table but the service's keys, in a canonical order."""
    out: dict[str, list[str]] = {}
    with engine.connect() as conn:
        for table in metadata.sorted_tables:
            if table is service_keys:
                continue
            out[table.name] = sorted(repr(tuple(row)) for row in conn.execute(sa.select(table)))
    return out


class FastPathAgrees(RuleBasedStateMachine):
    """Each rule runs one operation on both stores and compares the answers."""

    fast: ClassVar[Engine]
    python: ClassVar[Engine]

    def __init__(self) -> None:
        super().__init__()
        wipe(self.fast)
        wipe(self.python)
        self.now = 1_000
        #: run ID → (agent, session, labels) of its accepted start.
        self.owners: dict[str, tuple[str, str, dict[str, str]]] = {}
        self.stores = (
            SqlStore(self.fast, clock=lambda: self.now),
            SqlStore(self.python, clock=lambda: self.now, fast_path=False),
        )
        assert self.stores[0]._ctx.uow.dialect.fast_path
        assert not self.stores[1]._ctx.uow.dialect.fast_path

    def both(self, operation: Callable[[SqlStore], Any]) -> bool:
        """Run ``operation`` on both stores; whether it succeeded."""
        self.now += 7
        fast = _answer(lambda: operation(self.stores[0]))
        python = _answer(lambda: operation(self.stores[1]))
        assert fast == python
        return fast[0] == "ok"

    def started(self, run: RunStart, operation: Callable[[SqlStore], Any]) -> None:
        if self.both(operation):
            self.owners.setdefault(run.run_id, (run.agent_id, run.session_id, dict(run.labels)))

    @initialize()
    def sessions_and_a_root(self) -> None:
        """Most sequences need a session and a running run to say anything."""
        self.create_session("s1")
        self.create_session("s2")
        self.start_root("r1", "s1", "agent-1", {}, T0, "", "start")

    # --- sessions -----------------------------------------------------------------------

    @rule(session_id=SESSIONS)
    def create_session(self, session_id: str) -> None:
        self.both(lambda store: store.create_session(session_id, at(1)))

    @rule(session_id=SESSIONS)
    def end_session(self, session_id: str) -> None:
        self.both(lambda store: store.end_session(session_id, at(2)))

    @rule(session_id=SESSIONS)
    def purge_session(self, session_id: str) -> None:
        self.both(lambda store: store.purge_session(session_id))

    # --- starts -------------------------------------------------------------------------

    @rule(
        run_id=RUNS,
        session_id=SESSIONS,
        agent_id=AGENTS,
        labels=LABELS,
        started_at=STARTED_AT,
        predecessor=st.sampled_from(["", "", "r1", "r2"]),
        start_key=st.sampled_from(["start", "start", "start-2"]),
        digest=DIGESTS,
    )
    def start_root(
        self,
        run_id: str,
        session_id: str,
        agent_id: str,
        labels: dict[str, str],
        started_at: Any,
        predecessor: str,
        start_key: str,
        digest: bytes | None = None,
    ) -> None:
        run = _start(run_id, agent_id, session_id, "", predecessor, started_at, labels)
        started = started_record(run, event_key=start_key)
        self.started(
            run,
            lambda store: store.start_root_run(
                run, started, canceled_record(run), request_digest=digest
            ),
        )

    @rule(
        run_id=RUNS,
        parent_id=RUNS,
        session_id=SESSIONS,
        agent_id=AGENTS,
        link=st.tuples(TWISTS, st.sampled_from(["call-1", "call-1", "call-2"])),
        labels=LABELS,
        predecessor=st.sampled_from(["", "", "r3", "r4"]),
        replay=st.tuples(STARTED_AT, DIGESTS),
    )
    def start_child(
        self,
        run_id: str,
        parent_id: str,
        session_id: str,
        agent_id: str,
        link: tuple[str, str],
        labels: dict[str, str],
        predecessor: str,
        replay: tuple[Any, bytes | None],
    ) -> None:
        """A child start (its link's owner twisted, its tool call ID; its time and request
        digest); with a predecessor whose parent is another run, a continuation under
        another parent (12.4)."""
        started_at, digest = replay
        child = _start(run_id, agent_id, session_id, parent_id, predecessor, started_at, labels)
        twist, tool_call = link
        linked = link_record(self.owner(parent_id, twist), child, tool_call_id=tool_call)
        started = started_record(child)
        self.started(
            child,
            lambda store: store.start_child_run(
                child, linked, started, canceled_record(child), request_digest=digest
            ),
        )

    @rule(run_id=RUNS, agent_id=AGENTS, labels=LABELS, started_at=STARTED_AT, digest=DIGESTS)
    def start_one_shot(
        self,
        run_id: str,
        agent_id: str,
        labels: dict[str, str],
        started_at: Any,
        digest: bytes | None,
    ) -> None:
        run = _start(run_id, agent_id, "", "", "", started_at, labels)
        self.started(
            run,
            lambda store: store.start_one_shot_run(run, started_record(run), request_digest=digest),
        )

    @rule(run_id=RUNS, agent_id=AGENTS, labels=LABELS, started_at=STARTED_AT)
    def start_synchronous(
        self, run_id: str, agent_id: str, labels: dict[str, str], started_at: Any
    ) -> None:
        """12.2: colliding with the engine starts' run IDs, so kinds conflict."""
        run = _start(run_id, agent_id, "", "", "", started_at, labels)
        self.started(run, lambda store: store.start_synchronous_run(run, started_record(run)))

    @rule(
        run_id=RUNS,
        parent_id=RUNS,
        agent_id=AGENTS,
        twist=TWISTS,
        started_at=STARTED_AT,
        digest=DIGESTS,
    )
    def start_one_shot_child(
        self,
        run_id: str,
        parent_id: str,
        agent_id: str,
        twist: str,
        started_at: Any,
        digest: bytes | None,
    ) -> None:
        child = _start(run_id, agent_id, "", parent_id, "", started_at, {})
        link = link_record(self.owner(parent_id, twist), child)
        self.started(
            child,
            lambda store: store.start_one_shot_child_run(
                child, link, started_record(child), request_digest=digest
            ),
        )

    # --- records ------------------------------------------------------------------------

    def owner(self, run_id: str, twist: str) -> RunStart:
        """The run as it was started (so most records are its own), or twisted: another
        agent, another session, other labels."""
        agent_id, session_id, labels = self.owners.get(run_id, ("agent-1", "s1", {}))
        if twist == "agent":
            agent_id = "agent-2" if agent_id == "agent-1" else "agent-1"
        elif twist == "session":
            session_id = "s2" if session_id == "s1" else "s1"
        elif twist == "labels":
            labels = {} if labels else {"team": "a"}
        return _start(run_id, agent_id, session_id, "", "", T0, labels)

    @rule(run_id=RUNS, twist=TWISTS, event_key=KEYS, payload=PAYLOADS)
    def append(self, run_id: str, twist: str, event_key: str, payload: bytes) -> None:
        rec = record(self.owner(run_id, twist), event_key=event_key, payload=payload)
        self.both(lambda store: store.append_run_record(rec))

    @rule(
        run_id=RUNS,
        items=st.lists(st.tuples(KEYS, PAYLOADS, TWISTS), min_size=1, max_size=4),
    )
    def append_batch(self, run_id: str, items: list[tuple[str, bytes, str]]) -> None:
        records = [
            record(self.owner(run_id, twist), event_key=key, payload=payload)
            for key, payload, twist in items
        ]
        self.both(lambda store: store.append_run_records(run_id, records))

    # --- lifecycle commands -------------------------------------------------------------

    @rule(run_id=RUNS, twist=TWISTS, reason=REASONS, key=LIFECYCLE_KEYS)
    def cancel(self, run_id: str, twist: str, reason: str, key: str) -> None:
        rec = cancellation_record(self.owner(run_id, twist), reason, event_key=f"cancel-{key}")
        self.both(lambda store: store.record_run_cancellation(run_id, reason, rec))

    @rule(
        run_id=RUNS,
        twist=TWISTS,
        checkpoint_id=st.sampled_from(["cp-1", "cp-2"]),
        key=LIFECYCLE_KEYS,
        repair=st.booleans(),
    )
    def suspend(self, run_id: str, twist: str, checkpoint_id: str, key: str, repair: bool) -> None:
        rec = suspended_record(self.owner(run_id, twist), checkpoint_id, event_key=f"suspend-{key}")
        cp = checkpoint(checkpoint_id)
        if repair:
            self.both(lambda store: store.repair_run_suspension(run_id, cp, rec))
        else:
            self.both(lambda store: store.record_run_suspension(run_id, cp, rec))

    @rule(
        run_id=RUNS,
        twist=TWISTS,
        status=TERMINALS,
        reason=REASONS,
        key=LIFECYCLE_KEYS,
        repair=st.booleans(),
    )
    def finish(
        self, run_id: str, twist: str, status: RunStatus, reason: str, key: str, repair: bool
    ) -> None:
        rec: Record = terminal_record(
            self.owner(run_id, twist), status, reason=reason, event_key=f"end-{key}"
        )
        if repair:
            self.both(lambda store: store.repair_run_terminal(run_id, status, rec))
        else:
            self.both(lambda store: store.record_run_terminal(run_id, status, rec))

    # --- reads --------------------------------------------------------------------------

    @rule(run_id=RUNS)
    def read_run(self, run_id: str) -> None:
        self.both(lambda store: store.load_run(run_id))
        self.both(lambda store: store.list_run_records(run_id, limit=100).records)

    @rule(session_id=SESSIONS)
    def read_session(self, session_id: str) -> None:
        self.both(lambda store: store.list_session_run_records(session_id, limit=100).records)

    def teardown(self) -> None:
        assert _rows(self.fast) == _rows(self.python)


@pytest.fixture(scope="module")
def second_postgres_url(postgres_url: str) -> Iterator[str]:
    """A second migrated database beside the session's (the fast-path-off side)."""
    admin = create_engine(postgres_server_url(), isolation_level="AUTOCOMMIT", pool_size=1)
    name = f"rs_test_{uuid.uuid4().hex[:12]}"
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    url = make_url(postgres_url).set(database=name).render_as_string(hide_password=False)
    try:
        upgrade_schema(url)
        yield url
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def test_the_fast_path_answers_and_stores_as_the_python_path(
    postgres_engine: Engine, second_postgres_url: str
) -> None:
    python = create_engine(second_postgres_url)
    FastPathAgrees.fast = postgres_engine
    FastPathAgrees.python = python
    try:
        run_state_machine_as_test(
            FastPathAgrees,
            settings=settings(
                max_examples=EXAMPLES,
                stateful_step_count=30,
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
            ),
        )
    finally:
        python.dispose()
