"""SQLite's publish of a staged import (``sinks._Staged.publish``), its transactions each
short: the file's IDs checked free and claimed (``claim``; import_holds.py says why), the
staged records and seed records copied a slice per transaction (``slices``,
``copy_records``, ``copy_seed_records``), leaving other writers their turns (``Turns``),
then the rest published and the claims dropped in one (``finish``)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import Any, Final

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from app.domain.times import now_millis
from app.storage.database import statements as st
from app.storage.database.tables import (
    import_claims,
    memory_events,
    run_records,
    runs,
    seed_operations,
    seed_records,
    sessions,
)
from app.storage.database.waiting import pause
from app.storage.transfer.conflicts import SEED_TAKEN, TAKEN, session_conflict
from app.storage.transfer.staging import STAGE, STAGED
from app.storage.unit_of_work import import_holds
from runtime_store_client import ImportConflictError, UnavailableError

#: Records copied per publishing transaction, at most (CONTRACT.md 2.10).
SLICE_ROWS: Final = 2_000
SLICE_BYTES: Final = 4 * 1024 * 1024


#: After this long holding the writer (slices back to back), the publish leaves it free
#: for ``BREATHER_SECONDS`` (``Turns``).
TURN_SECONDS: Final = 0.075
#: Longer than the busy handler's polling interval in a waiter's first 128 ms (25 ms).
BREATHER_SECONDS: Final = 0.03


class Turns:
    """Bounded waits for other writers, not just bounded holds (CONTRACT.md 2.10).

    SQLite gives its write lock to no one in particular: a writer that finds it taken
    sleeps in the busy handler and tries again, 1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50,
    then every 100 ms. A publish that commits slice after slice leaves the lock free only
    for the moments between two of its transactions, which such a waiter mostly sleeps
    through: each slice was short, yet a small append waited through several (an
    append's p99 was 100-160 ms and its longest 0.4-1.1 s over HTTP during a 97 MB
    import). So after at most ``TURN_SECONDS`` of holding, the publish pauses for
    ``BREATHER_SECONDS``: a writer that began waiting during that turn (within its first
    ~128 ms of waiting it tries at least every 25 ms) takes the lock in the pause, and
    waits about one turn and one slice at most. The pause begins with the publish's WAL
    checkpoint (``sinks._Staged._checkpointing``), which holds no lock a writer needs. The
    price is up to 40 % more publishing time when slices come back to back, none when they
    are few.
    """

    def __init__(self, checkpoint: Callable[[], None]) -> None:
        self.held = 0.0
        self.checkpoint = checkpoint

    @contextlib.contextmanager
    def holding(self) -> Iterator[None]:
        """One transaction of the publish; a pause first when its turn is used up (its
        checkpoint, then the rest of the pause)."""
        if self.held >= TURN_SECONDS:
            began = time.monotonic()
            self.checkpoint()
            left = BREATHER_SECONDS - (time.monotonic() - began)
            if left > 0:
                pause(left)
            self.held = 0.0
        began = time.monotonic()
        try:
            yield
        finally:
            self.held += time.monotonic() - began


def _slice_statements(table: sa.Table, sized: str) -> tuple[sa.TextClause, sa.TextClause]:
    """The sizes of a staged table's rows (by rowid), and the copy of a rowid range."""
    columns = ", ".join(column.name for column in table.columns)
    sizes = sa.text(f"SELECT rowid, length({sized}) FROM {STAGE}.{table.name} ORDER BY rowid")
    copy = sa.text(
        f"INSERT INTO main.{table.name} ({columns}) SELECT {columns}"
        f" FROM {STAGE}.{table.name} WHERE rowid BETWEEN :first AND :last ORDER BY rowid"
    )
    return sizes, copy


#: The tables copied in slices before the last transaction, with their statements: they
#: are reached only through rows that last one inserts (runs, seed operations and
#: attempts), so no read sees them early.
SLICED: Final = {
    run_records: _slice_statements(run_records, "payload"),
    seed_records: _slice_statements(seed_records, "data"),
}


def slices(conn: Connection, table: sa.Table) -> list[tuple[int, int]]:
    """Row ranges of the staged records (or seed records), each at most ``SLICE_ROWS``
    rows and (unless one record alone is larger) ``SLICE_BYTES`` of content."""
    ranges: list[tuple[int, int]] = []
    first = last = rows = size = 0
    with conn.begin():
        for rowid, length in conn.execute(SLICED[table][0]):
            if rows and (rows == SLICE_ROWS or size + length > SLICE_BYTES):
                ranges.append((first, last))
                rows = size = 0
            if not rows:
                first = rowid
            last, rows, size = rowid, rows + 1, size + length
    if rows:
        ranges.append((first, last))
    return ranges


