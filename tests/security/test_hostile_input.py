"""Hostile JSON through every route family (CONTRACT.md 2.6 and 2.8).

``test_bad_inputs`` puts bad literals into every field and asks only for a 4xx; this suite
holds the service to the rules of 2.8 for the values a hostile or merely unlucky client
sends: JSON nested 129 and 10,000 deep, lone surrogates escaped in payloads (``"\\ud83d"``,
a cut emoji: ordinary model output) and in identifiers, numbers beyond every machine type
(``1e400``, an integer of 5,001 digits), duplicate keys, ``NaN``/``Infinity`` and byte order
marks. Deeper than 128 is ``invalid_argument`` and writes nothing; an identifier holding a
lone surrogate is ``invalid_argument`` with a problem body that still encodes; every
payload a write accepted is returned byte for byte by every read (pages, the live streams,
export and import, the console) and no read answers a server error (a transcript that
cannot be decoded is the documented ``invalid_transcript``).

The app runs in process over each database, and the reads of accepted writes run over a
live server as well (the console's in-process API calls and the streams included).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote

import httpx
import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient
from pydantic import SecretStr
from sqlalchemy.engine import Engine

from app.domain.json_bounds import (
    MAX_BODY_DEPTH,
    MAX_JSON_DEPTH,
    text_nests_deeper,
    value_nests_deeper,
)
from app.domain.tokens import Role
from app.main import create_app
from app.settings import Settings
from app.storage import SqlStore, create_engine
from app.storage.access.tokens import Tokens
from app.storage.database.tables import memory_events
from app.storage.verify import verify_database
from runtime_store_client import InvalidArgumentError, MemoryEvent, RunStart, RunStatus
from tests.api.wire_builders import (
    PROBLEM_JSON,
    T0_WIRE,
    append_body,
    cancellation_body,
    child_start_body,
    create_session,
    note,
    one_shot_body,
    root_start_body,
    start_root,
    suspension_body,
    terminal_body,
    unchanged,
    wire_record,
)
from tests.conftest import LiveServer, wipe
from tests.contract.builders import Backend, at, new_session, record, run_start, uid
from tests.contract.builders import start_root as store_start_root
from tests.security import fresh_sqlite_url

JSON: Final = {"content-type": "application/json"}
NDJSON: Final = {"content-type": "application/x-ndjson"}
#: Where a hostile JSON literal goes in a body built as a dict.
MARK: Final = "__HOSTILE__"
#: A cut emoji as JSON text: the high half of U+1F600, escaped and alone.
CUT_EMOJI: Final = '"\\ud83d"'
#: An integer literal longer than Python converts by default (4,300 digits).
HUGE_INTEGER: Final = "1" + "0" * 5_000


def arrays(depth: int, inner: str = "1") -> str:
    """JSON text of ``depth`` nested arrays around ``inner`` (``arrays(2)`` is ``[[1]]``)."""
    return "[" * depth + inner + "]" * depth


def objects(depth: int, inner: str = "1") -> str:
    """JSON text of ``depth`` nested objects around ``inner``."""
    return '{"k":' * depth + inner + "}" * depth


def body_text(body: Mapping[str, Any], literal: str) -> str:
    """``body`` as JSON text with the ``MARK`` string replaced by the raw ``literal``."""
    text = json.dumps(body)
    assert json.dumps(MARK) in text
    return text.replace(json.dumps(MARK), literal)


def payload_text(payload: str) -> str:
    """A payload (JSON text) as the JSON string literal that carries it on the wire,
    written without Python's help so escapes in it stay exactly as they are."""
    return '"' + payload.replace("\\", "\\\\").replace('"', '\\"') + '"'


def assert_invalid_argument(response: httpx.Response, label: str, *, deep: bool = False) -> None:
    """A 422 ``invalid_argument`` problem whose body is valid UTF-8 JSON."""
    assert response.status_code == 422, (label, response.status_code, response.text[:300])
    assert response.headers["content-type"] == PROBLEM_JSON, label
    problem = json.loads(response.content.decode("utf-8"))  # strict UTF-8: no lone surrogate
    assert problem["code"] == "invalid_argument", (label, problem)
    if deep:
        assert "nests deeper than" in problem["detail"], (label, problem["detail"])


# --- the bound ---------------------------------------------------------------------------


def test_the_bound_is_128_arrays_and_objects_outside_strings() -> None:
    for text in (arrays(128), objects(128), '{"a":' + arrays(127) + "}", "[" * 127 + "]" * 127):
        assert not text_nests_deeper(text), text[:20]
        assert not value_nests_deeper(json.loads(text)), text[:20]
    for text in (arrays(129), objects(129), '[{"a":' * 65 + "1" + "}]" * 65, "[" * 10_000):
        assert text_nests_deeper(text), text[:20]
    for text in (arrays(129), objects(129), '[{"a":' * 65 + "1" + "}]" * 65):
        assert value_nests_deeper(json.loads(text)), text[:20]
    # Brackets inside strings are text, escaped quotes and backslashes included.
    inside = json.dumps(["[" * 500, '\\"[[[', "{" * 300 + "\\"])
    assert not text_nests_deeper(arrays(127, inside))
    assert text_nests_deeper(arrays(128, inside))
    assert MAX_JSON_DEPTH == 128
    assert MAX_BODY_DEPTH == MAX_JSON_DEPTH + 3  # a memory append: body, events, event


