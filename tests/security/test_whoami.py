"""``GET /v1/whoami`` over HTTP with the real clients: every role learns its own name, role
and permissions; a missing, unknown or revoked token is the usual 401; open mode says so."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.domain.tokens import Role
from app.storage import create_engine
from app.storage.access.tokens import Tokens
from runtime_store_client import AsyncHttpStore, AuthError, HttpStore, Whoami
from tests.conftest import LiveServer, start_server, stop_server
from tests.security import fresh_sqlite_url

KEY = "whoami-test-key-0123456789abcdef"


@dataclass(frozen=True)
class Served:
    server: LiveServer
    tokens: dict[str, str]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    directory = tmp_path_factory.mktemp("whoami")
    url = fresh_sqlite_url(directory)
    engine = create_engine(url)
    try:
        store = Tokens(engine, KEY)
        tokens = {role.value: store.create(f"ops-{role.value}", role) for role in Role}
        tokens["revoked"] = store.create("ops-gone", Role.ADMIN)
        store.revoke("ops-gone")
    finally:
        engine.dispose()
    server = start_server(url, directory / "server.log", env={"RUNTIME_STORE_TOKEN_KEY": KEY})
    yield Served(server, tokens)
    stop_server(server)


@pytest.mark.parametrize(
    ("role", "permissions"),
    [
        ("admin", ("read", "write", "admin")),
        ("worker", ("read", "write")),
        ("reader", ("read",)),
    ],
)
def test_every_role_learns_its_token_name_role_and_permissions(
    served: Served, role: str, permissions: tuple[str, ...]
) -> None:
    with HttpStore(served.server.base_url, token=served.tokens[role]) as store:
        found = store.whoami()
    assert found == Whoami(mode="tokens", name=f"ops-{role}", role=role, permissions=permissions)
    assert not found.is_open
    assert found.may("read")
    assert found.may("admin") is (role == "admin")


def test_the_async_client_asks_the_same(served: Served) -> None:
    async def ask() -> Whoami:
        async with AsyncHttpStore(served.server.base_url, token=served.tokens["reader"]) as store:
            return await store.whoami()

    assert asyncio.run(ask()).name == "ops-reader"


@pytest.mark.parametrize("token", [None, "revoked", "rst_" + "x" * 43])
def test_no_unknown_or_revoked_token_is_refused_with_401(served: Served, token: str | None) -> None:
    sent = served.tokens.get(token or "", token)
    with (
        HttpStore(served.server.base_url, token=sent, retries=0) as store,
        pytest.raises(AuthError) as refused,
    ):
        store.whoami()
    assert refused.value.status == 401
    assert refused.value.code == "unauthenticated"


def test_open_mode_answers_open_with_every_permission(tmp_path: Path) -> None:
    server = start_server(fresh_sqlite_url(tmp_path), tmp_path / "open.log")
    try:
        with HttpStore(server.base_url, retries=0) as store:
            found = store.whoami()
    finally:
        stop_server(server)
    assert found == Whoami(
        mode="open", name="", role="admin", permissions=("read", "write", "admin")
    )
    assert found.is_open


def test_the_cli_prints_whose_token_it_is_and_refuses_a_revoked_one(served: Served) -> None:
    from typer.testing import CliRunner

    from app.cli import cli

    runner = CliRunner()
    url = served.server.base_url
    shown = runner.invoke(cli, ["whoami", "--url", url, "--token", served.tokens["worker"]])
    assert (shown.exit_code, shown.stdout) == (0, "ops-worker (worker: read, write)\n")
    as_json = runner.invoke(
        cli, ["whoami", "--url", url, "--token", served.tokens["reader"], "--json"]
    )
    assert json.loads(as_json.stdout) == {
        "mode": "tokens",
        "name": "ops-reader",
        "role": "reader",
        "permissions": ["read"],
    }
    refused = runner.invoke(cli, ["whoami", "--url", url, "--token", served.tokens["revoked"]])
    assert refused.exit_code == 1
    assert refused.stderr.startswith("error: unauthenticated")
