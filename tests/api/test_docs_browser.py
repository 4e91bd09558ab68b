"""The offline docs in a real browser: headless Debian Chromium against a live server.

Chromium may resolve and reach nothing but 127.0.0.1 (every other host is unresolvable and
goes to a dead proxy), so a page that needed a CDN would not render. Its net log proves that
every request the page made went to the live server, and its console that the page tried
no other: a load the docs' Content-Security-Policy blocks never reaches the net log, but
Chromium reports it there.

CI must run this: without ``/usr/bin/chromium`` the test fails, unless
``RUNTIME_STORE_ALLOW_NO_BROWSER=1`` lets it skip.
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.conftest import LiveServer

CHROMIUM = Path("/usr/bin/chromium")
#: The page's console messages (CSP violations included) go to stderr.
CONSOLE_LOGGING_FLAGS = ("--enable-logging=stderr", "--v=0")

#: No host resolves but 127.0.0.1, and anything not bypassed goes to a closed port.
NETWORK_ISOLATION_FLAGS = (
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    "--proxy-server=127.0.0.1:9",
    "--proxy-bypass-list=127.0.0.1",
)


def chromium_command(profile: Path, *args: str) -> list[str]:
    return [
        str(CHROMIUM),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        *NETWORK_ISOLATION_FLAGS,
        "--virtual-time-budget=15000",
        *args,
    ]


@pytest.fixture(scope="module")
def chromium() -> Path:
    if CHROMIUM.is_file():
        return CHROMIUM
    if os.environ.get("RUNTIME_STORE_ALLOW_NO_BROWSER") == "1":
        pytest.skip(f"{CHROMIUM} is missing (allowed by RUNTIME_STORE_ALLOW_NO_BROWSER=1)")
    pytest.fail(
        f"{CHROMIUM} is missing: apt-get install chromium "
        "(or set RUNTIME_STORE_ALLOW_NO_BROWSER=1 to skip)"
    )


@dataclass
class Rendered:
    dom: str
    #: URLs the page itself requested (Chromium's own background requests left out).
    page_requests: list[str]
    #: Loads the page attempted that its Content-Security-Policy blocked (console reports).
    blocked: list[str]
    command: list[str]


def _page_requests(net_log: Path) -> list[str]:
    """URLs of the requests a page initiated, from a Chromium net log."""
    text = net_log.read_text()
    try:
        log: dict[str, Any] = json.loads(text)
    except json.JSONDecodeError:
        # A log cut at exit lacks its closing brackets.
        log = json.loads(text.rstrip().rstrip(",") + "]}")
    start_job = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    urls = []
    for event in log["events"]:
        params = event.get("params") or {}
        # The browser's own requests (and the navigation itself) have no origin.
        if (
            event["type"] == start_job
            and "url" in params
            and params.get("initiator") != "not an origin"
        ):
            urls.append(params["url"])
    return urls


def blocked_loads(stderr: str) -> list[str]:
    """The console's reports of loads a Content-Security-Policy blocked."""
    return [
        line
        for line in stderr.splitlines()
        if ":CONSOLE" in line and "Content Security Policy" in line
    ]


def render(url: str, tmp_path: Path, name: str, *extra: str) -> Rendered:
    net_log = tmp_path / f"{name}.netlog.json"
    command = chromium_command(
        tmp_path / f"{name}-profile",
        f"--log-net-log={net_log}",
        *CONSOLE_LOGGING_FLAGS,
        *extra,
        "--dump-dom",
        url,
    )
    result = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr[-4000:]
    return Rendered(result.stdout, _page_requests(net_log), blocked_loads(result.stderr), command)


def openapi_operations(server: LiveServer) -> list[dict[str, str]]:
    document = httpx.get(f"{server.base_url}/openapi.json", timeout=10).json()
    operations = []
    for path, item in document["paths"].items():
        for operation in item.values():
            operations.append(
                {
                    "path": path,
                    "id": operation["operationId"],
                    "summary": operation["summary"],
                    "tag": operation["tags"][0],
                }
            )
    return operations


def assert_only_loopback(urls: list[str], server: LiveServer) -> None:
    origin = urlsplit(server.base_url)
    for url in urls:
        parts = urlsplit(url)
        assert (parts.scheme, parts.hostname, parts.port) == (
            origin.scheme,
            origin.hostname,
            origin.port,
        ), f"the page requested {url}"


