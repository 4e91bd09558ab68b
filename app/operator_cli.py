"""``runtime-store sessions …`` and ``runtime-store runs …``: the operator's commands.

They talk to a running service with the real client (``HttpStore``), never to the
database: ``--url``/``RUNTIME_STORE_URL`` and ``--token``/``RUNTIME_STORE_TOKEN``. Lists
print a table on a terminal (``rich``) or JSON lines with ``--json``, one page by default
(the next page's cursor on stderr) or every page with ``--all``. Times are RFC 3339 or an
age such as ``90s``, ``15m``, ``1h``, ``7d`` (that long before now). Every failure is one
line on stderr and a non-zero exit: 1 for an answer of the service (not found, conflict,
refused token), 2 for a bad command line, 3 when the service cannot be reached.
"""

from __future__ import annotations

import enum
import json
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final, TypeVar

import typer

if TYPE_CHECKING:
    from rich.console import Console

    from runtime_store_client import (
        HttpStore,
        Record,
        RunMeta,
        RunPage,
        Session,
        SessionPage,
        Webhook,
        WebhookDelivery,
    )
    from runtime_store_client.http import RecordTail

# Building these commands (and their ``--help``) imports neither the client package (httpx,
# aiohttp) nor rich: each command imports them when it runs.

T = TypeVar("T")

DEFAULT_URL: Final = "http://127.0.0.1:8000"
EXIT_REFUSED: Final = 1
EXIT_USAGE: Final = 2
EXIT_UNREACHABLE: Final = 3
_AGE = re.compile(r"(\d+)([smhd])")
_UNITS: Final = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}
_PAYLOAD_CHARS: Final = 80

sessions_cli = typer.Typer(
    help="Find, inspect, end, purge, export and import sessions (talks to a service)."
)
runs_cli = typer.Typer(help="Find runs and read their records (talks to a service).")
webhooks_cli = typer.Typer(
    help="Webhook subscriptions: create (secret shown once), list, delete; their "
    "deliveries (talks to a service; admin token)."
)

Url = Annotated[
    str, typer.Option("--url", envvar="RUNTIME_STORE_URL", help="The service's base URL.")
]
Token = Annotated[
    str | None,
    typer.Option("--token", envvar="RUNTIME_STORE_TOKEN", help="Bearer token.", show_default=False),
]
AsJson = Annotated[bool, typer.Option("--json", help="JSON lines instead of a table.")]
Everything = Annotated[bool, typer.Option("--all", help="Every page, not only the first.")]
Limit = Annotated[int, typer.Option("--limit", min=1, help="Items per page.")]
Cursor = Annotated[str, typer.Option("--cursor", help="Continue from a previous page.")]


class SessionStatusOption(enum.StrEnum):
    """``--status`` of ``sessions list``: the client's ``SessionStatus`` values (the client
    package is not imported to build the command; tests/test_operator_cli.py compares)."""

    ACTIVE = "active"
    ENDED = "ended"


class RunStatusOption(enum.StrEnum):
    """``--status`` of ``runs list``: the client's ``RunStatus`` values."""

    RUNNING = "running"
    SUSPENDED = "suspended"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELED = "canceled"


# --- plumbing ---------------------------------------------------------------------------


def _console() -> Console:
    """A terminal's width on a terminal; piped, never cut or wrap a value."""
    from rich.console import Console

    return Console(soft_wrap=True, width=None if sys.stdout.isatty() else 100_000)


def _fail(message: str, code: int) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


@contextmanager
def _service(url: str, token: str | None, deadline: float = 10.0) -> Iterator[HttpStore]:
    """The client, with every failure turned into one line and an exit code."""
    from runtime_store_client import HttpStore, StoreError, UnavailableError

    try:
        with HttpStore(url, token=token, retries=1, deadline=deadline) as store:
            yield store
    except UnavailableError as exc:
        raise _fail(f"cannot reach {url}: {exc.message}", EXIT_UNREACHABLE) from None
    except StoreError as exc:
        raise _fail(f"{exc.code}: {exc.message}", EXIT_REFUSED) from None
    except ValueError as exc:  # a base URL httpx cannot use
        raise _fail(f"bad --url {url!r}: {exc}", EXIT_USAGE) from None


