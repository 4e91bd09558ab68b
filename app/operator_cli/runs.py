"""``runtime-store runs list|show|records|tail|wait``."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from runtime_store_client import (
        Record,
        RunMeta,
    )
from .common import (
    _PAYLOAD_CHARS,
    _RUN_COLUMNS,
    _TAIL_RECONNECT_SECONDS,
    DEFAULT_URL,
    EXIT_USAGE,
    EXIT_WAIT_TIMEOUT,
    AsJson,
    Cursor,
    Everything,
    Limit,
    RunStatusOption,
    Token,
    Url,
    _console,
    _fail,
    _follow,
    _label_filters,
    _labels,
    _pages,
    _print,
    _run_row,
    _service,
    _time,
    parse_when,
    record_json,
    run_json,
    runs_cli,
)


@runs_cli.command("list")
def runs_list(  # noqa: PLR0913, PLR0917 - one option per filter of CONTRACT.md 11.1
    url: Url = DEFAULT_URL,
    token: Token = None,
    status: Annotated[
        list[RunStatusOption] | None, typer.Option("--status", help="Run status (repeatable).")
    ] = None,
    agent: Annotated[str, typer.Option("--agent", help="Only runs of this agent.")] = "",
    session: Annotated[str, typer.Option("--session", help="Only runs of this session.")] = "",
    parent: Annotated[str, typer.Option("--parent", help="Only children of this run.")] = "",
    label: Annotated[
        list[str] | None, typer.Option("--label", help="key:value (repeatable, all must match).")
    ] = None,
    started_after: Annotated[
        str | None, typer.Option(help="Started at or after (RFC 3339 or an age: 1h).")
    ] = None,
    started_before: Annotated[str | None, typer.Option(help="Started before.")] = None,
    limit: Limit = 100,
    cursor: Cursor = "",
    everything: Everything = False,
    as_json: AsJson = False,
) -> None:
    """Runs of every session and sessionless runs, newest first."""
    from runtime_store_client import RunStatus

    statuses = [RunStatus(value) for value in status or ()]
    labels = _label_filters(label or [])
    after = parse_when(started_after, "--started-after")
    before = parse_when(started_before, "--started-before")
    with _service(url, token) as store:

        def fetch(at: str) -> tuple[list[RunMeta], str]:
            if labels is None:  # no run carries two values for one key
                return [], ""
            page = store.search_runs(
                statuses=statuses,
                agent_id=agent,
                session_id=session,
                parent_run_id=parent,
                labels=labels,
                started_after=after,
                started_before=before,
                cursor=at,
                limit=limit,
            )
            return page.runs, page.next_cursor

        _print(
            _pages(fetch, cursor, everything),
            as_json,
            run_json,
            _RUN_COLUMNS,
            _run_row,
            nothing="no runs",
        )


@runs_cli.command("show")
def runs_show(
    run_id: str, url: Url = DEFAULT_URL, token: Token = None, as_json: AsJson = False
) -> None:
    """A run's meta."""
    with _service(url, token) as store:
        run = store.load_run(run_id)
    document = run_json(run)
    if as_json:
        sys.stdout.write(json.dumps(document, ensure_ascii=False) + "\n")
        return
    from rich.table import Table

    table = Table(box=None, show_header=False)
    for key, value in document.items():
        table.add_row(key, _labels(value) if isinstance(value, dict) else str(value))
    _console().print(table)


RecordTypes = Annotated[
    list[str] | None,
    typer.Option("--type", help="Only records of this type (repeat the option for several types)."),
]


@runs_cli.command("records")
def runs_records(
    run_id: str,
    url: Url = DEFAULT_URL,
    token: Token = None,
    limit: Limit = 100,
    cursor: Cursor = "",
    everything: Everything = False,
    as_json: AsJson = False,
    record_types: RecordTypes = None,
) -> None:
    """A run's records, oldest first (payloads cut to one line in the table); with
    ``--type``, only the records of those types (each page read is filtered: ``--all``
    for every match)."""
    wanted = set(record_types or ())
    with _service(url, token) as store:

        def fetch(at: str) -> tuple[list[Record], str]:
            page = store.list_run_records(run_id, cursor=at, limit=limit)
            records = [r for r in page.records if not wanted or r.type in wanted]
            return records, page.next_cursor

        def row(record: Record) -> list[str]:
            payload = bytes(record.payload).decode("utf-8", "replace")
            if len(payload) > _PAYLOAD_CHARS:
                payload = payload[: _PAYLOAD_CHARS - 1] + "…"
            return [record.id, record.type, record.event_key, _time(record.timestamp), payload]

        _print(
            _pages(fetch, cursor, everything),
            as_json,
            record_json,
            ["ID", "TYPE", "EVENT KEY", "TIME", "PAYLOAD"],
            row,
            nothing="no records",
        )


@runs_cli.command("tail")
def runs_tail(
    run_id: str,
    url: Url = DEFAULT_URL,
    token: Token = None,
    cursor: Cursor = "",
    as_json: AsJson = False,
) -> None:
    """Print a run's records, then each new one as it is written, until the run is over
    (one line each: time, run, ID, type, event key, payload). Resumes by itself when the
    connection drops; Ctrl-C stops."""
    with _service(url, token, deadline=_TAIL_RECONNECT_SECONDS) as store:
        _follow(store.tail_run_records(run_id, cursor), as_json)


@runs_cli.command("wait")
def runs_wait(
    run_id: str,
    url: Url = DEFAULT_URL,
    token: Token = None,
    until: Annotated[
        str, typer.Option(help="finished (completed, failed, canceled) or stopped (or suspended).")
    ] = "finished",
    timeout: Annotated[float, typer.Option(min=0, help="Seconds to wait at most.")] = 30.0,
) -> None:
    """Wait until a run finishes (or stops) and print its meta as JSON; exit 4 if it had not
    by the timeout."""
    if until not in ("finished", "stopped"):
        raise _fail("--until must be finished or stopped", EXIT_USAGE)
    from runtime_store_client import WaitUntil

    wanted = WaitUntil(until)
    with _service(url, token, deadline=timeout + 30) as store:
        run = store.wait_for_run(run_id, wanted, timeout)
    sys.stdout.write(json.dumps(run_json(run), ensure_ascii=False) + "\n")
    if not wanted.reached(run.status):
        typer.echo(
            f"timed out: run {run_id} is still {run.status.value}, not {until}, after "
            f"{timeout:g} s; wait longer with --timeout",
            err=True,
        )
        raise typer.Exit(EXIT_WAIT_TIMEOUT)
