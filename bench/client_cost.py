"""``python -m bench.client_cost``: the client's own CPU per call, lean and plain httpx.

An HTTP call's CPU is split between the client, the service and PostgreSQL (``python -m
bench --side-by-side``). This isolates the client's part: ``HttpStore`` calls answered by
an ``httpx.MockTransport`` (no socket, no server), timed with the calling thread's CPU
clock, for the stores' own httpx client (``runtime_store_client.http._lean``: no cookie
jar, each path joined to the base URL once) and for a plain ``httpx.Client`` given the
same hooks, as the stores used before. Both send a token's ``Authorization`` header, as
against a service that requires tokens (``--auth open``: none). Rounds alternate the two,
so a drifting machine shows in both columns.
"""

from __future__ import annotations

import argparse
import json
import secrets
import time
from collections.abc import Callable
from typing import Final

import httpx
from rich.console import Console
from rich.table import Table

from app.domain.tokens import TOKEN_PREFIX
from runtime_store_client import HttpStore
from tests.contract.builders import T0, record, run_start

from . import auth
from .workloads import payload

BASE: Final = "http://127.0.0.1:9"
_APPENDED: Final = json.dumps(
    {"id": "00000000000000000001", "inserted": True, "session_status": "active"}
).encode()
_RUN: Final = json.dumps(
    {
        "run_id": "run-1",
        "agent_id": "agent-1",
        "session_id": "session-1",
        "parent_run_id": "",
        "status": "running",
        "start_outcome": "proceed",
        "started_at": "2026-01-01T00:00:00.000Z",
        "updated_at": "2026-01-01T00:00:00.000Z",
        "labels": {},
        "cancellation_reason": "",
        "successor_run_id": "",
        "start_kind": "engine",
        "seed_end_id": "",
    }
).encode()


def _answer(request: httpx.Request) -> httpx.Response:
    body = _APPENDED if request.method == "POST" else _RUN
    return httpx.Response(200, content=body, headers={"content-type": "application/json"})


def stores(token: str | None) -> dict[str, HttpStore]:
    """The store as shipped ("lean") and the same store over a plain ``httpx.Client``."""
    lean = HttpStore(BASE, token=token, httpx_args={"transport": httpx.MockTransport(_answer)})
    plain = HttpStore(BASE, token=token)
    shipped = lean._client.get_httpx_client()
    plain._client.set_httpx_client(
        httpx.Client(
            base_url=BASE,
            event_hooks=shipped.event_hooks,
            headers=shipped.headers,
            timeout=shipped.timeout,
            transport=httpx.MockTransport(_answer),
        )
    )
    return {"lean": lean, "plain": plain}


def _calls(kind: str, count: int) -> Callable[[HttpStore], None]:
    run = run_start(run_id="run-1", session_id="session-1", started_at=T0)
    if kind == "append_run_record (1 KB)":
        records = [record(run, event_key=f"k-{n}", payload=payload()) for n in range(count)]

        def appends(store: HttpStore) -> None:
            for item in records:
                store.append_run_record(item)

        return appends

    def loads(store: HttpStore) -> None:
        for _ in range(count):
            store.load_run("run-1")

    return loads


KINDS: Final = ("append_run_record (1 KB)", "load_run")


def measure(calls: int, rounds: int, mode: str) -> dict[tuple[str, str], list[float]]:
    """Microseconds of the calling thread's CPU per call, per (kind, client), each round;
    ``mode`` ``tokens``: with a token's header (of the real shape; no server sees it)."""
    figures: dict[tuple[str, str], list[float]] = {}
    made = stores(TOKEN_PREFIX + secrets.token_urlsafe(32) if mode == "tokens" else None)
    try:
        for kind in KINDS:
            run = _calls(kind, calls)
            run(made["lean"])  # warm both: imports, first-call caches
            run(made["plain"])
            for _ in range(rounds):
                for name, store in made.items():
                    started = time.thread_time()
                    run(store)
                    spent = time.thread_time() - started
                    figures.setdefault((kind, name), []).append(spent / calls * 1e6)
    finally:
        for store in made.values():
            store.close()
    return figures


def main(argv: list[str] | None = None) -> dict[tuple[str, str], list[float]]:
    parser = argparse.ArgumentParser(prog="python -m bench.client_cost", description=__doc__)
    parser.add_argument("--calls", type=int, default=3000, help="calls per kind and round")
    parser.add_argument("--rounds", type=int, default=5)
    auth.add_argument(parser)
    args = parser.parse_args(argv)
    started = time.strftime("%H:%M UTC", time.gmtime())
    figures = measure(args.calls, args.rounds, args.auth)
    table = Table(
        title=f"Client CPU per call, no server, auth {args.auth}, {args.calls} calls a round "
        f"({started})"
    )
    table.add_column("call")
    table.add_column("client")
    table.add_column("µs per call, each round", justify="right")
    table.add_column("best", justify="right")
    table.add_column("lean / plain (best)", justify="right")
    for kind in KINDS:
        best_plain = min(figures[(kind, "plain")])
        for name in ("lean", "plain"):
            values = figures[(kind, name)]
            ratio = f"{min(values) / best_plain:.2f}" if name == "lean" and best_plain else ""
            table.add_row(
                kind, name, " / ".join(f"{v:.0f}" for v in values), f"{min(values):.0f}", ratio
            )
    Console(width=120).print(table)
    return figures


if __name__ == "__main__":
    main()
