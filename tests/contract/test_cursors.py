"""Cursors are bound to their list and forged ones are refused (CONTRACT.md section 4).

Session-list and session-run cursors name the list that issued them; one used on another
session's list, with another status filter, edited, or made up is ``invalid_argument``.
However a cursor was forged (bytes, nesting, huge numbers, lone surrogates), the answer is
``invalid_argument``, never a server error. Run-record cursors stay record IDs (4: a
non-empty ``next_cursor`` equals the page's last record ID).
"""

from __future__ import annotations

import base64
import functools
import json
from collections.abc import Callable

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import Engine

from app.domain.cursors import SESSION_RECORDS, CursorCodec
from app.storage import SqlStore
from app.storage.database.tables import service_keys
from runtime_store_client import InvalidArgumentError, RunStart, RunStatus
from tests.contract.builders import (
    Backend,
    at,
    new_session,
    observe,
    record,
    start_root,
    terminal_record,
)


def _seeded(store: Backend, records: int = 4, runs: int = 3) -> tuple[str, list[RunStart]]:
    session_id = new_session(store).id
    started = [start_root(store, session_id).run for _ in range(runs)]
    for n in range(records):
        store.append_run_record(record(started[0], event_key=f"e{n}"))
    return session_id, started


def _refused(store: Backend, call: Callable[[], object], session_id: str) -> None:
    before = observe(store, session_id=session_id)
    with pytest.raises(InvalidArgumentError) as info:
        call()
    assert info.value.code == "invalid_argument"
    assert observe(store, session_id=session_id) == before


def _b64(text: str | bytes) -> str:
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def test_session_record_cursor_of_one_session_is_invalid_on_another(store: Backend) -> None:
    first, _ = _seeded(store)
    second, _ = _seeded(store)
    cursor = store.list_session_run_records(first, limit=2).next_cursor
    assert cursor
    _refused(store, lambda: store.list_session_run_records(second, cursor=cursor), second)


def test_session_run_cursor_of_one_session_is_invalid_on_another(store: Backend) -> None:
    first, _ = _seeded(store)
    second, _ = _seeded(store)
    cursor = store.list_session_runs(first, limit=1).next_cursor
    assert cursor
    _refused(store, lambda: store.list_session_runs(second, cursor=cursor), second)


def test_session_run_cursor_is_bound_to_its_status_filter(store: Backend) -> None:
    session_id, _ = _seeded(store)
    cursor = store.list_session_runs(session_id, statuses=[RunStatus.RUNNING], limit=1).next_cursor
    assert cursor
    assert store.list_session_runs(session_id, statuses=[RunStatus.RUNNING], cursor=cursor).runs
    _refused(store, lambda: store.list_session_runs(session_id, cursor=cursor), session_id)


def test_session_cursor_sealed_with_another_key_is_invalid(store: Backend) -> None:
    """A well-formed cursor for this session and a real position, not sealed by the store."""
    session_id, _ = _seeded(store)
    forged = CursorCodec(b"k" * 32).seal(SESSION_RECORDS, session_id, [2])
    _refused(store, lambda: store.list_session_run_records(session_id, cursor=forged), session_id)


