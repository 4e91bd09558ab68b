"""Wire JSON of contract inputs, HTTP steps that set up state, and problem assertions.

The contract builders (``tests.contract.builders``) make valid dataclasses; the functions
here turn them into the JSON the HTTP API takes (CONTRACT.md section 8: times as RFC 3339
UTC strings with milliseconds and ``Z``, payloads as strings, checkpoint data as base64)
without using the app's own serialisers. Every helper takes an ``httpx.Client``, so it
works for the in-process ``TestClient`` and for a live server alike.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx

from runtime_store_client import Checkpoint, Record, RunStart, RunStatus
from tests.contract.builders import (
    T0,
    canceled_record,
    cancellation_record,
    checkpoint,
    link_record,
    record,
    run_start,
    started_record,
    suspended_record,
    terminal_record,
    uid,
)

Json = dict[str, Any]

PROBLEM_JSON = "application/problem+json"
TITLES = {
    400: "Bad request",
    401: "Unauthenticated",
    403: "Permission denied",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    410: "Gone",
    413: "Payload too large",
    415: "Unsupported media type",
    422: "Invalid argument",
    500: "Internal error",
    503: "Unavailable",
}
UTC_MILLIS = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z")


# --- wire values -----------------------------------------------------------------------


def wire_time(value: datetime) -> str:
    """``2026-11-30T01:02:03.456Z``."""
    utc = value.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


T0_WIRE = wire_time(T0)


def wire_record(rec: Record, *, record_id: str = "") -> Json:
    """A record as the API takes it, or (with ``record_id``) as a list returns it."""
    return {
        "id": record_id,
        "event_key": rec.event_key,
        "run_id": rec.run_id,
        "agent_id": rec.agent_id,
        "session_id": rec.session_id,
        "turn_id": rec.turn_id,
        "type": rec.type,
        "payload": rec.payload.decode("utf-8"),
        "timestamp": wire_time(rec.timestamp),
    }


def wire_run(run: RunStart) -> Json:
    return {
        "run_id": run.run_id,
        "agent_id": run.agent_id,
        "session_id": run.session_id,
        "parent_run_id": run.parent_run_id,
        "predecessor_run_id": run.predecessor_run_id,
        "started_at": wire_time(run.started_at),
        "labels": dict(run.labels),
        "seed_end_id": run.seed_end_id,
    }


def wire_checkpoint(cp: Checkpoint) -> Json:
    return {"id": cp.id, "data": base64.b64encode(cp.data).decode("ascii")}


def appended(
    record_id: str, *, inserted: bool = True, session_status: str | None = "active"
) -> Json:
    """An append result as the API returns it."""
    return {"id": record_id, "inserted": inserted, "session_status": session_status}


def run_meta(
    run: RunStart,
    updated_at: str,
    *,
    status: str = "running",
    start_outcome: str = "proceed",
    cancellation_reason: str = "",
    successor_run_id: str = "",
    start_kind: str = "engine",
    seed_end_id: str = "",
) -> Json:
    """What ``GET /v1/runs/{run_id}`` returns for ``run``."""
    return {
        "run_id": run.run_id,
        "agent_id": run.agent_id,
        "session_id": run.session_id,
        "parent_run_id": run.parent_run_id,
        "status": status,
        "start_outcome": start_outcome,
        "started_at": wire_time(run.started_at),
        "updated_at": updated_at,
        "labels": dict(run.labels),
        "cancellation_reason": cancellation_reason,
        "successor_run_id": successor_run_id,
        "start_kind": start_kind,
        "seed_end_id": seed_end_id,
    }


# --- request bodies --------------------------------------------------------------------


def root_start_body(run: RunStart) -> Json:
    return {
        "run": wire_run(run),
        "started": wire_record(started_record(run)),
        "canceled": wire_record(canceled_record(run)),
    }


def child_start_body(parent: RunStart, child: RunStart) -> Json:
    return {
        "run": wire_run(child),
        "parent_linked": wire_record(link_record(parent, child)),
        "started": wire_record(started_record(child)),
        "canceled": wire_record(canceled_record(child)),
    }


def one_shot_body(run: RunStart) -> Json:
    return {"run": wire_run(run), "started": wire_record(started_record(run))}


def one_shot_child_body(parent: RunStart, child: RunStart) -> Json:
    return {
        "run": wire_run(child),
        "parent_linked": wire_record(link_record(parent, child)),
        "started": wire_record(started_record(child)),
    }


def cancellation_body(run: RunStart, reason: str = "user_requested", **kw: Any) -> Json:
    return {"reason": reason, "record": wire_record(cancellation_record(run, reason, **kw))}


def suspension_body(run: RunStart, cp: Checkpoint | None = None, **kw: Any) -> Json:
    cp = cp or checkpoint()
    return {
        "checkpoint": wire_checkpoint(cp),
        "record": wire_record(suspended_record(run, cp.id, **kw)),
    }


def terminal_body(run: RunStart, status: RunStatus, **kw: Any) -> Json:
    return {"status": str(status), "record": wire_record(terminal_record(run, status, **kw))}


def append_body(rec: Record) -> Json:
    return {"record": wire_record(rec)}


# --- HTTP steps ------------------------------------------------------------------------


def ok(response: httpx.Response, status: int = 200) -> Any:
    """The JSON body of a successful response (``None`` for 204)."""
    assert response.status_code == status, response.text
    if status == 204:
        assert response.content == b""
        return None
    assert response.headers["content-type"] == "application/json"
    return response.json()


def create_session(http: httpx.Client, session_id: str | None = None) -> str:
    session_id = session_id or uid("sess")
    ok(http.post("/v1/sessions", json={"session_id": session_id, "created_at": T0_WIRE}))
    return session_id


def end_session(http: httpx.Client, session_id: str) -> None:
    ok(http.post(f"/v1/sessions/{session_id}/end", json={"ended_at": T0_WIRE}))


def start_root(http: httpx.Client, session_id: str, **kw: Any) -> RunStart:
    run = run_start(session_id=session_id, **kw)
    ok(http.post("/v1/runs/root-starts", json=root_start_body(run)))
    return run


def start_child(http: httpx.Client, parent: RunStart, **kw: Any) -> RunStart:
    child = run_start(session_id=parent.session_id, parent_run_id=parent.run_id, **kw)
    ok(http.post("/v1/runs/child-starts", json=child_start_body(parent, child)))
    return child


def start_one_shot(http: httpx.Client, **kw: Any) -> RunStart:
    run = run_start(**kw)
    ok(http.post("/v1/runs/one-shot-starts", json=one_shot_body(run)))
    return run


def append(http: httpx.Client, rec: Record) -> Json:
    body: Json = ok(http.post(f"/v1/runs/{rec.run_id}/records", json=append_body(rec)))
    return body


def finish(http: httpx.Client, run: RunStart, status: RunStatus = RunStatus.COMPLETED) -> None:
    ok(http.post(f"/v1/runs/{run.run_id}/terminal", json=terminal_body(run, status)))


def suspend(http: httpx.Client, run: RunStart, cp: Checkpoint | None = None) -> None:
    ok(http.post(f"/v1/runs/{run.run_id}/suspension", json=suspension_body(run, cp)))


def note(run: RunStart, event_key: str, *, payload: bytes = b'{"note":"thinking"}') -> Record:
    """An ordinary ``planner_note`` record."""
    return record(run, event_key=event_key, payload=payload)


# --- observation -----------------------------------------------------------------------


@dataclass(frozen=True)
class Seen:
    """One GET: its path, status and body (a problem body without its request_id)."""

    path: str
    status: int
    body: Any


def _get(http: httpx.Client, path: str) -> Seen:
    response = http.get(path)
    body = response.json()
    if isinstance(body, dict):
        body.pop("request_id", None)
    return Seen(path, response.status_code, body)


def observe(http: httpx.Client, run_ids: Iterable[str] = (), session_id: str = "") -> list[Seen]:
    """Everything a reader can see of some runs and a session, through the GET endpoints.

    ``before = observe(...)``, the rejected write, then ``assert observe(...) == before``.
    """
    paths: list[str] = []
    for run_id in run_ids:
        paths += [
            f"/v1/runs/{run_id}",
            f"/v1/runs/{run_id}/suspension",
            f"/v1/runs/{run_id}/records?limit=1000",
        ]
    if session_id:
        paths += [
            f"/v1/sessions/{session_id}",
            f"/v1/sessions/{session_id}/status",
            f"/v1/sessions/{session_id}/runs?limit=1000",
            f"/v1/sessions/{session_id}/records?limit=1000",
        ]
    return [_get(http, path) for path in paths]


@contextmanager
def unchanged(
    http: httpx.Client, run_ids: Iterable[str] = (), session_id: str = ""
) -> Iterator[None]:
    """The block (a rejected write) changes nothing any GET endpoint can see."""
    run_ids = list(run_ids)
    before = observe(http, run_ids, session_id)
    yield
    assert observe(http, run_ids, session_id) == before


# --- problems --------------------------------------------------------------------------


def assert_problem(
    response: httpx.Response,
    status: int,
    code: str,
    *,
    errors: list[tuple[str, str]] | None = None,
    **fields: str,
) -> Json:
    """The response is exactly the problem ``code`` with ``fields`` (run_id, session_id, …).

    ``errors`` lists the ``(field, type)`` of each invalid field, in order. The detail is
    only required to be a non-empty string; everything else is compared exactly.
    """
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM_JSON
    body: Json = response.json()
    request_id = response.headers.get("x-request-id")
    assert request_id, f"the {status} problem has no X-Request-ID header: {response.text}"
    assert isinstance(body.get("detail"), str)
    assert body["detail"]
    expected: Json = {
        "type": f"urn:runtime-store:problem:{code}",
        "title": TITLES[status],
        "status": status,
        "detail": body["detail"],
        "code": code,
        "request_id": request_id,
        **fields,
    }
    if errors is not None:
        found = body.get("errors")
        assert isinstance(found, list), body
        for error in found:
            assert set(error) == {"field", "message", "type"}, error
            assert isinstance(error["message"], str)
            assert error["message"]
        assert [(error["field"], error["type"]) for error in found] == errors
        expected["errors"] = found
    assert body == expected
    return body


def assert_times(values: Mapping[str, Any], *keys: str) -> None:
    """Each named value is an RFC 3339 UTC time with exactly millisecond precision."""
    for key in keys:
        assert UTC_MILLIS.fullmatch(values[key]), (key, values[key])