@dataclass(frozen=True)
class World:
    """A session with a running root run (the target of every run write)."""

    session_id: str
    run: RunStart

    @property
    def memory_url(self) -> str:
        return f"/v1/agents/{self.run.agent_id}/runs/{self.run.run_id}/memory"


def _world(http: httpx.Client) -> World:
    session_id = create_session(http)
    return World(session_id, start_root(http, session_id))


def _memory_body(data: Any = MARK, labels: Any = None) -> dict[str, Any]:
    return {
        "events": [
            {
                "type": "user_message",
                "timestamp": T0_WIRE,
                "data": data,
                "labels": labels if labels is not None else {"k": "v"},
            }
        ]
    }


def _with_payload(body: dict[str, Any], *path: str | int) -> dict[str, Any]:
    """``body`` with the payload at ``path`` (a record's key) set to ``MARK``."""
    copy: dict[str, Any] = json.loads(json.dumps(body))
    target: Any = copy
    for step in path:
        target = target[step]
    target["payload"] = MARK
    return copy


def _deep_requests(world: World, depth: int) -> Iterator[tuple[str, str, str, bool]]:
    """(label, url, body text, whether the refusal must name the bound) of writes that
    each carry one JSON value nested ``depth`` deep."""
    run = world.run
    deep = arrays(depth)
    as_payload = payload_text(deep)
    lifecycle = payload_text('{"reason":"user_requested","x":' + arrays(depth - 1) + "}")
    fresh = run_start(session_id=world.session_id)
    one_shot = run_start()
    child = run_start(session_id=world.session_id, parent_run_id=run.run_id)
    run_url = f"/v1/runs/{run.run_id}"
    payloads = {
        "append": (f"{run_url}/records", _with_payload(append_body(note(run, "k")), "record")),
        "batch": (
            f"{run_url}/records/batch",
            _with_payload(
                {"records": [wire_record(note(run, "b1")), wire_record(note(run, "b2"))]},
                "records",
                1,
            ),
        ),
        "root start": (
            "/v1/runs/root-starts",
            _with_payload(root_start_body(fresh), "started"),
        ),
        "child start link": (
            "/v1/runs/child-starts",
            _with_payload(child_start_body(run, child), "parent_linked"),
        ),
        "one-shot start": (
            "/v1/runs/one-shot-starts",
            _with_payload(one_shot_body(one_shot), "started"),
        ),
        "suspension": (f"{run_url}/suspension", _with_payload(suspension_body(run), "record")),
        "terminal": (
            f"{run_url}/terminal",
            _with_payload(terminal_body(run, RunStatus.COMPLETED), "record"),
        ),
        "terminal repair": (
            f"{run_url}/terminal/repair",
            _with_payload(terminal_body(run, RunStatus.COMPLETED), "record"),
        ),
        "suspension repair": (
            f"{run_url}/suspension/repair",
            _with_payload(suspension_body(run), "record"),
        ),
    }
    for label, (url, body) in payloads.items():
        yield f"{label} payload {depth}", url, body_text(body, as_payload), True
    cancellation = _with_payload(cancellation_body(run), "record")
    yield (
        f"cancellation payload {depth}",
        f"{run_url}/cancellation",
        body_text(cancellation, lifecycle),
        True,
    )
    # Memory data nested ``depth`` deep in all (an object holding ``depth - 1`` arrays).
    data = '{"a":' + arrays(depth - 1) + "}"
    yield f"memory data {depth}", world.memory_url, body_text(_memory_body(), data), True
    labeled = root_start_body(run_start(session_id=world.session_id))
    labeled["run"]["labels"] = {"team": MARK}
    yield f"label value {depth}", "/v1/runs/root-starts", body_text(labeled, deep), True
    # A value deep where a string belongs: the body scan or the field's type refuses it.
    session = {"session_id": MARK, "created_at": T0_WIRE}
    yield f"session id {depth}", "/v1/sessions", body_text(session, deep), depth > MAX_BODY_DEPTH


_POST_ROUTES: Final = (
    "/v1/sessions",
    "/v1/sessions/{session}/end",
    "/v1/runs/root-starts",
    "/v1/runs/child-starts",
    "/v1/runs/one-shot-starts",
    "/v1/runs/one-shot-child-starts",
    "/v1/runs/{run}/records",
    "/v1/runs/{run}/records/batch",
    "/v1/runs/{run}/cancellation",
    "/v1/runs/{run}/suspension",
    "/v1/runs/{run}/terminal",
    "/v1/runs/{run}/suspension/repair",
    "/v1/runs/{run}/terminal/repair",
    "/v1/agents/{agent}/runs/{run}/memory",
)


