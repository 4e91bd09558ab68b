"""What a database holds, read without creating or changing anything: the answer behind
the advice of the CLI's database commands (app/cli/opening.py)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import sqlalchemy as sa
from sqlalchemy.engine import make_url

from app.database_url import canonical_database_url, display_form
from app.storage.database.engines import database_errors, normalize_url
from app.storage.database.migrations import alembic_config, current_revision, head_revision

#: Tables every runtime-store schema has, whatever its revision.
_OURS: Final = frozenset({"sessions", "runs", "run_records"})


class State(enum.Enum):
    READY = "ready"
    MISSING = "missing"  # a SQLite URL whose file does not exist
    NOT_SQLITE = "not_sqlite"  # a file that is not a SQLite database at all
    EMPTY = "empty"  # no table at all
    FOREIGN = "foreign"  # tables, but not runtime-store's
    BEHIND = "behind"  # runtime-store's, at an older revision
    NEWER = "newer"  # runtime-store's, at a revision this installation does not know


@dataclass(frozen=True)
class Found:
    state: State
    current: str | None = None
    head: str | None = None
    tables: tuple[str, ...] = ()

    @property
    def ready(self) -> bool:
        return self.state is State.READY


def display_url(url: str) -> tuple[str, Path | None]:
    """A URL as commands print it (password hidden, a SQLite path absolute), and the
    SQLite file it names, if any. Several PostgreSQL hosts print as libpq's
    ``h1:p1,h2:p2`` (CONTRACT.md 16)."""
    canonical = canonical_database_url(url)
    if "," in str(make_url(canonical).query.get("host", "")):
        return display_form(canonical), None
    parsed = make_url(url)
    file = None
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        file = Path(str(parsed.database)).absolute()
        parsed = parsed.set(database=str(file))
    return parsed.render_as_string(hide_password=True), file


def inspect_database(url: str) -> Found:
    """What the database at ``url`` holds. A database that does not answer raises
    ``DatabaseError``; a missing SQLite file is ``MISSING`` and is not created."""
    _, file = display_url(url)
    if file is not None and not file.is_file():
        return Found(State.MISSING)
    # A plain engine: the service's own sets SQLite pragmas (WAL), which write to the file.
    engine = sa.create_engine(normalize_url(url), poolclass=sa.pool.NullPool)
    try:
        try:
            with database_errors():
                tables = tuple(sorted(sa.inspect(engine).get_table_names()))
        except Exception as exc:
            if file is not None and "not a database" in str(exc):
                return Found(State.NOT_SQLITE)
            raise
        if not tables:
            return Found(State.EMPTY)
        with database_errors():
            current = current_revision(engine)
    finally:
        engine.dispose()
    head = head_revision()
    ours = set(tables) >= _OURS
    if current == head and ours:
        return Found(State.READY, current, head, tables)
    if not ours:
        return Found(State.FOREIGN, current, head, tables)
    if current is not None and current not in _known_revisions():
        return Found(State.NEWER, current, head, tables)
    return Found(State.BEHIND, current, head, tables)


def _known_revisions() -> set[str]:
    from alembic.script import ScriptDirectory

    scripts = ScriptDirectory.from_config(alembic_config("sqlite://"))
    return {revision.revision for revision in scripts.walk_revisions()}
