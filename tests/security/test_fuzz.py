"""Schemathesis fuzzing of every operation of the OpenAPI document, in process.

Each run gets a fresh migrated database with one admin token, so authentication is on.
Generation passes over every operation: schemathesis' positive cases, its negative cases,
and (with the token) two rounds of positive cases *steered* towards what the service
accepts (IDs from small pools so requests meet each other's rows, millisecond times with a
few at the edges of the range, consistent lifecycle records), which reach the store's rules
instead of stopping at validation. Seeds are fixed, so every run sends the same requests.

With the token: no 5xx, and every response is documented (status code, content type, body
schema); every error is a problem whose ``status`` and ``code`` agree. The live tail's
streams are fuzzed too: the events a stream sent before a short read deadline are judged
one by one against the document's event schema (``itemSchema``), and waits are steered
to short timeouts. Without a token:
every request to every operation is a 401 ``unauthenticated`` problem. Afterwards the
database passes ``verify_database`` when that module exists.
"""

from __future__ import annotations

import importlib
import json
import logging
import re
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from pydantic import SecretStr
from schemathesis import APIOperation, Case, GenerationMode, Response
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.core.result import Ok
from schemathesis.python.asgi import shutdown_lifespans
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.specs.openapi.schemas import OpenApiSchema
from sqlalchemy.engine import Engine

from app.api.problems import PROBLEM_JSON, STATUS_OF
from app.domain.tokens import Role
from app.main import create_app
from app.settings import Settings
from app.storage import create_engine
from app.storage.access.tokens import Tokens
from tests.security import fresh_postgres_url, fresh_sqlite_url

#: Examples per operation in each schemathesis pass (positive, negative) and in each of the
#: steered rounds: with a token 2 x 6 + 2 x 7 requests per operation, without 2 x 4 (the
#: 401 comes before validation and storage, so shapes matter less than reaching each route).
#: The seeds are fixed, so the count trades the suite's CPU for new cases per run (this
#: module was the suite's largest CPU cost); the steered rounds, which reach the store's
#: rules, keep most of theirs.
EXAMPLES_PER_OPERATION: Final = 6
EXAMPLES_WITHOUT_TOKEN: Final = 4
STEERED_EXAMPLES_PER_ROUND: Final = 7
STEERED_ROUNDS: Final = 2
TOKEN_KEY: Final = "fuzz-token-key-0123456789abcdef-0123456789"

DOCUMENTED_RESPONSE_CHECKS: Final = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]

# --- the target ------------------------------------------------------------------------


@dataclass
class FuzzTarget:
    """The app in process over a fresh database holding one admin token."""

    backend: str
    database_url: str
    token: str
    schema: OpenApiSchema

    def operations(self) -> list[APIOperation[Any, Any, Any, Any]]:
        operations = []
        for result in self.schema.get_all_operations():
            assert isinstance(result, Ok), f"the document has an invalid operation: {result}"
            operations.append(result.ok())
        return operations


#: The live tail's streams (CONTRACT.md 11.3) never end while their run is running or their
#: session exists: schemathesis keeps what a stream sent before the read deadline and judges
#: those events (each against the document's event schema). A wait (13.4) holds its answer
#: up to its ``timeout``, which steered cases keep short.
STREAMS: Final = frozenset({"tail-run-records", "tail-session-run-records"})
STREAM_SECONDS: Final = 0.3
#: A stream whose answer had not even begun by ``STREAM_SECONDS`` (its first read waited for
#: a busy machine) is asked once more with this deadline: a GET, so asking again changes nothing.
STREAM_SLOW_START_SECONDS: Final = 5.0
#: A wait's longest ``timeout`` in seconds, in every case that sends a valid one.
WAIT_SECONDS: Final = 0.1


