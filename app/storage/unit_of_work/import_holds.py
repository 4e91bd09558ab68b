"""IDs an SQLite import holds while it publishes (CONTRACT.md 2.10, 11.4).

An import on SQLite stages its rows outside the store's database (``transfer/staging.py``)
and must then make the session appear whole without holding the only writer for long. So
it publishes in slices: it claims its session and run IDs (those of its runs and of its
seed operations), copies its records and seed records into the live tables a bounded
slice per transaction, and finally inserts the session, its runs and
the rest in one short transaction that also drops the claims. Until then its records
belong to no run and no session (its seed records to no seed operation), so no read
reaches them, and the claims keep every start, seed binding and ``create_session`` off
the IDs: ``unavailable``, to be retried once the import has published (the retry then
meets the imported run or session) or given the IDs back.

A claim is a lease that every slice renews (the session's claim holds the import's
lease). An importing process that dies leaves claims that run out; ``sweep_abandoned``
(each import before it claims, and each service worker on SQLite every ``SWEEP_SECONDS``)
deletes the records such an import copied, in slices, then its claims. PostgreSQL imports
in one transaction and never claims, so its starts (the fast path included) need not look.
"""

from __future__ import annotations

import logging
import threading
import uuid
from dataclasses import dataclass, field
from typing import Final

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from app.domain.times import now_millis
from app.storage.database.dialects import dialect_of
from app.storage.database.engines import WRITE_OPTION
from app.storage.database.tables import import_claims
from runtime_store_client import UnavailableError

log = logging.getLogger("runtime_store.imports")

#: How long a claim holds without being renewed.
LEASE_MS: Final = 30_000
#: How often a service worker on SQLite sweeps abandoned imports.
SWEEP_SECONDS: Final = 10.0
#: Records deleted per transaction when an import's copied records are given back.
GIVE_BACK_ROWS: Final = 2_000

SESSION: Final = "session"
RUN: Final = "run"

_IS_CLAIMED: Final = sa.select(sa.literal(1)).where(
    import_claims.c.kind == sa.bindparam("kind"),
    import_claims.c.claimed_id == sa.bindparam("claimed_id"),
)


def being_imported(kind: str, claimed_id: str) -> UnavailableError:
    noun = "session" if kind == SESSION else "run"
    return UnavailableError(
        f"{noun} ID {claimed_id!r} is being imported; retry once the import has finished"
    )


def check_not_claimed(conn: Connection, kind: str, claimed_id: str) -> None:
    """``unavailable`` when an import in progress holds the ID."""
    if conn.execute(_IS_CLAIMED, {"kind": kind, "claimed_id": claimed_id}).first() is not None:
        raise being_imported(kind, claimed_id)


def renew(conn: Connection, import_id: str) -> bool:
    """Extend the import's lease; ``False`` when its claims are gone (swept)."""
    renewed = conn.execute(
        import_claims.update()
        .where(import_claims.c.import_id == import_id, import_claims.c.kind == SESSION)
        .values(expires_at_ms=now_millis() + LEASE_MS)
    )
    return renewed.rowcount == 1


_COPIED: Final = sa.text(
    "DELETE FROM run_records WHERE rowid IN ("
    " SELECT r.rowid FROM run_records AS r"
    " JOIN import_claims AS c ON c.kind = 'run' AND c.claimed_id = r.run_id"
    " WHERE c.import_id = :import_id"
    " AND NOT EXISTS (SELECT 1 FROM runs WHERE runs.run_id = r.run_id)"
    " LIMIT :n)"
)
#: Seed records (CONTRACT.md 15.7) are copied in slices too, before their operations.
_COPIED_SEED_RECORDS: Final = sa.text(
    "DELETE FROM seed_records WHERE rowid IN ("
    " SELECT r.rowid FROM seed_records AS r"
    " JOIN import_claims AS c ON c.kind = 'run' AND c.claimed_id = r.run_id"
    " WHERE c.import_id = :import_id"
    " AND NOT EXISTS (SELECT 1 FROM seed_operations AS o WHERE o.run_id = r.run_id)"
    " LIMIT :n)"
)


def give_back(conn: Connection, import_id: str) -> None:
    """Delete what the import copied (a slice per transaction), then its claims. Only
    records of a claimed run ID that has no run are deleted (seed records: no seed
    operation): an ID is claimed only while it names no run and no seed operation (no
    seed write binds a claimed ID), and the publish drops the claims in the transaction
    that inserts the runs and seed operations."""
    conn.execution_options(**{WRITE_OPTION: True})
    try:
        for copied in (_COPIED, _COPIED_SEED_RECORDS):
            while True:
                with conn.begin():
                    deleted = conn.execute(copied, {"import_id": import_id, "n": GIVE_BACK_ROWS})
                if deleted.rowcount < GIVE_BACK_ROWS:
                    break
        with conn.begin():
            conn.execute(import_claims.delete().where(import_claims.c.import_id == import_id))
    finally:
        conn.execution_options(**{WRITE_OPTION: False})


_ABANDONED: Final = sa.select(import_claims.c.import_id).where(
    import_claims.c.kind == SESSION, import_claims.c.expires_at_ms < sa.bindparam("now")
)


def sweep_abandoned(conn: Connection) -> int:
    """Give back the IDs (and copied records) of every import whose lease ran out; how
    many imports were swept. Each one's claims are first taken over under a new import ID
    with an expired lease, in one transaction: the importer, if it still runs, then fails
    its next renewal before it can copy more, and a sweeper that dies midway leaves claims
    the next sweep takes over again."""
    now = now_millis()
    with conn.begin():  # a read first: the writer is taken only when there is work
        if conn.execute(_ABANDONED.limit(1), {"now": now}).first() is None:
            return 0
    conn.execution_options(**{WRITE_OPTION: True})
    try:
        with conn.begin():
            abandoned = conn.execute(_ABANDONED, {"now": now}).scalars().all()
            taken_over = [f"swept-{uuid.uuid4().hex}" for _ in abandoned]
            for old, new in zip(abandoned, taken_over, strict=True):
                conn.execute(
                    import_claims.update()
                    .where(import_claims.c.import_id == old)
                    .values(import_id=new, expires_at_ms=0)
                )
    finally:
        conn.execution_options(**{WRITE_OPTION: False})
    for import_id in taken_over:
        give_back(conn, import_id)
    return len(taken_over)


def sweep_abandoned_imports(engine: Engine) -> int:
    """``sweep_abandoned`` on a connection of its own."""
    with engine.connect() as conn:
        return sweep_abandoned(conn)


@dataclass
class ImportSweeper:
    """A service worker's sweep of abandoned imports: when it starts, then every
    ``SWEEP_SECONDS``, so an import's IDs are free again within that of its lease's end."""

    engine: Engine
    interval: float = SWEEP_SECONDS
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    @classmethod
    def when_needed(cls, engine: Engine) -> ImportSweeper | None:
        """A sweeper for a database whose imports claim (SQLite), else ``None``."""
        return cls(engine) if dialect_of(engine).stages_imports else None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="import-sweep", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _loop(self) -> None:
        while True:
            try:
                swept = sweep_abandoned_imports(self.engine)
                if swept:
                    log.info("gave back the IDs and records of %d abandoned import(s)", swept)
            except (sa.exc.SQLAlchemyError, OSError):
                log.exception("sweeping abandoned imports failed; the next sweep retries")
            if self._stop.wait(self.interval):
                return
