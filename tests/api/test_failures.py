"""Database failures over HTTP: 503 ``unavailable`` when transient, 500 ``internal`` otherwise.

CONTRACT.md section 6: a transient failure is ``unavailable`` (503, ``Retry-After``) and safe
to retry; section 2.1: a failed write writes nothing. An unexpected failure is a ``500``
problem that names only the request ID, never SQL, a traceback or the exception text.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient
from pydantic import SecretStr
from sqlalchemy.engine import Engine

from app.main import create_app
from app.settings import Settings
from tests.api.conftest import client_for
from tests.api.wire_builders import (
    T0_WIRE,
    append_body,
    appended,
    assert_problem,
    create_session,
    note,
    ok,
    root_start_body,
    start_root,
    unchanged,
    wire_record,
)
from tests.conftest import wipe
from tests.contract.builders import run_start, started_record

UNREACHABLE = "postgresql://postgres@127.0.0.1:9/none"  # port 9: nothing listens
LEAKS = (
    "disk on fire",
    "Traceback",
    "INSERT",
    "run_records",
    "psycopg",
    "sqlalchemy",
    "sqlite3",
    "explode",
    "Error",
    "127.0.0.1",
)


# --- unreachable database --------------------------------------------------------------


@pytest.fixture
def unreachable() -> Iterator[TestClient]:
    with client_for(UNREACHABLE) as client:
        yield client


def test_a_read_against_an_unreachable_database_is_unavailable_with_retry_after(
    unreachable: TestClient,
) -> None:
    response = unreachable.get("/v1/sessions/s-1")
    body = assert_problem(response, 503, "unavailable")
    assert response.headers["retry-after"] == "1"
    assert not any(leak in body["detail"] for leak in LEAKS)


def test_a_write_against_an_unreachable_database_is_unavailable_with_retry_after(
    unreachable: TestClient,
) -> None:
    response = unreachable.post("/v1/sessions", json={"session_id": "s-1", "created_at": T0_WIRE})
    body = assert_problem(response, 503, "unavailable")
    assert response.headers["retry-after"] == "1"
    assert not any(leak in response.text for leak in LEAKS), body


def test_a_malformed_body_with_a_token_while_the_database_is_unreachable_is_unavailable() -> None:
    # Whether the token may see a validation error is unknown until the database answers:
    # not a 422, not a 500.
    app = create_app(Settings(database_url=UNREACHABLE, token_key=SecretStr("k" * 32)))
    with TestClient(app, raise_server_exceptions=False) as keyed:
        response = keyed.post(
            "/v1/sessions",
            content=b"{",
            headers={"content-type": "application/json", "authorization": "Bearer rst_" + "x" * 43},
        )
    assert_problem(response, 503, "unavailable")
    assert response.headers["retry-after"] == "1"


def test_a_malformed_body_to_an_open_service_is_invalid_even_without_its_database(
    unreachable: TestClient,
) -> None:
    # No token key: the service is open, known without asking the database.
    response = unreachable.post(
        "/v1/sessions", content=b"{", headers={"content-type": "application/json"}
    )
    assert_problem(response, 422, "invalid_argument", errors=[("body.1", "json_invalid")])


def test_readyz_is_503_and_healthz_is_200_when_the_database_is_unreachable(
    unreachable: TestClient,
) -> None:
    ready = unreachable.get("/readyz")
    assert ready.status_code == 503
    assert ready.headers["retry-after"] == "1"
    assert ready.json()["status"] == "unavailable"
    health = unreachable.get("/healthz")
    assert health.status_code == 200
    assert health.json() == {"status": "ok"}


def test_readyz_is_200_when_the_database_answers_at_head(api: TestClient) -> None:
    ready = api.get("/readyz")
    assert ready.status_code == 200
    assert ready.json()["status"] == "ready"


# --- a transient failure in the middle of a write ---------------------------------------


@pytest.fixture
def pg_api(postgres_engine: Engine, postgres_url: str) -> Iterator[TestClient]:
    wipe(postgres_engine)
    with client_for(postgres_url) as client:
        yield client


@pytest.fixture
def flaky_records(postgres_engine: Engine) -> Iterator[None]:
    """Every insert of a record keyed ``flaky`` fails with a serialization failure."""
    with postgres_engine.begin() as conn:
        conn.execute(
            sa.text(
                """
                CREATE FUNCTION api_flaky() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                  IF NEW.event_key = 'flaky' THEN
                    RAISE EXCEPTION 'try again' USING ERRCODE = 'serialization_failure';
                  END IF;
                  RETURN NEW;
                END $$;
                CREATE TRIGGER api_flaky BEFORE INSERT ON run_records
                  FOR EACH ROW EXECUTE FUNCTION api_flaky();
                """
            )
        )
    try:
        yield
    finally:
        drop_flaky(postgres_engine)


def drop_flaky(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(sa.text("DROP TRIGGER IF EXISTS api_flaky ON run_records"))
        conn.execute(sa.text("DROP FUNCTION IF EXISTS api_flaky()"))


def test_a_persistent_serialization_failure_is_unavailable_writes_nothing_and_is_retryable(
    pg_api: TestClient, flaky_records: None, postgres_engine: Engine
) -> None:
    create_session(pg_api, "s-1")
    run = start_root(pg_api, "s-1")
    body = append_body(note(run, "flaky"))
    with unchanged(pg_api, [run.run_id], "s-1"):
        response = pg_api.post(f"/v1/runs/{run.run_id}/records", json=body)
        assert_problem(response, 503, "unavailable")
        assert response.headers["retry-after"] == "1"
        assert "try again" not in response.text

    drop_flaky(postgres_engine)
    retried = pg_api.post(f"/v1/runs/{run.run_id}/records", json=body)
    assert ok(retried) == appended("2")


# --- an unexpected failure -------------------------------------------------------------


@pytest.fixture
def exploding(engine: Engine) -> Iterator[None]:
    """Every insert of a record keyed ``explode`` fails with a non-transient error."""
    if engine.dialect.name == "postgresql":
        create = [
            """
            CREATE FUNCTION api_explode() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              IF NEW.event_key = 'explode' THEN RAISE EXCEPTION 'disk on fire'; END IF;
              RETURN NEW;
            END $$;
            CREATE TRIGGER api_explode BEFORE INSERT ON run_records
              FOR EACH ROW EXECUTE FUNCTION api_explode();
            """
        ]
        drop = ["DROP TRIGGER api_explode ON run_records", "DROP FUNCTION api_explode()"]
    else:
        create = [
            """
            CREATE TRIGGER api_explode BEFORE INSERT ON run_records
            WHEN NEW.event_key = 'explode'
            BEGIN SELECT RAISE(ABORT, 'disk on fire'); END
            """
        ]
        drop = ["DROP TRIGGER api_explode"]
    with engine.begin() as conn:
        for statement in create:
            conn.execute(sa.text(statement))
    try:
        yield
    finally:
        with engine.begin() as conn:
            for statement in drop:
                conn.execute(sa.text(statement))


def assert_internal(response: httpx.Response, request_id: str) -> None:
    """A 500 ``internal`` problem naming only the request ID, nothing of the failure."""
    assert response.status_code == 500, response.text
    assert not any(leak in response.text for leak in LEAKS), response.text
    assert response.json()["request_id"] == request_id
    # Last, so the checks above still run: the header must carry the same ID (section 6).
    assert_problem(response, 500, "internal")


def test_a_failing_start_is_a_500_internal_problem_that_writes_nothing(
    api: TestClient, exploding: None
) -> None:
    create_session(api, "s-1")
    run = run_start(session_id="s-1")
    body = root_start_body(run)
    body["started"]["event_key"] = "explode"
    with unchanged(api, [run.run_id], "s-1"):
        response = api.post("/v1/runs/root-starts", json=body, headers={"X-Request-ID": "boom-1"})
    assert api.get(f"/v1/runs/{run.run_id}").json()["code"] == "run_not_found"
    assert ok(api.get("/v1/sessions/s-1/records")) == {"records": [], "next_cursor": ""}
    assert_internal(response, "boom-1")


def test_a_failing_append_is_a_500_internal_problem_that_writes_nothing(
    api: TestClient, exploding: None
) -> None:
    create_session(api, "s-1")
    run = start_root(api, "s-1")
    with unchanged(api, [run.run_id], "s-1"):
        response = api.post(
            f"/v1/runs/{run.run_id}/records",
            json=append_body(note(run, "explode")),
            headers={"X-Request-ID": "boom-2"},
        )
    assert ok(api.get(f"/v1/runs/{run.run_id}/records")) == {
        "records": [wire_record(started_record(run), record_id="1")],
        "next_cursor": "",
    }
    assert_internal(response, "boom-2")
