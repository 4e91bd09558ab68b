"""``runtime-store sessions list|show|end|purge|export|import|tail``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from runtime_store_client import (
        RunMeta,
        RunPage,
        Session,
        SessionPage,
    )
from .common import (
    _RUN_COLUMNS,
    _SESSION_COLUMNS,
    _TAIL_RECONNECT_SECONDS,
    DEFAULT_URL,
    EXIT_USAGE,
    AsJson,
    Cursor,
    Everything,
    Limit,
    SessionStatusOption,
    Token,
    Url,
    _console,
    _Counted,
    _fail,
    _follow,
    _open_output,
    _pages,
    _print,
    _run_row,
    _service,
    _session_row,
    _time,
    parse_when,
    progress_bar,
    run_json,
    session_json,
    sessions_cli,
)


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
            _pages(fetch, cursor, everything),
            as_json,
            session_json,
            _SESSION_COLUMNS,
            _session_row,
            nothing="no sessions",
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