def test_json_nested_deeper_than_128_is_invalid_argument(api: TestClient) -> None:
    world = _world(api)
    sent = 0
    with unchanged(api, [world.run.run_id], world.session_id):
        for depth in (MAX_JSON_DEPTH + 1, 10_000):
            for label, url, body, names_bound in _deep_requests(world, depth):
                response = api.post(url, content=body, headers=JSON)
                assert_invalid_argument(response, label, deep=names_bound)
                sent += 1
        # A whole body that is a depth bomb, on every route that takes JSON.
        for route in _POST_ROUTES:
            url = route.format(
                session=world.session_id, run=world.run.run_id, agent=world.run.agent_id
            )
            for bomb in ("[" * 10_000, arrays(10_000), objects(MAX_BODY_DEPTH + 1)):
                response = api.post(url, content=bomb, headers=JSON)
                assert_invalid_argument(response, f"{url} bomb", deep=True)
                sent += 1
    assert api.get(world.memory_url).json()["events"] == []
    assert sent > 60


def test_json_nested_exactly_128_deep_is_accepted_and_read_back(api: TestClient) -> None:
    world = _world(api)
    run = world.run
    payloads = {
        "arrays": arrays(MAX_JSON_DEPTH),
        "objects": objects(MAX_JSON_DEPTH),
        "mixed": '[{"a":' * 64 + CUT_EMOJI + "}]" * 64,
    }
    for key, payload in payloads.items():
        body = body_text(
            _with_payload(append_body(note(run, key)), "record"), payload_text(payload)
        )
        assert (
            api.post(f"/v1/runs/{run.run_id}/records", content=body, headers=JSON).status_code
            == 200
        )
    # A lifecycle payload at the bound: a cancellation intent ignores keys besides reason.
    intent = '{"reason":"user_requested","x":' + arrays(MAX_JSON_DEPTH - 1) + "}"
    body = body_text(_with_payload(cancellation_body(run), "record"), payload_text(intent))
    response = api.post(f"/v1/runs/{run.run_id}/cancellation", content=body, headers=JSON)
    assert response.status_code == 200, response.text
    # Memory data 128 deep in all: the request body is then 131 deep.
    data = '{"a":' + arrays(MAX_JSON_DEPTH - 1) + "}"
    assert (
        api.post(
            world.memory_url, content=body_text(_memory_body(), data), headers=JSON
        ).status_code
        == 204
    )
    snapshot = api.get(world.memory_url)
    assert snapshot.status_code == 200
    assert snapshot.json()["events"][0]["data"] == json.loads(data)
    page = api.get(f"/v1/runs/{run.run_id}/records?limit=1000").json()["records"]
    stored = {item["event_key"]: item["payload"] for item in page}
    assert {key: stored[key] for key in payloads} == payloads
    assert stored["cancel"] == intent
    for path in (
        f"/console/fragments/run/records?run_id={run.run_id}",
        f"/console/fragments/run?run_id={run.run_id}",
        f"/v1/runs/{run.run_id}/transcript",
        f"/v1/sessions/{world.session_id}/export",
    ):
        assert api.get(path).status_code == 200, path


def test_a_depth_bomb_from_a_caller_without_a_token_is_unauthenticated(tmp_path: Path) -> None:
    """The bound is not an oracle: a caller who may not write is told so first."""
    url = fresh_sqlite_url(tmp_path)
    key = "hostile-input-token-key"
    engine = create_engine(url)
    try:
        token = Tokens(engine, key).create("hostile-admin", Role.ADMIN)
        settings = Settings(database_url=url, token_key=SecretStr(key))
        with TestClient(create_app(settings), raise_server_exceptions=False) as client:
            bomb = "[" * 10_000
            refused = client.post("/v1/sessions", content=bomb, headers=JSON)
            assert (refused.status_code, refused.json()["code"]) == (401, "unauthenticated")
            told = client.post(
                "/v1/sessions",
                content=bomb,
                headers={**JSON, "Authorization": f"Bearer {token}"},
            )
            assert_invalid_argument(told, "with a token", deep=True)
    finally:
        engine.dispose()


# --- lone surrogates in identifiers ------------------------------------------------------

#: A lone surrogate as JSON text, high and low.
LONE: Final = ('"a\\ud800"', '"\\udfff"')


