"""The console's lists as an operator lives in them (issue 33), in Debian's chromium: status
counts that filter, relative times with the exact UTC time on hover, run durations (a
running run's ticking) and record counts; plus the rules behind them without a browser.

The module seeds a session of its own in the shared world (``lists-…`` IDs, started
minutes ago so the relative times and durations are known), never touching ``seed()``.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from app.console.lists import status_chips
from app.console.times import duration, exact, relative
from runtime_store_client import RunStatus, StatusCounts
from tests.console.conftest import Tab, World
from tests.console.test_console_browser import assert_stayed_home, text
from tests.contract.builders import (
    canceled_record,
    record,
    run_start,
    started_record,
    terminal_record,
)

#: ``2026-12-02 14:03:05.123 UTC``: the hover text of every time.
EXACT_UTC = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC$")


@dataclass(frozen=True)
class Lists:
    session_id: str
    running: str
    done: str


def _ms(value: datetime) -> datetime:
    return value.replace(microsecond=value.microsecond // 1000 * 1000)


@pytest.fixture(scope="module")
def lists(world: World) -> Lists:
    """A session started 10 minutes ago: a completed run with 1 record of its own plus its
    lifecycle ones, and a run running for 2 minutes with 3 more."""
    tag = uuid.uuid4().hex[:8]
    now = _ms(datetime.now(UTC))
    session_id = f"lists-{tag}"
    with world.store() as store:
        store.create_session(session_id, now - timedelta(minutes=10))
        done = run_start(
            run_id=f"lists-done-{tag}",
            agent_id="lister",
            session_id=session_id,
            started_at=now - timedelta(minutes=9),
        )
        store.start_root_run(done, started_record(done), canceled_record(done))
        store.append_run_record(record(done, timestamp=now - timedelta(minutes=9)))
        store.record_run_terminal(
            done.run_id, RunStatus.COMPLETED, terminal_record(done, RunStatus.COMPLETED)
        )
        running = run_start(
            run_id=f"lists-running-{tag}",
            agent_id="lister",
            session_id=session_id,
            started_at=now - timedelta(minutes=2),
        )
        store.start_root_run(running, started_record(running), canceled_record(running))
        for _ in range(3):
            store.append_run_record(record(running, timestamp=now))
    return Lists(session_id, running.run_id, done.run_id)


# --- without a browser ------------------------------------------------------------------


def test_a_capped_count_shows_as_at_least_and_the_chosen_status_is_current() -> None:
    counts = StatusCounts(counts={"running": 5, "completed": 2}, limit=5)
    chips = status_chips(counts, ["running", "completed"], ["completed"], lambda s: f"?s={s}")
    assert [(c.status, c.count, c.href, c.current) for c in chips] == [
        ("", "7+", "?s=", False),
        ("running", "5+", "?s=running", False),
        ("completed", "2", "?s=completed", True),
    ]
    assert status_chips(counts, ["completed"], [], str)[0].current  # none chosen: "all"


def test_times_read_as_an_operator_says_them() -> None:
    assert [relative(ms) for ms in (0, 4_999, 42_000, 185_000, 7_380_000, -185_000)] == [
        "just now",
        "just now",
        "42 s ago",
        "3 min ago",
        "2 h ago",
        "in 3 min",
    ]
    assert [duration(ms) for ms in (850, 42_000, 185_000, 3_600_000, 7_380_000)] == [
        "850 ms",
        "42 s",
        "3 min 5 s",
        "1 h",
        "2 h 3 min",
    ]
    assert exact(datetime(2026, 12, 2, 14, 3, 5, 123_000, tzinfo=UTC)) == (
        "2026-12-02 14:03:05.123 UTC"
    )


def test_the_fragments_carry_counts_record_counts_and_times(world: World, lists: Lists) -> None:
    bearer = {"Authorization": f"Bearer {world.reader}"}
    base = f"{world.server.base_url}/console/fragments"
    runs = httpx.get(f"{base}/runs?session_id={lists.session_id}", headers=bearer)
    assert runs.status_code == 200
    html = runs.text
    assert re.search(
        r'data-status="running"[^>]*><span class="chip-name">running</span> '
        r'<span class="chip-count">1</span>',
        html,
    )
    assert re.search(r'data-status=""[^>]*aria-current="true"', html)  # no status filter
    assert re.search(rf'data-run-id="{lists.running}".*?class="num records">4<', html, re.S)
    assert re.search(rf'data-run-id="{lists.done}".*?class="num records">3<', html, re.S)
    session = httpx.get(f"{base}/session?session_id={lists.session_id}", headers=bearer).text
    assert '<dd class="records">7</dd>' in session
    assert f"/console/runs?session_id={lists.session_id}&amp;status=completed" in session
    sessions = httpx.get(f"{base}/sessions?status=ended", headers=bearer).text
    assert re.search(r'data-status="ended"[^>]*aria-current="true"', sessions)
    assert re.search(r'<time datetime="[^"]+Z" title="[^"]+ UTC" data-relative>', sessions)


# --- in the browser ---------------------------------------------------------------------


def sign_in(tab: Tab, token: str, path: str) -> None:
    """Open ``path`` (refused: no token yet), then use ``token`` there (the page reloads)."""
    tab.open(path)
    tab.use_token(token)


def test_clicking_a_status_count_filters_the_list_keeping_the_other_filters(
    tab: Tab, world: World, lists: Lists
) -> None:
    page = tab.page
    sign_in(tab, world.admin, f"/console/runs?session_id={lists.session_id}")
    chips = page.locator("#runs .status-counts")
    assert chips.locator("[data-status=running] .chip-count").inner_text() == "1"
    assert chips.locator("[data-status=completed] .chip-count").inner_text() == "1"
    assert chips.locator("[data-status=failed] .chip-count").inner_text() == "0"
    assert chips.locator("[data-status=''] .chip-count").inner_text() == "2"
    tab.screenshot("lists-runs-counts")
    with page.expect_navigation():
        chips.locator("[data-status=completed]").click()
    tab.ready()
    assert "status=completed" in page.url
    assert f"session_id={lists.session_id}" in page.url
    rows = text(tab, "#runs tbody")
    assert lists.done in rows
    assert lists.running not in rows
    current = page.locator("#runs .status-counts [aria-current=true]")
    assert current.get_attribute("data-status") == "completed"
    assert_stayed_home(tab, 401, 401)  # before the token: the first load and whoami


def test_times_are_relative_with_the_exact_utc_time_on_hover_and_durations_tick(
    tab: Tab, world: World, lists: Lists
) -> None:
    page = tab.page
    sign_in(tab, world.admin, f"/console/session?session_id={lists.session_id}")
    created = page.locator("#session dl.meta time[data-relative]").first
    assert created.inner_text() == "10 min ago"
    assert EXACT_UTC.match(created.get_attribute("title") or "")
    assert (created.get_attribute("datetime") or "").endswith("Z")

    running = page.locator(f"tr[data-run-id='{lists.running}']")
    assert running.locator("time[data-relative]").inner_text() == "2 min ago"
    ticking = running.locator(".duration")
    first = ticking.inner_text()
    assert first.startswith("2 min ")
    page.wait_for_function(
        "([node, before]) => node.textContent !== before",
        arg=[ticking.element_handle(), first],
        timeout=5_000,
    )  # the browser keeps it running: a second later it reads more
    with world.store() as store:
        done = store.load_run(lists.done)
    finished = page.locator(f"tr[data-run-id='{lists.done}'] .duration")
    expected = duration(int((done.updated_at - done.started_at).total_seconds() * 1000))
    assert finished.inner_text() == expected
    assert finished.get_attribute("data-ticking") is None
    tab.screenshot("lists-session-times")
    assert_stayed_home(tab, 401, 401)  # before the token: the first load and whoami


def test_record_counts_show_on_the_runs_table_and_the_session(
    tab: Tab, world: World, lists: Lists
) -> None:
    page = tab.page
    sign_in(tab, world.reader, f"/console/session?session_id={lists.session_id}")
    with world.store() as store:
        counts = store.count_records(
            run_ids=[lists.running, lists.done], session_ids=[lists.session_id]
        )
    # run_started + 3 appended; run_started + 1 + run_completed; the session: all of them.
    assert counts.runs == {lists.running: 4, lists.done: 3}
    assert counts.sessions == {lists.session_id: 7}
    assert page.locator(f"tr[data-run-id='{lists.running}'] td.records").inner_text() == "4"
    assert page.locator(f"tr[data-run-id='{lists.done}'] td.records").inner_text() == "3"
    assert page.locator("#session dd.records").inner_text() == "7"
    tab.open(f"/console/runs?agent_id=lister&session_id={lists.session_id}")
    assert page.locator(f"tr[data-run-id='{lists.running}'] td.records").inner_text() == "4"
    assert_stayed_home(tab, 401, 401)  # before the token: the first load and whoami


def test_a_list_at_420_px_scrolls_its_table_and_keeps_ids_whole(
    tab: Tab, world: World, lists: Lists
) -> None:
    page = tab.page
    page.set_viewport_size({"width": 420, "height": 860})
    sign_in(tab, world.reader, f"/console/runs?session_id={lists.session_id}")
    table = page.locator("#runs .table-scroll")
    assert table.count() == 1
    link = page.locator(f"tr[data-run-id='{lists.running}'] td.id a").first
    lines = link.evaluate("node => node.getClientRects().length")
    assert lines == 1, "a run ID broke across lines"
    badge = page.locator(f"tr[data-run-id='{lists.running}'] .status")
    assert badge.evaluate("node => node.getClientRects().length") == 1, "a status broke"
    box = table.bounding_box()
    assert box is not None
    assert box["width"] <= 420
    tab.screenshot("lists-runs-420px")
    assert_stayed_home(tab, 401, 401)  # before the token: the first load and whoami