def parse_when(text: str | None, option: str) -> datetime | None:
    """An RFC 3339 time, or an age (``15m``) before now, to the millisecond."""
    if not text:
        return None
    age = _AGE.fullmatch(text.strip())
    if age:
        delta = timedelta(**{_UNITS[age.group(2)]: int(age.group(1))})
        now = datetime.now(UTC)
        return (now - delta).replace(microsecond=now.microsecond // 1000 * 1000)
    from runtime_store_client.times import parse_rfc3339

    try:
        return parse_rfc3339(text)
    except ValueError as exc:
        raise _fail(f"{option}: {exc} (or an age such as 15m, 1h, 7d)", EXIT_USAGE) from None


def _time(value: datetime | None) -> str:
    from runtime_store_client.times import format_rfc3339

    return "" if value is None else format_rfc3339(value)


def session_json(session: Session) -> dict[str, Any]:
    return {
        "id": session.id,
        "status": session.status.value,
        "created_at": _time(session.created_at),
        "ended_at": session.ended_at and _time(session.ended_at),
    }


def run_json(run: RunMeta) -> dict[str, Any]:
    return {
        "run_id": run.run_id,
        "agent_id": run.agent_id,
        "session_id": run.session_id,
        "parent_run_id": run.parent_run_id,
        "status": run.status.value,
        "start_outcome": run.start_outcome.value,
        "started_at": _time(run.started_at),
        "updated_at": _time(run.updated_at),
        "labels": dict(run.labels),
        "cancellation_reason": run.cancellation_reason,
        "successor_run_id": run.successor_run_id,
        "start_kind": run.start_kind.value,
    }


def record_json(record: Record) -> dict[str, Any]:
    return {
        "id": record.id,
        "run_id": record.run_id,
        "agent_id": record.agent_id,
        "session_id": record.session_id,
        "turn_id": record.turn_id,
        "event_key": record.event_key,
        "type": record.type,
        "timestamp": _time(record.timestamp),
        "payload": bytes(record.payload).decode("utf-8", "replace"),
    }


def _pages(
    fetch: Callable[[str], tuple[list[T], str]], cursor: str, everything: bool
) -> Iterator[list[T]]:
    """Pages from ``cursor``; without ``everything``, the first one and a hint on stderr."""
    while True:
        items, cursor = fetch(cursor)
        yield items
        if not cursor:
            return
        if not everything:
            typer.echo(f"more: --cursor {cursor} (or --all)", err=True)
            return


def _print(
    pages: Iterator[list[T]],
    as_json: bool,
    to_json: Callable[[T], dict[str, Any]],
    columns: list[str],
    row: Callable[[T], list[str]],
) -> None:
    if as_json:
        for page in pages:
            for item in page:
                sys.stdout.write(json.dumps(to_json(item), ensure_ascii=False) + "\n")
        return
    from rich.table import Table

    table = Table(*columns, box=None, header_style="bold")
    for page in pages:
        for item in page:
            table.add_row(*row(item))
    _console().print(table)


def _labels(labels: dict[str, str] | Any) -> str:
    return ",".join(f"{key}={value}" for key, value in sorted(dict(labels).items()))


def _session_row(session: Session) -> list[str]:
    return [session.id, session.status.value, _time(session.created_at), _time(session.ended_at)]


def _run_row(run: RunMeta) -> list[str]:
    return [
        run.run_id,
        run.status.value,
        run.agent_id,
        run.session_id,
        run.parent_run_id,
        _time(run.started_at),
        _labels(run.labels),
    ]


_SESSION_COLUMNS: Final = ["SESSION", "STATUS", "CREATED", "ENDED"]
_RUN_COLUMNS: Final = ["RUN", "STATUS", "AGENT", "SESSION", "PARENT", "STARTED", "LABELS"]


def _label_filters(labels: list[str]) -> dict[str, str] | None:
    """As the API reads them (``None``: two values for one key, which no run matches)."""
    from runtime_store_client import InvalidArgumentError
    from runtime_store_client.filters import label_filters

    try:
        return label_filters(labels)
    except InvalidArgumentError as exc:
        raise _fail(f"--label: {exc.message}", EXIT_USAGE) from None


# --- sessions ---------------------------------------------------------------------------


@sessions_cli.command("list")
def sessions_list(  # noqa: PLR0913, PLR0917 - one option per filter
    url: Url = DEFAULT_URL,
    token: Token = None,
    status: Annotated[
        list[SessionStatusOption] | None,
        typer.Option("--status", help="active or ended (repeatable)."),
    ] = None,
    created_after: Annotated[
        str | None, typer.Option(help="Created at or after (RFC 3339 or an age: 1h).")
    ] = None,
    created_before: Annotated[str | None, typer.Option(help="Created before.")] = None,
    limit: Limit = 100,
    cursor: Cursor = "",
    everything: Everything = False,
    as_json: AsJson = False,
) -> None:
    """Sessions, newest first (purged ones never)."""
    from runtime_store_client import SessionStatus

    statuses = [SessionStatus(value) for value in status or ()]
    after = parse_when(created_after, "--created-after")
    before = parse_when(created_before, "--created-before")
    with _service(url, token) as store:

        def fetch(at: str) -> tuple[list[Session], str]:
            page: SessionPage = store.list_sessions(
                statuses=statuses,
                created_after=after,
                created_before=before,
                cursor=at,
                limit=limit,
            )
            return page.sessions, page.next_cursor

        _print(
            _pages(fetch, cursor, everything), as_json, session_json, _SESSION_COLUMNS, _session_row
        )


@sessions_cli.command("show")
def sessions_show(
    session_id: str, url: Url = DEFAULT_URL, token: Token = None, as_json: AsJson = False
) -> None:
    """A session and its runs."""
    with _service(url, token) as store:
        session = store.load_session(session_id)
        runs: list[RunMeta] = []
        cursor = ""
        while True:
            page: RunPage = store.list_session_runs(session_id, cursor=cursor, limit=1000)
            runs.extend(page.runs)
            cursor = page.next_cursor
            if not cursor:
                break
    if as_json:
        document = {**session_json(session), "runs": [run_json(run) for run in runs]}
        sys.stdout.write(json.dumps(document, ensure_ascii=False) + "\n")
        return
    from rich.table import Table

    console = _console()
    console.print(
        f"[bold]{session.id}[/bold]  {session.status.value}  created {_time(session.created_at)}"
        + (f"  ended {_time(session.ended_at)}" if session.ended_at else ""),
        markup=True,
        highlight=False,
    )
    table = Table(*_RUN_COLUMNS, box=None, header_style="bold")
    for run in runs:
        table.add_row(*_run_row(run))
    console.print(table)


@sessions_cli.command("end")
def sessions_end(
    session_id: str,
    url: Url = DEFAULT_URL,
    token: Token = None,
    at: Annotated[str | None, typer.Option(help="End time (default: now).")] = None,
) -> None:
    """End a session: running runs continue, new starts stop."""
    ended_at = parse_when(at, "--at") or parse_when("0s", "--at")
    assert ended_at is not None
    with _service(url, token) as store:
        session = store.end_session(session_id, ended_at)
    typer.echo(f"session {session.id} ended at {_time(session.ended_at)}")


@sessions_cli.command("purge")
def sessions_purge(
    session_id: str,
    url: Url = DEFAULT_URL,
    token: Token = None,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")] = False,
) -> None:
    """Delete an ended session with all its runs, records and memory; its ID stays taken."""
    if not yes:
        if not sys.stdin.isatty():
            raise _fail("purge deletes everything of the session: pass --yes", EXIT_USAGE)
        typer.confirm(
            f"Purge session {session_id!r}: every run, record, checkpoint and memory event of "
            "it, for good?",
            abort=True,
        )
    with _service(url, token) as store:
        store.purge_session(session_id)
    typer.echo(f"session {session_id} purged")


class _Counted:
    """A binary file whose reads or writes advance a progress bar by their bytes."""

    def __init__(self, file: Any, advance: Callable[[int], None]) -> None:
        self._file = file
        self._advance = advance

    def read(self, size: int = -1, /) -> bytes:
        data: bytes = self._file.read(size)
        self._advance(len(data))
        return data

    def write(self, data: bytes, /) -> int:
        written: int = self._file.write(data)
        self._advance(len(data))
        return written


def _unseen(amount: int) -> None:
    del amount


@contextmanager
def progress_bar(
    description: str, total: int | None, *, items: bool = False
) -> Iterator[Callable[[int], None]]:
    """A progress bar on stderr when it is a terminal, of bytes (or of ``items``); nothing
    otherwise. Yields ``advance(amount)``."""
    if not sys.stderr.isatty():
        yield _unseen
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
        TransferSpeedColumn,
    )

    columns: list[Any] = [SpinnerColumn(), TextColumn("{task.description}")]
    if total:
        columns.append(BarColumn())
    if items:
        columns.append(MofNCompleteColumn() if total else TextColumn("{task.completed}"))
    else:
        columns += [DownloadColumn(), TransferSpeedColumn()]
    columns.append(TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(description, total=total)
        yield lambda amount: bar.advance(task, amount)


@sessions_cli.command("export")
def sessions_export(
    session_id: str,
    url: Url = DEFAULT_URL,
    token: Token = None,
    output: Annotated[
        Path | None,
        typer.Option("-o", "--output", help="File to write (default: standard output)."),
    ] = None,
) -> None:
    """Write a session, everything of it, as NDJSON read in one snapshot (CONTRACT.md
    11.4); `sessions import` recreates it on any service, byte for byte."""
    target = sys.stdout.buffer if output is None or str(output) == "-" else None
    file = target or _open_output(output)
    try:
        with _service(url, token) as store, progress_bar(f"exporting {session_id}", None) as step:
            store.export_session(session_id, _Counted(file, step))
    except BaseException:
        if target is None and output is not None:
            file.close()
            output.unlink(missing_ok=True)  # never leave a partial export behind
        raise
    file.flush()
    if target is None:
        file.close()
        typer.echo(f"session {session_id} exported to {output}", err=True)


def _open_output(output: Path | None) -> Any:
    assert output is not None
    try:
        return output.open("wb")
    except OSError as exc:
        raise _fail(f"cannot write {output}: {exc.strerror}", EXIT_USAGE) from None


@sessions_cli.command("import")
def sessions_import(
    file: Annotated[Path, typer.Argument(help="An export file (`-`: standard input).")],
    url: Url = DEFAULT_URL,
    token: Token = None,
) -> None:
    """Recreate an exported session in one transaction: identical IDs, records and bytes,
    or nothing at all (a broken line is named by its number)."""
    if str(file) == "-":
        source: Any = sys.stdin.buffer
        size = None
    else:
        try:
            source = file.open("rb")
        except OSError as exc:
            raise _fail(f"cannot read {file}: {exc.strerror}", EXIT_USAGE) from None
        size = file.stat().st_size
    with source, _service(url, token) as store, progress_bar(f"importing {file}", size) as step:
        session = store.import_session(_Counted(source, step))
    typer.echo(f"session {session.id} ({session.status.value}) imported from {file}")


# --- runs -------------------------------------------------------------------------------


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

        _print(_pages(fetch, cursor, everything), as_json, run_json, _RUN_COLUMNS, _run_row)


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


@runs_cli.command("records")
def runs_records(
    run_id: str,
    url: Url = DEFAULT_URL,
    token: Token = None,
    limit: Limit = 100,
    cursor: Cursor = "",
    everything: Everything = False,
    as_json: AsJson = False,
) -> None:
    """A run's records, oldest first (payloads cut to one line in the table)."""
    with _service(url, token) as store:

        def fetch(at: str) -> tuple[list[Record], str]:
            page = store.list_run_records(run_id, cursor=at, limit=limit)
            return page.records, page.next_cursor

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
        )