def claim(conn: Connection, *, session: dict[str, Any], import_id: str) -> None:
    """The IDs are checked free under the write lock, then claimed. An ID another import
    holds is taken, as if that import had already published it: racing imports of one
    session commit once, the others are ``import_conflict``."""
    session_id = session["session_id"]
    _check_free(conn, session_id)
    try:
        import_holds.check_not_claimed(conn, import_holds.SESSION, session_id)
    except UnavailableError:
        raise ImportConflictError(
            f"session {session_id!r} is being imported by another import", session_id=session_id
        ) from None
    claimed = conn.execute(
        sa.select(import_claims.c.claimed_id)
        .where(
            import_claims.c.kind == import_holds.RUN,
            import_claims.c.claimed_id.in_(_staged_run_ids()),
        )
        .limit(1)
    ).scalar()
    if claimed is not None:
        raise ImportConflictError(
            f"run {claimed!r} is being imported by another import", run_id=claimed
        )
    lease = now_millis() + import_holds.LEASE_MS
    ids = _staged_run_ids().subquery()
    conn.execute(
        import_claims.insert(),
        {
            "kind": import_holds.SESSION,
            "claimed_id": session["session_id"],
            "import_id": import_id,
            "expires_at_ms": lease,
        },
    )
    conn.execute(
        import_claims.insert().from_select(
            ["kind", "claimed_id", "import_id", "expires_at_ms"],
            sa.select(
                sa.literal(import_holds.RUN),
                ids.c.run_id,
                sa.literal(import_id),
                sa.literal(lease),
            ),
        )
    )


def _staged_run_ids() -> sa.CompoundSelect[tuple[str]]:
    """The run IDs the import claims: its runs' and its seed operations' (each once)."""
    return sa.union(sa.select(STAGED[runs].c.run_id), sa.select(STAGED[seed_operations].c.run_id))


def _copy_slice(
    conn: Connection, *, table: sa.Table, import_id: str, first: int, last: int
) -> None:
    if not import_holds.renew(conn, import_id):
        raise UnavailableError("the import took too long and gave its IDs back; retry it")
    conn.execute(SLICED[table][1], {"first": first, "last": last})


def copy_records(conn: Connection, *, import_id: str, first: int, last: int) -> None:
    _copy_slice(conn, table=run_records, import_id=import_id, first=first, last=last)


def copy_seed_records(conn: Connection, *, import_id: str, first: int, last: int) -> None:
    _copy_slice(conn, table=seed_records, import_id=import_id, first=first, last=last)


def finish(conn: Connection, *, session: dict[str, Any], import_id: str) -> None:
    """Still claimed, the IDs still free: the session and everything but its records
    (already copied) become live, and the claims go, in this one transaction."""
    if not import_holds.renew(conn, import_id):
        raise UnavailableError("the import took too long and gave its IDs back; retry it")
    _check_free(conn, session["session_id"])
    conn.execute(sessions.insert(), session)
    for live, staged in STAGED.items():
        if live in SLICED:
            continue
        names = [c.name for c in live.columns if not (live is memory_events and c.name == "id")]
        rows = sa.select(*(staged.c[name] for name in names)).order_by(*staged.primary_key.columns)
        conn.execute(live.insert().from_select(names, rows))
    conn.execute(import_claims.delete().where(import_claims.c.import_id == import_id))


def _check_free(conn: Connection, session_id: str) -> None:
    """``import_conflict`` when the session or a run ID of the file is taken."""
    existing = conn.execute(st.SELECT_SESSION, {"session_id": session_id}).first()
    if existing is not None:
        raise session_conflict(session_id, existing.status)
    staged_runs = STAGED[runs]
    for table, reason in TAKEN:
        taken = conn.execute(
            sa.select(table.c.run_id)
            .join(staged_runs, staged_runs.c.run_id == table.c.run_id)
            .limit(1)
        ).scalar()
        if taken is not None:
            raise ImportConflictError(f"run {taken!r} {reason}", run_id=taken)
    staged_seeds = STAGED[seed_operations]
    for table, reason in SEED_TAKEN:
        taken = conn.execute(
            sa.select(table.c.run_id)
            .join(staged_seeds, staged_seeds.c.run_id == table.c.run_id)
            .limit(1)
        ).scalar()
        if taken is not None:
            raise ImportConflictError(
                f"the seed operation's run ID {taken!r} {reason}", run_id=taken
            )