def _surrogate_requests(world: World) -> Iterator[tuple[str, str, str]]:
    """(label, url, body text) of writes that put a lone surrogate where 2.6 forbids it."""
    run = world.run
    run_url = f"/v1/runs/{run.run_id}"
    fresh = run_start(session_id=world.session_id)

    def at_key(body: dict[str, Any], *path: str | int) -> dict[str, Any]:
        copy: dict[str, Any] = json.loads(json.dumps(body))
        target: Any = copy
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = MARK
        return copy

    record = append_body(note(run, "k"))
    batch = {"records": [wire_record(note(run, "b1")), wire_record(note(run, "b2"))]}
    labeled = root_start_body(fresh)
    labeled["run"]["labels"] = {MARK: "v"}
    valued = root_start_body(fresh)
    valued["run"]["labels"] = {"team": MARK}
    targets: dict[str, tuple[str, dict[str, Any]]] = {
        "session id": ("/v1/sessions", {"session_id": MARK, "created_at": T0_WIRE}),
        "run id": ("/v1/runs/root-starts", at_key(root_start_body(fresh), "run", "run_id")),
        "agent id": ("/v1/runs/root-starts", at_key(root_start_body(fresh), "run", "agent_id")),
        "started key": (
            "/v1/runs/root-starts",
            at_key(root_start_body(fresh), "started", "event_key"),
        ),
        "label key": ("/v1/runs/root-starts", labeled),
        "label value": ("/v1/runs/root-starts", valued),
        "event key": (f"{run_url}/records", at_key(record, "record", "event_key")),
        "type": (f"{run_url}/records", at_key(record, "record", "type")),
        "turn id": (f"{run_url}/records", at_key(record, "record", "turn_id")),
        "batch event key": (f"{run_url}/records/batch", at_key(batch, "records", 1, "event_key")),
        "batch type": (f"{run_url}/records/batch", at_key(batch, "records", 0, "type")),
        "cancellation reason": (
            f"{run_url}/cancellation",
            at_key(cancellation_body(run), "reason"),
        ),
        "checkpoint id": (
            f"{run_url}/suspension",
            at_key(suspension_body(run), "checkpoint", "id"),
        ),
        "memory type": (world.memory_url, at_key(_memory_body(), "events", 0, "type")),
        "memory data value": (world.memory_url, _memory_body({"text": MARK})),
        "memory label": (world.memory_url, _memory_body(labels={"k": MARK})),
    }
    for label, (url, body) in targets.items():
        for literal in LONE:
            yield label, url, body_text(body, literal)
    # A data key is a memory field as well.
    yield "memory data key", world.memory_url, body_text(_memory_body(), '{"\\ud800":1}')


def test_lone_surrogates_in_identifiers_keys_and_types_are_invalid_argument_everywhere(
    api: TestClient, engine: Engine
) -> None:
    world = _world(api)
    sent = 0
    with unchanged(api, [world.run.run_id], world.session_id):
        for label, url, body in _surrogate_requests(world):
            assert_invalid_argument(api.post(url, content=body, headers=JSON), label)
            sent += 1
    assert api.get(world.memory_url).json()["events"] == []
    assert sent >= 30
    # The batch names the refused record; its key comes back escaped, never raw.
    batch = {"records": [wire_record(note(world.run, "b1")), wire_record(note(world.run, "b2"))]}
    batch["records"][1]["event_key"] = MARK
    response = api.post(
        f"/v1/runs/{world.run.run_id}/records/batch",
        content=body_text(batch, '"cut \\ud83d"'),
        headers=JSON,
    )
    assert_invalid_argument(response, "batch key")
    assert response.json()["event_key"] == "cut \\ud83d"
    single = api.post(
        f"/v1/runs/{world.run.run_id}/records",
        content=body_text(
            {"record": {**wire_record(note(world.run, "x")), "event_key": MARK}}, '"cut \\ud83d"'
        ),
        headers=JSON,
    )
    assert_invalid_argument(single, "single key")
    assert verify_database(engine).ok


# --- every accepted payload is readable by every read ------------------------------------

#: Payloads valid under 1.7 that a careless reader would choke on, by event key.
ACCEPTED_PAYLOADS: Final = {
    "cut-emoji": CUT_EMOJI,
    "cut-emoji-in-text": '{"text":"I like \\ud83d"}',
    "low-half": '["\\ude00","x"]',
    "surrogate-key": '{"\\udc00":1}',
    "whole-emoji-escaped": '"\\ud83d\\ude00"',
    "escaped-nul": '"a\\u0000b"',
    "deepest": arrays(MAX_JSON_DEPTH),
    "deepest-with-cut-emoji": '[{"a":' * 64 + CUT_EMOJI + "}]" * 64,
    "huge-float": "1e400",
    "huge-negative-float": "[-1e400]",
    "huge-integer": HUGE_INTEGER,
    "duplicate-keys": '{"a":1,"a":2}',
    "minus-zero": "-0",
    "exponent": "1E+2",
    "brackets-in-strings": json.dumps(["[" * 1_000, "{" * 1_000]),
    "markup": '"<script>window.__x = 1</script>"',
}
#: A transcript record whose text cannot be decoded as a transcript (10.4: not a 500).
CUT_TRANSCRIPT: Final = (
    '[{"role":"user","parts":[{"kind":"text","text":"hi \\ud83d"}],"meta":null}]'
)
#: The failure message of the run's terminal record: a cut emoji in a lifecycle payload.
CUT_FAILURE: Final = (
    '{"status":"failed","phase":"failed","failure":{"message":"tool said \\ud83d",'
    '"kind":"timeout"}}'
)


@pytest.fixture
def served(live_server: LiveServer, request: pytest.FixtureRequest) -> tuple[LiveServer, Engine]:
    """A live server and its (wiped) database."""
    kind = "postgres" if "postgresql" in live_server.database_url else "sqlite"
    engine: Engine = request.getfixturevalue(f"{kind}_engine")
    return live_server, engine


