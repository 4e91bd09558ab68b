"""``runtime-store retention run [--dry-run]``: one retention sweep, with progress."""

from __future__ import annotations

from typing import Annotated

import typer

from app.operator_cli import progress_bar

from . import opening
from .common import DatabaseUrl, retention_cli


@retention_cli.command("run")
def retention_run(
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Only say what would be purged and deleted.")
    ] = False,
    database_url: DatabaseUrl = None,
) -> None:
    """One sweep: print what it will purge, then purge it in batches with progress.

    Ended sessions whose ended_at is older than RUNTIME_STORE_RETENTION_ENDED_SESSIONS (and
    that have no running run) are purged as `sessions purge` does, each exported to
    RUNTIME_STORE_RETENTION_ARCHIVE_DIR first if set; terminal sessionless runs last
    changed longer ago than RUNTIME_STORE_RETENTION_SESSIONLESS_RUNS are deleted, their
    IDs kept reserved; memory appended for runs that do not exist is deleted once all of
    it is older than RUNTIME_STORE_RETENTION_ORPHAN_MEMORY."""
    from app.settings import Settings
    from app.storage import SqlStore, create_engine

    settings = Settings()
    policy = settings.retention_policy()
    if policy.keeps_everything:
        typer.echo(
            "nothing to sweep: set RUNTIME_STORE_RETENTION_ENDED_SESSIONS, "
            "RUNTIME_STORE_RETENTION_SESSIONLESS_RUNS and/or "
            "RUNTIME_STORE_RETENTION_ORPHAN_MEMORY (e.g. 30d, 7d)",
            err=True,
        )
        raise typer.Exit(2)
    engine = create_engine(opening.open_ready(database_url).url)
    try:
        store = SqlStore(engine, limits=settings.limits(), fast_path=settings.pg_fast_path)
        typer.echo(f"retention: {policy.describe()}")
        plan = store.retention_sweep(policy, dry_run=True)
        typer.echo(plan.summary())
        if dry_run or not plan.items:
            return
        with store.retention_exclusive() as mine:
            if not mine:
                typer.echo("another sweep is running (a replica's --retention-interval?)", err=True)
                raise typer.Exit(1)
            total = plan.items
            with progress_bar("sweeping", total, items=True) as advance:
                done = store.retention_sweep(
                    policy,
                    progress=lambda _kind, items, _records: advance(items),
                    should_stop=lambda: not mine.still_held(),
                )
        typer.echo(done.summary())
        if mine.lost:
            typer.echo(
                "the sweep's lock was lost (the database failed over?): stopped; run it again",
                err=True,
            )
            raise typer.Exit(1)
    finally:
        engine.dispose()
