"""The console's transcript view reads a prefix of the run's transcript records
(``GET /v1/runs/{id}/transcript-records``, CONTRACT.md 12.3) up to the run's last record,
page by page, and its pages stay those of that prefix while the run writes on."""

from __future__ import annotations

import re
from html import unescape

import httpx
import pytest

from runtime_store_client import HttpStore, Record, RunStart
from runtime_store_client.transcript import Message, Role, TextPart
from tests.console.conftest import World, transcript
from tests.contract.builders import all_records, record, run_start, started_record, uid

PAGE = 100  # app.console.transcript.TRANSCRIPT_PAGE_RECORDS


def _fragment(world: World, **params: str) -> httpx.Response:
    return httpx.get(
        f"{world.server.base_url}/console/fragments/run/transcript",
        params=params,
        headers={"Authorization": f"Bearer {world.reader}"},
        timeout=30,
    )


def _new_run(store: HttpStore) -> RunStart:
    run = run_start(run_id=uid("run-transcript"))
    store.start_one_shot_run(run, started_record(run))
    return run


def _said(run: RunStart, key: str, text: str) -> Record:
    said: Record = transcript(run, key, 1, Message(role=Role.USER, parts=[TextPart(text=text)]))
    return said


def _through(html: str) -> str:
    found = re.search(r'data-through="(\d+)"', html)
    assert found, html
    return found[1]


def _next(html: str) -> str:
    found = re.search(r'<a href="([^"]+)" rel="next">', html)
    return unescape(found[1]) if found else ""


def _message_indexes(html: str) -> list[int]:
    return [int(index) for index in re.findall(r'data-index="(\d+)"', html)]


@pytest.mark.parametrize("records", [1, 2, 3, 5, 8, 17, 64, 100])
def test_the_view_reads_up_to_the_runs_last_record(world: World, records: int) -> None:
    with world.store() as store:
        run = _new_run(store)
        for n in range(1, records):
            kind = n % 3 == 0  # transcript records among notes
            store.append_run_record(
                _said(run, f"t{n}", f"message {n}") if kind else record(run, event_key=f"n{n}")
            )
        last = all_records(store, run.run_id)[-1].id

    html = _fragment(world, run_id=run.run_id).text

    assert _through(html) == last == str(records)
    assert _message_indexes(html) == list(range((records - 1) // 3))


def test_pages_follow_one_prefix_while_the_run_writes_on(world: World) -> None:
    with world.store() as store:
        run = _new_run(store)
        store.append_run_records(
            run.run_id,
            [_said(run, f"t{n}", f"message {n}") for n in range(PAGE + 20)],
        )
        first = _fragment(world, run_id=run.run_id).text
        # Written after the view opened: never on its pages.
        store.append_run_records(
            run.run_id,
            [_said(run, f"late{n}", f"late {n}") for n in range(30)],
        )

    assert _through(first) == str(PAGE + 21)
    assert _message_indexes(first) == list(range(PAGE))
    following = _next(first)
    assert f"through={PAGE + 21}" in following
    assert f"after={PAGE + 1}" in following  # the last record ID of the first page
    second = httpx.get(
        world.server.base_url + following.replace("/console/run/", "/console/fragments/run/"),
        headers={"Authorization": f"Bearer {world.reader}"},
        timeout=30,
    ).text
    assert _message_indexes(second) == list(range(PAGE, PAGE + 20))
    assert "late 0" not in second
    assert _next(second) == ""
    latest = _fragment(world, run_id=run.run_id).text
    assert _through(latest) == str(PAGE + 51)  # opened again: the run's new last record


def test_a_payload_that_is_not_a_message_array_is_shown_as_invalid_transcript(
    world: World,
) -> None:
    with world.store() as store:
        run = _new_run(store)
        store.append_run_record(
            record(run, event_key="broken", type="transcript_messages_appended", payload=b"{}")
        )

    response = _fragment(world, run_id=run.run_id)

    assert response.status_code == 422
    assert 'data-problem="invalid_transcript"' in response.text
    assert "broken" in response.text


def test_the_view_of_an_unknown_run_shows_run_not_found(world: World) -> None:
    response = _fragment(world, run_id="no-such-run")

    assert response.status_code == 404
    assert 'data-problem="run_not_found"' in response.text


def test_a_position_not_of_the_run_shows_invalid_transcript_position(world: World) -> None:
    response = _fragment(world, run_id="run-failed", through="9999")

    assert response.status_code == 422
    assert 'data-problem="invalid_transcript_position"' in response.text