def _append(http: httpx.Client, run: RunStart, key: str, payload: str, type_: str) -> None:
    body = {"record": {**wire_record(record(run, event_key=key, type=type_)), "payload": MARK}}
    response = http.post(
        f"/v1/runs/{run.run_id}/records",
        content=body_text(body, payload_text(payload)),
        headers=JSON,
    )
    assert response.status_code == 200, (key, response.text)


def _first_event(base_url: str, path: str) -> dict[str, Any]:
    """The record of the first event of a stream that may never end."""
    timeout = httpx.Timeout(10, read=20)
    with (
        httpx.Client(base_url=base_url, timeout=timeout) as client,
        client.stream("GET", path) as response,
    ):
        assert response.status_code == 200, response.read()
        event = ""
        for line in response.iter_lines():
            if line.startswith("event:"):
                event = line.partition(":")[2].strip()
            elif line.startswith("data:") and event == "record":
                found: dict[str, Any] = json.loads(line.partition(":")[2])
                return found
    raise AssertionError(f"{path} ended before its first record")


def _stream_records(text: str) -> list[dict[str, Any]]:
    """The records of a whole (ended) event stream."""
    found = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields = dict(line.partition(":")[::2] for line in block.split("\n") if ":" in line)
        if fields.get("event", "").strip() == "record":
            found.append(json.loads(fields["data"]))
    return found


def _exported_payloads(data: bytes) -> dict[str, str]:
    lines = [json.loads(line) for line in data.splitlines()]
    return {
        line["record"]["event_key"]: line["record"]["payload"] for line in lines if "record" in line
    }


def _payloads(records: list[dict[str, Any]]) -> dict[str, str]:
    return {item["event_key"]: item["payload"] for item in records}


def test_every_accepted_payload_is_readable_by_every_read(
    served: tuple[LiveServer, Engine],
) -> None:
    server, engine = served
    with httpx.Client(base_url=server.base_url, timeout=30) as http:
        world = _world(http)
        run = world.run
        sent = dict(ACCEPTED_PAYLOADS)
        for key, payload in ACCEPTED_PAYLOADS.items():
            _append(http, run, key, payload, "planner_note")
        _append(http, run, "cut-transcript", CUT_TRANSCRIPT, "transcript_messages_appended")
        sent["cut-transcript"] = CUT_TRANSCRIPT
        batch = {
            "records": [
                {**wire_record(note(run, "batch-cut")), "payload": "__B1__"},
                {**wire_record(note(run, "batch-deep")), "payload": "__B2__"},
            ]
        }
        text = (
            json.dumps(batch)
            .replace('"__B1__"', payload_text('{"t":"\\udbff"}'))
            .replace('"__B2__"', payload_text(objects(MAX_JSON_DEPTH)))
        )
        batched = http.post(f"/v1/runs/{run.run_id}/records/batch", content=text, headers=JSON)
        assert batched.status_code == 200, batched.text
        sent |= {"batch-cut": '{"t":"\\udbff"}', "batch-deep": objects(MAX_JSON_DEPTH)}
        data = '{"a":' + arrays(MAX_JSON_DEPTH - 1) + "}"
        memory = http.post(world.memory_url, content=body_text(_memory_body(), data), headers=JSON)
        assert memory.status_code == 204, memory.text
        # The session stream's first event, before the run ends (the stream stays open).
        first = _first_event(server.base_url, f"/v1/sessions/{world.session_id}/records/stream")
        assert first["type"] == "run_started"
        terminal = {**terminal_body(run, RunStatus.FAILED)}
        terminal["record"] = {**terminal["record"], "payload": MARK}
        finished = http.post(
            f"/v1/runs/{run.run_id}/terminal",
            content=body_text(terminal, payload_text(CUT_FAILURE)),
            headers=JSON,
        )
        assert finished.status_code == 200, finished.text
        sent["terminal"] = CUT_FAILURE

        reads = {
            path: http.get(path)
            for path in (
                f"/v1/runs/{run.run_id}",
                f"/v1/runs/{run.run_id}/records?limit=1000",
                f"/v1/sessions/{world.session_id}/records?limit=1000",
                f"/v1/sessions/{world.session_id}/runs",
                f"/v1/runs?session_id={world.session_id}",
                f"/v1/runs/{run.run_id}/records/stream",
                world.memory_url,
                f"/v1/sessions/{world.session_id}/export",
                f"/console/fragments/run?run_id={quote(run.run_id)}",
                f"/console/fragments/run/records?run_id={quote(run.run_id)}",
                f"/console/fragments/run/children?run_id={quote(run.run_id)}",
                f"/console/fragments/session?session_id={quote(world.session_id)}",
            )
        }
        for path, response in reads.items():
            assert response.status_code == 200, (path, response.status_code, response.text[:300])
        # A transcript that cannot be decoded is the documented problem, never a 500.
        for path in (
            f"/v1/runs/{run.run_id}/transcript",
            f"/v1/runs/{run.run_id}/transcript?validate=planner",
            f"/v1/runs/{run.run_id}/transcript?validate=bedrock&thinking=true",
            f"/console/fragments/run/transcript?run_id={quote(run.run_id)}",
        ):
            response = http.get(path)
            assert response.status_code == 422, (path, response.status_code, response.text[:300])
            if not path.startswith("/console"):
                assert response.json()["code"] == "invalid_transcript", path
            else:
                assert 'data-problem="invalid_transcript"' in response.text

        # Byte for byte: pages, the run's stream, the export.
        page = reads[f"/v1/runs/{run.run_id}/records?limit=1000"].json()["records"]
        assert {key: _payloads(page)[key] for key in sent} == sent
        session_page = reads[f"/v1/sessions/{world.session_id}/records?limit=1000"].json()
        assert {key: _payloads(session_page["records"])[key] for key in sent} == sent
        streamed = _stream_records(reads[f"/v1/runs/{run.run_id}/records/stream"].text)
        assert streamed == page
        exported = reads[f"/v1/sessions/{world.session_id}/export"].content
        assert {key: _exported_payloads(exported)[key] for key in sent} == sent
        snapshot = reads[world.memory_url].json()
        assert snapshot["events"][0]["data"] == json.loads(data)
        # The console shows what it cannot pretty-print as the exact text, escapes kept.
        timeline = reads[f"/console/fragments/run/records?run_id={quote(run.run_id)}"].text
        assert "\\ud83d" in timeline
        assert "\\udbff" in timeline
        assert "&lt;script&gt;" in timeline
        assert (
            "tool said \\ud83d" in reads[f"/console/fragments/run?run_id={quote(run.run_id)}"].text
        )

        # Export, import into an empty database, export again: the same bytes.
        wipe(engine)
        imported = http.post("/v1/sessions/import", content=exported, headers=NDJSON)
        assert imported.status_code == 200, imported.text
        again = http.get(f"/v1/sessions/{world.session_id}/export")
        assert again.status_code == 200
        assert again.content == exported
        reread = http.get(f"/v1/runs/{run.run_id}/records?limit=1000").json()["records"]
        assert reread == page
    assert verify_database(engine).ok


