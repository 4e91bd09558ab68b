"""The console's shell in chromium (issue 33): the token bar says whose token it is (from
``GET /v1/whoami``) and keeps only a token the API accepts; actions a role may not take are
hidden; ending a session asks first; the jump box; the favicon; the dark scheme; 420 px."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from runtime_store_client import SessionStatus
from tests.console.conftest import Tab, World, open_tab
from tests.console.test_console_browser import assert_stayed_home, text
from tests.contract.builders import T0, canceled_record, run_start, started_record

NARROW = {"width": 420, "height": 860}


@pytest.fixture(scope="module")
def shell_world(world: World) -> World:
    """This module's own objects in the shared world: a session to end, and an ID that is
    both a session and a run."""
    with world.store() as store:
        store.create_session("shell-end", T0)
        store.create_session("shell-both", T0)
        both = run_start(run_id="shell-both", agent_id="planner", session_id="shell-both")
        store.start_root_run(both, started_record(both), canceled_record(both))
    return world


@pytest.fixture
def narrow(browser: Any, shell_world: World) -> Iterator[Tab]:
    opened = open_tab(browser, shell_world.server.base_url)
    opened.page.set_viewport_size(NARROW)
    yield opened
    opened.page.context.close()


def whoami_done(tab: Tab) -> None:
    tab.page.wait_for_selector("body[data-whoami=done]", timeout=10_000)


def kept_token(tab: Tab) -> Any:
    return tab.page.evaluate("sessionStorage.getItem('runtime-store-console-token')")


def test_the_token_bar_says_tokens_are_required_then_whose_token_it_is(
    tab: Tab, shell_world: World
) -> None:
    page = tab.page
    tab.open("/console/sessions")
    whoami_done(tab)
    assert text(tab, "#token-state") == "Tokens are required: paste one"
    assert not page.is_visible("nav >> text=Webhooks")  # nothing allowed without a token

    tab.use_token(shell_world.admin)
    whoami_done(tab)
    assert text(tab, "#token-state").startswith("console-admin · admin")
    assert page.is_visible("nav >> text=Webhooks")
    tab.screenshot("shell-admin")

    with page.expect_navigation():
        page.click("#token-forget")
    tab.ready()
    whoami_done(tab)
    assert kept_token(tab) is None
    tab.use_token(shell_world.reader)
    whoami_done(tab)
    assert text(tab, "#token-state").startswith("console-reader · reader")
    assert not page.is_visible("nav >> text=Webhooks")
    tab.screenshot("shell-reader")
    # The sessions list before the token and whoami, then after Forget: the API's 401s.
    assert_stayed_home(tab, 401, 401, 401, 401)


def test_a_refused_token_is_not_kept_and_the_bar_says_why(tab: Tab, shell_world: World) -> None:
    page = tab.page
    tab.open("/console/sessions")
    whoami_done(tab)
    page.fill("#token-input", "rst_" + "x" * 43)
    page.click("text=Use token")
    page.wait_for_selector("#token-state[data-mode=refused]")
    assert "Token not kept" in text(tab, "#token-state")
    assert "unauthenticated" in text(tab, "#token-state")
    assert kept_token(tab) is None
    assert urlsplit(page.url).path == "/console/sessions"  # no reload
    tab.screenshot("shell-token-refused")
    assert_stayed_home(tab, 401, 401, 401)


def test_a_reader_sees_no_end_purge_or_export(tab: Tab, shell_world: World) -> None:
    page = tab.page
    tab.open("/console/sessions")
    tab.use_token(shell_world.reader)
    tab.open("/console/session?session_id=chat-ops")
    whoami_done(tab)
    assert page.locator("[data-action=end]").count() == 1  # in the page, not shown
    for action in ("end", "export"):
        assert not page.is_visible(f"[data-action={action}]"), action
    tab.open("/console/session?session_id=chat-keep")
    whoami_done(tab)
    assert page.locator("[data-action=purge]").count() == 1
    assert not page.is_visible("[data-action=purge]")
    tab.screenshot("shell-reader-session")
    assert_stayed_home(tab, 401, 401)


def test_ending_a_session_asks_first_and_cancel_changes_nothing(
    tab: Tab, shell_world: World
) -> None:
    page = tab.page
    tab.open("/console/sessions")
    tab.use_token(shell_world.admin)
    tab.open("/console/session?session_id=shell-end")
    page.click("text=End session")
    page.wait_for_selector("#end-dialog[open]")
    tab.screenshot("shell-end-confirmation")
    page.click("#end-dialog >> text=Cancel")
    page.wait_for_selector("#end-dialog:not([open])", state="attached")
    with shell_world.store() as store:
        assert store.load_session("shell-end").status is SessionStatus.ACTIVE

    page.click("text=End session")
    page.click("#end-confirm")
    page.wait_for_selector("#notice:has-text('Session shell-end ended.')")
    with shell_world.store() as store:
        assert store.load_session("shell-end").status is SessionStatus.ENDED
    assert_stayed_home(tab, 401, 401)


def test_the_jump_box_goes_to_a_run_a_session_both_or_says_not_found(
    tab: Tab, shell_world: World
) -> None:
    page = tab.page
    tab.open("/console/sessions")
    tab.use_token(shell_world.admin)

    page.fill("#jump-input", "run-failed")
    with page.expect_navigation():
        page.press("#jump-input", "Enter")
    tab.ready()
    assert urlsplit(page.url).path == "/console/run"
    assert parse_qs(urlsplit(page.url).query) == {"run_id": ["run-failed"]}

    page.fill("#jump-input", "chat-ops")
    with page.expect_navigation():
        page.click("#jump-form button[type=submit]")
    tab.ready()
    assert parse_qs(urlsplit(page.url).query) == {"session_id": ["chat-ops"]}

    here = page.url
    page.fill("#jump-input", "no-such-id")
    page.click("#jump-form button[type=submit]")
    page.wait_for_selector("#jump-result[data-result=not-found]")
    assert text(tab, "#jump-result") == "No session or run has the ID no-such-id."
    assert page.url == here
    tab.screenshot("shell-jump-not-found")

    page.fill("#jump-input", "shell-both")
    page.click("#jump-form button[type=submit]")
    page.wait_for_selector("#jump-result a[data-kind=run]")
    assert "shell-both is both" in text(tab, "#jump-result")
    with page.expect_navigation():
        page.click("#jump-result a[data-kind=session]")
    tab.ready()
    assert parse_qs(urlsplit(page.url).query) == {"session_id": ["shell-both"]}
    assert_stayed_home(tab, 401, 401)


def test_the_jump_route_without_script_redirects_or_asks_for_a_token(shell_world: World) -> None:
    base = shell_world.server.base_url
    bearer = {"Authorization": f"Bearer {shell_world.reader}"}
    found = httpx.get(f"{base}/console/go?id=run-plan", headers=bearer)
    assert found.status_code == 303
    assert found.headers["location"] == "/console/run?run_id=run-plan"
    missing = httpx.get(f"{base}/console/go?id=nothing-here", headers=bearer)
    assert missing.status_code == 404
    assert "No session or run has the ID" in missing.text
    anonymous = httpx.get(f"{base}/console/go?id=run-plan")
    assert anonymous.status_code == 401
    assert 'data-problem="unauthenticated"' in anonymous.text


def test_the_favicon_answers(tab: Tab, shell_world: World) -> None:
    base = shell_world.server.base_url
    icon = httpx.get(f"{base}/favicon.ico")
    assert icon.status_code == 200
    assert icon.headers["content-type"].startswith("image/svg+xml")
    assert icon.text.startswith("<svg")
    tab.open("/console/sessions")
    assert tab.page.get_attribute("link[rel=icon]", "href").startswith(
        "/console/static/favicon.svg"
    )
    # The page's icon loads as an image under the page's policy (img-src 'self'). (Chromium
    # under Playwright's request routing fails any request for /favicon.ico itself: that
    # one is checked over plain HTTP above.)
    loaded = tab.page.evaluate(
        """() => new Promise((done) => {
            const icon = new Image();
            icon.onload = () => done(icon.naturalWidth);
            icon.onerror = () => done(-1);
            icon.src = document.querySelector("link[rel=icon]").href;
        })"""
    )
    assert loaded == 32
    assert_stayed_home(tab, 401, 401)


def _luminance(css_color: str) -> float:
    red, green, blue = (
        int(part) for part in css_color[css_color.index("(") + 1 : -1].split(",")[:3]
    )
    return (0.2126 * red + 0.7152 * green + 0.0722 * blue) / 255


def test_the_dark_scheme_follows_the_system(tab: Tab, shell_world: World) -> None:
    tab.page.emulate_media(color_scheme="dark")
    tab.open("/console/sessions")
    tab.use_token(shell_world.admin)
    background = tab.page.evaluate("getComputedStyle(document.documentElement).backgroundColor")
    foreground = tab.page.evaluate("getComputedStyle(document.documentElement).color")
    assert _luminance(background) < 0.15, background
    assert _luminance(foreground) > 0.7, foreground
    tab.screenshot("shell-dark")
    tab.page.emulate_media(color_scheme="light")
    light = tab.page.evaluate("getComputedStyle(document.documentElement).backgroundColor")
    assert _luminance(light) > 0.9, light


@pytest.mark.parametrize(
    "path",
    [
        "/console/sessions",
        "/console/runs",
        "/console/session?session_id=chat-ops",
        "/console/run?run_id=run-failed",
        "/console/webhooks",
    ],
)
def test_nothing_overflows_a_420_px_screen(narrow: Tab, shell_world: World, path: str) -> None:
    narrow.page.goto(narrow.base_url + "/console/sessions")
    narrow.page.evaluate(
        "token => sessionStorage.setItem('runtime-store-console-token', token)", shell_world.admin
    )
    narrow.open(path)
    whoami_done(narrow)
    width = narrow.page.evaluate("document.documentElement.scrollWidth")
    assert width <= NARROW["width"], (path, width)
    name = urlsplit(path).path.rsplit("/", 1)[-1]
    narrow.screenshot(f"shell-420-{name}")


def test_the_bars_answer_is_the_apis_own(shell_world: World) -> None:
    """What the bar shows is ``GET /v1/whoami`` as any client reads it."""
    answer = httpx.get(
        f"{shell_world.server.base_url}/v1/whoami",
        headers={"Authorization": f"Bearer {shell_world.reader}"},
    ).json()
    assert answer == {
        "mode": "tokens",
        "name": "console-reader",
        "role": "reader",
        "permissions": ["read"],
    }