# --- live tail (11.3) ---------------------------------------------------------------------

#: How long ``tail`` keeps reconnecting to a service that went away before it gives up.
_TAIL_RECONNECT_SECONDS: Final = 60.0


def _tail_line(record: Record) -> str:
    payload = bytes(record.payload).decode("utf-8", "replace").replace("\n", " ")
    if len(payload) > _PAYLOAD_CHARS:
        payload = payload[: _PAYLOAD_CHARS - 1] + "…"
    return "  ".join(
        (_time(record.timestamp), record.run_id, record.id, record.type, record.event_key, payload)
    )


def _follow(tail: RecordTail, as_json: bool) -> None:
    """Print each record as it arrives, until the stream ends or Ctrl-C."""
    try:
        with tail:
            for record in tail:
                line = json.dumps(record_json(record)) if as_json else _tail_line(record)
                typer.echo(line)
                sys.stdout.flush()
    except KeyboardInterrupt:
        return
    if tail.end is not None:
        details = ", ".join(f"{key} {value}" for key, value in tail.end.items())
        typer.echo(f"stream ended: {details}", err=True)


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


@sessions_cli.command("tail")
def sessions_tail(
    session_id: str,
    url: Url = DEFAULT_URL,
    token: Token = None,
    cursor: Cursor = "",
    as_json: AsJson = False,
) -> None:
    """Print every record of a session's runs in commit order, then each new one as it
    is written, until the session is purged. Resumes by itself when the connection
    drops; Ctrl-C stops."""
    with _service(url, token, deadline=_TAIL_RECONNECT_SECONDS) as store:
        _follow(store.tail_session_run_records(session_id, cursor), as_json)


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
        raise typer.Exit(EXIT_WAIT_TIMEOUT)


