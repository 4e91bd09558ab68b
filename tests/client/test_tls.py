"""Both stores share one TLS context per process unless the caller brings TLS settings
(making one loads the system's certificates: a store per request must not pay it)."""

from __future__ import annotations

import asyncio
import ssl

from runtime_store_client import AsyncHttpStore, HttpStore
from runtime_store_client.http._tls import default_tls, with_default_tls

NOWHERE = "http://127.0.0.1:9"


def _sync_context(store: HttpStore) -> object:
    transport = store._client.get_httpx_client()._transport
    return transport._pool._ssl_context  # type: ignore[attr-defined]


def test_stores_without_tls_settings_share_one_context() -> None:
    with HttpStore(NOWHERE) as first, HttpStore(NOWHERE, token="t") as second:
        assert _sync_context(first) is default_tls()
        assert _sync_context(second) is default_tls()
    assert isinstance(default_tls(), ssl.SSLContext)
    assert default_tls().verify_mode is ssl.CERT_REQUIRED


def test_async_stores_without_tls_settings_share_one_context() -> None:
    async def contexts() -> list[object]:
        found = []
        for _ in range(2):
            async with AsyncHttpStore(NOWHERE) as store:
                transport = store._client.get_async_httpx_client()._transport
                found.append(transport.ssl_context)  # type: ignore[attr-defined]
        return found

    assert asyncio.run(contexts()) == [default_tls(), default_tls()]


def test_a_callers_tls_settings_are_kept() -> None:
    assert with_default_tls({"verify": False}) == {"verify": False}
    assert with_default_tls({"trust_env": False}) == {"trust_env": False}
    own = ssl.create_default_context()
    with HttpStore(NOWHERE, httpx_args={"verify": own}) as store:
        assert _sync_context(store) is own
    with HttpStore(NOWHERE, httpx_args={"verify": False}) as store:  # once a TypeError
        assert _sync_context(store) is not default_tls()
