"""A hand-written table of hostile requests: every one is a 4xx problem, never a 5xx.

Each JSON body of the write endpoints gets every bad literal in every string or number
field it has (lone surrogates and NUL as JSON escapes, huge and non-integral numbers, wrong
types, deep nesting); path parameters get NUL, encoded surrogates, invalid UTF-8 and long
values; list queries get forged cursors and absurd limits. The app runs in process over
each database. The test prints how many requests it sent and how they were answered.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from fastapi.testclient import TestClient
from sqlalchemy.engine import Engine

from app.storage.verify import verify_database
from runtime_store_client import RunStatus
from tests.api.wire_builders import (
    PROBLEM_JSON,
    append_body,
    cancellation_body,
    create_session,
    note,
    root_start_body,
    start_root,
    suspension_body,
    terminal_body,
)
from tests.contract.builders import run_start, uid

#: Bad JSON literals, as raw JSON text (a lone surrogate cannot be written any other way).
STRING_LITERALS: Final = {
    "lone-surrogate": '"a\\ud800b"',
    "low-surrogate": '"\\udfff"',
    "nul": '"a\\u0000b"',
    "empty": '""',
    "huge": json.dumps("x" * 70_000),
    "number": "1",
    "null": "null",
    "object": '{"a":1}',
    "deep": "[" * 5_000 + "]" * 5_000,
}
NUMBER_LITERALS: Final = {
    "huge-int": "9" * 400,
    "beyond-64-bits": "18446744073709551616",
    "huge-float": "1e400",
    "negative": "-1",
    "fraction": "1.5",
    "string": '"ten"',
    "bool": "true",
}
MARK: Final = "__BAD__"


@dataclass(frozen=True)
class Target:
    """One request shape: a body whose field at ``path`` is replaced by bad literals."""

    method: str
    url: str
    body: dict[str, Any]
    path: tuple[str | int, ...]
    literals: dict[str, str]


def _with_mark(body: Any, path: tuple[str | int, ...]) -> Any:
    if not path:
        return MARK
    head, *rest = path
    copy: Any = list(body) if isinstance(body, list) else dict(body)
    copy[head] = _with_mark(body[head], tuple(rest))
    return copy


def _leaves(body: Any, prefix: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    """Every string or number field of a body (labels get a key of their own below)."""
    if isinstance(body, dict):
        for key, value in body.items():
            yield from _leaves(value, (*prefix, key))
    elif isinstance(body, list):
        for index, value in enumerate(body):
            yield from _leaves(value, (*prefix, index))
    elif isinstance(body, str | int) and not isinstance(body, bool):
        yield prefix


def _targets(method: str, url: str, body: dict[str, Any]) -> list[Target]:
    targets = []
    for path in _leaves(body):
        value: Any = body
        for step in path:
            value = value[step]
        literals = NUMBER_LITERALS if isinstance(value, int) else STRING_LITERALS
        targets.append(Target(method, url, body, path, dict(literals)))
    return targets


@dataclass
class World:
    session_id: str
    running: Any
    targets: list[Target]


def _world(api: TestClient) -> World:
    session_id = create_session(api)
    running = start_root(api, session_id)
    fresh = run_start(session_id=session_id, labels={"team": "a"})
    root = root_start_body(fresh)
    root["run"]["labels"] = {"team": "a"}
    memory_url = f"/v1/agents/agent-1/runs/{running.run_id}/memory"
    memory = {
        "events": [
            {
                "type": "user_message",
                "timestamp": "2026-11-30T01:02:03.456Z",
                "data": {"text": "hi"},
                "labels": {"k": "v"},
            }
        ]
    }
    targets = [
        *_targets(
            "POST",
            "/v1/sessions",
            {"session_id": uid("s"), "created_at": "2026-11-30T01:02:03.456Z"},
        ),
        *_targets("POST", "/v1/runs/root-starts", root),
        *_targets("POST", f"/v1/runs/{running.run_id}/records", append_body(note(running, "k1"))),
        *_targets("POST", f"/v1/runs/{running.run_id}/cancellation", cancellation_body(running)),
        *_targets("POST", f"/v1/runs/{running.run_id}/suspension", suspension_body(running)),
        *_targets(
            "POST",
            f"/v1/runs/{running.run_id}/terminal",
            terminal_body(running, RunStatus.COMPLETED),
        ),
        *_targets("POST", memory_url, memory),
    ]
    return World(session_id, running, targets)


def _raw_requests(world: World) -> Iterator[tuple[str, str, str | None, str]]:
    """(method, url, body text or None, label) of every request in the table."""
    for target in world.targets:
        template = json.dumps(_with_mark(target.body, target.path))
        for name, literal in target.literals.items():
            yield (
                target.method,
                target.url,
                template.replace(json.dumps(MARK), literal),
                f"{target.url} {'.'.join(map(str, target.path))}={name}",
            )
    label_key = root_start_body(run_start(session_id=world.session_id))
    label_key["run"]["labels"] = {MARK: "v"}
    template = json.dumps(label_key)
    for name in ("lone-surrogate", "low-surrogate", "nul"):
        yield (
            "POST",
            "/v1/runs/root-starts",
            template.replace(json.dumps(MARK), STRING_LITERALS[name]),
            f"label key={name}",
        )
    run_id = world.running.run_id
    for name, segment in {
        "nul": "a%00b",
        "encoded-surrogate": "a%ED%A0%80b",
        "invalid-utf8": "a%FF%FEb",
        "overlong": "a%C0%AFb",
        "long": "r" * 5_000,
        "dot-dot": "..",
    }.items():
        for url in (
            f"/v1/sessions/{segment}",
            f"/v1/sessions/{segment}/status",
            f"/v1/sessions/{segment}/runs",
            f"/v1/sessions/{segment}/records",
            f"/v1/runs/{segment}",
            f"/v1/runs/{segment}/records",
            f"/v1/runs/{segment}/suspension",
            f"/v1/runs/{segment}/transcript",
            f"/v1/agents/{segment}/runs/{run_id}/memory",
        ):
            yield "GET", url, None, f"GET {url[:40]} {name}"
    for name, cursor in {
        "nested": "W1tbW1tbW1tbW1tbW1tbW1tbW1tbW1tbW1s",
        "surrogate": "%ED%A0%80",
        "nul": "%00",
        "huge": "9" * 500,
        "long": "A" * 8_000,
        "junk": "%%%",
    }.items():
        for url in (
            f"/v1/sessions/{world.session_id}/runs",
            f"/v1/sessions/{world.session_id}/records",
            f"/v1/runs/{run_id}/records",
            f"/v1/runs/{run_id}/transcript",
        ):
            yield "GET", f"{url}?cursor={cursor}", None, f"cursor {name} {url[-8:]}"
    for limit in ("0", "-1", "9" * 40, "1e3", "abc", "1.5"):
        yield "GET", f"/v1/runs/{run_id}/records?limit={limit}", None, f"limit {limit}"
    for status in ("bogus", "%00", "%ED%A0%80"):
        url = f"/v1/sessions/{world.session_id}/runs?status={status}"
        yield "GET", url, None, f"status {status}"


def test_every_hostile_request_is_a_4xx_problem_and_none_is_a_5xx(
    api: TestClient, engine: Engine
) -> None:
    world = _world(api)
    answered: Counter[int] = Counter()
    server_errors = []
    sent = 0
    for method, url, body, label in _raw_requests(world):
        headers = {"Content-Type": "application/json"} if body is not None else {}
        response = api.request(method, url, content=body, headers=headers)
        sent += 1
        answered[response.status_code] += 1
        if response.status_code >= 500:
            server_errors.append((label, response.status_code, response.text[:200]))
            continue
        if response.status_code >= 400:
            assert response.headers["content-type"].startswith(PROBLEM_JSON), label
            problem = response.json()
            assert problem["status"] == response.status_code, label
            assert problem["code"], label
    print(f"\n[bad inputs] {sent} requests: {dict(sorted(answered.items()))}")
    assert sent >= 300
    assert server_errors == []
    # Some bad literals are acceptable values (an empty turn_id, a label value "1"), so a
    # few writes succeed; whatever was written, the database is consistent.
    report = verify_database(engine)
    assert report.ok, report.violations
