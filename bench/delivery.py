"""Delivery (CONTRACT.md 13): how soon a wait answers after the terminal commit, and what
an outbox row costs.

* ``wait answer``: a client waits on ``GET /v1/runs/{id}/wait?until=finished`` (a thread
  of this process, its own connection) while this process writes the run's terminal
  status over HTTP on the benchmark's ``runtime-store serve`` (its defaults). A sample is
  the time from *before* the terminal request was sent to the wait's answer: an upper
  bound of commit-to-answer, since it includes the terminal write's own round trip; the
  row "after the terminal answer" is the time from the terminal write's answer to the
  wait's (a lower bound). Target (13.4): p50 within 50 ms on PostgreSQL.
* ``outbox``: ``SqlStore`` in process, one caller, the same calls with no subscription, a
  subscription to another event type (``session.ended``) and one to ``run.finished``:
  terminal writes and ordinary appends. Appends never write an outbox row; a terminal
  write writes one event and one delivery per subscription that wants ``run.finished``
  (on PostgreSQL the fast path then refuses and the Python path writes them). The rows
  written are counted, so the table says what each case paid for. The cases alternate
  in rounds, so drift over the run falls on each alike.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import httpx
import sqlalchemy as sa

from app.storage import SqlStore, WebhookConfig
from app.storage.database.tables import webhook_deliveries, webhook_events
from runtime_store_client import HttpStore, RunStart, RunStatus, Store
from tests.contract.builders import canceled_record, run_start, started_record, terminal_record

from . import servers
from .auth import NO_TOKENS, Tokens, headers
from .config import Config
from .report import Row, percentile
from .targets import Target
from .workloads import AGENT, Database, new_prefix, ordinary

WAIT_TARGET_MS: Final = 50.0
#: Seconds between sending the wait and writing the terminal status: the wait has read the
#: run and subscribed by then (its first one on a worker also started the listener).
WAIT_SETTLE: Final = 0.15
#: Never sent to: the services' dispatchers refuse loopback (no allow list), and the
#: subscriptions are deleted at the end of the part.
UNUSED_URL: Final = "http://127.0.0.1:9/bench"
CASES: Final = (
    ("no subscription", ()),
    ("session.ended subscribed", ("session.ended",)),
    ("run.finished subscribed", ("run.finished",)),
)
#: PostgreSQL only: the Python path a refused fast path falls back to, without an outbox
#: row, so the row's own cost is the difference to ``run.finished subscribed``.
PYTHON_PATH: Final = "no subscription, fast path off"


@dataclass(frozen=True)
class Scale:
    waits: int
    warmup_waits: int
    calls: int
    rounds: int


def scale(config: Config) -> Scale:
    if config.mode == "smoke":
        return Scale(waits=8, warmup_waits=2, calls=20, rounds=1)
    return Scale(waits=100, warmup_waits=5, calls=100, rounds=3)


def _start(store: Store, session_id: str) -> RunStart:
    run = run_start(run_id=new_prefix("run"), agent_id=AGENT, session_id=session_id)
    store.start_root_run(run, started_record(run), canceled_record(run))
    return run


def _finish(store: Store, run: RunStart) -> None:
    store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )


# --- the wait ----------------------------------------------------------------------------


@dataclass
class WaitSamples:
    before_terminal: list[float]
    after_terminal: list[float]
    terminal: list[float]


def measure_wait(base_url: str, waits: int, warmup: int, tokens: Tokens = NO_TOKENS) -> WaitSamples:
    """``tokens``: what the service requires (none: it serves open)."""
    found = WaitSamples([], [], [])
    with (
        HttpStore(base_url, token=tokens.worker) as store,
        httpx.Client(base_url=base_url, timeout=70, headers=headers(tokens.worker)) as waiter,
    ):
        session = new_prefix("wait")
        with HttpStore(base_url, token=tokens.admin) as admin:
            admin.create_session(session, run_start().started_at)  # an admin-only call
        for n in range(warmup + waits):
            run = _start(store, session)
            answer: dict[str, Any] = {}

            def wait(run_id: str = run.run_id, answer: dict[str, Any] = answer) -> None:
                response = waiter.get(
                    f"/v1/runs/{run_id}/wait", params={"until": "finished", "timeout": 30}
                )
                answer["at"] = time.monotonic()
                answer["response"] = response

            thread = threading.Thread(target=wait)
            thread.start()
            time.sleep(WAIT_SETTLE)
            sent = time.monotonic()
            _finish(store, run)
            answered = time.monotonic()
            thread.join(40)
            response = answer.get("response")
            if (
                response is None
                or response.status_code != 200
                or "Run-Wait" in response.headers
                or response.json()["status"] != RunStatus.COMPLETED.value
            ):
                raise RuntimeError(f"the wait for {run.run_id} did not answer the finish")
            if n >= warmup:
                found.before_terminal.append(answer["at"] - sent)
                found.after_terminal.append(max(0.0, answer["at"] - answered))
                found.terminal.append(answered - sent)
    return found


def wait_rows(name: str, samples: WaitSamples) -> list[Row]:
    seconds = sum(samples.before_terminal)
    upper = Row.of(
        "wait answer, from the terminal request",
        f"http/{name}",
        1,
        samples.before_terminal,
        seconds,
    )
    lower = Row.of(
        "wait answer, from the terminal answer", f"http/{name}", 1, samples.after_terminal, seconds
    )
    upper.note = (
        f"p95 {percentile(samples.before_terminal, 0.95) * 1000:.1f} ms; terminal write p50 "
        f"{percentile(samples.terminal, 0.5) * 1000:.1f} ms"
        + (f"; target p50 <= {WAIT_TARGET_MS:.0f} ms (13.4)" if name == "postgres" else "")
    )
    lower.note = f"p95 {percentile(samples.after_terminal, 0.95) * 1000:.1f} ms"
    return [upper, lower]


# --- the outbox --------------------------------------------------------------------------


def _outbox_rows(engine: sa.Engine) -> tuple[int, int]:
    with engine.connect() as conn:
        events = conn.execute(sa.select(sa.func.count()).select_from(webhook_events)).scalar_one()
        deliveries = conn.execute(
            sa.select(sa.func.count()).select_from(webhook_deliveries)
        ).scalar_one()
    return int(events), int(deliveries)


def _timed(call: Callable[[], object], into: list[float]) -> None:
    started = time.perf_counter()
    call()
    into.append(time.perf_counter() - started)


@dataclass
class CaseSamples:
    append: list[float]
    terminal: list[float]
    #: Outbox rows (events) each path added.
    append_events: int = 0
    terminal_events: int = 0


def measure_outbox(db: Database, calls: int, rounds: int) -> dict[str, CaseSamples]:
    admin = SqlStore(db.engine, webhooks=WebhookConfig(allowed_hosts=("127.0.0.1",)))
    cases = [(case, events, db.store) for case, events in CASES]
    if db.name == "postgres":
        cases.append((PYTHON_PATH, (), SqlStore(db.engine, fast_path=False)))
    found = {case: CaseSamples([], []) for case, _, _ in cases}
    for _ in range(rounds):
        for case, events, store in cases:
            hook = admin.create_webhook(UNUSED_URL, list(events)) if events else None
            try:
                session = new_prefix("outbox")
                store.create_session(session, run_start().started_at)
                runs = [_start(store, session) for _ in range(calls)]
                writer = _start(store, session)
                samples = found[case]
                before = _outbox_rows(db.engine)
                for n in range(calls):
                    _timed(
                        functools.partial(store.append_run_record, ordinary(writer, f"k-{n}")),
                        samples.append,
                    )
                middle = _outbox_rows(db.engine)
                for run in runs:
                    _timed(functools.partial(_finish, store, run), samples.terminal)
                after = _outbox_rows(db.engine)
                samples.append_events += middle[0] - before[0]
                samples.terminal_events += after[0] - middle[0]
            finally:
                if hook is not None:
                    admin.delete_webhook(hook.webhook_id)
    return found


def outbox_table(name: str, found: dict[str, CaseSamples]) -> list[Row]:
    rows: list[Row] = []
    base = found[CASES[0][0]]
    for case, samples in found.items():
        for path, latencies, base_latencies, events in (
            ("append_run_record", samples.append, base.append, samples.append_events),
            ("record_run_terminal", samples.terminal, base.terminal, samples.terminal_events),
        ):
            row = Row.of(f"{path}, {case}", f"sqlstore/{name}", 1, latencies, sum(latencies))
            p50, base_p50 = percentile(latencies, 0.5), percentile(base_latencies, 0.5)
            row.note = (
                f"p95 {percentile(latencies, 0.95) * 1000:.2f} ms; {events} outbox events "
                f"for {len(latencies)} calls; p50 x{p50 / base_p50 if base_p50 else 0:.2f} "
                "of no subscription's, this run"
            )
            rows.append(row)
    return rows


# --- the part ----------------------------------------------------------------------------


def run_delivery(
    config: Config,
    services: dict[str, servers.Service],
    databases: Sequence[Database],
    log: Callable[[str], None],
) -> list[Row]:
    size = scale(config)
    rows: list[Row] = []
    for name, service in services.items():
        log(f"wait answer on {name}: {size.waits} waits")
        samples = measure_wait(service.base_url, size.waits, size.warmup_waits, service.tokens)
        rows += wait_rows(name, samples)
    for db in databases:
        log(f"outbox cost on {db.name}: {size.calls} calls x {size.rounds} rounds per case")
        rows += outbox_table(db.name, measure_outbox(db, size.calls, size.rounds))
    for row in rows:
        log(f"{row.operation:56} {row.backend:18} p50 {row.p50_ms:7.2f} ms  {row.note}")
    return rows


def delivery_targets(rows: Sequence[Row]) -> list[Target]:
    return [
        Target(
            name=f"{row.backend} {row.operation}",
            goal=f"p50 <= {WAIT_TARGET_MS:.0f} ms",
            measured=f"p50 {row.p50_ms:.1f} ms, {row.note.split(';')[0]}",
            met=row.p50_ms <= WAIT_TARGET_MS,
        )
        for row in rows
        if row.operation == "wait answer, from the terminal request"
        and row.backend == "http/postgres"
    ]