@schemathesis.serializer("application/x-ndjson")
def _ndjson(_context: Any, value: Any) -> bytes:
    """A session file (11.4) as schemathesis generates it: bytes, text, or JSON lines."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    lines = value if isinstance(value, list) else [value]
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


@pytest.fixture(params=["sqlite", "postgres"])
def fuzz_target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[FuzzTarget]:
    if request.param == "sqlite":
        yield from _target("sqlite", fresh_sqlite_url(tmp_path))
        return
    server_url: str = request.getfixturevalue("postgres_url")  # skips without PostgreSQL
    with fresh_postgres_url(server_url) as url:
        yield from _target("postgres", url)


def _target(backend: str, database_url: str) -> Iterator[FuzzTarget]:
    engine = create_engine(database_url)
    try:
        token = Tokens(engine, TOKEN_KEY).create("fuzz", Role.ADMIN)
    finally:
        engine.dispose()
    app = create_app(Settings(database_url=database_url, token_key=SecretStr(TOKEN_KEY)))
    # Loading the document enters the app's lifespan; it lasts until shutdown_lifespans().
    schema = schemathesis.openapi.from_asgi("/openapi.json", app, config=schemathesis.Config())
    try:
        yield FuzzTarget(backend, database_url, token, schema)
    finally:
        shutdown_lifespans()


# --- steering generated cases towards acceptance ---------------------------------------

Draw = Callable[[st.SearchStrategy[Any]], Any]

#: Small pools, so steered requests meet each other's rows: retries, conflicts, children,
#: continuations, purges. One ID in each holds a NUL character, which JSON allows.
_RUNS: Final = ("r1", "r2", "r3", "r4", "r5", "r6", "r\x00")
_SESSIONS: Final = ("s1", "s2", "s3", "s4", "s\x00")
#: Only these are ever ended, so starts in the others proceed and their runs can be written.
_ENDED_SESSIONS: Final = ("s1", "s2")
_EVENT_KEYS: Final = ("e1", "e2", "e3", "e4")
_AGENT: Final = "agent"
_LABELS: Final[tuple[dict[str, str] | None, ...]] = (None, {}, {"site": "one"})
#: Times at the edges of the representable range, with offsets that push them across it.
_EDGE_TIMES: Final = (
    "0001-01-01T00:00:00.000Z",
    "0001-01-01T00:30:00+01:00",
    "0999-12-31T23:59:59.999Z",
    "9999-12-31T23:59:59.999Z",
    "9999-12-31T23:30:00-01:00",
    "1970-01-01T00:00:00.000Z",
)
_TIMES: Final = st.one_of(
    *[st.builds("2026-11-30T01:02:{:02d}.{:03d}Z".format, st.integers(0, 59), st.integers(0, 999))]
    * 5,
    st.sampled_from(_EDGE_TIMES),
)
_TERMINAL_PAYLOADS: Final[dict[str, dict[str, Any]]] = {
    "completed": {"status": "success", "phase": "completed"},
    "failed": {"status": "failed", "phase": "failed", "failure": {"message": "m", "kind": "k"}},
    "canceled": {"status": "canceled", "phase": "canceled", "cancellation": {"reason": "stop"}},
}


def _record(
    draw: Draw,
    run_id: str,
    session_id: str,
    *,
    type_: str,
    payload: Any,
    at: str,
    event_key: str | None = None,
) -> dict[str, Any]:
    return {
        "event_key": event_key or draw(st.sampled_from(_EVENT_KEYS)),
        "run_id": run_id,
        "agent_id": _AGENT,
        "session_id": session_id,
        "turn_id": draw(st.sampled_from(("", "t1"))),
        "type": type_,
        "payload": json.dumps(payload, separators=(",", ":")),
        "timestamp": at,
    }


def _other_run(draw: Draw, run_id: str) -> str:
    return str(draw(st.sampled_from([other for other in _RUNS if other != run_id])))


def _start(draw: Draw, *, child: bool, one_shot: bool) -> dict[str, Any]:
    """A start request whose records agree with the run (CONTRACT.md 3.3-3.6)."""
    run_id = draw(st.sampled_from(_RUNS))
    session_id = "" if one_shot else draw(st.sampled_from(_SESSIONS))
    parent = _other_run(draw, run_id) if child else ""
    continues = not one_shot and draw(st.booleans())
    predecessor = _other_run(draw, run_id) if continues else ""
    labels = draw(st.sampled_from(_LABELS))
    at = draw(_TIMES)
    keys = draw(st.permutations(_EVENT_KEYS))
    run = {
        "run_id": run_id,
        "agent_id": _AGENT,
        "session_id": session_id,
        "parent_run_id": parent,
        "predecessor_run_id": predecessor,
        "started_at": at,
        "labels": labels,
    }
    started = {"ParentRunID": parent, "PredecessorRunID": predecessor, "Labels": labels}
    body: dict[str, Any] = {
        "run": run,
        "started": _record(
            draw, run_id, session_id, type_="run_started", payload=started, at=at, event_key=keys[0]
        ),
    }
    if not one_shot:
        canceled = {
            **_TERMINAL_PAYLOADS["canceled"],
            "cancellation": {"reason": "session_ended"},
            "labels": labels or {},
        }
        body["canceled"] = _record(
            draw,
            run_id,
            session_id,
            type_="run_completed",
            payload=canceled,
            at=at,
            event_key=keys[1],
        )
    if child:
        link = {"ToolName": "t", "ToolCallID": "c", "ChildRunID": run_id, "ChildAgentID": _AGENT}
        body["parent_linked"] = _record(
            draw,
            parent,
            session_id,
            type_="child_run_linked",
            payload=link,
            at=draw(_TIMES),
            event_key=keys[2],
        )
    return body


def _run_write(draw: Draw, label: str, run_id: str) -> dict[str, Any]:
    """A write to an existing run; its session is guessed from the pool."""
    session_id = draw(st.sampled_from(("", *_SESSIONS)))
    at = draw(_TIMES)
    if label.endswith("/records"):
        note = {"text": draw(st.text(max_size=8))}
        return {"record": _record(draw, run_id, session_id, type_="note", payload=note, at=at)}
    if label.endswith("/cancellation"):
        intent = {"reason": "stop"}
        record = _record(
            draw, run_id, session_id, type_="runtime.cancellation_intent", payload=intent, at=at
        )
        return {"reason": "stop", "record": record}
    if "/suspension" in label:
        suspended = {"SuspensionID": "cp", "Version": "1", "PendingCount": 1}
        record = _record(draw, run_id, session_id, type_="run_suspended", payload=suspended, at=at)
        data = draw(st.sampled_from(("AAE=", "AAI=")))
        return {"checkpoint": {"id": "cp", "data": data}, "record": record}
    status = draw(st.sampled_from(sorted(_TERMINAL_PAYLOADS)))
    payload = dict(_TERMINAL_PAYLOADS[status])
    if status == "canceled":
        reason = draw(st.sampled_from(("stop", "engine_canceled", "session_ended")))
        payload["cancellation"] = {"reason": reason}
    record = _record(draw, run_id, session_id, type_="run_completed", payload=payload, at=at)
    return {"status": status, "record": record}


def _steered_path(label: str, path: dict[str, Any], draw: Draw) -> dict[str, Any]:
    """The path parameters with IDs drawn from the pools."""
    steered = dict(path)
    if "session_id" in steered:
        pool = _ENDED_SESSIONS if label.endswith("/end") else _SESSIONS
        steered["session_id"] = draw(st.sampled_from(pool))
    if "run_id" in steered:
        steered["run_id"] = draw(st.sampled_from(_RUNS))
    if "agent_id" in steered:
        steered["agent_id"] = _AGENT
    return steered


def _steer_memory_events(body: dict[str, Any], draw: Draw) -> None:
    """Give every event of a memory write a time from the range, in place."""
    events = body.get("events")
    for event in events if isinstance(events, list) else []:
        if isinstance(event, dict):
            event["timestamp"] = draw(_TIMES)


def _steered_body(
    label: str, body: dict[str, Any], path: dict[str, Any], draw: Draw
) -> dict[str, Any] | None:
    """A new body for the operation, or ``None`` when ``body`` stays (maybe edited in place)."""
    if label == "POST /v1/sessions":
        return {"session_id": draw(st.sampled_from(_SESSIONS)), "created_at": draw(_TIMES)}
    if label.endswith("/end"):
        return {"ended_at": draw(_TIMES)}
    if label.endswith("-starts"):
        return _start(draw, child="child" in label, one_shot="one-shot" in label)
    if label.startswith("POST /v1/runs/{run_id}/"):
        return _run_write(draw, label, path["run_id"])
    if label.endswith("/memory"):
        _steer_memory_events(body, draw)
    return None


def steer(case: Case[Any], draw: Draw) -> None:
    """Rewrite a generated case into a request that passes validation most of the time."""
    label = case.operation.label
    path = _steered_path(label, case.path_parameters or {}, draw)
    case.path_parameters = path
    if not isinstance(case.body, dict):
        return
    body = _steered_body(label, case.body, path, draw)
    if body is not None:
        case.body = body


def _shorten_wait(case: Case[Any]) -> None:
    """A wait's ``timeout`` becomes at most ``WAIT_SECONDS`` when it is absent (30 s) or a
    valid one (a JSON number from 0 to 60); an invalid one stays, to be refused."""
    if case.operation.label != "GET /v1/runs/{run_id}/wait":
        return
    query = case.query if isinstance(case.query, dict) else {}
    value = query.get("timeout")
    if value is None or (
        _JSON_NUMBER.fullmatch(str(value)) is not None and 0 <= float(value) <= 60
    ):
        query["timeout"] = min(float(value or WAIT_SECONDS), WAIT_SECONDS)
        case.query = query


_JSON_NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


# --- judging responses -----------------------------------------------------------------


def _header(response: Response, name: str) -> str:
    for key, values in response.headers.items():
        if key.lower() == name.lower():
            return ", ".join(values)
    return ""


def _problem_violations(response: Response) -> list[str]:
    """An error is a problem whose ``status`` is the HTTP status of its stable ``code``."""
    if response.status_code < 400:
        return []
    if _header(response, "content-type").split(";")[0].strip() != PROBLEM_JSON:
        return [f"error content type is {_header(response, 'content-type')!r}"]
    try:
        body = json.loads(response.content)
    except ValueError:
        return ["error body is not JSON"]
    if not isinstance(body, dict):
        return ["error body is not an object"]
    code, status = body.get("code"), body.get("status")
    found = []
    if status != response.status_code:
        found.append(f"problem status {status!r} differs from the HTTP status")
    if STATUS_OF.get(str(code)) != response.status_code:
        found.append(f"code {code!r} is not answered with {response.status_code} by section 6")
    return found


def _documented_violations(case: Case[Any], response: Response) -> list[str]:
    try:
        case.validate_response(response, checks=DOCUMENTED_RESPONSE_CHECKS)
    except FailureGroup as group:
        return [f"{failure.title}: {failure.message}".strip() for failure in group.exceptions]
    return []


def judge_with_token(case: Case[Any], response: Response) -> list[str]:
    return _documented_violations(case, response) + _problem_violations(response)


def judge_without_token(case: Case[Any], response: Response) -> list[str]:
    found = _documented_violations(case, response) + _problem_violations(response)
    if response.status_code != 401:
        found.append(f"answered {response.status_code} without a token, not 401")
    elif json.loads(response.content).get("code") != "unauthenticated":
        found.append("401 without the code unauthenticated")
    elif _header(response, "www-authenticate") != "Bearer":
        found.append("401 without WWW-Authenticate: Bearer")
    return found


Judge = Callable[[Case[Any], Response], list[str]]


class ServerErrors(logging.Handler):
    """The exceptions the app logs as unexpected, so a 500 can name its cause."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            self.seen.append(f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}")


