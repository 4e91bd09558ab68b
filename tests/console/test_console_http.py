"""The console over plain HTTP: its policy, its place outside the API document, its one
data path (the API's own answers, refusals included), and its files in the wheel."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import httpx

from app.console.routes import CONTENT_SECURITY_POLICY
from app.console.views import api_time
from tests.console.conftest import OLD_SESSIONS, ROOT, World
from tests.packaging import build_wheel

PAGES = (
    "/console/sessions",
    "/console/session?session_id=chat-ops",
    "/console/runs?status=failed&label=team:search",
    "/console/run?run_id=run-failed",
    "/console/run/transcript?run_id=run-failed",
)


def test_console_pages_load_only_what_the_service_serves(world: World) -> None:
    for page in PAGES:
        response = httpx.get(world.server.base_url + page)
        assert response.status_code == 200, page
        assert response.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        policy = dict(part.split(" ", 1) for part in CONTENT_SECURITY_POLICY.split("; "))
        assert policy["script-src"] == "'self'"
        assert policy["connect-src"] == "'self'"
        assert policy["default-src"] == "'none'"
        html = response.text
        assert re.findall(r"""(?:https?:)?//[^\s"'<>)]+""", html) == [], page
        assert re.findall(r"<script(?![^>]*\bsrc=)", html) == [], "an inline script"
        assert " style=" not in html, "an inline style"
        assert "<style" not in html, "an inline stylesheet"
        assert re.findall(r"\son[a-z]+=", html) == [], "an inline handler"
    for asset in ("console.js", "console-actions.js", "console-live.js", "console.css"):
        served = httpx.get(f"{world.server.base_url}/console/static/{asset}")
        assert served.status_code == 200
        assert "http://" not in served.text
        assert "https://" not in served.text
    assert httpx.get(f"{world.server.base_url}/console/static/other.js").status_code == 404


def test_console_routes_stay_out_of_the_api_document(world: World) -> None:
    document = httpx.get(f"{world.server.base_url}/openapi.json").json()
    assert [path for path in document["paths"] if "console" in path] == []


def test_a_fragment_shows_the_apis_own_refusal(world: World) -> None:
    base = world.server.base_url
    anonymous = httpx.get(f"{base}/console/fragments/sessions")
    assert anonymous.status_code == 401
    assert 'data-problem="unauthenticated"' in anonymous.text
    assert "a bearer token is required" in anonymous.text
    bearer = {"Authorization": f"Bearer {world.reader}"}
    unknown = httpx.get(f"{base}/console/fragments/run?run_id=nope", headers=bearer)
    assert unknown.status_code == 404
    assert 'data-problem="run_not_found"' in unknown.text
    forged = httpx.get(f"{base}/console/fragments/runs?cursor=forged", headers=bearer)
    assert forged.status_code == 422
    assert 'data-problem="invalid_argument"' in forged.text
    assert forged.headers["cache-control"] == "no-store"


def test_untrusted_payloads_reach_the_page_as_escaped_text(world: World) -> None:
    bearer = {"Authorization": f"Bearer {world.reader}"}
    base = world.server.base_url
    for fragment in ("records", "transcript"):
        html = httpx.get(
            f"{base}/console/fragments/run/{fragment}?run_id=run-failed", headers=bearer
        ).text
        assert "&lt;script&gt;window.__xss = 1&lt;/script&gt;" in html
        assert "<script" not in html
        assert "<img" not in html


def test_console_templates_and_assets_ship_in_the_wheel(tmp_path: Path) -> None:
    wheel = build_wheel(ROOT, tmp_path)
    names = set(zipfile.ZipFile(wheel).namelist())
    console = ROOT / "app" / "console"
    shipped = {
        str(path.relative_to(ROOT))
        for path in console.rglob("*")
        if path.suffix in {".html", ".css", ".js"}
    }
    assert {"app/console/static/console.js", "app/console/templates/base.html"} <= shipped
    assert shipped <= names


def test_a_run_page_links_predecessor_successor_and_shows_the_checkpoint(world: World) -> None:
    bearer = {"Authorization": f"Bearer {world.reader}"}
    base = world.server.base_url
    paused = httpx.get(f"{base}/console/fragments/run?run_id=run-paused", headers=bearer).text
    assert 'href="/console/run?run_id=run-resumed"' in paused  # the successor
    assert "cp-7</span>, 2.9 KiB" in paused  # the checkpoint's ID and size, never its bytes
    resumed = httpx.get(f"{base}/console/fragments/run?run_id=run-resumed", headers=bearer).text
    assert 'href="/console/run?run_id=run-paused"' in resumed  # the predecessor
    assert "<dt>Start kind</dt><dd>engine</dd>" in resumed  # 12.2
    child = httpx.get(f"{base}/console/fragments/run?run_id=run-child", headers=bearer).text
    assert 'href="/console/run?run_id=run-failed"' in child  # the parent
    children = httpx.get(
        f"{base}/console/fragments/run/children?run_id=run-failed", headers=bearer
    ).text
    assert 'href="/console/run?run_id=run-child"' in children