EXIT_WAIT_TIMEOUT: Final = 4


# --- webhooks -----------------------------------------------------------------------------


def webhook_json(webhook: Webhook) -> dict[str, Any]:
    return {
        "webhook_id": webhook.webhook_id,
        "url": webhook.url,
        "events": [event.value for event in webhook.events],
        "created_at": _time(webhook.created_at),
    }


def delivery_json(delivery: WebhookDelivery) -> dict[str, Any]:
    return {
        "event_id": delivery.event_id,
        "type": delivery.type.value,
        "status": delivery.status.value,
        "attempts": delivery.attempts,
        "last_status_code": delivery.last_status_code,
        "next_attempt_at": delivery.next_attempt_at and _time(delivery.next_attempt_at),
    }


@webhooks_cli.command("create")
def webhooks_create(
    webhook_url: Annotated[str, typer.Argument(metavar="URL", help="Where events are POSTed.")],
    event: Annotated[
        list[str],
        typer.Option(
            "--event",
            help="run.finished, run.suspended, session.ended or session.purged (repeatable).",
        ),
    ],
    url: Url = DEFAULT_URL,
    token: Token = None,
) -> None:
    """Subscribe a URL to events; prints the subscription with its secret (shown once)."""
    with _service(url, token) as store:
        created = store.create_webhook(webhook_url, event)
    sys.stdout.write(
        json.dumps({**webhook_json(created), "secret": created.secret}, ensure_ascii=False) + "\n"
    )


