"""The position headers of CONTRACT.md 14, as clients see them."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest

from app.storage import format_position, parse_position
from runtime_store_client import AsyncHttpStore, HttpStore
from tests.conftest import LiveServer, stop_server
from tests.contract.builders import T0, record, run_start, started_record, uid

from .cluster import StreamingPair
from .conftest import ReplicatedService, start_replicated

POSITION = "Runtime-Store-Position"
MIN_POSITION = "Runtime-Store-Min-Position"


@pytest.fixture(scope="module")
def service(
    streaming_pair: StreamingPair, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ReplicatedService]:
    replicated = start_replicated(streaming_pair, tmp_path_factory.mktemp("logs"))
    yield replicated
    stop_server(replicated.server)


def test_positions_are_spelled_as_postgresql_spells_an_lsn() -> None:
    for value in (0, 1, 0x3A2B1C8, (0x16 << 32) | 0xB374D848):
        assert parse_position(format_position(value)) == value
    assert format_position((0x16 << 32) | 0xB374D848) == "16/B374D848"
    for bad in ("", "16", "16/", "/1", "x/1", "1/2/3", "123456789/0", "1 /2"):
        with pytest.raises(ValueError, match="not a position"):
            parse_position(bad)


def test_every_successful_write_answers_its_position(service: ReplicatedService) -> None:
    base = service.server.base_url
    session_id = uid("sess")
    created = httpx.post(
        f"{base}/v1/sessions", json={"session_id": session_id, "created_at": T0.isoformat()}
    )
    assert created.status_code in (200, 201), created.text
    first = parse_position(created.headers[POSITION])
    again = httpx.post(
        f"{base}/v1/sessions", json={"session_id": session_id, "created_at": T0.isoformat()}
    )
    read = httpx.get(f"{base}/v1/sessions/{session_id}")
    assert read.status_code == 200
    assert POSITION not in read.headers  # reads answer no position
    if again.status_code < 300:  # an exact retry is a successful write too
        assert parse_position(again.headers[POSITION]) >= first
    else:  # a refused write answers none
        assert POSITION not in again.headers


def test_a_position_that_is_not_one_is_invalid_argument(service: ReplicatedService) -> None:
    response = httpx.get(
        f"{service.server.base_url}/v1/sessions", headers={MIN_POSITION: "not-a-position"}
    )
    assert response.status_code == 422
    assert response.json()["code"] == "invalid_argument"


def test_a_position_beyond_every_database_is_served_by_the_primary(
    service: ReplicatedService,
) -> None:
    response = httpx.get(
        f"{service.server.base_url}/v1/sessions", headers={MIN_POSITION: "FFFFFFFF/FFFFFFFF"}
    )
    assert response.status_code == 200


def test_the_clients_keep_the_highest_position_and_send_it_on_reads(
    service: ReplicatedService,
) -> None:
    base = service.server.base_url
    sent: list[str | None] = []

    def note(request: httpx.Request) -> None:
        sent.append(request.headers.get(MIN_POSITION))

    with HttpStore(base, httpx_args={"event_hooks": {"request": [note]}}) as store:
        assert store.position is None
        session_id = store.create_session(uid("sess"), T0).id
        assert sent == [None]  # a write sends none
        after_create = store.position
        assert after_create is not None
        run = run_start()
        store.start_one_shot_run(run, started_record(run))
        store.append_run_record(record(run))
        assert store.position is not None
        assert parse_position(store.position) > parse_position(after_create)
        store.load_run(run.run_id)
        assert sent[-1] == store.position
    with HttpStore(base, position=after_create) as other:  # handed over
        assert other.position == after_create

    async def async_client() -> tuple[str | None, str | None]:
        async with AsyncHttpStore(base) as store:
            await store.create_session(uid("sess"), T0)
            return store.position, (await store.load_session_status(session_id)).value

    position, status = asyncio.run(async_client())
    assert position is not None
    assert status == "active"


def test_a_browsers_write_sets_the_position_cookie(service: ReplicatedService) -> None:
    base = service.server.base_url
    headers = {"Sec-Fetch-Site": "same-origin"}
    body = {"session_id": uid("sess"), "created_at": T0.isoformat()}
    created = httpx.post(f"{base}/v1/sessions", json=body, headers=headers)
    cookie = created.headers.get("set-cookie", "")
    assert cookie.startswith(f"runtime_store_position={created.headers[POSITION]};")
    assert "SameSite=Strict" in cookie
    programmatic = httpx.post(f"{base}/v1/sessions", json={**body, "session_id": uid("sess")})
    assert "set-cookie" not in programmatic.headers


def test_without_replicas_no_position_is_answered(postgres_server: LiveServer) -> None:
    created = httpx.post(
        f"{postgres_server.base_url}/v1/sessions",
        json={"session_id": uid("sess"), "created_at": T0.isoformat()},
    )
    assert created.status_code in (200, 201)
    assert POSITION not in created.headers