# --- numbers, duplicate keys, NaN, byte order marks ---------------------------------------

#: Payload texts that are not JSON (1.7 refuses them): ``invalid_argument``, never a 5xx.
REFUSED_PAYLOADS: Final = {
    "nan": "NaN",
    "infinity": "[Infinity]",
    "minus-infinity": '{"a":-Infinity}',
    "byte-order-mark": "\ufeff{}",
    "two-values": "1 2",
    "deeper": arrays(MAX_JSON_DEPTH + 1),
}


def test_huge_numbers_duplicate_keys_nan_and_byte_order_marks_never_answer_5xx(
    api: TestClient, engine: Engine
) -> None:
    world = _world(api)
    run = world.run
    for key, payload in REFUSED_PAYLOADS.items():
        body = body_text(
            _with_payload(append_body(note(run, key)), "record"), payload_text(payload)
        )
        response = api.post(f"/v1/runs/{run.run_id}/records", content=body, headers=JSON)
        assert_invalid_argument(response, key)
    # Lifecycle payloads are strict, but a huge number is still JSON: refused where a
    # field needs a 64-bit integer, ignored where the key is ignored.
    suspension = suspension_body(run)
    suspension["record"]["payload"] = MARK
    suspended = (
        '{"SuspensionID":"cp-1","Version":"v1","PendingCount":'
        + HUGE_INTEGER
        + ',"RequiredTools":null}'
    )
    response = api.post(
        f"/v1/runs/{run.run_id}/suspension",
        content=body_text(suspension, payload_text(suspended)),
        headers=JSON,
    )
    assert_invalid_argument(response, "huge PendingCount")
    assert "64-bit" in response.json()["detail"]
    cancellation = _with_payload(cancellation_body(run), "record")
    intent = '{"reason":"user_requested","tokens":' + HUGE_INTEGER + "}"
    response = api.post(
        f"/v1/runs/{run.run_id}/cancellation",
        content=body_text(cancellation, payload_text(intent)),
        headers=JSON,
    )
    assert response.status_code == 200, response.text

    # Memory data: numbers no JSON reader can hold are refused; the rest reads back.
    for label, data in {
        "huge-float": '{"a":1e400}',
        "nan": '{"a":NaN}',
        "infinity": '{"a":[Infinity]}',
        "huge-integer": '{"a":' + HUGE_INTEGER + "}",
    }.items():
        response = api.post(world.memory_url, content=body_text(_memory_body(), data), headers=JSON)
        assert_invalid_argument(response, f"memory {label}")
    kept = {
        "long-integer": '{"a":' + "9" * 4_000 + "}",
        "duplicate-keys": '{"a":1,"a":2}',
        "float": '{"a":1.5e300,"b":-0.0}',
    }
    for data in kept.values():
        response = api.post(world.memory_url, content=body_text(_memory_body(), data), headers=JSON)
        assert response.status_code == 204, response.text
    snapshot = api.get(world.memory_url)
    assert snapshot.status_code == 200
    assert [event["data"] for event in snapshot.json()["events"]] == [
        json.loads(data) for data in kept.values()
    ]

    # Whole bodies: a byte order mark, duplicate keys, NaN where a time belongs.
    bom = "\ufeff" + json.dumps({"session_id": uid("bom"), "created_at": T0_WIRE})
    duplicated = (
        '{"session_id":"a","session_id":"' + uid("dup") + '","created_at":"' + T0_WIRE + '"}'
    )
    for label, raw in {
        "byte order mark": bom.encode(),
        "duplicate keys": duplicated.encode(),
        "nan time": b'{"session_id":"nan-time","created_at":NaN}',
        "huge limit": b'{"session_id":"x","created_at":' + HUGE_INTEGER.encode() + b"}",
        "invalid utf-8": b'{"session_id":"\xed\xa0\x80","created_at":"' + T0_WIRE.encode() + b'"}',
    }.items():
        response = api.post("/v1/sessions", content=raw, headers=JSON)
        assert response.status_code < 500, (label, response.text)
        assert response.headers["content-type"] in (PROBLEM_JSON, "application/json"), label
    for path in (
        f"/v1/runs/{run.run_id}/records?limit=1000",
        f"/v1/sessions/{world.session_id}/records",
        f"/v1/sessions/{world.session_id}/export",
        f"/v1/runs/{run.run_id}/transcript",
        f"/console/fragments/run?run_id={run.run_id}",
        f"/console/fragments/run/records?run_id={run.run_id}",
        f"/console/fragments/session?session_id={world.session_id}",
    ):
        assert api.get(path).status_code == 200, path
    stored = _payloads(api.get(f"/v1/runs/{run.run_id}/records?limit=1000").json()["records"])
    assert stored["cancel"] == intent
    assert not set(REFUSED_PAYLOADS) & set(stored)
    assert verify_database(engine).ok


