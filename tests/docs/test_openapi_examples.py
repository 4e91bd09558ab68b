"""Every example of the OpenAPI document is true, proved against a live server.

Request examples (each JSON request body's example, each parameter's) are sent as they are,
in the order of the story they tell (app/api/examples.py), to a ``runtime-store serve`` on a
fresh SQLite file; every one must succeed. Two groups run again under other IDs, as a user
would: the suspension examples need a run that is still running, and purging needs an
ended session without running runs. An operation this test does not know yet is sent too,
after the writes: its examples must be accepted there.

Response examples must be answers the service gives: each problem example's ``status`` is
its response's, its ``code`` is answered with that status, its ``type`` and ``title`` are
those of the code; and the codes the story can provoke are provoked, and the real answer
has the same shape as the example.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import quote

import httpx
import pytest

from app.api.examples import (
    APPEND_RUN_SEED_PREPARED,
    EVENT_ID_EXAMPLE,
    ONE_SHOT_RUN,
    RUN,
    SEED_HISTORY_END_EXAMPLE,
    SESSION,
    WEBHOOK_HOST,
    WEBHOOK_ID_EXAMPLE,
)
from app.api.problems import PROBLEM_JSON, STATUS_OF
from app.storage import upgrade_schema
from tests.conftest import LiveServer, start_server, stop_server

#: The story's writes, in order, then its reads, then the writes that end it.
WRITES: Final = (
    "create-session",
    "start-root-run",
    "start-child-run",
    # The seed of job-7 (its one-shot start attaches it): begun, its history appended (then
    # its compiled start, APPEND_RUN_SEED_PREPARED), published.
    "begin-run-seed",
    "append-run-seed",
    "publish-run-seed",
    "start-one-shot-run",
    "start-one-shot-child-run",
    "start-synchronous-run",
    "append-run-record",
    "append-run-records",
    "append-memory-events",
    "create-webhook",
)
READS: Final = (
    "list-sessions",
    "load-session",
    "load-session-status",
    "list-session-runs",
    "list-session-run-records",
    "search-runs",
    "list-run-records",
    "list-run-transcript-records",
    "load-run-record",
    "load-run",
    "load-transcript",
    "load-memory",
    "load-run-seed",
    "list-run-seed-records",
    "list-run-preparation-records",
    "find-run-preparation",
    # A settlement of a published operation answers its preparation and changes nothing.
    "settle-run-preparation",
)
ENDINGS: Final = (
    "record-run-cancellation",
    "record-run-terminal",
    "repair-run-terminal",
    "wait-for-run",
)
#: After the endings, on the story's subscription and its first event (the store makes
#: both IDs: the path examples' IDs are renamed to them).
WEBHOOKS: Final = (
    "list-webhooks",
    "list-webhook-deliveries",
    "retry-webhook-delivery",
    "delete-webhook",
)
#: Run again on a fresh run of the session: a suspension needs a running run.
SUSPENDED_RUN: Final = f"{RUN}-suspended"
SUSPENSION: Final = (
    "start-root-run",
    "record-run-suspension",
    "load-run-suspension",
    "repair-run-suspension",
)
#: Run again on a fresh session: purging needs an ended one without running runs.
PURGED_SESSION: Final = f"{SESSION}-purged"
PURGE: Final = ("create-session", "end-session", "purge-session")

_METHODS: Final = ("get", "put", "post", "delete", "patch")


@dataclass(frozen=True)
class Operation:
    id: str
    method: str
    path: str
    spec: dict[str, Any]


@dataclass
class Live:
    server: LiveServer
    document: dict[str, Any]
    operations: dict[str, Operation]
    http: httpx.Client


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    directory = tmp_path_factory.mktemp("openapi-examples")
    url = f"sqlite:///{directory / 'examples.db'}"
    upgrade_schema(url)
    server = start_server(
        url, directory / "server.log", env={"RUNTIME_STORE_WEBHOOK_ALLOWED_HOSTS": WEBHOOK_HOST}
    )
    try:
        with httpx.Client(base_url=server.base_url, timeout=10) as http:
            document = http.get("/openapi.json").json()
            operations = {
                spec["operationId"]: Operation(spec["operationId"], method, path, spec)
                for path, item in document["paths"].items()
                for method, spec in item.items()
                if method in _METHODS
            }
            yield Live(server, document, operations, http)
    finally:
        stop_server(server)


def _example(schema_holder: dict[str, Any]) -> Any:
    """The example of a parameter or a media type, if it has one."""
    if "example" in schema_holder:
        return schema_holder["example"]
    for examples in (
        schema_holder.get("examples"),
        schema_holder.get("schema", {}).get("examples"),
    ):
        if isinstance(examples, dict) and examples:
            return next(iter(examples.values()))["value"]
        if isinstance(examples, list) and examples:
            return examples[0]
    return None


def _renamed(value: Any, renames: dict[str, str]) -> Any:
    text = json.dumps(value)
    for old, new in renames.items():
        text = text.replace(old, new)
    return json.loads(text)


def request_of(operation: Operation, renames: dict[str, str]) -> dict[str, Any]:
    """The request that the operation's examples make, with ``renames`` applied."""
    path = operation.path
    params: dict[str, Any] = {}
    headers: dict[str, str] = {}
    for parameter in operation.spec.get("parameters", []):
        example = _example(parameter)
        if example is None:
            assert not parameter.get("required"), (operation.id, parameter["name"], "no example")
            continue
        example = _renamed(example, renames)
        if parameter["in"] == "path":
            path = path.replace("{" + parameter["name"] + "}", quote(str(example), safe=""))
        elif parameter["in"] == "query":
            params[parameter["name"]] = example
        elif parameter["in"] == "header":
            headers[parameter["name"]] = str(example)
    request: dict[str, Any] = {
        "method": operation.method.upper(),
        "url": path,
        "params": params,
        "headers": headers,
    }
    body = operation.spec.get("requestBody")
    if body is None:
        return request
    media_type, media = next(iter(body["content"].items()))
    example = _example(media)
    if example is None:
        raise NoExample(operation.id)
    if media_type == "application/json":
        return {**request, "json": _renamed(example, renames)}
    headers["content-type"] = media_type
    return {**request, "content": str(_renamed(example, renames))}


