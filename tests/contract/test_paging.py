"""Paging of ``list_run_records`` and ``list_session_run_records`` (CONTRACT.md section 4)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from sqlalchemy.engine import Engine

from app.storage import SqlStore
from runtime_store_client import (
    InvalidArgumentError,
    Page,
    Record,
    RunNotFoundError,
    RunStart,
    RunStatus,
    SessionNotFoundError,
    SessionPurgedError,
    StoreError,
)
from tests.contract.builders import (
    Backend,
    all_records,
    all_session_records,
    at,
    new_session,
    observe,
    record,
    run_start,
    start_root,
    started_record,
    terminal_record,
)

# --------------------------------------------------------------------------- helpers

Lister = Callable[[Backend, str, str, int], Page]


def list_run(store: Backend, owner: str, cursor: str, limit: int) -> Page:
    return store.list_run_records(owner, cursor=cursor, limit=limit)


def list_session(store: Backend, owner: str, cursor: str, limit: int) -> Page:
    return store.list_session_run_records(owner, cursor=cursor, limit=limit)


LISTS = [pytest.param(list_run, id="run_list"), pytest.param(list_session, id="session_list")]


def assert_invalid(
    store: Backend, call: Callable[[], object], run_id: str, session_id: str
) -> None:
    before = observe(store, run_id, session_id=session_id)
    with pytest.raises(InvalidArgumentError) as info:
        call()
    assert info.value.code == "invalid_argument"
    assert observe(store, run_id, session_id=session_id) == before


def assert_fails(call: Callable[[], object], error: type[StoreError]) -> None:
    with pytest.raises(error) as info:
        call()
    assert type(info.value) is error
    assert info.value.code == error.default_code


def payload_of_size(size: int, *, multibyte: bool = False) -> bytes:
    """A JSON string payload of exactly ``size`` bytes (of two-byte characters if asked)."""
    if multibyte:
        assert size % 2 == 0
        return b'"' + "\u00e9".encode() * ((size - 2) // 2) + b'"'
    return b'"' + b"x" * (size - 2) + b'"'


def seeded_run(
    store: Backend, appends: int, *, payload_size: int = 0, multibyte: bool = False
) -> RunStart:
    """A running root run in a fresh session with ``run_started`` plus ``appends`` records."""
    run = start_root(store, new_session(store).id).run
    for n in range(appends):
        if payload_size:
            payload = payload_of_size(payload_size, multibyte=multibyte)
        else:
            payload = b'{"n":%d}' % n
        store.append_run_record(record(run, event_key=f"evt-{n}", payload=payload))
    return run


def owner_of(run: RunStart, lister: Lister) -> str:
    return run.run_id if lister is list_run else run.session_id


def follow(store: Backend, lister: Lister, owner: str, limit: int) -> list[Page]:
    """Every page of a list, following ``next_cursor`` until it is empty."""
    pages = [lister(store, owner, "", limit)]
    while pages[-1].next_cursor:
        assert len(pages) < 100
        pages.append(lister(store, owner, pages[-1].next_cursor, limit))
    return pages


def identity(rec: Record) -> tuple[str, str]:
    return rec.run_id, rec.id


# --------------------------------------------------------------------------- limit


@pytest.mark.parametrize("lister", LISTS)
@pytest.mark.parametrize("limit", [0, -1])
def test_limit_must_be_positive(store: Backend, lister: Lister, limit: int) -> None:
    run = seeded_run(store, 2)

    assert_invalid(
        store, lambda: lister(store, owner_of(run, lister), "", limit), run.run_id, run.session_id
    )


@pytest.mark.parametrize("lister", LISTS)
def test_limit_above_maximum_is_served_as_maximum(engine: Engine, lister: Lister) -> None:
    store: Backend = SqlStore(engine, page_max=5)
    run = seeded_run(store, 7)

    page = lister(store, owner_of(run, lister), "", 1000)

    assert [r.id for r in page.records] == ["1", "2", "3", "4", "5"]
    assert page.next_cursor != ""


@pytest.mark.parametrize("lister", LISTS)
def test_limit_below_maximum_is_honoured(engine: Engine, lister: Lister) -> None:
    store: Backend = SqlStore(engine, page_max=5)
    run = seeded_run(store, 7)

    page = lister(store, owner_of(run, lister), "", 3)

    assert [r.id for r in page.records] == ["1", "2", "3"]


# --------------------------------------------------------------------------- byte budget


@pytest.mark.parametrize("multibyte", [False, True], ids=["ascii", "multibyte"])
@pytest.mark.parametrize("lister", LISTS)
@pytest.mark.parametrize(
    ("slack", "expected_ids"),
    [
        pytest.param(0, ["1", "2", "3"], id="total_equal_to_budget"),
        pytest.param(-1, ["1", "2"], id="one_byte_over_budget"),
        pytest.param(39, ["1", "2", "3"], id="next_record_does_not_fit"),
        pytest.param(40, ["1", "2", "3", "4"], id="next_record_fits_exactly"),
    ],
)
def test_page_stops_once_payloads_would_exceed_byte_budget(
    engine: Engine, lister: Lister, slack: int, expected_ids: list[str], multibyte: bool
) -> None:
    # The budget counts payload bytes, not characters: two-byte text must not fit more.
    started_size = len(started_record(run_start()).payload)
    store: Backend = SqlStore(engine, page_byte_budget=started_size + 2 * 40 + slack)
    run = seeded_run(store, 5, payload_size=40, multibyte=multibyte)

    page = lister(store, owner_of(run, lister), "", 100)

    assert [r.id for r in page.records] == expected_ids
    assert page.next_cursor != ""


@pytest.mark.parametrize("lister", LISTS)
def test_page_holds_at_least_one_record_over_the_byte_budget(
    engine: Engine, lister: Lister
) -> None:
    store: Backend = SqlStore(engine, page_byte_budget=1)
    run = seeded_run(store, 3, payload_size=40)

    pages = follow(store, lister, owner_of(run, lister), 100)

    assert [[r.id for r in p.records] for p in pages] == [["1"], ["2"], ["3"], ["4"]]
    assert pages[-1].next_cursor == ""


# --------------------------------------------------------------------------- cursors


def test_run_list_from_start_is_oldest_first_with_store_ids(store: Backend) -> None:
    run = seeded_run(store, 3)

    page = store.list_run_records(run.run_id, cursor="", limit=100)

    assert [r.id for r in page.records] == ["1", "2", "3", "4"]
    assert [r.event_key for r in page.records] == ["start", "evt-0", "evt-1", "evt-2"]
    assert page.next_cursor == ""


def test_run_list_next_cursor_is_last_record_id(store: Backend) -> None:
    run = seeded_run(store, 4)

    first = store.list_run_records(run.run_id, cursor="", limit=2)
    second = store.list_run_records(run.run_id, cursor=first.next_cursor, limit=2)
    third = store.list_run_records(run.run_id, cursor=second.next_cursor, limit=2)

    assert ([r.id for r in first.records], first.next_cursor) == (["1", "2"], "2")
    assert ([r.id for r in second.records], second.next_cursor) == (["3", "4"], "4")
    assert ([r.id for r in third.records], third.next_cursor) == (["5"], "")


def test_run_list_page_ending_at_last_record_has_empty_cursor(store: Backend) -> None:
    run = seeded_run(store, 2)

    page = store.list_run_records(run.run_id, cursor="", limit=3)

    assert [r.id for r in page.records] == ["1", "2", "3"]
    assert page.next_cursor == ""


def test_run_list_cursor_at_the_end_returns_empty_page(store: Backend) -> None:
    run = seeded_run(store, 2)

    page = store.list_run_records(run.run_id, cursor="3", limit=10)

    assert page == Page(records=[], next_cursor="")


def test_run_list_cursor_sees_records_appended_after_it_was_issued(store: Backend) -> None:
    run = seeded_run(store, 1)
    first = store.list_run_records(run.run_id, cursor="", limit=1)
    store.append_run_record(record(run, event_key="late"))

    rest = store.list_run_records(run.run_id, cursor=first.next_cursor, limit=10)

    assert [r.event_key for r in rest.records] == ["evt-0", "late"]
    assert rest.next_cursor == ""


@pytest.mark.parametrize("cursor", ["4", "99"])
def test_run_list_cursor_beyond_last_id_is_invalid_argument(store: Backend, cursor: str) -> None:
    run = seeded_run(store, 2)

    assert_invalid(
        store,
        lambda: store.list_run_records(run.run_id, cursor=cursor, limit=10),
        run.run_id,
        run.session_id,
    )


@pytest.mark.parametrize("lister", LISTS)
@pytest.mark.parametrize("cursor", ["garbage", "-1", "1.5", "x1", "%%%"])
def test_cursor_the_store_did_not_issue_is_invalid_argument(
    store: Backend, lister: Lister, cursor: str
) -> None:
    run = seeded_run(store, 2)

    assert_invalid(
        store, lambda: lister(store, owner_of(run, lister), cursor, 10), run.run_id, run.session_id
    )


@pytest.mark.parametrize("lister", LISTS)
def test_following_cursors_reads_every_record_once_in_order(store: Backend, lister: Lister) -> None:
    run = seeded_run(store, 6)

    pages = follow(store, lister, owner_of(run, lister), 2)

    assert [[r.id for r in p.records] for p in pages] == [
        ["1", "2"],
        ["3", "4"],
        ["5", "6"],
        ["7"],
    ]
    assert [r for p in pages for r in p.records] == all_records(store, run.run_id)


# --------------------------------------------------------------------------- session list


def test_session_list_holds_every_sessionful_record_in_commit_order(store: Backend) -> None:
    session_id = new_session(store).id
    first = start_root(store, session_id).run
    second = start_root(store, session_id).run
    one_shot = run_start()
    store.start_one_shot_run(one_shot, started_record(one_shot))
    elsewhere = start_root(store, new_session(store).id).run
    commits: list[tuple[str, str]] = [(first.run_id, "1"), (second.run_id, "1")]
    for run in (first, second, first, one_shot, elsewhere, second, first):
        result = store.append_run_record(record(run))
        if run in (first, second):
            commits.append((run.run_id, result.id))
    store.record_run_terminal(
        second.run_id, RunStatus.COMPLETED, terminal_record(second, RunStatus.COMPLETED)
    )
    commits.append((second.run_id, "4"))

    records = all_session_records(store, session_id)

    assert [identity(r) for r in records] == commits
    by_run = {r.run_id: all_records(store, r.run_id) for r in (first, second)}
    assert records == sorted(
        (r for rs in by_run.values() for r in rs), key=lambda r: commits.index(identity(r))
    )


def test_session_list_pages_without_skips_or_repeats(store: Backend) -> None:
    session_id = new_session(store).id
    runs = [start_root(store, session_id).run for _ in range(3)]
    for _ in range(3):
        for run in runs:
            store.append_run_record(record(run))
    expected = [identity(r) for r in all_session_records(store, session_id)]

    pages = follow(store, list_session, session_id, 4)

    assert [len(p.records) for p in pages] == [4, 4, 4]
    assert [identity(r) for p in pages for r in p.records] == expected
    assert len(set(expected)) == 12


def test_session_list_cursor_sees_records_committed_after_it_was_issued(store: Backend) -> None:
    session_id = new_session(store).id
    run = start_root(store, session_id).run
    store.append_run_record(record(run, event_key="early"))
    first = store.list_session_run_records(session_id, cursor="", limit=1)
    other = start_root(store, session_id).run
    store.append_run_record(record(run, event_key="late"))

    rest = store.list_session_run_records(session_id, cursor=first.next_cursor, limit=10)

    assert [(r.run_id, r.event_key) for r in rest.records] == [
        (run.run_id, "early"),
        (other.run_id, "start"),
        (run.run_id, "late"),
    ]
    assert rest.next_cursor == ""


def test_session_list_of_session_without_runs_is_empty(store: Backend) -> None:
    session_id = new_session(store).id

    page = store.list_session_run_records(session_id, cursor="", limit=10)

    assert page == Page(records=[], next_cursor="")


# --------------------------------------------------------------------------- not found / purged


def test_run_list_of_unknown_run_is_run_not_found(store: Backend) -> None:
    assert_fails(
        lambda: store.list_run_records("run-unknown", cursor="", limit=10), RunNotFoundError
    )


def test_session_list_of_unknown_session_is_session_not_found(store: Backend) -> None:
    assert_fails(
        lambda: store.list_session_run_records("sess-unknown", cursor="", limit=10),
        SessionNotFoundError,
    )


def test_lists_of_purged_session_are_session_purged(store: Backend) -> None:
    run = seeded_run(store, 1)
    store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )
    store.end_session(run.session_id, at(50))
    store.purge_session(run.session_id)

    assert_fails(
        lambda: store.list_session_run_records(run.session_id, cursor="", limit=10),
        SessionPurgedError,
    )
    assert_fails(
        lambda: store.list_run_records(run.run_id, cursor="", limit=10), SessionPurgedError
    )