# --- values stored before the bound -------------------------------------------------------


def test_memory_data_stored_deeper_than_the_bound_before_it_existed_still_reads_back(
    api: TestClient, engine: Engine
) -> None:
    """A database written before 2.8 may hold memory nested past 128 (and past the 255
    levels pydantic-core serialises): it stays readable, never a 500."""
    agent_id, run_id = "agent-old", uid("run-old")
    data = {"a": json.loads(arrays(600))}
    with engine.begin() as conn:
        conn.execute(
            sa.insert(memory_events),
            {
                "agent_id": agent_id,
                "run_id": run_id,
                "type": "user_message",
                "timestamp_ms": 1_000,
                "data": json.dumps(data, separators=(",", ":")),
                "labels": "{}",
            },
        )
    response = api.get(f"/v1/agents/{agent_id}/runs/{run_id}/memory")
    assert response.status_code == 200, response.text
    assert response.json()["events"][0]["data"] == data
    # A new write of the same data is refused before anything is written.
    response = api.post(
        f"/v1/agents/{agent_id}/runs/{run_id}/memory",
        content=body_text(_memory_body(), json.dumps(data)),
        headers=JSON,
    )
    assert_invalid_argument(response, "deep memory", deep=True)
    assert len(api.get(f"/v1/agents/{agent_id}/runs/{run_id}/memory").json()["events"]) == 1


# --- the same bound on every backend -------------------------------------------------------


def test_every_backend_accepts_128_deep_values_and_refuses_129_deep_ones(store: Backend) -> None:
    session = new_session(store)
    run = store_start_root(store, session.id).run
    accepted = record(run, event_key="deepest", payload=arrays(MAX_JSON_DEPTH).encode())
    assert store.append_run_record(accepted).inserted
    for depth in (MAX_JSON_DEPTH + 1, 10_000):
        deep = record(run, event_key=f"deeper-{depth}", payload=arrays(depth).encode())
        with pytest.raises(InvalidArgumentError, match="nests deeper than 128"):
            store.append_run_record(deep)
        with pytest.raises(InvalidArgumentError, match="nests deeper than 128"):
            store.append_run_records(run.run_id, [note(run, f"fine-{depth}"), deep])
        cut = replace(deep, event_key=f"cut-{depth}", payload=objects(depth).encode())
        with pytest.raises(InvalidArgumentError, match="nests deeper than 128"):
            store.append_run_record(cut)
    agent_id, run_id = uid("agent"), run.run_id
    deepest = {"a": json.loads(arrays(MAX_JSON_DEPTH - 1))}
    event = MemoryEvent(type="planner_note", timestamp=at(1), data=deepest, labels={})
    store.append_memory_events(agent_id, run_id, [event])
    deeper = replace(event, data={"a": json.loads(arrays(MAX_JSON_DEPTH))})
    with pytest.raises(InvalidArgumentError):
        store.append_memory_events(agent_id, run_id, [deeper])
    assert store.load_memory(agent_id, run_id).events == [event]
    assert [item.event_key for item in store.list_run_records(run.run_id).records][-1] == "deepest"


