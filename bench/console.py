"""Console pages at scale (issue 20): every page of ``/console`` timed server side.

Fresh databases (PostgreSQL and SQLite) get the search part's bulk load (``search.load``:
``n`` runs in ``n / 10`` sessions, 20 agents, 1 run in 20 failed, every tenth a child,
every tenth labelled), then a ``runtime-store serve`` each, on which the real client
writes a probe session: a failed root run with ``PROBE_RECORDS`` records (transcript
turns with tool calls and results, notes) and ``PROBE_CHILDREN`` children.

A page's time is what the browser waits for, measured on loopback by one client: the
shell's request and then each of its fragments' requests (in sequence, where a browser
fetches them together, so an upper bound), each to its last byte. Every page is read once
per round, ``repeats`` rounds after ``WARM_READS``; rows are ``console <page> @<scale>``
with the p95 in the note. Target: every page under 300 ms at the 95th percentile with
1M runs. With tokens required (the run's default) every request sends the worker token, as
the console's script sends the tab's (each API call then adds a token look-up).
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlencode

import httpx

from runtime_store_client import HttpStore, Record, RunStart, RunStatus
from tests.contract.builders import (
    T0,
    canceled_record,
    link_record,
    run_start,
    started_record,
    terminal_record,
)

from . import servers
from .auth import Auth, Tokens, headers
from .config import Config
from .pages import scale_label
from .report import Row, percentile
from .search import BASE_MS, fresh_databases, load
from .targets import Target

PAGE_P95_MS_MAX: Final = 300.0
WARM_READS: Final = 3
PROBE_SESSION: Final = "console-probe"
PROBE_RUN: Final = "console-probe-run"
#: Records of the probe run: three pages of the console's timeline (100 per page).
PROBE_RECORDS: Final = 300
PROBE_CHILDREN: Final = 5
#: Records per transcript turn of the probe run (the others are notes).
TURN_EVERY: Final = 3


@dataclass(frozen=True)
class ConsolePage:
    name: str
    #: The shell, then each fragment the shell names.
    urls: tuple[str, ...]


def _q(params: dict[str, str]) -> str:
    return urlencode(params)


def _time(ms: int) -> str:
    moment = datetime.fromtimestamp(ms / 1000, UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def pages(runs: int) -> list[ConsolePage]:
    """Every console page, with filters the bulk load makes selective and broad."""
    middle = runs // 2
    parent = f"r{middle // 10 * 10 - 1}"  # a run with a child (every tenth run is one)
    session = f"s{max(1, runs // 20)}"
    window = {
        "started_after": _time(BASE_MS + middle),
        "started_before": _time(BASE_MS + middle + 1000),
    }
    searches = {
        "runs": {},
        "runs failed": {"status": "failed"},
        "runs agent+status": {"agent_id": "agent-7", "status": "running"},
        "runs label": {"label": "team:search"},
        "runs started window": window,
        "runs parent": {"parent_run_id": parent},
        "runs of a session": {"session_id": session},
    }
    found = [
        ConsolePage("sessions", ("/console/sessions", "/console/fragments/sessions")),
        ConsolePage(
            "sessions active",
            ("/console/sessions?status=active", "/console/fragments/sessions?status=active"),
        ),
        ConsolePage(
            "session",
            (
                f"/console/session?{_q({'session_id': session})}",
                f"/console/fragments/session?{_q({'session_id': session})}",
            ),
        ),
    ]
    for name, filters in searches.items():
        query = _q(filters)
        found.append(
            ConsolePage(name, (f"/console/runs?{query}", f"/console/fragments/runs?{query}"))
        )
    for name, run_id in (("run (bulk, with a child)", parent), ("run (probe)", PROBE_RUN)):
        query = _q({"run_id": run_id})
        found.append(
            ConsolePage(
                name,
                (
                    f"/console/run?{query}",
                    f"/console/fragments/run?{query}",
                    f"/console/fragments/run/children?{query}",
                    f"/console/fragments/run/timeline?{query}",
                    f"/console/fragments/run/records?{query}",
                ),
            )
        )
    probe = _q({"run_id": PROBE_RUN})
    last = str(PROBE_RECORDS - 100)
    last_page = _q({"run_id": PROBE_RUN, "cursor": last})
    found += [
        ConsolePage(
            "records, last page (probe)",
            (
                f"/console/run?{_q({'run_id': PROBE_RUN, 'records_cursor': last})}",
                f"/console/fragments/run/records?{last_page}",
            ),
        ),
        ConsolePage(
            "transcript (probe)",
            (f"/console/run/transcript?{probe}", f"/console/fragments/run/transcript?{probe}"),
        ),
    ]
    return found


# --- the probe session -----------------------------------------------------------------


def _turn(run: RunStart, number: int, at: datetime) -> Record:
    call = f"toolu_{number}"
    messages = [
        {
            "role": "assistant",
            "parts": [
                {
                    "kind": "thinking",
                    "text": f"step {number}: look it up",
                    "signature": "s",
                    "redacted": None,
                    "index": 0,
                    "final": True,
                },
                {
                    "kind": "tool_use",
                    "id": call,
                    "name": "search",
                    "input": {"query": f"q{number}"},
                    "thought_signature": "",
                },
            ],
            "meta": None,
        },
        {
            "role": "user",
            "parts": [
                {
                    "kind": "tool_result",
                    "tool_use_id": call,
                    "content": {"hits": number, "text": "x" * 200},
                    "is_error": False,
                }
            ],
            "meta": None,
        },
    ]
    return _record(run, f"turn-{number}", "transcript_messages_appended", messages, at)


def _record(run: RunStart, key: str, type: str, payload: Any, at: datetime) -> Record:
    return Record(
        event_key=key,
        run_id=run.run_id,
        agent_id=run.agent_id,
        session_id=run.session_id,
        type=type,
        payload=json.dumps(payload, separators=(",", ":")).encode(),
        timestamp=at,
    )


def seed_probe(base_url: str, tokens: Tokens) -> None:
    """The probe session through the service: a failed run with its records, children."""
    with HttpStore(base_url, token=tokens.admin, timeout=60) as admin:
        admin.create_session(PROBE_SESSION, T0)  # an admin-only call
    with HttpStore(base_url, token=tokens.worker, timeout=60) as store:
        run = run_start(run_id=PROBE_RUN, agent_id="planner", session_id=PROBE_SESSION)
        store.start_root_run(run, started_record(run), canceled_record(run))
        for number in range(PROBE_CHILDREN):
            child = run_start(
                run_id=f"{PROBE_RUN}-child-{number}",
                agent_id="searcher",
                session_id=PROBE_SESSION,
                parent_run_id=PROBE_RUN,
                started_at=T0 + timedelta(seconds=number + 1),
            )
            store.start_child_run(
                child,
                link_record(run, child, tool_call_id=f"call-{number}"),
                started_record(child),
                canceled_record(child),
            )
            store.record_run_terminal(
                child.run_id, RunStatus.COMPLETED, terminal_record(child, RunStatus.COMPLETED)
            )
        ordinary = PROBE_RECORDS - 2 - PROBE_CHILDREN  # run_started, links, run_completed
        records = [
            _turn(run, n, T0 + timedelta(seconds=n))
            if n % TURN_EVERY == 0
            else _record(run, f"note-{n}", "planner_note", {"note": f"step {n}"}, T0)
            for n in range(ordinary)
        ]
        for start in range(0, len(records), 100):
            store.append_run_records(PROBE_RUN, records[start : start + 100])
        store.record_run_terminal(
            PROBE_RUN, RunStatus.FAILED, terminal_record(run, RunStatus.FAILED)
        )


# --- measuring -------------------------------------------------------------------------


def _get(client: httpx.Client, url: str) -> float:
    started = time.perf_counter()
    response = client.get(url)  # the whole body: time to the last byte
    elapsed = time.perf_counter() - started
    if response.status_code != 200:
        raise RuntimeError(f"{url} answered {response.status_code}: {response.text[:400]}")
    return elapsed


def measure(
    base_url: str, token: str | None, console_pages: list[ConsolePage], repeats: int
) -> dict[str, Any]:
    """Per page: every round's total and each request's times, in seconds."""
    totals: dict[str, list[float]] = {page.name: [] for page in console_pages}
    parts: dict[str, dict[str, list[float]]] = {
        page.name: {url: [] for url in page.urls} for page in console_pages
    }
    with httpx.Client(base_url=base_url, timeout=60, headers=headers(token)) as client:
        for page in console_pages:
            for _ in range(WARM_READS):
                for url in page.urls:
                    _get(client, url)
        for _ in range(repeats):
            for page in console_pages:
                total = 0.0
                for url in page.urls:
                    elapsed = _get(client, url)
                    parts[page.name][url].append(elapsed)
                    total += elapsed
                totals[page.name].append(total)
    return {"totals": totals, "parts": parts}


def _ms(values: list[float], fraction: float) -> float:
    return round(percentile(values, fraction) * 1000, 2)


def run_console(
    config: Config, auth: Auth, workdir: Path, log: Callable[[str], None]
) -> tuple[list[Row], dict[str, Any]]:
    """Rows of every page on each database at the largest search scale, and a summary
    (p50 and p95 of each page and of each of its requests) for the targets."""
    runs = max(config.search_sizes)
    repeats = config.page_repeats if config.mode == "smoke" else max(config.page_repeats, 50)
    console_pages = pages(runs)
    rows: list[Row] = []
    summary: dict[str, Any] = {"runs": runs, "repeats": repeats, "pages": {}}
    with (
        fresh_databases(config.postgres_url) as engines,
        tempfile.TemporaryDirectory(prefix="rs-bench-console-", dir=workdir) as logs,
    ):
        for name, engine in engines.items():
            started = time.perf_counter()
            load(engine, runs)
            seconds = time.perf_counter() - started
            log(f"console: loaded {scale_label(runs)} runs on {name} in {seconds:.1f} s")
            url = engine.url.render_as_string(hide_password=False)
            service = servers.start_service(
                f"console-{name}", url, Path(logs), config.server_workers, auth=auth
            )
            try:
                seed_probe(service.base_url, service.tokens)
                measured = measure(service.base_url, service.tokens.worker, console_pages, repeats)
            finally:
                servers.stop_service(service)
            backend = f"http/{name}"
            summary["pages"][backend] = {}
            for page in console_pages:
                totals = measured["totals"][page.name]
                p95 = _ms(totals, 0.95)
                summary["pages"][backend][page.name] = {
                    "p50_ms": _ms(totals, 0.50),
                    "p95_ms": p95,
                    "requests_p95_ms": {
                        url: _ms(values, 0.95)
                        for url, values in measured["parts"][page.name].items()
                    },
                }
                row = Row.of(
                    f"console {page.name} @{scale_label(runs)}",
                    backend,
                    1,
                    totals,
                    sum(totals),
                    note=f"p95 {p95:.1f} ms, {len(page.urls)} requests",
                )
                rows.append(row)
                log(f"{row.operation:48} {backend:14} p50 {row.p50_ms:7.2f} ms  p95 {p95:7.2f} ms")
    return rows, summary


def console_targets(summary: dict[str, Any]) -> list[Target]:
    """Every page's p95 under ``PAGE_P95_MS_MAX``, judged on each backend's slowest page."""
    found = []
    scale = scale_label(summary.get("runs", 0)) if summary else ""
    for backend, by_page in sorted(summary.get("pages", {}).items()):
        worst = max(by_page, key=lambda name: by_page[name]["p95_ms"])
        p95 = by_page[worst]["p95_ms"]
        found.append(
            Target(
                f"{backend} every console page p95 at {scale} runs (slowest: {worst})",
                f"< {PAGE_P95_MS_MAX:.0f} ms",
                f"{p95:.1f} ms",
                p95 < PAGE_P95_MS_MAX,
            )
        )
    return found
