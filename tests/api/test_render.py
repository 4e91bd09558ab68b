"""Record pages and append results are rendered without models, to the models' exact bytes.

``RecordPageBody``, ``AppendResultBody`` and ``AppendResultsBody`` stay the description of
the bodies (OpenAPI, the generated client); ``record_page_json`` must produce exactly what
``RecordPageBody.of(page).model_dump_json()`` produces for any page, and the append
responses exactly what ``respond`` of their models produces.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from app.api.render import (
    record_page_json,
    respond,
    respond_append_result,
    respond_append_results,
)
from app.api.schemas.records import AppendResultBody, AppendResultsBody, RecordBody, RecordPageBody
from app.observability.context import EXCHANGE, Exchange
from runtime_store_client import AppendResult, Page, Record, SessionStatus

T = datetime(2026, 11, 30, 1, 2, 3, 456000, tzinfo=UTC)


def _record(n: int, **changes: object) -> Record:
    values: dict[str, object] = {
        "id": str(n),
        "event_key": f"evt-{n}",
        "run_id": "run-1",
        "agent_id": "agent-1",
        "session_id": "sess-1",
        "turn_id": "",
        "type": "planner_note",
        "payload": b'{"n":%d}' % n,
        "timestamp": T,
        **changes,
    }
    return Record(**values)  # type: ignore[arg-type]


PAGES = {
    "empty": Page(records=[], next_cursor=""),
    "one": Page(records=[_record(1)], next_cursor="1"),
    "hundred": Page(records=[_record(n) for n in range(1, 101)], next_cursor="100"),
    "escapes_and_unicode": Page(
        records=[
            _record(
                1,
                payload='{"t":"caf\u00e9 \U0001f600 \\u0000 \\"q\\" </script>\\n"}'.encode(),
                event_key='k"\\\u2028\x7f',
                turn_id="t\u00e9",
            )
        ],
        next_cursor="",
    ),
    "sessionless_other_offset": Page(
        records=[
            _record(
                1,
                session_id="",
                timestamp=T.astimezone(timezone(timedelta(hours=-5))),
            )
        ],
        next_cursor="opaque/+=",
    ),
}


@pytest.mark.parametrize("name", sorted(PAGES))
def test_a_record_page_renders_to_the_models_bytes(name: str) -> None:
    page = PAGES[name]

    assert record_page_json(page) == RecordPageBody.of(page).model_dump_json().encode()


def test_a_rendered_record_has_exactly_the_models_fields_in_order() -> None:
    rendered = record_page_json(PAGES["one"]).decode()

    keys = [f'"{name}":' for name in RecordBody.model_fields]
    positions = [rendered.index(key) for key in keys]
    assert positions == sorted(positions)
    assert list(RecordPageBody.model_fields) == ["records", "next_cursor"]


RESULTS = [
    AppendResult(id="1", inserted=True, session_status=SessionStatus.ACTIVE),
    AppendResult(id="2", inserted=False, session_status=SessionStatus.ENDED),
    AppendResult(id="3", inserted=True, session_status=None),
    AppendResult(id='q"\\\u2028', inserted=False, session_status=None),
]


@pytest.mark.parametrize("result", RESULTS, ids=lambda result: result.id)
def test_an_append_result_renders_to_the_models_bytes(result: AppendResult) -> None:
    fast, model = respond_append_result(result), respond(AppendResultBody.of(result))

    assert fast.body == model.body
    assert fast.headers.items() == model.headers.items()


@pytest.mark.parametrize("count", [0, 1, len(RESULTS)])
def test_a_batch_of_append_results_renders_to_the_models_bytes(count: int) -> None:
    results = RESULTS[:count]
    fast, model = respond_append_results(results), respond(AppendResultsBody.of(results))

    assert fast.body == model.body
    assert fast.headers.items() == model.headers.items()


def test_a_rendered_append_result_counts_its_record_as_the_model_does() -> None:
    counted = []
    for fast in (True, False):
        exchange = Exchange()
        token = EXCHANGE.set(exchange)
        try:
            if fast:
                respond_append_results(RESULTS)
            else:
                respond(AppendResultsBody.of(RESULTS))
        finally:
            EXCHANGE.reset(token)
        counted.append(dict(exchange.outcomes))

    assert counted[0] == counted[1]
    assert counted[0]
