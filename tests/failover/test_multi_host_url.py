"""libpq's multi-host URL (CONTRACT.md 16) is read everywhere a database URL is: settings,
engines (sync, async, the live tail's listener), migrations, inspection and the CLI's
printed form, which never shows the password."""

from __future__ import annotations

import pytest
from sqlalchemy.engine import make_url

from app.database_url import MultiHostError, canonical_database_url, display_form
from app.settings import Settings
from app.storage.database.engines import (
    CONNECT_TIMEOUT_SECONDS,
    create_async_engine,
    create_engine,
    database_backend,
)
from app.storage.database.inspection import display_url
from app.storage.database.migrations import alembic_config
from app.storage.live_tail.listener import Listener

URL = (
    "postgresql://postgres:s3cr%40t@127.0.0.1:5451,127.0.0.1:5452,127.0.0.1:5453/rsdb"
    "?target_session_attrs=read-write"
)


def test_the_hosts_move_into_the_query_psycopg_reads() -> None:
    canonical = canonical_database_url(URL)
    assert canonical == (
        "postgresql+psycopg://postgres:s3cr%40t@/rsdb?target_session_attrs=read-write"
        "&host=127.0.0.1,127.0.0.1,127.0.0.1&port=5451,5452,5453"
    )
    engine = create_engine(URL)
    try:
        _, params = engine.dialect.create_connect_args(engine.url)
    finally:
        engine.dispose()
    params.pop("context", None)  # psycopg's adapters, added by the dialect
    assert params == {
        "dbname": "rsdb",
        "user": "postgres",
        "password": "s3cr@t",
        "target_session_attrs": "read-write",
        "host": "127.0.0.1,127.0.0.1,127.0.0.1",
        "port": "5451,5452,5453",
    }
    assert database_backend(URL) == "postgresql"


@pytest.mark.parametrize(
    ("given", "hosts", "ports"),
    [
        ("postgres://u@h1,h2:5433/db", "h1,h2", ",5433"),
        ("postgresql+psycopg://u@h1:1,h2:2/db", "h1,h2", "1,2"),
        ("postgresql://u@[::1]:5432,%2Ftmp%2Fsock/db?sslmode=disable", "::1,/tmp/sock", "5432,"),
        ("postgresql://u@a,b,c/db", "a,b,c", None),
    ],
)
def test_every_member_form_is_read(given: str, hosts: str, ports: str | None) -> None:
    query = make_url(canonical_database_url(given)).query
    assert query["host"] == hosts
    assert query.get("port") == ports


def test_one_host_urls_are_unchanged() -> None:
    for url in ("postgresql+psycopg://u:p@h:5432/db?x=1", "sqlite:///runtime.db", "sqlite://"):
        assert canonical_database_url(url) == url


@pytest.mark.parametrize(
    "bad", ["postgresql://u@h1:x,h2/db", "postgresql://u@h1,h2/db?host=h3", "postgresql://u@,h/db"]
)
def test_a_host_list_that_cannot_be_read_is_one_clear_error(bad: str) -> None:
    with pytest.raises(MultiHostError):
        canonical_database_url(bad)


def test_the_printed_form_is_libpqs_with_the_password_hidden() -> None:
    shown, file = display_url(URL)
    assert file is None
    assert shown == (
        "postgresql+psycopg://postgres:***@127.0.0.1:5451,127.0.0.1:5452,127.0.0.1:5453/rsdb"
        "?target_session_attrs=read-write"
    )
    assert "s3cr" not in display_form(canonical_database_url(URL))
    single, _ = display_url("postgresql://u:pw@h:5432/db")
    assert single == "postgresql://u:***@h:5432/db"
    # Settings keep the canonical form; it prints as libpq's all the same.
    assert display_url(canonical_database_url(URL))[0] == shown


def test_settings_engines_migrations_and_the_listener_take_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("RUNTIME_STORE_DATABASE_URL", URL)
    settings = Settings()
    assert settings.database_url == canonical_database_url(URL)
    # Alembic gets the URL back with its password; it parses it again.
    stored = alembic_config(settings.database_url).get_main_option("sqlalchemy.url")
    assert stored is not None
    assert make_url(stored).query["port"] == "5451,5452,5453"
    engine = create_async_engine(settings.database_url)
    try:
        assert engine.sync_engine.url.query["host"] == "127.0.0.1,127.0.0.1,127.0.0.1"
    finally:
        engine.sync_engine.dispose()
    blocking = create_engine(settings.database_url)
    try:
        conninfo = Listener(blocking, idle_seconds=1)._conninfo()
    finally:
        blocking.dispose()
    from psycopg.conninfo import conninfo_to_dict

    assert conninfo_to_dict(conninfo) == {
        "dbname": "rsdb",
        "user": "postgres",
        "password": "s3cr@t",
        "target_session_attrs": "read-write",
        "host": "127.0.0.1,127.0.0.1,127.0.0.1",
        "port": "5451,5452,5453",
        "connect_timeout": str(CONNECT_TIMEOUT_SECONDS),
    }


def test_a_url_that_names_its_connect_timeout_keeps_it() -> None:
    engine = create_engine(URL + "&connect_timeout=7")
    try:
        _, params = engine.dialect.create_connect_args(engine.url)
        assert params["connect_timeout"] == "7"
        assert Listener(engine, idle_seconds=1)._conninfo().count("connect_timeout") == 1
    finally:
        engine.dispose()