# --- the fuzzing loop ------------------------------------------------------------------


@dataclass
class Finding:
    example: str
    operations: set[str] = field(default_factory=set)


@dataclass
class Tally:
    """What a fuzzing run did and found."""

    requests: Counter[str] = field(default_factory=Counter)
    accepted: Counter[str] = field(default_factory=Counter)
    statuses: Counter[int] = field(default_factory=Counter)
    #: Each distinct failure (status and kinds): its first example and where it was seen.
    failures: dict[tuple[int, tuple[str, ...]], Finding] = field(default_factory=dict)

    def summary(self, label: str, seconds: float, operations: int) -> str:
        statuses = ", ".join(f"{code}: {n}" for code, n in sorted(self.statuses.items()))
        return (
            f"\n[fuzz {label}] {self.requests.total()} requests, "
            f"{len(self.requests)}/{operations} operations covered, "
            f"{len(self.accepted)} with a 2xx answer, {len(self.failures)} distinct failures, "
            f"{seconds:.1f} s; statuses {{{statuses}}}"
        )


def reproduction(case: Case[Any], response: Response, violations: list[str]) -> str:
    request = {
        "method": case.method.upper(),
        "path": case.formatted_path,
        "query": case.query or None,
        "body": case.body if isinstance(case.body, dict | list | str | None) else repr(case.body),
    }
    body = response.content.decode("utf-8", "replace")[:500]
    return (
        f"{json.dumps(request, ensure_ascii=True, default=repr)}\n"
        f"  -> {response.status_code} {body}\n"
        + "\n".join(f"  ! {line[:400]}" for line in violations)
    )