def test_docs_pages_reference_no_external_host(sqlite_server: LiveServer) -> None:
    for page in ("/docs", "/redoc"):
        text = httpx.get(f"{sqlite_server.base_url}{page}", timeout=10).text
        for url in re.findall(r"""(?:https?:)?//[^\s"'<>)]+""", text):
            assert urlsplit(url).hostname == "127.0.0.1", f"{page} references {url}"
        assert "/docs-assets/" in text
    bundle = httpx.get(f"{sqlite_server.base_url}/docs-assets/redoc.standalone.js", timeout=10)
    assert bundle.status_code == 200
    assert "cdn.redoc.ly" not in bundle.text
    assert "API docs by Redocly" in bundle.text


def test_browser_cannot_reach_any_host_but_loopback(chromium: Path, tmp_path: Path) -> None:
    # The control for the tests below: a CDN asset does not load in this browser.
    result = subprocess.run(
        [
            *chromium_command(tmp_path / "profile"),
            "--dump-dom",
            "https://cdn.jsdelivr.net/npm/swagger-ui-dist@5/swagger-ui.css",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "swagger-ui" not in result.stdout
    assert "ERR_" in result.stderr


def test_the_console_reports_a_load_the_policy_blocked(chromium: Path, tmp_path: Path) -> None:
    # The control for the blocked-load assertions below: ReDoc's CDN logo under a policy.
    page = (
        "data:text/html,<meta http-equiv='Content-Security-Policy' content=\"img-src 'self'\">"
        "<img src='https://cdn.redoc.ly/redoc/logo-mini.svg'>"
    )
    result = subprocess.run(
        [*chromium_command(tmp_path / "profile"), *CONSOLE_LOGGING_FLAGS, "--dump-dom", page],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    (blocked,) = blocked_loads(result.stderr)
    assert "https://cdn.redoc.ly/redoc/logo-mini.svg" in blocked


def test_swagger_ui_renders_every_operation_offline(
    chromium: Path, sqlite_server: LiveServer, tmp_path: Path
) -> None:
    screenshot = tmp_path / "docs.png"
    rendered = render(
        f"{sqlite_server.base_url}/docs",
        tmp_path,
        "docs",
        "--hide-scrollbars",
        "--window-size=1280,2000",
        f"--screenshot={screenshot}",
    )
    print(f"Swagger UI screenshot: {screenshot}")
    print("chromium command:", subprocess.list2cmdline(rendered.command))
    assert screenshot.stat().st_size > 10_000
    assert screenshot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")

    dom = rendered.dom
    assert 'class="swagger-ui' in dom
    assert 'data-path="/v1/runs/root-starts"' in dom
    assert "Start a root run" in dom
    for operation in openapi_operations(sqlite_server):
        assert f'data-path="{operation["path"]}"' in dom
        assert f'id="operations-{operation["tag"]}-{operation["id"]}"' in dom
        assert f">{html.escape(operation['summary'], quote=False)}<" in dom, operation

    assert_only_loopback(rendered.page_requests, sqlite_server)
    assert rendered.blocked == []
    requested = {urlsplit(url).path for url in rendered.page_requests}
    assert {
        "/docs-assets/swagger-ui.css",
        "/docs-assets/swagger-ui-bundle.js",
        "/openapi.json",
    } <= requested


@pytest.fixture(scope="module")
def redoc(
    chromium: Path, sqlite_server: LiveServer, tmp_path_factory: pytest.TempPathFactory
) -> Rendered:
    return render(f"{sqlite_server.base_url}/redoc", tmp_path_factory.mktemp("redoc"), "redoc")


def test_redoc_renders_every_operation_offline(redoc: Rendered, sqlite_server: LiveServer) -> None:
    dom = redoc.dom
    assert "Start a root run" in dom
    assert "/v1/runs/root-starts" in dom
    for operation in openapi_operations(sqlite_server):
        assert f'id="tag/{operation["tag"]}/operation/{operation["id"]}"' in dom, operation
        assert f'id="operation/{operation["id"]}"' in dom, operation
        assert operation["path"] in dom, operation

    requested = {urlsplit(url).path for url in redoc.page_requests}
    assert {"/docs-assets/redoc.standalone.js", "/openapi.json"} <= requested


def test_redoc_requests_nothing_beyond_the_server(
    redoc: Rendered, sqlite_server: LiveServer
) -> None:
    # The packaged ReDoc bundle names a CDN logo: the copy served names none, so the page
    # neither requests it nor tries to (a try would be a blocked load on the console).
    assert_only_loopback(redoc.page_requests, sqlite_server)
    assert redoc.blocked == []
    assert "API docs by Redocly" in redoc.dom
    assert "cdn.redoc.ly" not in redoc.dom


def test_docs_pages_carry_a_content_security_policy_of_self(sqlite_server: LiveServer) -> None:
    for page in ("/docs", "/redoc"):
        policy = httpx.get(f"{sqlite_server.base_url}{page}").headers["content-security-policy"]
        assert "default-src 'self'" in policy
        assert "img-src 'self' data:" in policy
