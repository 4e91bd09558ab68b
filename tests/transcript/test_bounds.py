"""Transcript validation is linear and bounded (hardening issue, item 8).

Validators match IDs through dicts, so 40,000 tool calls validate at once; a validation
reads at most ``max_transcript_records`` records / ``max_transcript_bytes`` payload bytes
of a run (413 ``payload_too_large`` beyond), and runs in ``StoreCalls.heavy``, which holds at
most a quarter of the database threads.
"""

from __future__ import annotations

import asyncio
import threading

from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine

from app.api.store_calls import StoreCalls
from app.main import create_app
from app.settings import Settings
from app.storage import SqlStore
from runtime_store_client import RunStart
from runtime_store_client.transcript import (
    Message,
    TranscriptRule,
    encode_messages,
    planner_transcript_violations,
)
from tests.contract.builders import new_session, record, start_root
from tests.transcript.samples import assistant, result, text, use, user

PAIRS = 40_000


def test_forty_thousand_tool_calls_validate_with_every_violation_found() -> None:
    uses = [use(f"call-{n}") for n in range(PAIRS)]
    results = [result(f"call-{n}") for n in range(1, PAIRS)] + [result("stray")]
    messages = [assistant(*uses), user(*results)]
    found = planner_transcript_violations(messages)
    assert [(v.index, v.rule) for v in found] == [
        (1, str(TranscriptRule.TOOL_USE_UNANSWERED)),
        (1, str(TranscriptRule.TOOL_RESULT_ID_UNMATCHED)),
    ]
    assert "'call-0'" in found[0].message
    assert "'stray'" in found[1].message


def _append(store: SqlStore, run: RunStart, key: str, messages: list[Message]) -> None:
    store.append_run_record(
        record(
            run,
            event_key=key,
            type="transcript_messages_appended",
            payload=encode_messages(messages),
        )
    )


def _client(engine: Engine, *, records: int = 10_000, payload_bytes: int = 2**26) -> TestClient:
    settings = Settings(
        database_url=engine.url.render_as_string(hide_password=False),
        max_transcript_records=records,
        max_transcript_bytes=payload_bytes,
    )
    return TestClient(create_app(settings), raise_server_exceptions=False)


def test_validation_beyond_the_record_bound_is_413_and_within_it_is_checked(
    engine: Engine,
) -> None:
    store = SqlStore(engine)
    run = start_root(store, new_session(store).id).run
    for n in range(12):  # records 2..13 after run_started
        _append(store, run, f"t{n}", [user(text(f"m{n}"))])
    url = f"/v1/runs/{run.run_id}/transcript"
    with _client(engine, records=12) as api:
        refused = api.get(url, params={"validate": "planner", "limit": 1})
        assert refused.status_code == 413
        assert refused.json()["code"] == "payload_too_large"
        # A page without validate reads one page whatever the bound.
        assert api.get(url, params={"limit": 1}).status_code == 200
    with _client(engine, records=13) as api:
        checked = api.get(url, params={"validate": "planner", "limit": 1})
        assert checked.status_code == 200, checked.text


def test_validation_beyond_the_byte_bound_is_413(engine: Engine) -> None:
    store = SqlStore(engine)
    run = start_root(store, new_session(store).id).run
    for n in range(4):
        _append(store, run, f"t{n}", [user(text("x" * 1000))])
    url = f"/v1/runs/{run.run_id}/transcript"
    with _client(engine, payload_bytes=2000) as api:
        refused = api.get(url, params={"validate": "planner", "limit": 1})
        assert (refused.status_code, refused.json()["code"]) == (413, "payload_too_large")


def test_heavy_calls_hold_at_most_a_quarter_of_the_threads_and_leave_cheap_calls_served() -> None:
    calls = StoreCalls(8, greenlets=False)
    release = threading.Event()
    running = 0
    most = 0
    lock = threading.Lock()

    def heavy() -> None:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        release.wait(10)
        with lock:
            running -= 1

    async def scenario() -> str:
        heavy_calls = [asyncio.ensure_future(calls.heavy(heavy)) for _ in range(10)]
        await asyncio.sleep(0.2)
        cheap = await asyncio.wait_for(calls(lambda: "served"), timeout=5)
        release.set()
        await asyncio.gather(*heavy_calls)
        return cheap

    try:
        assert asyncio.run(scenario()) == "served"
    finally:
        release.set()
        calls.close()
    assert calls.heavy_slots == 2
    assert most == 2