def test_time_filters_go_to_the_api_as_rfc3339_and_bad_ones_come_back_refused(
    world: World,
) -> None:
    assert api_time("2026-11-30T01:02") == "2026-11-30T01:02:00.000Z"
    assert api_time("2026-11-30T01:02:03.4") == "2026-11-30T01:02:03.400Z"
    assert api_time("1h") == "1h"  # not ours to interpret: the API answers
    bearer = {"Authorization": f"Bearer {world.reader}"}
    base = world.server.base_url
    window = httpx.get(
        f"{base}/console/fragments/sessions?created_after=2026-11-30T01:02&created_before="
        "2026-11-30T01:03",
        headers=bearer,
    )
    assert window.status_code == 200
    assert "chat-ops" in window.text
    later = httpx.get(
        f"{base}/console/fragments/sessions?created_after=2026-11-30T01:03", headers=bearer
    )
    assert "chat-ops" not in later.text
    refused = httpx.get(f"{base}/console/fragments/runs?started_after=yesterday", headers=bearer)
    assert refused.status_code == 422
    assert 'data-problem="invalid_argument"' in refused.text


def test_every_form_field_has_a_label(world: World) -> None:
    for page in PAGES:
        html = httpx.get(world.server.base_url + page).text
        labelled = set(re.findall(r'<label for="([^"]+)"', html))
        for tag, attributes in re.findall(r"<(input|select)\b([^>]*)>", html):
            if 'type="checkbox"' in attributes:
                continue  # each checkbox sits inside its <label>
            (field_id,) = re.findall(r'\bid="([^"]+)"', attributes)
            assert field_id in labelled, f"{page}: {tag} #{field_id} has no label"


def test_lists_page_with_the_apis_cursors_and_keep_their_filters(world: World) -> None:
    bearer = {"Authorization": f"Bearer {world.reader}"}
    base = world.server.base_url
    old = "created_before=2026-11-30T00%3A00"  # as the console links it
    first = httpx.get(f"{base}/console/fragments/sessions?{old}", headers=bearer).text
    assert first.count('href="/console/session?session_id=old-') == 50
    assert "chat-ops" not in first
    (following,) = re.findall(r'<a href="([^"]+)" rel="next">Next page</a>', first)
    following = following.replace("&amp;", "&")
    assert following.startswith(f"/console/sessions?{old}&cursor=")
    shell = httpx.get(base + following).text  # the page carries the cursor to its fragment
    (fragment,) = re.findall(r'data-fragment="([^"]+)"', shell)
    second = httpx.get(base + fragment.replace("&amp;", "&"), headers=bearer).text
    assert second.count('href="/console/session?session_id=old-') == OLD_SESSIONS - 50
    assert "Next page" not in second
    assert f'href="/console/sessions?{old}">First page</a>' in second


def test_a_filter_the_console_cannot_read_is_refused_after_the_token_as_the_api_orders_them(
    world: World,
) -> None:
    base = world.server.base_url
    bearer = {"Authorization": f"Bearer {world.reader}"}
    for query in (
        "runs?started_after=yesterday",
        "runs?status=bogus",
        "runs?label=team",
        "runs?label=team:a&label=team:b",  # no run can match: an empty page, after the token
        "sessions?status=bogus",
        "run?run_id=",
        "session?session_id=",
    ):
        anonymous = httpx.get(f"{base}/console/fragments/{query}")
        assert anonymous.status_code == 401, query
        assert 'data-problem="unauthenticated"' in anonymous.text
    for query, status, code in (
        ("runs?started_after=yesterday", 422, "invalid_argument"),
        ("runs?status=bogus", 422, "invalid_argument"),
        ("sessions?status=bogus", 422, "invalid_argument"),
        ("run?run_id=", 422, "invalid_argument"),
        ("session?session_id=", 404, "session_not_found"),
    ):
        refused = httpx.get(f"{base}/console/fragments/{query}", headers=bearer)
        assert refused.status_code == status, query
        assert f'data-problem="{code}"' in refused.text
    label = httpx.get(f"{base}/console/fragments/runs?label=team", headers=bearer)
    assert "label filter &#39;team&#39; must be key:value" in label.text  # the client's rule
    none = httpx.get(f"{base}/console/fragments/runs?label=team:a&label=team:b", headers=bearer)
    assert none.status_code == 200
    assert "No runs." in none.text