class NoExample(Exception):
    """An operation whose request body has no example (Swagger UI would make one up)."""


def send(live: Live, operation_id: str, renames: dict[str, str] | None = None) -> httpx.Response:
    operation = live.operations[operation_id]
    request = live.http.build_request(**request_of(operation, renames or {}))
    response = live.http.send(request, stream=True)
    try:
        # A live tail (text/event-stream) never ends: its status and headers are the answer.
        if not response.headers.get("content-type", "").startswith("text/event-stream"):
            response.read()
    finally:
        response.close()
    return response


def assert_accepted(response: httpx.Response, operation_id: str) -> None:
    assert response.status_code < 300, (
        f"{operation_id}: its example was refused: {response.status_code} {response.text}"
    )


@pytest.fixture(scope="module")
def story(live: Live) -> dict[str, httpx.Response]:
    """Every operation sent with its examples; the last answer of each, by operation."""
    answers: dict[str, httpx.Response] = {}
    known = {*WRITES, *READS, *ENDINGS, *SUSPENSION, *PURGE, *WEBHOOKS}
    unknown = sorted(set(live.operations) - known)
    suspended = {RUN: SUSPENDED_RUN}
    purged = {SESSION: PURGED_SESSION}
    steps = [
        *[(op, {}) for op in WRITES],
        *[(op, {}) for op in unknown],
        *[(op, {}) for op in READS],
        *[(op, {}) for op in ENDINGS],
        *[(op, suspended) for op in SUSPENSION],
        *[(op, purged) for op in PURGE],
    ]
    for operation_id, renames in steps:
        if operation_id not in live.operations:
            continue  # an operation removed from the service
        try:
            response = send(live, operation_id, renames)
        except NoExample:
            continue  # test_every_request_body_has_an_example names it
        assert_accepted(response, operation_id)
        answers[operation_id] = response
        if operation_id == "append-run-seed":  # the attempt's compiled start follows
            url = request_of(live.operations[operation_id], renames)["url"]
            prepared = live.http.post(url, json=APPEND_RUN_SEED_PREPARED)
            assert_accepted(prepared, "append-run-seed (its compiled start)")
    if "create-webhook" in answers:
        webhook_id = answers["create-webhook"].json()["webhook_id"]
        deliveries = live.http.get(f"/v1/webhooks/{webhook_id}/deliveries").json()
        renames = {
            WEBHOOK_ID_EXAMPLE: webhook_id,
            EVENT_ID_EXAMPLE: deliveries["deliveries"][0]["event_id"],
        }
        for operation_id in WEBHOOKS:
            response = send(live, operation_id, renames)
            assert_accepted(response, operation_id)
            answers[operation_id] = response
    return answers


