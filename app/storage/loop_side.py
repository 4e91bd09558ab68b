"""What a service worker's event loop asks of the store: the checks before it sends an
append or a batch itself (``loop_appends.py``), the reads of a page as steps
(``loop_reads.py``), and the connections both use (``loop_connections.py``). Each answers
as the store's own operation would, through the same rule functions; ``SqlStore.loop``.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.domain.validation import NewRecord
from runtime_store_client import Record

from . import batch, record_reads, records
from .context import Context
from .interrupts import read_timeout_of
from .loop_appends import LoopAppends
from .loop_connections import LoopConnections
from .loop_reads import LoopReads
from .record_reads import TranscriptPageRead
from .records import RunPageRead, SessionPageRead


class LoopSide:
    """The store's operations for an event loop's own statements (see the module)."""

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx

    def checked_append(self, record: Record) -> NewRecord:
        """The record as ``append_run_record`` stores it, or the error of its first failed
        check (for ``LoopAppends``, which sends what passed)."""
        return records.checked_ordinary(self._ctx, record)

    def one_statement_batch(
        self, run_id: str, records: Sequence[Record]
    ) -> batch.OneStatementBatch | None:
        """The batch checked as ``append_run_records`` checks it (raising the same errors)
        and ready for one statement (for ``LoopAppends``); ``None``: only
        ``append_run_records`` can decide."""
        return batch.one_statement_batch(self._ctx, run_id, records)

    def connections(self) -> LoopConnections | None:
        """Connections for statements sent from an event loop (loop_connections.py):
        PostgreSQL without read replicas (a replica's reads wait for the positions of the
        writes, which the loop's statements do not note); ``None`` elsewhere."""
        uow = self._ctx.uow
        if not uow.dialect.reads_in_autocommit or uow.replicas is not None:
            return None
        return LoopConnections(uow.engine)

    def appends(self, connections: LoopConnections, in_flight: int) -> LoopAppends | None:
        """A combiner that sends single appends from an event loop (loop_appends.py), where
        they are one statement: the fast path on; ``None`` elsewhere. With group commit
        off, each append is sent alone, up to ``in_flight`` at once."""
        if not self._ctx.uow.dialect.fast_path:
            return None
        if self._ctx.group_commit is None:
            return LoopAppends(connections, max_group=1, max_in_flight=in_flight)
        return LoopAppends(connections)

    def reads(self, connections: LoopConnections) -> LoopReads:
        """Run pages read from an event loop (loop_reads.py) whenever a database thread
        would read them in autocommit too (the default READ COMMITTED, known once the
        store has read: until then, and at any stricter level, the threads read)."""
        uow = self._ctx.uow
        return LoopReads(
            connections,
            timeout=read_timeout_of(uow.engine),
            allowed=uow.reads_known_in_autocommit,
        )

    def run_page_read(self, run_id: str, cursor: str = "", limit: int = 100) -> RunPageRead:
        """``list_run_records``'s read, its arguments checked (raising the same errors),
        for ``LoopReads``."""
        return records.RunPageRead(self._ctx, run_id, cursor, limit)

    def transcript_page_read(
        self, run_id: str, through: str, after: str = "", limit: int = 100
    ) -> TranscriptPageRead:
        """``list_run_transcript_records``'s read, its arguments checked (raising the same
        errors), for ``LoopReads``."""
        return record_reads.TranscriptPageRead(run_id, through, after, limit)

    def session_page_read(
        self, session_id: str, cursor: str = "", limit: int = 100
    ) -> SessionPageRead | None:
        """``list_session_run_records``'s read, its arguments checked (raising the same
        errors), for ``LoopReads``; ``None`` when its cursor needs the database."""
        return records.SessionPageRead.opened_with_loaded_key(self._ctx, session_id, cursor, limit)
