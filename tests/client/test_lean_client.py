"""The stores' httpx clients keep no cookies and join each path to the base URL as httpx
does, once per path (``runtime_store_client.http._lean``)."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from runtime_store_client import AsyncHttpStore, HttpStore
from runtime_store_client.http._lean import URL_CACHE_SIZE, LeanClient
from tests.contract.builders import T0, record, run_start

APPENDED = json.dumps(
    {"id": "00000000000000000001", "inserted": True, "session_status": "active"}
).encode()
SESSION = json.dumps(
    {"id": "s", "status": "active", "created_at": "2026-01-01T00:00:00.000Z", "ended_at": None}
).encode()


class Recorder:
    """A transport's handler: answers every request with ``Set-Cookie`` and keeps what it
    was sent."""

    def __init__(self, body: bytes = APPENDED) -> None:
        self.body = body
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        headers = {"content-type": "application/json", "set-cookie": "sticky=1; Path=/"}
        return httpx.Response(200, content=self.body, headers=headers)


def test_a_store_keeps_no_cookie_and_sends_none() -> None:
    seen = Recorder()
    run = run_start(run_id="run-1", session_id="s")
    with HttpStore(
        "http://127.0.0.1:9", httpx_args={"transport": httpx.MockTransport(seen)}
    ) as store:
        for key in ("k-1", "k-2", "k-3"):
            store.append_run_record(record(run, event_key=key))
        assert not store._client.get_httpx_client().cookies
    assert len(seen.requests) == 3
    assert all("cookie" not in request.headers for request in seen.requests)


def test_an_async_store_keeps_no_cookie_and_sends_none() -> None:
    seen = Recorder()
    run = run_start(run_id="run-1", session_id="s")

    async def appends() -> None:
        transport = httpx.MockTransport(seen)
        async with AsyncHttpStore("http://127.0.0.1:9", httpx_args={"transport": transport}) as s:
            for key in ("k-1", "k-2"):
                await s.append_run_record(record(run, event_key=key))

    asyncio.run(appends())
    assert len(seen.requests) == 2
    assert all("cookie" not in request.headers for request in seen.requests)


def test_setting_cookies_on_a_store_client_is_refused() -> None:
    with HttpStore("http://127.0.0.1:9") as store, pytest.raises(TypeError):
        store._client.get_httpx_client().cookies = {"a": "b"}


@pytest.mark.parametrize(
    "base_url", ["http://127.0.0.1:9", "http://127.0.0.1:9/", "https://example.test/store/api"]
)
def test_paths_join_the_base_url_as_httpx_joins_them(base_url: str) -> None:
    lean, plain = Recorder(SESSION), Recorder(SESSION)
    ids = ["s", "s/x", "ünï", "s", "a b", "s/x"]  # repeats: answered from the cache
    with (
        HttpStore(base_url, httpx_args={"transport": httpx.MockTransport(lean)}) as store,
        HttpStore(base_url) as reference,
    ):
        # The reference store sends through a plain httpx client with the same hooks.
        hooks = store._client.get_httpx_client().event_hooks
        reference._client.set_httpx_client(
            httpx.Client(
                base_url=base_url.rstrip("/"),
                event_hooks=hooks,
                transport=httpx.MockTransport(plain),
            )
        )
        for session_id in ids:
            store.load_session(session_id)
            reference.load_session(session_id)
    assert [r.url for r in lean.requests] == [r.url for r in plain.requests]
    assert len(lean.requests) == len(ids)
    assert all(str(r.url).startswith(base_url.rstrip("/") + "/v1/sessions/") for r in lean.requests)
    assert lean.requests[1].url.raw_path.endswith(b"/s%2Fx")


def test_a_clients_joined_urls_stay_bounded() -> None:
    with LeanClient(base_url="http://127.0.0.1:9") as client:
        urls = [
            client.build_request("GET", f"/v1/runs/r-{n}").url for n in range(URL_CACHE_SIZE * 2)
        ]
        assert len(client._urls) <= URL_CACHE_SIZE
        assert [url.path for url in urls] == [f"/v1/runs/r-{n}" for n in range(URL_CACHE_SIZE * 2)]
        again = client.build_request("GET", "/v1/runs/r-0", params={"limit": 5}).url
        assert again == httpx.URL("http://127.0.0.1:9/v1/runs/r-0?limit=5")


def test_the_token_goes_in_the_authorization_header() -> None:
    seen = Recorder(SESSION)
    transport = httpx.MockTransport(seen)
    with HttpStore("http://127.0.0.1:9", token="tok-1", httpx_args={"transport": transport}) as s:
        s.load_session("s")
    with HttpStore("http://127.0.0.1:9", httpx_args={"transport": transport}) as s:
        s.create_session("s", T0)
    assert seen.requests[0].headers["authorization"] == "Bearer tok-1"
    assert "authorization" not in seen.requests[1].headers
