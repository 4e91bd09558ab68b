"""A page reads no payload past its cut (CONTRACT.md section 4, docs/performance.md).

A page of up to ``page_max`` (1,000) records whose payloads may be 4 MiB each must never
ship the payloads past the byte budget out of the database: the page reads the positions
and sizes of the next ``limit + 1`` records first, then the rows of exactly the records it
keeps. ``more`` (``next_cursor``) stays exact either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from app.storage import SqlStore
from app.storage.database import dialects
from runtime_store_client import RunStatus, SessionPurgedError
from tests.contract.builders import new_session, record, start_root, terminal_record

PAYLOAD = b'{"note":"' + b"x" * 10_000 + b'"}'


@pytest.fixture
def fetched(monkeypatch: pytest.MonkeyPatch) -> list[Sequence[Any]]:
    """Every row a page read fetched, on either database."""
    rows: list[Sequence[Any]] = []
    for dialect in (dialects.SqliteDialect, dialects.PostgresDialect):
        read = dialect.fetch_all

        def recording(self: Any, tx: Any, statement: Any, params: Any, read: Any = read) -> Any:
            found = read(self, tx, statement, params)
            rows.extend(found)
            return found

        monkeypatch.setattr(dialect, "fetch_all", recording)
    return rows


def _payload_bytes(rows: Sequence[Sequence[Any]]) -> int:
    return sum(len(value) for row in rows for value in row if isinstance(value, bytes))


@pytest.mark.parametrize("lister", ["list_run_records", "list_session_run_records"])
def test_a_page_reads_no_payload_past_its_byte_budget(
    engine: Engine, fetched: list[Sequence[Any]], lister: str
) -> None:
    store = SqlStore(engine, page_byte_budget=3 * len(PAYLOAD))
    run = start_root(store, new_session(store).id).run
    for n in range(20):
        store.append_run_record(record(run, event_key=f"e{n}", payload=PAYLOAD))
    owner = run.run_id if lister == "list_run_records" else run.session_id
    fetched.clear()

    page = getattr(store, lister)(owner, "", 1000)

    kept = sum(len(r.payload) for r in page.records)
    assert len(page.records) == 3  # run_started and two payloads: a third does not fit
    assert page.next_cursor != ""
    assert _payload_bytes(fetched) == kept


@pytest.mark.parametrize("lister", ["list_run_records", "list_session_run_records"])
def test_a_page_cut_by_the_limit_knows_more_exist_without_reading_their_payloads(
    engine: Engine, fetched: list[Sequence[Any]], lister: str
) -> None:
    store = SqlStore(engine)
    run = start_root(store, new_session(store).id).run
    for n in range(5):
        store.append_run_record(record(run, event_key=f"e{n}", payload=PAYLOAD))
    owner = run.run_id if lister == "list_run_records" else run.session_id

    fetched.clear()
    first = getattr(store, lister)(owner, "", 3)
    first_bytes = _payload_bytes(fetched)
    fetched.clear()
    rest = getattr(store, lister)(owner, first.next_cursor, 3)

    assert len(first.records) == 3
    assert first.next_cursor != ""
    assert first_bytes == sum(len(r.payload) for r in first.records)
    assert len(rest.records) == 3
    assert rest.next_cursor == ""
    assert _payload_bytes(fetched) == sum(len(r.payload) for r in rest.records)


@pytest.mark.parametrize("lister", ["list_run_records", "list_session_run_records"])
def test_a_page_read_while_its_session_is_purged_has_no_gap(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, lister: str
) -> None:
    """The purge lands between the page's two reads: the page is whole (SQLite reads in one
    snapshot) or the list answers ``session_purged`` (PostgreSQL reads each statement
    afresh); never a page with the purged records missing."""
    store = SqlStore(engine)
    session_id = new_session(store).id
    run = start_root(store, session_id).run
    for n in range(5):
        store.append_run_record(record(run, event_key=f"e{n}"))
    store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )
    store.end_session(session_id, datetime(2026, 12, 1, tzinfo=UTC))
    before = getattr(store, lister)(
        run.run_id if lister == "list_run_records" else session_id, "", 100
    )
    purger = SqlStore(engine)
    for dialect in (dialects.SqliteDialect, dialects.PostgresDialect):
        read = dialect.fetch_all

        def purge_after_keys(
            self: Any, tx: Any, statement: Any, params: Any, read: Any = read
        ) -> Any:
            found = read(self, tx, statement, params)
            if "limit_plus_one" in params and not purged:
                purged.append(True)
                purger.purge_session(session_id)
            return found

        monkeypatch.setattr(dialect, "fetch_all", purge_after_keys)
    purged: list[bool] = []
    owner = run.run_id if lister == "list_run_records" else session_id

    try:
        page = getattr(store, lister)(owner, "", 100)
    except SessionPurgedError:
        assert engine.dialect.name == "postgresql"
    else:
        assert engine.dialect.name == "sqlite"
        assert [r.id for r in page.records] == [r.id for r in before.records]
    assert purged == [True]
