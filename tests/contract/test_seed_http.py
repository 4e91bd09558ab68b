"""The HTTP surface of run seeds (CONTRACT.md 15.8 routes and JSON shapes, with the wire
rules of 15.1 and 15.2 that only a raw body can break: unknown keys, the path's run ID,
base64 spelling, any JSON spelling measured canonically, ``prepared_bytes`` a JSON integer,
a start's ``"run"`` key ``seed_end_id``) and ``RUNTIME_STORE_REQUIRE_SEEDS`` on a service.

Raw ``httpx`` against a live service on each database (the ``live_server`` fixture).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from tests.api.wire_builders import (
    one_shot_body,
    root_start_body,
    wire_run,
)
from tests.contract.builders import run_start, uid
from tests.contract.seed_builders import COMMAND_LIMIT, canonical, msgs

Json = dict[str, Any]


@pytest.fixture
def http(live_server: Any) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live_server.base_url, timeout=30) as client:
        yield client


def ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()


def problem(response: httpx.Response, status: int, code: str, **fields: str) -> Json:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body: Json = response.json()
    assert body["code"] == code, body
    assert body["status"] == status
    for key, value in fields.items():
        assert body.get(key) == value, body
    return body


def path_id(value: str) -> str:
    return quote(value, safe="")


def declaration(**changes: Any) -> Json:
    value: Json = {
        "agent_id": "agent-1",
        "run_id": uid("run"),
        "session_id": "",
        "command_id": uid("cmd"),
        "attempt_id": uid("att"),
        "kind": "literal",
        "source_run_id": "",
        "source_end_id": "",
        "exclude_reasoning": False,
        "rendered_prompts": [],
    }
    value.update(changes)
    return value


def begin(http: httpx.Client, decl: Json) -> httpx.Response:
    return http.post(
        f"/v1/runs/{path_id(decl['run_id'])}/seed/attempts", json={"declaration": decl}
    )


def records_url(decl: Json) -> str:
    return f"/v1/runs/{path_id(decl['run_id'])}/seed/attempts/{path_id(decl['attempt_id'])}/records"


def append(http: httpx.Client, decl: Json, rec: Json) -> httpx.Response:
    return http.post(records_url(decl), json={"record": rec})


def publication(http: httpx.Client, decl: Json, body: Json) -> httpx.Response:
    return http.post(
        f"/v1/runs/{path_id(decl['run_id'])}/seed/attempts/{path_id(decl['attempt_id'])}"
        "/publication",
        json=body,
    )


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


MESSAGES = msgs("hello").decode()


def published(http: httpx.Client, **changes: Any) -> Json:
    """A literal seed: 1 messages, 2 prepared ``compiled`` (8 bytes); published."""
    decl = declaration(**changes)
    ok(begin(http, decl))
    ok(append(http, decl, {"key": "k1", "previous_id": "0", "messages": MESSAGES}))
    ok(append(http, decl, {"key": "k2", "previous_id": "1", "prepared": b64(b"compiled")}))
    ok(publication(http, decl, {"seed_end_id": "1", "end_id": "2", "prepared_bytes": 8}))
    return decl


# --- JSON shapes ----------------------------------------------------------------------------------


def test_begin_answers_the_run_seed_json_with_every_key(http: httpx.Client) -> None:
    prompts = [{"prompt_id": "p", "version": "1", "scope": {"session_id": "", "labels": {}}}]
    decl = declaration(rendered_prompts=prompts)
    assert ok(begin(http, decl)) == {"declaration": decl, "source": None, "end_id": "0"}


@pytest.mark.parametrize("spelling", ["absent", "null"])
def test_rendered_prompts_absent_or_null_equal_an_empty_list(
    http: httpx.Client, spelling: str
) -> None:
    """And ``exclude_reasoning`` absent is false (15.1)."""
    decl = declaration()
    sent = {k: v for k, v in decl.items() if k not in ("rendered_prompts", "exclude_reasoning")}
    if spelling == "null":
        sent["rendered_prompts"] = None
    assert ok(begin(http, sent)) == {"declaration": decl, "source": None, "end_id": "0"}
    assert ok(begin(http, decl)) == {"declaration": decl, "source": None, "end_id": "0"}


def test_append_answers_id_and_inserted(http: httpx.Client) -> None:
    decl = declaration()
    ok(begin(http, decl))
    rec = {"key": "k1", "previous_id": "0", "messages": MESSAGES}
    assert ok(append(http, decl, rec)) == {"id": "1", "inserted": True}
    assert ok(append(http, decl, rec)) == {"id": "1", "inserted": False}


def test_publication_answers_the_run_preparation_json(http: httpx.Client) -> None:
    decl = declaration()
    ok(begin(http, decl))
    ok(append(http, decl, {"key": "k1", "previous_id": "0", "prepared": b64(b"abc")}))
    body = ok(publication(http, decl, {"seed_end_id": "0", "end_id": "1", "prepared_bytes": 3}))
    assert body == {
        "seed": {"declaration": decl, "source": None, "end_id": "0"},
        "end_id": "1",
        "prepared_bytes": 3,
    }


def test_find_and_settle_answer_found_and_preparation(http: httpx.Client) -> None:
    decl = declaration()
    query = {"agent_id": "agent-1", "session_id": "", "command_id": decl["command_id"]}
    run = path_id(decl["run_id"])
    assert ok(http.get(f"/v1/runs/{run}/preparation", params=query)) == {
        "found": False,
        "preparation": None,
    }
    operation = {"run_id": decl["run_id"], **query}
    settled = http.post(
        f"/v1/runs/{run}/seed/attempts/att-lost/settlement", json={"operation": operation}
    )
    assert ok(settled) == {"found": False, "preparation": None}
    published(http, **{k: decl[k] for k in ("run_id", "command_id")})
    found = ok(http.get(f"/v1/runs/{run}/preparation", params=query))
    assert found["found"] is True
    assert found["preparation"]["end_id"] == "2"
    assert found["preparation"]["prepared_bytes"] == 8


def test_seed_records_travel_in_their_wire_shape(http: httpx.Client) -> None:
    decl = declaration()
    ok(begin(http, decl))
    part = {"data": b64(b"[\xc3"), "final": False}
    ok(append(http, decl, {"key": "k1", "previous_id": "0", "literal_part": part}))
    end = {"data": b64(b"\xa9]"), "final": True}
    ok(append(http, decl, {"key": "k2", "previous_id": "1", "literal_part": end}))
    ok(append(http, decl, {"key": "k3", "previous_id": "2", "messages": " [ ] "}))
    ok(append(http, decl, {"key": "k4", "previous_id": "3", "prepared": b64(b"\x00\xff")}))
    ok(publication(http, decl, {"seed_end_id": "3", "end_id": "4", "prepared_bytes": 2}))
    run = path_id(decl["run_id"])
    page = ok(http.get(f"/v1/runs/{run}/seed/records", params={"seed_end_id": "3"}))
    assert page == {
        "records": [
            {"id": "1", "key": "k1", "previous_id": "0", "literal_part": part},
            {"id": "2", "key": "k2", "previous_id": "1", "literal_part": end},
            {"id": "3", "key": "k3", "previous_id": "2", "messages": " [ ] "},
        ],
        "next_cursor": "",
    }
    prep = ok(http.get(f"/v1/runs/{run}/preparation/records", params={"end_id": "4"}))
    assert prep == {
        "records": [{"id": "4", "key": "k4", "previous_id": "3", "prepared": b64(b"\x00\xff")}],
        "next_cursor": "",
    }
    assert ok(http.get(f"/v1/runs/{run}/seed", params={"seed_end_id": "3"})) == {
        "declaration": decl,
        "source": None,
        "end_id": "3",
    }


def test_a_run_id_with_a_slash_is_reachable(http: httpx.Client) -> None:
    decl = published(http, run_id=f"{uid('run')}/seed")
    body = ok(http.get(f"/v1/runs/{path_id(decl['run_id'])}/seed", params={"seed_end_id": "1"}))
    assert body["declaration"]["run_id"] == decl["run_id"]


# --- wire validation ------------------------------------------------------------------------------


def test_begin_whose_declaration_names_another_run_than_the_path_is_invalid_argument(
    http: httpx.Client,
) -> None:
    decl = declaration()
    response = http.post("/v1/runs/run-other/seed/attempts", json={"declaration": decl})
    problem(response, 422, "invalid_argument")
    unbound = http.get(f"/v1/runs/{path_id(decl['run_id'])}/seed", params={"seed_end_id": "0"})
    problem(unbound, 404, "seed_not_found", run_id=decl["run_id"])


@pytest.mark.parametrize(
    "body",
    [
        {"declaration": {**declaration(run_id="run-u"), "extra": 1}},
        {"declaration": declaration(run_id="run-u"), "extra": 1},
        {"declaration": declaration(run_id="run-u", exclude_reasoning="no")},
        {"declaration": declaration(run_id="run-u", rendered_prompts=[{"prompt_id": "p"}])},
    ],
)
def test_begin_with_unknown_keys_or_wrong_types_is_invalid_argument(
    http: httpx.Client, body: Json
) -> None:
    problem(http.post("/v1/runs/run-u/seed/attempts", json=body), 422, "invalid_argument")


BAD_RECORDS: dict[str, Json] = {
    "id on input": {"id": "1", "key": "k", "previous_id": "0", "messages": "[]"},
    "unknown key": {"key": "k", "previous_id": "0", "messages": "[]", "extra": 1},
    "messages not a string": {"key": "k", "previous_id": "0", "messages": []},
    "base64 without padding": {"key": "k", "previous_id": "0", "prepared": "YWI"},
    "url-safe base64": {"key": "k", "previous_id": "0", "prepared": "-_-_"},
    "base64 with a space": {"key": "k", "previous_id": "0", "prepared": "YW Jj"},
    "literal part without final": {
        "key": "k",
        "previous_id": "0",
        "literal_part": {"data": "Ww=="},
    },
    "literal part final null": {
        "key": "k",
        "previous_id": "0",
        "literal_part": {"data": "Ww==", "final": None},
    },
    "literal part extra key": {
        "key": "k",
        "previous_id": "0",
        "literal_part": {"data": "Ww==", "final": True, "more": 1},
    },
    "prefix missing a key": {
        "key": "k",
        "previous_id": "0",
        "prefix": {"run_id": "r", "end_id": "1", "exclude_system": True},
    },
    "prefix of a wrong type": {
        "key": "k",
        "previous_id": "0",
        "prefix": {"run_id": "r", "end_id": 1, "exclude_system": True, "exclude_reasoning": False},
    },
    "two variants": {"key": "k", "previous_id": "0", "messages": "[]", "prepared": "YQ=="},
}


@pytest.mark.parametrize("case", list(BAD_RECORDS))
def test_append_of_a_malformed_wire_record_is_invalid_argument(
    http: httpx.Client, case: str
) -> None:
    decl = declaration()
    ok(begin(http, decl))
    problem(append(http, decl, BAD_RECORDS[case]), 422, "invalid_argument")
    assert ok(begin(http, decl))["end_id"] == "0"


def test_append_with_unused_variants_null_and_an_empty_id_is_accepted(http: httpx.Client) -> None:
    decl = declaration()
    ok(begin(http, decl))
    rec = {
        "id": "",
        "key": "k",
        "previous_id": "0",
        "messages": "[]",
        "literal_part": None,
        "prefix": None,
        "prepared": None,
    }
    assert ok(append(http, decl, rec)) == {"id": "1", "inserted": True}


def test_the_command_limit_measures_the_canonical_encoding_not_the_body_sent(
    http: httpx.Client,
) -> None:
    """A body padded with whitespace and ``\\u`` escapes well past 1,000,000 bytes is
    accepted when its canonical command is exactly 1,000,000 bytes."""
    decl = declaration()
    ok(begin(http, decl))

    def command(n: int) -> Json:
        return {
            "run_id": decl["run_id"],
            "attempt_id": decl["attempt_id"],
            "record": {"key": "k", "previous_id": "0", "messages": msgs("x" * n).decode()},
        }

    base = len(canonical(command(0)))
    text = command(COMMAND_LIMIT - base)["record"]["messages"]
    assert len(canonical(command(COMMAND_LIMIT - base))) == COMMAND_LIMIT
    body = json.dumps({"record": {"key": "k", "previous_id": "0", "messages": text}}, indent=8)
    body = body.replace('"k"', '"\\u006b"', 1)
    spelled = body.replace('"messages": "', '"messages":            "').encode()
    spelled = spelled.replace(b"xxxx", b"x\\u0078xx", 50_000)
    assert len(spelled) > COMMAND_LIMIT + 100_000
    response = http.post(
        records_url(decl), content=spelled, headers={"content-type": "application/json"}
    )
    assert ok(response) == {"id": "1", "inserted": True}
    one_more = json.dumps({"record": {"key": "k2", "previous_id": "1", "messages": text + " "}})
    response = http.post(
        records_url(decl), content=one_more.encode(), headers={"content-type": "application/json"}
    )
    problem(response, 413, "payload_too_large")


@pytest.mark.parametrize("value", ["8", 8.0, True, None])
def test_publication_prepared_bytes_not_a_json_integer_is_invalid_argument(
    http: httpx.Client, value: Any
) -> None:
    decl = declaration()
    ok(begin(http, decl))
    ok(append(http, decl, {"key": "k1", "previous_id": "0", "prepared": b64(b"compiled")}))
    body = {"seed_end_id": "0", "end_id": "1", "prepared_bytes": value}
    problem(publication(http, decl, body), 422, "invalid_argument")


def test_settlement_whose_operation_names_another_run_is_invalid_argument(
    http: httpx.Client,
) -> None:
    operation = {"agent_id": "a", "run_id": "run-other", "session_id": "", "command_id": "c"}
    response = http.post(
        "/v1/runs/run-path/seed/attempts/att-1/settlement", json={"operation": operation}
    )
    problem(response, 422, "invalid_argument")


@pytest.mark.parametrize(
    "url",
    ["/v1/runs/{run}/seed", "/v1/runs/{run}/seed/records", "/v1/runs/{run}/preparation/records"],
)
def test_reads_without_their_end_are_invalid_argument(http: httpx.Client, url: str) -> None:
    decl = published(http)
    problem(http.get(url.format(run=path_id(decl["run_id"]))), 422, "invalid_argument")


@pytest.mark.parametrize("limit", ["0", "-1", "abc", "1.5"])
def test_a_limit_that_is_not_an_integer_of_at_least_one_is_invalid_transcript_position(
    http: httpx.Client, limit: str
) -> None:
    decl = published(http)
    response = http.get(
        f"/v1/runs/{path_id(decl['run_id'])}/seed/records",
        params={"seed_end_id": "1", "limit": limit},
    )
    problem(response, 422, "invalid_transcript_position")


# --- errors ---------------------------------------------------------------------------------------


def test_seed_problems_carry_the_run_id_and_their_status(http: httpx.Client) -> None:
    decl = declaration()
    run = path_id(decl["run_id"])
    problem(
        http.get(f"/v1/runs/{run}/seed", params={"seed_end_id": "1"}),
        404,
        "seed_not_found",
        run_id=decl["run_id"],
    )
    ok(begin(http, decl))
    problem(
        http.get(f"/v1/runs/{run}/seed", params={"seed_end_id": "1"}),
        409,
        "seed_not_published",
        run_id=decl["run_id"],
    )
    problem(
        append(http, decl, {"key": "k", "previous_id": "5", "messages": "[]"}),
        409,
        "seed_conflict",
        run_id=decl["run_id"],
    )
    operation = {k: decl[k] for k in ("agent_id", "run_id", "session_id", "command_id")}
    ok(
        http.post(
            f"/v1/runs/{run}/seed/attempts/{path_id(decl['attempt_id'])}/settlement",
            json={"operation": operation},
        )
    )
    problem(begin(http, decl), 409, "preparation_abandoned", run_id=decl["run_id"])


# --- starts over HTTP -----------------------------------------------------------------------------


@pytest.mark.parametrize("spelling", ["absent", "null", "empty"])
def test_a_starts_seed_end_id_absent_null_or_empty_means_none(
    http: httpx.Client, spelling: str
) -> None:
    run = run_start()
    body = one_shot_body(run)
    if spelling != "absent":
        body["run"]["seed_end_id"] = None if spelling == "null" else ""
    ok(http.post("/v1/runs/one-shot-starts", json=body))
    assert ok(http.get(f"/v1/runs/{path_id(run.run_id)}"))["seed_end_id"] == ""


def test_a_start_attaches_a_seed_named_in_its_run_object(http: httpx.Client) -> None:
    session_id = uid("sess")
    ok(
        http.post(
            "/v1/sessions",
            json={"session_id": session_id, "created_at": "2026-11-30T01:02:03.456Z"},
        )
    )
    decl = published(http, session_id=session_id)
    run = run_start(run_id=decl["run_id"], session_id=session_id)
    body = root_start_body(run)
    body["run"] = {**wire_run(run), "seed_end_id": "1"}
    ok(http.post("/v1/runs/root-starts", json=body))
    meta = ok(http.get(f"/v1/runs/{path_id(run.run_id)}"))
    assert meta["seed_end_id"] == "1"
    runs = ok(http.get(f"/v1/sessions/{session_id}/runs"))["runs"]
    assert [r["seed_end_id"] for r in runs] == ["1"]


def test_a_synchronous_start_attaches_a_seed(http: httpx.Client) -> None:
    decl = published(http)
    run = run_start(run_id=decl["run_id"])
    body = one_shot_body(run)
    body["run"]["seed_end_id"] = "1"
    ok(http.post("/v1/runs/synchronous-starts", json=body))
    meta = ok(http.get(f"/v1/runs/{path_id(run.run_id)}"))
    assert (meta["seed_end_id"], meta["start_kind"]) == ("1", "synchronous")


# --- RUNTIME_STORE_REQUIRE_SEEDS on a service -----------------------------------------------------


@pytest.fixture(scope="module")
def strict_server(sqlite_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from tests.conftest import start_server, stop_server

    log: Path = tmp_path_factory.mktemp("logs") / "require-seeds.log"
    server = start_server(sqlite_url, log, env={"RUNTIME_STORE_REQUIRE_SEEDS": "on"})
    yield server.base_url
    stop_server(server)


def test_with_seeds_required_a_start_without_seed_is_seed_not_found(strict_server: str) -> None:
    with httpx.Client(base_url=strict_server, timeout=30) as http:
        run = run_start()
        problem(
            http.post("/v1/runs/one-shot-starts", json=one_shot_body(run)),
            404,
            "seed_not_found",
            run_id=run.run_id,
        )
        decl = published(http, run_id=run.run_id)
        body = one_shot_body(run)
        body["run"]["seed_end_id"] = "1"
        ok(http.post("/v1/runs/one-shot-starts", json=body))
        assert decl["run_id"] == run.run_id


def test_with_seeds_required_a_retry_without_seed_is_seed_not_found(
    strict_server: str, sqlite_server: Any
) -> None:
    run = run_start()
    with httpx.Client(base_url=sqlite_server.base_url, timeout=30) as plain:
        ok(plain.post("/v1/runs/one-shot-starts", json=one_shot_body(run)))
    with httpx.Client(base_url=strict_server, timeout=30) as http:
        problem(
            http.post("/v1/runs/one-shot-starts", json=one_shot_body(run)),
            404,
            "seed_not_found",
        )
