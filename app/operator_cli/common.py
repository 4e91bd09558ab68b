"""What the operator's commands share: the service they talk to, the options, the output
(tables or JSON lines, pages), times and ages, and one-line failures."""

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
        Session,
    )
    from runtime_store_client.http import RecordTail


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


URL_ENV: Final = "RUNTIME_STORE_URL"
TOKEN_ENV: Final = "RUNTIME_STORE_TOKEN"


Url = Annotated[
    str,
    typer.Option(
        "--url", envvar="RUNTIME_STORE_URL", help="The base URL of the service to talk to."
    ),
]


Token = Annotated[
    str | None,
    typer.Option(
        "--token",
        envvar="RUNTIME_STORE_TOKEN",
        help="Bearer token, for a service that requires tokens (RUNTIME_STORE_TOKEN_KEY "
        "set there): `runtime-store tokens create` makes one.",
        show_default=False,
    ),
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
    from runtime_store_client import AuthError, HttpStore, StoreError, UnavailableError

    try:
        with HttpStore(url, token=token, retries=1, deadline=deadline) as store:
            yield store
    except UnavailableError as exc:
        if _transport_failure(exc.message):
            raise _fail(
                f"cannot reach {url} ({exc.message}): is the service running there? "
                f"Point --url or {URL_ENV} at it",
                EXIT_UNREACHABLE,
            ) from None
        raise _fail(f"{exc.code}: {exc.message} ({url})", EXIT_UNREACHABLE) from None
    except AuthError as exc:
        if exc.code == "permission_denied":  # a valid token whose role is too low
            raise _fail(
                f"{exc.code}: {exc.message}: pass a token of that role with --token or {TOKEN_ENV}",
                EXIT_REFUSED,
            ) from None
        fix = (
            f"pass --token or set {TOKEN_ENV} (`runtime-store tokens create` makes one)"
            if token is None
            else f"the token of --token or {TOKEN_ENV} is not an active token of {url}"
        )
        raise _fail(f"{exc.code}: {exc.message}: {fix}", EXIT_REFUSED) from None
    except StoreError as exc:
        raise _fail(f"{exc.code}: {exc.message}", EXIT_REFUSED) from None
    except ValueError as exc:  # a base URL httpx cannot use
        raise _fail(f"bad --url {url!r}: {exc}", EXIT_USAGE) from None


def _transport_failure(message: str) -> bool:
    """Whether an ``unavailable`` error is the client's failure to reach the service (the
    client names the transport error: ``ConnectError: …``), not a 503 of the service."""
    import httpx

    names: set[str] = set()
    pending: list[type] = [httpx.TransportError]
    while pending:
        cls = pending.pop()
        names.add(cls.__name__)
        pending += cls.__subclasses__()
    return message.split(":", 1)[0].strip() in names


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
        "seed_end_id": run.seed_end_id,
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
    *,
    nothing: str = "none",
) -> None:
    """A table (or JSON lines); an empty table is one line that says so (``nothing``), not
    a header alone."""
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
    if not table.row_count:
        typer.echo(nothing)
        return
    _console().print(table)


#: ``_print`` for the commands outside this package (``tokens list``).
print_table: Final = _print


def _labels(labels: dict[str, str] | Any) -> str:
    """``team:billing, tier:gold``: labels as ``--label``, the API and the console write them."""
    return ", ".join(f"{key}:{value}" for key, value in sorted(dict(labels).items()))


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


def _open_output(output: Path | None) -> Any:
    assert output is not None
    try:
        return output.open("wb")
    except OSError as exc:
        raise _fail(f"cannot write {output}: {exc.strerror}", EXIT_USAGE) from None


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


EXIT_WAIT_TIMEOUT: Final = 4