def _without_body_example(live: Live) -> list[str]:
    missing = []
    for operation in live.operations.values():
        content = operation.spec.get("requestBody", {}).get("content", {})
        if content and _example(next(iter(content.values()))) is None:
            missing.append(operation.id)
    return sorted(missing)


def test_every_request_example_is_accepted_by_a_live_server(
    live: Live, story: dict[str, httpx.Response]
) -> None:
    assert set(story) == set(live.operations) - set(_without_body_example(live))


def test_every_request_body_has_an_example(live: Live) -> None:
    # Without one Swagger UI's "Try it out" makes up a body, which the service refuses
    # (app/api/examples.py gives the JSON bodies theirs).
    assert _without_body_example(live) == []


def test_the_examples_tell_one_story(live: Live, story: dict[str, httpx.Response]) -> None:
    # Not only accepted: they did what they say, on the runs they name.
    assert story["start-root-run"].json()["outcome"] == "proceed"
    assert story["start-child-run"].json()["outcome"] == "proceed"
    run = live.http.get(f"/v1/runs/{RUN}").json()
    assert run["status"] == "completed"
    assert run["cancellation_reason"] == "user_requested"
    assert story["repair-run-terminal"].json()["outcome"] == "already_stored"
    assert story["repair-run-suspension"].json()["outcome"] == "already_stored"
    assert live.http.get(f"/v1/runs/{SUSPENDED_RUN}").json()["status"] == "suspended"
    records = live.http.get(f"/v1/runs/{RUN}/records").json()["records"]
    assert [record["type"] for record in records] == [
        "run_started",
        "child_run_linked",
        *["planner_note"] * 3,
        "transcript_messages_appended",
        "runtime.cancellation_intent",
        "run_completed",
    ]
    purged = live.http.get(f"/v1/sessions/{PURGED_SESSION}")
    assert purged.json()["code"] == "session_purged"
    # The transcript read and the read by key find the story's transcript record.
    transcript = story["list-run-transcript-records"].json()
    assert [r["type"] for r in transcript["records"]] == ["transcript_messages_appended"]
    assert story["load-run-record"].json() == transcript["records"][0]
    # The one-shot run attached the seed published before it; its reads find it.
    seed_end_id = live.http.get(f"/v1/runs/{ONE_SHOT_RUN}").json()["seed_end_id"]
    assert seed_end_id == SEED_HISTORY_END_EXAMPLE
    assert story["load-run-seed"].json()["end_id"] == seed_end_id
    assert [r["id"] for r in story["list-run-seed-records"].json()["records"]] == ["1"]
    assert [r["id"] for r in story["list-run-preparation-records"].json()["records"]] == ["2"]
    for found in ("find-run-preparation", "settle-run-preparation"):
        assert story[found].json() == {
            "found": True,
            "preparation": story["publish-run-seed"].json(),
        }


# --- response examples -------------------------------------------------------------------


def problem_examples(document: dict[str, Any]) -> Iterator[tuple[str, int, dict[str, Any]]]:
    """(operation, status, example value) of every error response example."""
    for item in document["paths"].values():
        for method, operation in item.items():
            if method not in _METHODS:
                continue
            for status, response in operation["responses"].items():
                for media_type, media in response.get("content", {}).items():
                    if int(status) < 400:
                        continue
                    assert media_type == PROBLEM_JSON
                    examples = media.get("examples")
                    assert examples, f"{operation['operationId']} {status} has no example"
                    for example in examples.values():
                        yield operation["operationId"], int(status), example["value"]