@dataclass(frozen=True)
class Pass:
    """One generation pass over every operation."""

    mode: GenerationMode
    examples: int
    steered: bool = False
    round: int = 0

    def seed(self, label: str) -> int:
        return zlib.crc32(f"{label}|{self.mode.value}|{self.steered}|{self.round}".encode())


def fuzz_operation(
    operation: APIOperation[Any, Any, Any, Any],
    generation: Pass,
    *,
    token: str | None,
    judge: Judge,
    tally: Tally,
    server_errors: ServerErrors,
) -> None:
    label: str = operation.label

    @seed(generation.seed(label))  # deterministic, and different in every round
    @settings(
        max_examples=generation.examples,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],  # collect failures; no shrinking
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(generation_mode=generation.mode), data=st.data())
    def exercise(case: Case[Any], data: st.DataObject) -> None:
        if generation.steered:
            steer(case, data.draw)
        if case.headers:
            for name in [name for name in case.headers if name.lower() == "authorization"]:
                del case.headers[name]
        headers = {"Authorization": f"Bearer {token}"} if token else None
        _shorten_wait(case)
        streams = operation.definition.raw.get("operationId") in STREAMS
        server_errors.seen.clear()
        try:
            response = case.call(headers=headers, timeout=STREAM_SECONDS if streams else None)
        except requests.exceptions.ReadTimeout:
            if not streams:
                raise
            response = case.call(headers=headers, timeout=STREAM_SLOW_START_SECONDS)
        tally.requests[label] += 1
        tally.statuses[response.status_code] += 1
        if response.status_code < 300:
            tally.accepted[label] += 1
        violations = judge(case, response) + [f"logged {e}" for e in server_errors.seen]
        if violations:
            kinds = tuple(sorted({line.split(":")[0] for line in violations}))
            if response.status_code >= 500:
                kinds += tuple(server_errors.seen)
            key = (response.status_code, kinds)
            finding = tally.failures.setdefault(
                key, Finding(reproduction(case, response, violations))
            )
            finding.operations.add(label)

    exercise()