@pytest.mark.parametrize("lister", ["records", "runs"])
def test_an_issued_cursor_edited_by_one_character_is_invalid(store: Backend, lister: str) -> None:
    session_id, _ = _seeded(store)
    if lister == "records":
        cursor = store.list_session_run_records(session_id, limit=2).next_cursor
    else:
        cursor = store.list_session_runs(session_id, limit=1).next_cursor
    lists: dict[str, Callable[[str], object]] = {
        "records": lambda edited: store.list_session_run_records(session_id, cursor=edited),
        "runs": lambda edited: store.list_session_runs(session_id, cursor=edited),
    }
    for index in (0, len(cursor) // 3, len(cursor) - 1):
        edited = cursor[:index] + ("A" if cursor[index] != "A" else "B") + cursor[index + 1 :]
        _refused(store, functools.partial(lists[lister], edited), session_id)


def test_issued_cursors_stay_valid_after_runs_change(store: Backend) -> None:
    """Cursors name immutable facts (positions, start times): later writes never void them."""
    session_id, runs = _seeded(store)
    records = store.list_session_run_records(session_id, limit=2).next_cursor
    run_page = store.list_session_runs(session_id, limit=1)
    store.record_run_terminal(
        runs[0].run_id, RunStatus.COMPLETED, terminal_record(runs[0], RunStatus.COMPLETED)
    )
    assert store.list_session_run_records(session_id, cursor=records).records
    assert store.list_session_runs(session_id, cursor=run_page.next_cursor).runs


FORGED = {
    "deep-nesting": _b64("[" * 100_000 + "]" * 100_000),
    "nested-position": _b64(json.dumps(["sr2", "s", [[[[1]]]], "r", 1])),
    "huge-int": _b64('["sr2","s",' + "9" * 400 + ',"r",1]'),
    "int-beyond-64-bits": _b64('["sn2","s",[],18446744073709551616,"r"]'),
    "negative": _b64('["sr2","s",-1,"r",1]'),
    "float": _b64('["sr2","s",1.5,"r",1]'),
    "bool": _b64('["sr2","s",true,"r",true]'),
    "escaped-lone-surrogate": _b64('["sn2","s",[],1,"r\\ud800"]'),
    "escaped-nul": _b64('["sn2","s",[],1,"r\\u0000"]'),
    "raw-surrogate-bytes": _b64(b'["sn2","s",[],1,"\xed\xa0\x80"]'),
    "lone-surrogate-text": "abc\ud800",
    "nul-text": "ab\x00c",
    "non-ascii": "é" * 10,
    "not-base64": "!!!",
    "blank-json": _b64(" "),
    "json-null": _b64("null"),
    "wrong-kind": _b64('["zz","s",1,"r",1]'),
    "long": "A" * 10_000,
    "too-long-for-a-url": "A" * 100_000,
}


@pytest.mark.parametrize("cursor", list(FORGED.values()), ids=list(FORGED))
@pytest.mark.parametrize("listing", ["records", "runs", "run_records"])
def test_forged_cursor_is_invalid_argument_on_every_list(
    store: Backend, cursor: str, listing: str
) -> None:
    session_id, runs = _seeded(store, records=1, runs=1)
    calls: dict[str, Callable[[], object]] = {
        "records": lambda: store.list_session_run_records(session_id, cursor=cursor),
        "runs": lambda: store.list_session_runs(session_id, cursor=cursor),
        "run_records": lambda: store.list_run_records(runs[0].run_id, cursor=cursor),
    }
    _refused(store, calls[listing], session_id)


def test_a_replaced_cursor_key_is_picked_up_by_a_running_store(engine: Engine) -> None:
    """A process that loaded the key before it was replaced (a restored or re-migrated
    database) opens the new key's cursors after one reload, and hands out new-key cursors."""
    first, second = SqlStore(engine), SqlStore(engine)
    for n in range(3):
        first.create_session(f"s-{n}", at(n))
    assert first.list_sessions(limit=1).next_cursor  # ``first`` has loaded the key
    with engine.begin() as conn:
        saved = conn.execute(sa.select(service_keys)).all()
        conn.execute(sa.delete(service_keys))
    try:
        cursor = second.list_sessions(limit=1).next_cursor  # ``second`` makes a new key
        assert first.list_sessions(cursor=cursor, limit=1).sessions
        again = first.list_sessions(limit=1).next_cursor
        assert second.list_sessions(cursor=again, limit=1).sessions
    finally:  # the live servers of this test session keep the original key
        with engine.begin() as conn:
            conn.execute(sa.delete(service_keys))
            conn.execute(sa.insert(service_keys), [row._asdict() for row in saved])
