"""The stores' httpx clients: no cookie jar, and each request URL joined to the base once.

The API sets no cookies and reads none, yet a plain ``httpx.Client`` hands every response
to ``http.cookiejar`` (wrapping the request and the response in urllib's types first), and
parses every request's path twice to join it to ``base_url``. Together that was about a
third of a client call's CPU (docs/performance.md, "A lighter client"). These clients keep
httpx's behaviour otherwise: the same transports, hooks, timeouts and errors.
"""

from __future__ import annotations

from typing import Any, Final

import httpx

#: Joined URLs one client keeps (paths name runs and sessions: a worker uses a few at once).
URL_CACHE_SIZE: Final = 512


class NoCookies(httpx.Cookies):
    """An empty jar that stays empty: a ``Set-Cookie`` answer is not kept or sent back."""

    def extract_cookies(self, response: httpx.Response) -> None:  # noqa: ARG002
        return None

    def set_cookie_header(self, request: httpx.Request) -> None:  # noqa: ARG002
        return None


class _Lean:
    """What the two clients share; mixed in before ``httpx.Client`` or ``AsyncClient``."""

    _urls: dict[str, httpx.URL]
    _no_cookies: NoCookies

    def _lean_init(self) -> None:
        self._urls = {}
        self._no_cookies = NoCookies()

    @property
    def cookies(self) -> httpx.Cookies:
        return self._no_cookies

    @cookies.setter
    def cookies(self, cookies: Any) -> None:  # noqa: ARG002
        raise TypeError("runtime-store clients keep no cookies")

    def _merge_url(self, url: httpx.URL | str) -> httpx.URL:
        if not isinstance(url, str):
            return super()._merge_url(url)  # type: ignore[misc, no-any-return]
        found = self._urls.get(url)
        if found is None:
            found = super()._merge_url(url)  # type: ignore[misc]
            if len(self._urls) >= URL_CACHE_SIZE:
                self._urls.clear()
            self._urls[url] = found
        return found


class LeanClient(_Lean, httpx.Client):
    """``httpx.Client`` without cookies, joining each path to the base URL once."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._lean_init()


class LeanAsyncClient(_Lean, httpx.AsyncClient):
    """``httpx.AsyncClient`` without cookies, joining each path to the base URL once."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._lean_init()
