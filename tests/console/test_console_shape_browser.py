"""The run page's shape in Chromium (issue 48): the run tree, the waterfall of records with
gaps and durations, a suspended run's checkpoint summary, the run's admin actions (each
confirmed first), bookmarked filtered views, and the page at 420 px.

The shaped runs come from ``shape_seed`` (fresh IDs per test) in the console world.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from runtime_store_client import HttpStore, RunStatus, SessionStatus
from tests.console.conftest import Tab, World, open_tab
from tests.console.shape_seed import Shape, seed_shape
from tests.console.test_console_browser import assert_stayed_home, text
from tests.contract.builders import (
    T0,
    canceled_record,
    run_start,
    started_record,
    terminal_record,
    uid,
)


@pytest.fixture
def store(world: World) -> Iterator[HttpStore]:
    with world.store() as opened:
        yield opened


@pytest.fixture
def shape(store: HttpStore) -> Shape:
    return seed_shape(store, uid("shape") + "-", T0)


def signed_in(tab: Tab, world: World, path: str) -> None:
    tab.open("/console/sessions")
    tab.use_token(world.admin)
    tab.open(path)


def roles(tab: Tab) -> list[list[str]]:
    """Each tree node as [role, run ID, status]."""
    found: list[list[str]] = tab.page.locator("#run-tree li.tree-node").evaluate_all(
        """items => items.map(item => [
            item.dataset.role,
            item.querySelector('[data-run-id]').dataset.runId,
            item.querySelector('.status') ? item.querySelector('.status').textContent : '',
        ])"""
    )
    return found


def test_the_tree_shows_ancestors_continuations_and_children(
    tab: Tab, world: World, shape: Shape
) -> None:
    page = tab.page
    lookup, summarise = shape.children
    signed_in(tab, world, f"/console/run?run_id={shape.current.run_id}")
    assert roles(tab) == [
        ["root", shape.root.run_id, "running"],
        ["predecessor", shape.first.run_id, "suspended"],
        ["current", shape.current.run_id, "suspended"],
        ["child", summarise.run_id, "running"],  # newest first
        ["child", lookup.run_id, "completed"],
    ]
    tab.screenshot("shape-tree")
    with page.expect_navigation():  # each node opens its run page
        page.click(f"#run-tree a[data-run-id='{shape.first.run_id}']")
    tab.ready()
    assert roles(tab) == [
        ["root", shape.root.run_id, "running"],
        ["current", shape.first.run_id, "suspended"],
        ["successor", shape.current.run_id, "suspended"],
    ]
    assert "No child runs." in text(tab, "#children")
    tab.open(f"/console/run?run_id={lookup.run_id}")  # a grandchild: the chain up to the root
    assert roles(tab)[:3] == [
        ["root", shape.root.run_id, "running"],
        ["ancestor", shape.current.run_id, "suspended"],
        ["current", lookup.run_id, "completed"],
    ]
    assert_stayed_home(tab, 401, 401)  # before the token: a fragment and whoami


def test_the_timeline_shows_offsets_gaps_and_paired_durations(
    tab: Tab, world: World, shape: Shape
) -> None:
    page = tab.page
    signed_in(tab, world, f"/console/run?run_id={shape.current.run_id}")
    rows = page.locator("#waterfall > li.step").evaluate_all(
        """items => items.map(item => [
            item.dataset.id, item.dataset.type, item.dataset.atMs,
            item.dataset.gapMs || null, item.dataset.durationMs || null,
            item.classList.contains('long-gap'),
        ])"""
    )
    assert rows[0] == ["1", "run_started", "0", None, "41000", False]
    assert rows[2] == ["3", "tool_call_scheduled", "500", "300", "1800", False]
    assert rows[3] == ["4", "tool_result_received", "2300", "1800", "1800", False]
    assert rows[4][4] == "37500"  # fetch_order's call: 37.5 s to its result
    assert rows[7] == ["8", "tool_result_received", "40500", "37300", "37500", True]
    assert [row[5] for row in rows].count(True) == 1  # the one long gap, marked
    assert "Long gap: 37.3 s" in text(tab, "#waterfall li.long-gap")
    assert "took 1.80 s" in text(tab, "#waterfall li[data-id='3']")
    assert "1 long gap" in text(tab, "#timeline .waterfall-summary")
    assert page.locator("#waterfall svg.bar rect.span").count() == 3  # run, two tool calls
    tab.screenshot("shape-timeline")
    with page.expect_navigation():  # a step opens the records list at its record
        page.click("#waterfall li[data-id='8'] a.step-id")
    tab.ready()
    assert page.url.endswith("records_cursor=7#record-8")
    assert page.locator("#record-8[data-type=tool_result_received]").count() == 1
    assert_stayed_home(tab, 401, 401)


def test_a_suspended_runs_checkpoint_summary_links_the_record_that_suspended_it(
    tab: Tab, world: World, shape: Shape
) -> None:
    page = tab.page
    signed_in(tab, world, f"/console/run?run_id={shape.current.run_id}")
    summary = text(tab, "#checkpoint")
    assert "Suspended: what it waits for" in summary
    assert text(tab, "#checkpoint .checkpoint-id") == "cp-research-2"
    assert page.get_attribute("#checkpoint", "data-size") == "471"
    preview = text(tab, "#checkpoint .checkpoint-preview")
    assert preview.startswith('{"pending":["approve_purchase"]')
    assert len(preview) == 240  # bounded
    assert "the first 240 of 471 bytes" in summary
    with page.expect_navigation():
        page.click("#checkpoint a.suspended-record")
    tab.ready()
    assert page.locator("#record-10[data-type=run_suspended]").count() == 1
    tab.open(f"/console/run?run_id={shape.first.run_id}")  # binary bytes: hexadecimal
    assert page.get_attribute("#checkpoint .checkpoint-preview", "data-kind") == "hex"
    assert text(tab, "#checkpoint .checkpoint-preview").startswith("00 01 20 62")
    assert_stayed_home(tab, 401, 401)


def running_run(store: HttpStore, labels: dict[str, str] | None = None) -> Any:
    session_id = uid("chat")
    store.create_session(session_id, T0)
    run = run_start(run_id=uid("run"), agent_id="worker", session_id=session_id, labels=labels)
    store.start_root_run(run, started_record(run), canceled_record(run))
    return run


def test_cancel_asks_first_and_a_confirmed_cancel_records_a_valid_intent_then_ends_it(
    tab: Tab, world: World, store: HttpStore
) -> None:
    page = tab.page
    run = running_run(store, {"team": "ops"})
    signed_in(tab, world, f"/console/run?run_id={run.run_id}")
    page.click("#meta button[data-action=run-cancel]")
    page.wait_for_selector("#run-cancel-dialog[open]")
    tab.screenshot("run-cancel-confirmation")
    page.click("#run-cancel-dialog button[value=cancel]")  # not confirmed: nothing sent
    page.wait_for_selector("#run-cancel-dialog", state="hidden")
    assert store.load_run(run.run_id).cancellation_reason == ""
    assert len(store.list_run_records(run.run_id).records) == 1

    page.click("#meta button[data-action=run-cancel]")
    page.click("#run-cancel-confirm")
    page.wait_for_selector("#notice:has-text('Cancellation of run')")
    meta = store.load_run(run.run_id)
    assert (meta.status, meta.cancellation_reason) == (RunStatus.RUNNING, "user_requested")
    intent = store.list_run_records(run.run_id).records[-1]
    assert intent.type == "runtime.cancellation_intent"
    assert json.loads(intent.payload) == {"reason": "user_requested"}

    page.wait_for_selector("#meta button[data-action=run-cancel]:has-text('Finish as canceled')")
    page.click("#meta button[data-action=run-cancel]")
    assert page.is_checked("#run-cancel-finish")
    page.click("#run-cancel-confirm")
    page.wait_for_selector("#run-meta[data-status=canceled]", timeout=10_000)
    final = store.list_run_records(run.run_id).records[-1]
    assert json.loads(final.payload) == {
        "status": "canceled",
        "phase": "canceled",
        "cancellation": {"reason": "user_requested"},
        "labels": {"team": "ops"},
    }
    assert page.locator("#meta button[data-action=run-cancel]").count() == 0
    assert_stayed_home(tab, 401, 401)


def test_a_repair_the_api_declines_shows_its_answer_and_the_session_ends_from_the_run(
    tab: Tab, world: World, store: HttpStore
) -> None:
    page = tab.page
    run = running_run(store)
    signed_in(tab, world, f"/console/run?run_id={run.run_id}")
    page.click("#meta button[data-action=run-repair]")
    page.wait_for_selector("#run-repair-dialog[open]")
    store.record_run_terminal(  # another writer finishes it while the dialog is open
        run.run_id, RunStatus.COMPLETED, terminal_record(run, RunStatus.COMPLETED)
    )
    page.select_option("#run-repair-status", "failed")
    page.click("#run-repair-confirm")
    page.wait_for_selector("#action-result:has-text('already completed (different_terminal)')")
    assert store.load_run(run.run_id).status is RunStatus.COMPLETED

    page.click("#meta button[data-action=end]")
    page.wait_for_selector("#end-dialog[open]")
    assert run.session_id in text(tab, "#end-dialog")
    page.click("#end-confirm")
    page.wait_for_selector(f"#notice:has-text('Session {run.session_id} ended.')")
    assert store.load_session(run.session_id).status is SessionStatus.ENDED
    page.wait_for_selector("#meta button[data-action=purge]")
    assert_stayed_home(tab, 401, 401)


def test_a_reader_sees_no_run_action_and_the_api_refuses_one_anyway(
    tab: Tab, world: World, store: HttpStore
) -> None:
    page = tab.page
    run = running_run(store)
    tab.open("/console/sessions")
    tab.use_token(world.reader)
    tab.open(f"/console/run?run_id={run.run_id}")
    page.wait_for_selector("body[data-whoami=done]")
    assert not page.is_visible("#meta button[data-action=run-cancel]")
    page.evaluate("document.body.dataset.may = 'read write admin'")  # shown anyway
    page.click("#meta button[data-action=run-cancel]")
    page.click("#run-cancel-confirm")
    page.wait_for_selector("#action-result [data-problem=permission_denied]")
    assert store.load_run(run.run_id).cancellation_reason == ""
    assert_stayed_home(tab, 401, 401, 403)


def test_bookmarked_filtered_urls_reproduce_the_view(
    tab: Tab, browser: Any, world: World, shape: Shape
) -> None:
    page = tab.page
    signed_in(tab, world, "/console/runs")
    page.fill("#f-session", shape.session_id)
    page.check("input[name=status][value=suspended]")
    with page.expect_navigation():
        page.click("form.filters button[type=submit]")
    tab.ready()
    runs_url = page.url
    assert "status=suspended" in runs_url
    assert f"session_id={shape.session_id}" in runs_url
    listed = sorted(
        page.locator("#runs tr[data-run-id]").evaluate_all(
            "rows => rows.map(row => row.dataset.runId)"
        )
    )
    assert listed == sorted([shape.first.run_id, shape.current.run_id])

    tab.open(f"/console/run?run_id={shape.current.run_id}")
    page.click("#records .type-filter summary")
    page.check("#records input[name=records_type][value=tool_result_received]")
    with page.expect_navigation():
        page.click("#records-filter")
    tab.ready()
    with page.expect_navigation():
        page.click("#records >> text=newest first")
    tab.ready()
    run_url = page.url
    assert "records_type=tool_result_received" in run_url
    assert "records_order=desc" in run_url
    shown = page.locator("#timeline > li.record").evaluate_all("i => i.map(x => x.id)")
    assert shown == ["record-8", "record-4"]

    other = open_tab(browser, world.server.base_url)  # the bookmark, in a new tab
    try:
        other.open("/console/sessions")
        other.use_token(world.admin)
        other.open(runs_url.removeprefix(world.server.base_url))
        again = other.page.locator("#runs tr[data-run-id]").evaluate_all(
            "rows => rows.map(row => row.dataset.runId)"
        )
        assert sorted(again) == listed
        assert other.page.is_checked("input[name=status][value=suspended]")
        assert other.page.input_value("#f-session") == shape.session_id
        other.open(run_url.removeprefix(world.server.base_url))
        again = other.page.locator("#timeline > li.record").evaluate_all("i => i.map(x => x.id)")
        assert again == shown
        assert other.page.is_checked("#records input[value=tool_result_received]")
    finally:
        other.page.context.close()


def test_the_run_page_reads_at_420_px_with_no_sideways_scroll(
    browser: Any, world: World, shape: Shape
) -> None:
    context = browser.new_context(viewport={"width": 420, "height": 900})
    try:
        tab = Tab(context.new_page(), world.server.base_url)
        tab.open("/console/sessions")
        tab.use_token(world.admin)
        tab.open(f"/console/run?run_id={shape.current.run_id}")
        page = tab.page
        page.wait_for_selector("#waterfall li.step")
        widths = page.evaluate(
            "[document.documentElement.scrollWidth, document.body.scrollWidth, innerWidth]"
        )
        assert widths[0] <= 420, widths
        assert widths[1] <= 420, widths
        assert page.locator("#waterfall svg.bar").first.bounding_box()["width"] <= 420
        tab.screenshot("shape-narrow")
    finally:
        context.close()


def test_a_long_gap_is_relative_to_the_run_and_the_first_of_a_page_has_its_gap(
    world: World, store: HttpStore
) -> None:
    import httpx

    from tests.contract.builders import dumps, record

    run = running_run(store)
    notes = [
        record(
            run,
            event_key=f"n-{number}",
            payload=dumps({"n": number}),
            timestamp=T0 + timedelta(seconds=number),
        )
        for number in range(1, 120)
    ]
    store.append_run_records(run.run_id, notes)
    html = httpx.get(
        f"{world.server.base_url}/console/fragments/run/timeline",
        params={"run_id": run.run_id, "timeline_cursor": "100"},
        headers={"Authorization": f"Bearer {world.reader}"},
    ).text
    assert 'data-id="101" data-type="planner_note" data-at-ms="100000" data-gap-ms="1000"' in html
    assert 'data-long-gaps="0"' in html  # 1 s steps in a 2 min run: none long
    assert "First page" in html
