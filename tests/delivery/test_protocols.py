"""The webhook administration protocols (CONTRACT.md 13.1, 13.3) are implemented by the
in-process store and both HTTP clients, with the protocol's exact signatures (names,
kinds, defaults), so a caller may pass any of them where the protocol is asked for."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from sqlalchemy.engine import Engine

from app.storage import SqlStore
from runtime_store_client import AsyncHttpStore, AsyncWebhookAdmin, HttpStore, WebhookAdmin

#: Nothing listens there: constructing a client sends nothing.
UNUSED = "http://127.0.0.1:9"


def _methods(protocol: type) -> list[str]:
    return [
        name
        for name in vars(protocol)
        if not name.startswith("_") and callable(getattr(protocol, name))
    ]


def _parameters(function: Any) -> list[tuple[str, Any, Any]]:
    signature = inspect.signature(function)
    return [(p.name, p.kind, p.default) for p in signature.parameters.values() if p.name != "self"]


def _same_signatures(protocol: type, implementation: type, *, coroutines: bool) -> None:
    names = _methods(protocol)
    assert len(names) == 5
    for name in names:
        ours = getattr(implementation, name)
        assert _parameters(ours) == _parameters(getattr(protocol, name)), name
        assert inspect.iscoroutinefunction(ours) is coroutines, name


def test_sql_store_and_http_store_implement_webhook_admin(sqlite_engine: Engine) -> None:
    sql: WebhookAdmin = SqlStore(sqlite_engine)  # mypy checks the assignment statically
    with HttpStore(UNUSED) as client:
        http: WebhookAdmin = client
        assert isinstance(sql, WebhookAdmin)
        assert isinstance(http, WebhookAdmin)
    _same_signatures(WebhookAdmin, SqlStore, coroutines=False)
    _same_signatures(WebhookAdmin, HttpStore, coroutines=False)


def test_async_http_store_implements_async_webhook_admin() -> None:
    async def check() -> None:
        async with AsyncHttpStore(UNUSED) as client:
            admin: AsyncWebhookAdmin = client
            assert isinstance(admin, AsyncWebhookAdmin)

    asyncio.run(check())
    _same_signatures(AsyncWebhookAdmin, AsyncHttpStore, coroutines=True)