@webhooks_cli.command("list")
def webhooks_list(url: Url = DEFAULT_URL, token: Token = None, as_json: AsJson = False) -> None:
    """Every subscription (secrets are never shown)."""
    with _service(url, token) as store:
        found = store.list_webhooks()
    _print(
        iter([found]),
        as_json,
        webhook_json,
        ["WEBHOOK", "URL", "EVENTS", "CREATED"],
        lambda hook: [
            hook.webhook_id,
            hook.url,
            ",".join(event.value for event in hook.events),
            _time(hook.created_at),
        ],
    )


@webhooks_cli.command("delete")
def webhooks_delete(webhook_id: str, url: Url = DEFAULT_URL, token: Token = None) -> None:
    """Delete a subscription and its deliveries."""
    with _service(url, token) as store:
        store.delete_webhook(webhook_id)
    typer.echo(f"webhook {webhook_id} deleted")


@webhooks_cli.command("deliveries")
def webhooks_deliveries(
    webhook_id: str,
    url: Url = DEFAULT_URL,
    token: Token = None,
    status: Annotated[
        list[str], typer.Option("--status", help="pending, delivered or failed (repeatable).")
    ] = [],  # noqa: B006 - typer copies defaults
    limit: Limit = 100,
    cursor: Cursor = "",
    everything: Everything = False,
    as_json: AsJson = False,
) -> None:
    """A subscription's deliveries, in the order their events committed."""
    with _service(url, token) as store:

        def fetch(after: str) -> tuple[list[WebhookDelivery], str]:
            page = store.list_webhook_deliveries(webhook_id, status, after, limit)
            return page.deliveries, page.next_cursor

        _print(
            _pages(fetch, cursor, everything),
            as_json,
            delivery_json,
            ["EVENT", "TYPE", "STATUS", "ATTEMPTS", "LAST CODE", "NEXT ATTEMPT"],
            lambda d: [
                d.event_id,
                d.type.value,
                d.status.value,
                str(d.attempts),
                "" if d.last_status_code is None else str(d.last_status_code),
                _time(d.next_attempt_at),
            ],
        )


@webhooks_cli.command("retry")
def webhooks_retry(
    webhook_id: str, event_id: str, url: Url = DEFAULT_URL, token: Token = None
) -> None:
    """Queue a failed delivery again."""
    with _service(url, token) as store:
        delivery = store.retry_webhook_delivery(webhook_id, event_id)
    sys.stdout.write(json.dumps(delivery_json(delivery), ensure_ascii=False) + "\n")
