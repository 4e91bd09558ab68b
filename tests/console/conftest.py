"""The console's world: a live server with tokens on, seeded through the real client, and
Debian's chromium driven by Playwright, able to reach nothing but the server.

The browser runs with the docs test's isolation flags (no host resolves but 127.0.0.1, and
anything else goes to a dead proxy) and, on top, every request a page makes is recorded
and any request to another origin is aborted, so a test can assert the whole list.
Screenshots go to ``test-artifacts/console/`` (git-ignored).

CI must run this: without ``/usr/bin/chromium`` the tests fail, unless
``RUNTIME_STORE_ALLOW_NO_BROWSER=1`` lets them skip.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from app.domain.tokens import Role
from app.storage import create_engine, upgrade_schema
from app.storage.access.tokens import Tokens
from runtime_store_client import HttpStore, RunStatus
from runtime_store_client.transcript import (
    DocumentFormat,
    DocumentPart,
    ImageFormat,
    ImagePart,
    Message,
    TextPart,
    ThinkingPart,
    ToolResultPart,
    ToolUsePart,
    encode_messages,
)
from runtime_store_client.transcript import (
    Role as MessageRole,
)
from tests.api.test_docs_browser import NETWORK_ISOLATION_FLAGS
from tests.conftest import LiveServer, start_server, stop_server
from tests.contract.builders import (
    T0,
    canceled_record,
    checkpoint,
    dumps,
    link_record,
    record,
    run_start,
    started_record,
    suspended_record,
    terminal_record,
)

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "console"
TOKEN_KEY = "console-test-token-key-0123456789abcdef"
#: Sessions created a day before the others: more than a page of the console (50).
OLD_SESSIONS = 60
#: Untrusted model output: it must show as text and never run.
HOSTILE = '<script>window.__xss = 1</script><img src="x" onerror="window.__xss = 2">'


@pytest.fixture(scope="session")
def chromium() -> Path:
    if CHROMIUM.is_file():
        return CHROMIUM
    if os.environ.get("RUNTIME_STORE_ALLOW_NO_BROWSER") == "1":
        pytest.skip(f"{CHROMIUM} is missing (allowed by RUNTIME_STORE_ALLOW_NO_BROWSER=1)")
    pytest.fail(
        f"{CHROMIUM} is missing: apt-get install chromium "
        "(or set RUNTIME_STORE_ALLOW_NO_BROWSER=1 to skip)"
    )


# --- the seeded world ------------------------------------------------------------------


@dataclass(frozen=True)
class World:
    server: LiveServer
    admin: str
    reader: str

    def store(self, token: str | None = None) -> HttpStore:
        return HttpStore(self.server.base_url, token=token or self.admin)


def transcript(run: Any, key: str, seconds: int, *messages: Message, seeded: bool = False) -> Any:
    return record(
        run,
        event_key=key,
        type="transcript_messages_seeded" if seeded else "transcript_messages_appended",
        payload=encode_messages(messages),
        timestamp=T0 + timedelta(seconds=seconds),
    )


def seed(store: HttpStore) -> None:
    """Sessions and runs every console test reads (IDs fixed: one world for tests/console;
    only the browser tests change it, and only sessions and runs of their own)."""
    for session_id in ("chat-ops", "chat-live", "chat-end", "chat-keep"):
        store.create_session(session_id, T0)

    # A completed root run with a child, and a failed one with a transcript.
    plan = run_start(
        run_id="run-plan", agent_id="planner", session_id="chat-ops", labels={"team": "search"}
    )
    store.start_root_run(plan, started_record(plan), canceled_record(plan))
    failed = run_start(
        run_id="run-failed",
        agent_id="planner",
        session_id="chat-ops",
        started_at=T0 + timedelta(minutes=5),
        labels={"team": "search", "env": "prod"},
    )
    store.start_root_run(failed, started_record(failed), canceled_record(failed))
    child = run_start(
        run_id="run-child",
        agent_id="searcher",
        session_id="chat-ops",
        parent_run_id="run-failed",
        started_at=T0 + timedelta(minutes=6),
    )
    store.start_child_run(
        child, link_record(failed, child), started_record(child), canceled_record(child)
    )
    store.record_run_terminal(
        "run-child", RunStatus.COMPLETED, terminal_record(child, RunStatus.COMPLETED)
    )
    store.append_run_record(
        record(failed, event_key="note-hostile", payload=dumps({"note": HOSTILE}))
    )
    store.append_run_record(
        transcript(
            failed,
            "seed",
            1,
            Message(role=MessageRole.SYSTEM, parts=[TextPart(text="You plan searches.")]),
            seeded=True,
        )
    )
    store.append_run_record(
        transcript(
            failed,
            "turn-1",
            2,
            Message(role=MessageRole.USER, parts=[TextPart(text=f"Find the report {HOSTILE}")]),
            Message(
                role=MessageRole.ASSISTANT,
                parts=[
                    ThinkingPart(text="The user wants the quarterly report.", signature="sig"),
                    ToolUsePart(id="toolu_search", name="search", input={"query": "report"}),
                ],
            ),
            Message(
                role=MessageRole.USER,
                parts=[
                    ToolResultPart(tool_use_id="toolu_search", content={"hits": 2}),
                    ImagePart(format=ImageFormat("png"), bytes=b"\x89PNG" + bytes(2044)),
                    DocumentPart(
                        name="report.pdf", format=DocumentFormat("pdf"), bytes=bytes(4096)
                    ),
                ],
            ),
            # Breaks both checks: no thinking first (Bedrock), and no result follows (planner).
            Message(
                role=MessageRole.ASSISTANT,
                parts=[ToolUsePart(id="toolu_fetch", name="fetch", input={"url": HOSTILE})],
            ),
        )
    )
    store.record_run_terminal(
        "run-failed", RunStatus.FAILED, terminal_record(failed, RunStatus.FAILED)
    )

    # A suspended run with a checkpoint, continued by a successor.
    paused = run_start(
        run_id="run-paused",
        agent_id="planner",
        session_id="chat-ops",
        started_at=T0 + timedelta(minutes=1),
    )
    store.start_root_run(paused, started_record(paused), canceled_record(paused))
    store.record_run_suspension(
        "run-paused", checkpoint("cp-7", bytes(3000)), suspended_record(paused, "cp-7")
    )
    after = run_start(
        run_id="run-resumed",
        agent_id="planner",
        session_id="chat-ops",
        predecessor_run_id="run-paused",
        started_at=T0 + timedelta(minutes=2),
    )
    store.start_root_run(after, started_record(after), canceled_record(after))
    store.record_run_terminal(
        "run-resumed", RunStatus.COMPLETED, terminal_record(after, RunStatus.COMPLETED)
    )

    # The run the live test writes to; sessions to end, purge and keep.
    live = run_start(run_id="run-live", agent_id="worker", session_id="chat-live")
    store.start_root_run(live, started_record(live), canceled_record(live))
    for session_id in ("chat-end", "chat-keep"):
        done = run_start(run_id=f"{session_id}-run", agent_id="worker", session_id=session_id)
        store.start_root_run(done, started_record(done), canceled_record(done))
        store.record_run_terminal(
            done.run_id, RunStatus.COMPLETED, terminal_record(done, RunStatus.COMPLETED)
        )
    store.end_session("chat-keep", T0 + timedelta(hours=1))
    # Older sessions, more than one console page of them.
    for number in range(OLD_SESSIONS):
        store.create_session(f"old-{number:03}", T0 - timedelta(days=1, seconds=number))


@pytest.fixture(scope="package")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    directory = tmp_path_factory.mktemp("console")
    url = f"sqlite:///{directory / 'console.db'}"
    upgrade_schema(url)
    engine = create_engine(url)
    try:
        tokens = Tokens(engine, TOKEN_KEY)
        admin = tokens.create("console-admin", Role.ADMIN)
        reader = tokens.create("console-reader", Role.READER)
    finally:
        engine.dispose()
    server = start_server(url, directory / "server.log", env={"RUNTIME_STORE_TOKEN_KEY": TOKEN_KEY})
    try:
        with HttpStore(server.base_url, token=admin) as store:
            seed(store)
        yield World(server, admin, reader)
    finally:
        stop_server(server)


# --- the browser -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser(chromium: Path) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(chromium),
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                *NETWORK_ISOLATION_FLAGS,
            ],
        )
        yield launched
        launched.close()


@dataclass
class Tab:
    """One browser tab on the console, with everything it asked for and complained of."""

    page: Any
    base_url: str
    requests: list[str] = field(default_factory=list)
    aborted: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def open(self, path: str) -> None:
        self.page.goto(self.base_url + path)
        self.ready()

    def ready(self) -> None:
        self.page.wait_for_selector("body[data-ready=true]", timeout=10_000)

    def use_token(self, token: str) -> None:
        self.page.fill("#token-input", token)
        with self.page.expect_navigation():
            self.page.click("text=Use token")
        self.ready()

    def screenshot(self, name: str, *, full_page: bool = True) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=full_page)
        return path

    def off_origin(self) -> list[str]:
        origin = urlsplit(self.base_url)
        return [
            url
            for url in self.requests
            if (urlsplit(url).hostname, urlsplit(url).port) != (origin.hostname, origin.port)
        ]


def open_tab(browser: Any, base_url: str) -> Tab:
    context = browser.new_context(viewport={"width": 1280, "height": 860}, accept_downloads=True)
    page = context.new_page()
    tab = Tab(page, base_url)
    origin = urlsplit(base_url)

    def only_the_server(route: Any) -> None:
        parts = urlsplit(route.request.url)
        if (parts.hostname, parts.port) == (origin.hostname, origin.port):
            route.continue_()
        else:
            tab.aborted.append(route.request.url)
            route.abort()

    context.route("**/*", only_the_server)
    page.on("request", lambda request: tab.requests.append(request.url))

    def logged(message: Any) -> None:
        if message.type == "error":
            tab.errors.append(message.text)

    page.on("console", logged)
    page.on("pageerror", lambda error: tab.errors.append(f"uncaught: {error}"))
    return tab


@pytest.fixture
def tab(browser: Any, world: World) -> Iterator[Tab]:
    opened = open_tab(browser, world.server.base_url)
    yield opened
    opened.page.context.close()