def fuzz(target: FuzzTarget, *, token: str | None, steered: bool, judge: Judge) -> Tally:
    tally = Tally()
    examples = EXAMPLES_PER_OPERATION if token else EXAMPLES_WITHOUT_TOKEN
    passes = [Pass(GenerationMode.POSITIVE, examples), Pass(GenerationMode.NEGATIVE, examples)]
    if steered:
        passes += [
            Pass(GenerationMode.POSITIVE, STEERED_EXAMPLES_PER_ROUND, steered=True, round=n)
            for n in range(STEERED_ROUNDS)
        ]
    server_errors = ServerErrors()
    logger = logging.getLogger("runtime_store")
    logger.addHandler(server_errors)
    # Thousands of logged tracebacks would bury the report; the handler keeps their causes.
    logger.propagate = False
    try:
        for generation in passes:
            for operation in target.operations():
                fuzz_operation(
                    operation,
                    generation,
                    token=token,
                    judge=judge,
                    tally=tally,
                    server_errors=server_errors,
                )
    finally:
        logger.propagate = True
        logger.removeHandler(server_errors)
    return tally


def report(tally: Tally) -> str:
    return "\n\n".join(
        f"[{status}] {'; '.join(kinds)}, seen on {', '.join(sorted(finding.operations))}\n"
        f"{finding.example}"
        for (status, kinds), finding in sorted(tally.failures.items())
    )


def verify_if_available(database_url: str) -> str:
    """The database invariants hold, when ``app.storage.verify`` exists; else a note."""
    try:
        module = importlib.import_module("app.storage.verify")
    except ModuleNotFoundError:
        return "app.storage.verify is absent: invariants not checked"
    verify_database: Callable[[Engine], Any] = module.verify_database
    engine = create_engine(database_url)
    try:
        result = verify_database(engine)
    finally:
        engine.dispose()
    assert result.ok, f"{result.summary()}: {result.violations[:10]}"
    return str(result.summary())


# --- the tests -------------------------------------------------------------------------


def test_fuzzed_requests_with_an_admin_token_get_no_server_error_and_only_documented_answers(
    fuzz_target: FuzzTarget, capsys: pytest.CaptureFixture[str]
) -> None:
    started = time.monotonic()
    tally = fuzz(fuzz_target, token=fuzz_target.token, steered=True, judge=judge_with_token)
    invariants = verify_if_available(fuzz_target.database_url)
    operations = len(fuzz_target.operations())
    with capsys.disabled():
        label = f"{fuzz_target.backend}, admin token"
        print(tally.summary(label, time.monotonic() - started, operations), f"; {invariants}")

    assert len(tally.requests) == operations
    if tally.failures:
        pytest.fail(f"{len(tally.failures)} distinct failures:\n\n{report(tally)}")


#: Refused before any storage is reached: one database is enough.
@pytest.mark.parametrize("fuzz_target", ["sqlite"], indirect=True)
def test_fuzzed_requests_without_a_token_are_all_refused_with_a_401_problem(
    fuzz_target: FuzzTarget, capsys: pytest.CaptureFixture[str]
) -> None:
    started = time.monotonic()
    tally = fuzz(fuzz_target, token=None, steered=False, judge=judge_without_token)
    invariants = verify_if_available(fuzz_target.database_url)
    operations = len(fuzz_target.operations())
    with capsys.disabled():
        label = f"{fuzz_target.backend}, no token"
        print(tally.summary(label, time.monotonic() - started, operations), f"; {invariants}")

    assert len(tally.requests) == operations
    assert not tally.accepted, f"accepted without a token: {dict(tally.accepted)}"
    if tally.failures:
        pytest.fail(f"{len(tally.failures)} distinct failures:\n\n{report(tally)}")