def test_the_service_refuses_memory_data_built_deeper_than_python_can_encode(
    engine: Engine,
) -> None:
    """In process, data nested far past the recursion limit is ``invalid_argument`` (the
    measure walks it with a stack of its own), not a ``RecursionError``."""
    store = SqlStore(engine)
    bomb: list[Any] = []
    inner = bomb
    for _ in range(50_000):
        inner.append([])
        inner = inner[0]
    event = MemoryEvent(type="planner_note", timestamp=at(1), data={"a": bomb}, labels={})
    with pytest.raises(InvalidArgumentError, match="nests deeper than 128"):
        store.append_memory_events("agent-1", uid("run"), [event])
    run = store_start_root(store, new_session(store).id).run
    payload = arrays(1_000_000).encode()
    with pytest.raises(InvalidArgumentError, match="nests deeper than 128"):
        store.append_run_record(replace(note(run, "bomb"), payload=payload))


def test_the_reported_server_errors_are_refusals_or_reads_over_a_live_server(
    live_server: LiveServer,
) -> None:
    """Issue 29, item 3, as it was found from outside: memory 256-990 deep, a payload 950
    deep, and a batch whose event key is a cut emoji each broke a later read or the answer."""
    with httpx.Client(base_url=live_server.base_url, timeout=30) as http:
        world = _world(http)
        run = world.run
        for depth in (256, 990):
            data = '{"a":' + arrays(depth - 1) + "}"
            response = http.post(
                world.memory_url, content=body_text(_memory_body(), data), headers=JSON
            )
            assert_invalid_argument(response, f"memory {depth}", deep=True)
            assert http.get(world.memory_url).status_code == 200
        for key, payload in {"cut": CUT_EMOJI, "deep": arrays(950)}.items():
            body = body_text(
                _with_payload(append_body(note(run, key)), "record"), payload_text(payload)
            )
            answer = http.post(f"/v1/runs/{run.run_id}/records", content=body, headers=JSON)
            if key == "deep":
                assert_invalid_argument(answer, "payload 950", deep=True)
            else:
                assert answer.status_code == 200, answer.text
            for fragment in ("run", "run/records"):
                shown = http.get(f"/console/fragments/{fragment}?run_id={quote(run.run_id)}")
                assert shown.status_code == 200, (fragment, shown.text[:300])
        batch = {"records": [{**wire_record(note(run, "b")), "event_key": MARK}]}
        response = http.post(
            f"/v1/runs/{run.run_id}/records/batch",
            content=body_text(batch, CUT_EMOJI),
            headers=JSON,
        )
        assert_invalid_argument(response, "batch key")
        assert response.json()["event_key"] == "\\ud83d"  # escaped, never a raw surrogate


def test_an_import_line_nested_deeper_than_128_is_invalid_argument_at_its_line(
    api: TestClient, engine: Engine
) -> None:
    world = _world(api)
    run = world.run
    assert api.post(
        f"/v1/runs/{run.run_id}/records", json=append_body(note(run, "note"))
    ).is_success
    memory = api.post(world.memory_url, json=_memory_body({"text": "hi"}))
    assert memory.status_code == 204
    exported = api.get(f"/v1/sessions/{world.session_id}/export").content
    lines = exported.splitlines(keepends=True)
    wipe(engine)

    def numbered(kind: str, key: str = "") -> int:
        for number, line in enumerate(lines, start=1):
            value = json.loads(line)
            if kind in value and (not key or value[kind].get("event_key") == key):
                return number
        raise AssertionError(kind)

    def with_line(number: int, change: Any) -> bytes:
        value = json.loads(lines[number - 1])
        changed = change(value)
        text = changed if isinstance(changed, str) else json.dumps(value)
        return b"".join(
            (text.encode() + b"\n") if index == number - 1 else line
            for index, line in enumerate(lines)
        )

    record_line, event_line = numbered("record", "note"), numbered("memory_event")
    cases = {
        "payload 129": (
            record_line,
            lambda value: value["record"].update(payload=arrays(MAX_JSON_DEPTH + 1)),
        ),
        "payload 10,000": (
            record_line,
            lambda value: value["record"].update(payload=arrays(10_000)),
        ),
        "memory data 129": (
            event_line,
            lambda value: value["memory_event"].update(
                data={"a": json.loads(arrays(MAX_JSON_DEPTH))}
            ),
        ),
        "a line 10,000 deep": (event_line, lambda _value: arrays(10_000)),
    }
    for label, (number, change) in cases.items():
        response = api.post(
            "/v1/sessions/import", content=with_line(number, change), headers=NDJSON
        )
        assert_invalid_argument(response, label, deep=label != "a line 10,000 deep")
        assert response.json()["line"] == number, label
    assert api.get(f"/v1/sessions/{world.session_id}").status_code == 404
    # The file as exported still imports: only the deep lines were refused.
    assert api.post("/v1/sessions/import", content=exported, headers=NDJSON).status_code == 200