def test_every_problem_example_is_an_answer_of_its_status(live: Live) -> None:
    seen = 0
    for operation_id, status, problem in problem_examples(live.document):
        where = f"{operation_id} {status} {problem.get('code')}"
        assert problem["status"] == status, where
        assert STATUS_OF[problem["code"]] == status, where
        assert problem["type"] == f"urn:runtime-store:problem:{problem['code']}", where
        assert problem["detail"], where
        assert problem["title"], where
        seen += 1
    assert seen > 100


def _example_of(live: Live, operation_id: str, code: str) -> dict[str, Any]:
    for found_id, _, problem in problem_examples(live.document):
        if found_id == operation_id and problem["code"] == code:
            return problem
    raise AssertionError(f"{operation_id} declares no {code} example")


def _same_shape(real: httpx.Response, example: dict[str, Any]) -> None:
    assert real.headers["content-type"] == PROBLEM_JSON
    body = real.json()
    for field in ("type", "title", "status", "code"):
        assert body[field] == example[field], (field, body, example)
    # The same fields, but for which of run_id, session_id, event_key give the context.
    context = {"run_id", "session_id", "event_key"}
    assert set(body) - context == set(example) - context, (body, example)


def _unpublished_seed(live: Live) -> httpx.Response:
    """The load of a seed declared (another run ID of the story's) but never published."""
    renames = {ONE_SHOT_RUN: f"{ONE_SHOT_RUN}-unpublished"}
    assert_accepted(send(live, "begin-run-seed", renames), "begin-run-seed")
    return live.http.get(f"/v1/runs/{ONE_SHOT_RUN}-unpublished/seed", params={"seed_end_id": "0"})


def test_the_problems_the_story_can_provoke_look_like_their_examples(
    live: Live, story: dict[str, httpx.Response]
) -> None:
    http = live.http
    root = live.operations["start-root-run"]
    body = request_of(root, {})["json"]
    body["run"]["session_id"] = ""
    provoked = {
        # The example: a root start without its session.
        ("start-root-run", "invalid_argument"): http.post(root.path, json=body),
        ("start-root-run", "unsupported_media_type"): http.post(
            root.path, content=json.dumps(body), headers={"content-type": "text/plain"}
        ),
        ("load-run", "run_not_found"): http.get("/v1/runs/no-such-run"),
        ("load-session", "session_not_found"): http.get("/v1/sessions/no-such-session"),
        ("load-session", "session_purged"): http.get(f"/v1/sessions/{PURGED_SESSION}"),
        ("purge-session", "session_active"): send(live, "purge-session"),
        ("load-run-suspension", "run_suspension_not_found"): send(live, "load-run-suspension"),
        ("record-run-suspension", "run_terminal_conflict"): send(live, "record-run-suspension"),
        ("append-run-record", "run_not_active"): send(
            live, "append-run-record", {f"{RUN}:note-1": f"{RUN}:note-late"}
        ),
        ("append-run-record", "event_conflict"): send(live, "append-run-record", {"weather": "?"}),
        ("list-run-transcript-records", "invalid_transcript_position"): http.get(
            f"/v1/runs/{RUN}/transcript-records", params={"through": "99"}
        ),
        ("load-run-record", "record_not_found"): http.get(
            f"/v1/runs/{RUN}/record", params={"event_key": f"{RUN}:missing"}
        ),
        ("load-run-seed", "seed_not_found"): http.get(
            "/v1/runs/no-such-run/seed", params={"seed_end_id": "1"}
        ),
        # The same key with other messages.
        ("append-run-seed", "seed_conflict"): send(live, "append-run-seed", {"Summarize": "Cut"}),
        ("load-run-seed", "seed_not_published"): _unpublished_seed(live),
    }
    for (operation_id, code), real in provoked.items():
        assert real.json()["code"] == code, (operation_id, real.text)
        _same_shape(real, _example_of(live, operation_id, code))
