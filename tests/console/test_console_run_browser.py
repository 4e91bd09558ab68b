"""The console's run page and timelines in Chromium (issue 33): the meta and the transcript
kept current live, a long run's latest records and newest-first order, the record-type
filter, and the session timeline.

Each test seeds runs of its own (fresh IDs) in the console world; none reloads the page
where it watches something change live.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest

from runtime_store_client import HttpStore, Record, RunStart, RunStatus
from runtime_store_client.transcript import Message, Role, TextPart
from tests.console.conftest import Tab, World, transcript
from tests.console.test_console_browser import assert_stayed_home, text
from tests.contract.builders import (
    T0,
    canceled_record,
    dumps,
    link_record,
    record,
    run_start,
    started_record,
    terminal_record,
    uid,
)

#: Records of the long run: more than two pages of the timeline (100 a page).
LONG_RUN_RECORDS = 250


def start(store: HttpStore, session_id: str, **fields: Any) -> RunStart:
    run = run_start(run_id=uid("run"), agent_id="worker", session_id=session_id, **fields)
    store.start_root_run(run, started_record(run), canceled_record(run))
    return run


def note(run: RunStart, number: int, *, type: str = "planner_note") -> Record:
    return record(
        run,
        event_key=f"note-{number}",
        type=type,
        payload=dumps({"n": number}),
        timestamp=T0 + timedelta(milliseconds=number),
    )


@pytest.fixture
def store(world: World) -> Iterator[HttpStore]:
    with world.store() as opened:
        yield opened


@pytest.fixture
def session_id(store: HttpStore) -> str:
    created = uid("chat")
    store.create_session(created, T0)
    return created


def signed_in(tab: Tab, world: World, path: str) -> None:
    tab.open("/console/sessions")
    tab.use_token(world.admin)
    tab.open(path)
    tab.page.evaluate("window.__stillThisPage = true")


def never_reloaded(tab: Tab) -> None:
    assert tab.page.evaluate("window.__stillThisPage") is True


def record_ids(tab: Tab, selector: str = "#timeline > li.record") -> list[int]:
    return [
        int(value)
        for value in tab.page.locator(selector).evaluate_all(
            "items => items.map(item => item.id.replace('record-', ''))"
        )
    ]


def test_the_run_meta_turns_completed_and_children_appear_live(
    tab: Tab, world: World, store: HttpStore, session_id: str
) -> None:
    page = tab.page
    parent = start(store, session_id)
    signed_in(tab, world, f"/console/run?run_id={parent.run_id}")
    page.wait_for_selector("#tail-state:has-text('Following new records live')")
    assert page.get_attribute("#run-meta", "data-status") == "running"
    assert "No child runs" in text(tab, "#children")
    assert text(tab, "#meta .run-record-count") == "1"

    child = run_start(
        run_id=uid("child"), agent_id="searcher", session_id=session_id, parent_run_id=parent.run_id
    )
    store.start_child_run(
        child, link_record(parent, child), started_record(child), canceled_record(child)
    )
    page.wait_for_selector(f"#children >> text={child.run_id}", timeout=10_000)
    page.wait_for_selector("#meta .run-record-count:text-is('2')", timeout=10_000)

    store.record_run_terminal(
        parent.run_id, RunStatus.COMPLETED, terminal_record(parent, RunStatus.COMPLETED)
    )
    page.wait_for_selector("#run-meta[data-status=completed]", timeout=10_000)
    page.wait_for_selector("#timeline[data-ended=true]", timeout=10_000)
    meta = text(tab, "#meta")
    assert "success" in meta  # the outcome the terminal record names
    assert "started to completed" in meta  # a duration, now that it finished
    assert text(tab, "#meta .run-record-count") == "3"
    assert page.locator("#meta time[datetime]").count() >= 2
    assert "The run finished (completed)" in text(tab, "#tail-state")
    never_reloaded(tab)
    tab.screenshot("run-meta-live")
    assert_stayed_home(tab, 401, 401)  # before the token: a fragment and whoami


def test_the_transcript_shows_a_new_message_live_and_says_when_the_run_finished(
    tab: Tab, world: World, store: HttpStore, session_id: str
) -> None:
    page = tab.page
    run = start(store, session_id)
    store.append_run_record(
        transcript(
            run,
            "seed",
            1,
            Message(role=Role.USER, parts=[TextPart(text="First question")]),
            seeded=True,
        )
    )
    signed_in(tab, world, f"/console/run/transcript?run_id={run.run_id}")
    page.wait_for_selector("#transcript-live:has-text('Following the run live')")
    assert "First question" in text(tab, "#transcript")

    store.append_run_record(note(run, 1))  # not a transcript record: no reload needed
    store.append_run_record(
        transcript(
            run, "turn-1", 2, Message(role=Role.ASSISTANT, parts=[TextPart(text="Live answer")])
        )
    )
    page.wait_for_selector("#message-1:has-text('Live answer')", timeout=10_000)
    assert "First question" in text(tab, "#message-0")
    assert page.get_attribute("#transcript .prefix", "data-through") == "4"

    store.record_run_terminal(
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )
    page.wait_for_selector("#transcript-live:has-text('The run finished (completed)')")
    never_reloaded(tab)
    tab.screenshot("transcript-live")
    assert_stayed_home(tab, 401, 401)  # before the token: a fragment and whoami


@pytest.fixture
def long_run(store: HttpStore, session_id: str) -> RunStart:
    """A running run of ``LONG_RUN_RECORDS`` records (the first its ``run_started``); every
    tenth is a ``usage`` record."""
    run = start(store, session_id)
    notes = [
        note(run, number, type="usage" if number % 10 == 0 else "planner_note")
        for number in range(2, LONG_RUN_RECORDS + 1)
    ]
    store.append_run_records(run.run_id, notes)
    return run


def test_latest_records_land_on_the_last_records_and_follow_them_live(
    tab: Tab, world: World, store: HttpStore, long_run: RunStart
) -> None:
    page = tab.page
    signed_in(tab, world, f"/console/run?run_id={long_run.run_id}")
    assert record_ids(tab) == list(range(1, 101))  # oldest first, a page
    assert page.locator("#tail-state").count() == 0  # not the latest: not followed
    assert text(tab, "#meta .run-record-count") == str(LONG_RUN_RECORDS)

    with page.expect_navigation():
        page.click("#records >> text=Latest records")
    tab.ready()
    assert record_ids(tab) == list(range(LONG_RUN_RECORDS - 99, LONG_RUN_RECORDS + 1))
    page.wait_for_selector("#tail-state:has-text('Following new records live')")
    assert page.locator("#records .jump-latest").count() == 0  # already there
    page.evaluate("window.__stillThisPage = true")

    store.append_run_record(note(long_run, LONG_RUN_RECORDS + 1))
    page.wait_for_selector(f"#record-{LONG_RUN_RECORDS + 1}", timeout=10_000)
    assert record_ids(tab)[-1] == LONG_RUN_RECORDS + 1
    never_reloaded(tab)
    tab.screenshot("run-latest-records")

    with page.expect_navigation():
        page.click("#records >> text=Earlier records")
    tab.ready()
    assert record_ids(tab) == list(range(LONG_RUN_RECORDS - 199, LONG_RUN_RECORDS - 99))
    assert_stayed_home(tab, 401, 401)  # before the token: a fragment and whoami


def test_newest_first_shows_the_newest_records_on_top_and_prepends_live_ones(
    tab: Tab, world: World, store: HttpStore, long_run: RunStart
) -> None:
    page = tab.page
    signed_in(tab, world, f"/console/run?run_id={long_run.run_id}")
    with page.expect_navigation():
        page.click("#records >> text=newest first")
    tab.ready()
    assert record_ids(tab) == list(range(LONG_RUN_RECORDS, LONG_RUN_RECORDS - 100, -1))
    page.wait_for_selector("#tail-state:has-text('Following new records live')")
    page.evaluate("window.__stillThisPage = true")

    store.append_run_record(note(long_run, LONG_RUN_RECORDS + 1))
    page.wait_for_selector(f"#record-{LONG_RUN_RECORDS + 1}", timeout=10_000)
    assert record_ids(tab)[0] == LONG_RUN_RECORDS + 1  # on top
    never_reloaded(tab)
    tab.screenshot("run-newest-first")

    pages = [record_ids(tab)[1:]]
    for _ in range(2):
        with page.expect_navigation():
            page.click("#records >> text=Older records")
        tab.ready()
        pages.append(record_ids(tab))
        assert page.locator("#tail-state").count() == 0  # older pages are not followed
    seen = [number for shown in pages for number in shown]
    assert seen == list(range(LONG_RUN_RECORDS, 0, -1))  # each once, none skipped
    assert page.locator("#records >> text=Older records").count() == 0


def test_the_type_filter_shows_only_the_checked_types_and_pages_on_honestly(
    tab: Tab, world: World, store: HttpStore, long_run: RunStart
) -> None:
    page = tab.page
    signed_in(tab, world, f"/console/run?run_id={long_run.run_id}")
    page.click("#records .type-filter summary")
    page.check("#records input[name=records_type][value=usage]")
    page.check("#records input[name=records_type][value=run_started]")
    with page.expect_navigation():
        page.click("#records-filter")
    tab.ready()
    assert "records_type=usage" in page.url
    types = page.locator("#timeline > li.record").evaluate_all(
        "items => items.map(item => item.dataset.type)"
    )
    assert set(types) == {"usage", "run_started"}
    assert record_ids(tab) == [1, *range(10, LONG_RUN_RECORDS + 1, 10)]
    assert "among the 250 records this page read" in text(tab, "#records .scan-note")
    tab.screenshot("run-type-filter")

    with page.expect_navigation():
        page.click("#records >> text=newest first")
    tab.ready()
    assert record_ids(tab) == [*range(LONG_RUN_RECORDS, 9, -10), 1]  # the filter kept
    page.wait_for_selector("#tail-state:has-text('Following new records live')")
    page.evaluate("window.__stillThisPage = true")
    store.append_run_records(
        long_run.run_id,
        [note(long_run, LONG_RUN_RECORDS + 1), note(long_run, LONG_RUN_RECORDS + 2, type="usage")],
    )
    page.wait_for_selector(f"#record-{LONG_RUN_RECORDS + 2}", timeout=10_000)
    assert page.locator(f"#record-{LONG_RUN_RECORDS + 1}").count() == 0  # filtered out live
    never_reloaded(tab)


def test_the_session_timeline_lists_every_runs_records_in_commit_order_with_the_filter(
    tab: Tab, world: World, store: HttpStore, session_id: str
) -> None:
    page = tab.page
    first = start(store, session_id)
    second = start(store, session_id)
    for number in range(1, 4):
        store.append_run_record(note(first, number))
        store.append_run_record(note(second, number, type="usage"))
    signed_in(tab, world, f"/console/session?session_id={session_id}")
    with page.expect_navigation():
        page.click("text=Records of every run of this session")
    tab.ready()

    rows = page.locator("#session-records > li.record").evaluate_all(
        "items => items.map(item => [item.dataset.run, item.dataset.type, item.dataset.id])"
    )
    order = [first.run_id, second.run_id]
    assert rows == [
        [first.run_id, "run_started", "1"],
        [second.run_id, "run_started", "1"],
        *[
            [run_id, kind, str(number + 1)]
            for number in range(1, 4)
            for run_id, kind in zip(order, ("planner_note", "usage"), strict=True)
        ],
    ]
    link = page.locator(f"#session-records a.record-run >> text={second.run_id}").first
    assert link.get_attribute("href") == f"/console/run?run_id={second.run_id}"
    tab.screenshot("session-timeline")
    with page.expect_navigation():  # a record's ID opens its run's timeline at it
        page.locator(f"#session-records li[data-run='{second.run_id}'] a.record-id").nth(2).click()
    tab.ready()
    assert record_ids(tab)[0] == 3
    assert page.url.endswith(f"run_id={second.run_id}&records_cursor=2#record-3")
    page.go_back()
    tab.ready()

    page.click("#session-timeline .type-filter summary")
    page.check("#session-timeline input[name=type][value=usage]")
    with page.expect_navigation():
        page.click("#session-filter")
    tab.ready()
    rows = page.locator("#session-records > li.record").evaluate_all(
        "items => items.map(item => [item.dataset.run, item.dataset.type])"
    )
    assert rows == [[second.run_id, "usage"]] * 3
    assert_stayed_home(tab, 401, 401)  # before the token: a fragment and whoami


# --- over plain HTTP (no browser): what the fragments read and link -------------------


def fragment_text(world: World, path: str) -> str:
    response = httpx.get(
        world.server.base_url + path, headers={"Authorization": f"Bearer {world.reader}"}
    )
    assert response.status_code == 200, response.text
    return response.text


def shown_ids(html: str) -> list[int]:
    return [int(found) for found in re.findall(r'<li class="record"[^>]* id="record-(\d+)"', html)]


def test_a_long_finished_runs_meta_shows_its_outcome_and_record_count(
    world: World, store: HttpStore, long_run: RunStart
) -> None:
    path = f"/console/fragments/run/transcript?run_id={long_run.run_id}"
    assert "data-transcript-tail=" in fragment_text(world, path)  # running: followed
    store.record_run_terminal(
        long_run.run_id, RunStatus.FAILED, terminal_record(long_run, RunStatus.FAILED)
    )
    meta = fragment_text(world, f"/console/fragments/run?run_id={long_run.run_id}")
    # The outcome is in record 251, far beyond the first page of records.
    assert "<strong>timeout</strong>: tool timed out" in meta
    assert f'<dd class="run-record-count">{LONG_RUN_RECORDS + 1}</dd>' in meta
    records = fragment_text(
        world, f"/console/fragments/run/records?run_id={long_run.run_id}&latest=1"
    )
    assert shown_ids(records) == list(range(LONG_RUN_RECORDS - 98, LONG_RUN_RECORDS + 2))
    assert "data-tail=" not in records  # finished: nothing to follow
    finished = fragment_text(world, path)
    assert "data-transcript-tail=" not in finished
    assert "the run finished (failed)" in finished


def test_a_filtered_page_reads_a_bounded_number_of_records_and_links_on_from_there(
    world: World, store: HttpStore, session_id: str
) -> None:
    run = start(store, session_id)
    notes = [note(run, number) for number in range(2, 1202)]  # 1,201 records, one type
    for offset in range(0, len(notes), 1000):
        store.append_run_records(run.run_id, notes[offset : offset + 1000])
    store.append_run_record(note(run, 1202, type="usage"))
    base = f"/console/fragments/run/records?run_id={run.run_id}&type=usage"
    first = fragment_text(world, base)
    assert shown_ids(first) == []  # 1,000 records read, none of the type
    assert "among the 1000 records this page read" in first
    (following,) = re.findall(r'<a href="([^"]+)" rel="next">Next page</a>', first)
    assert "records_cursor=1000" in following
    second = fragment_text(world, f"{base}&cursor=1000")
    assert shown_ids(second) == [1202]
    assert "Next page" not in second
    older = fragment_text(world, f"{base}&order=desc")
    assert shown_ids(older) == [1202]
    (following,) = re.findall(r'<a href="([^"]+)" rel="next">Older records</a>', older)
    assert "records_before=203" in following  # ten windows of 100 read backward
    assert shown_ids(fragment_text(world, f"{base}&order=desc&before=203")) == []
