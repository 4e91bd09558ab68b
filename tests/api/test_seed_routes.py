"""The HTTP surface of run seeds and preparations (CONTRACT.md 15.8): routes, exact JSON
shapes, strict input (unknown keys, canonical base64, JSON types), the path's run ID, the
canonical size of a command whatever its spelling, roles, problems carrying the run ID,
and ``seed_end_id`` on the five starts and in the run JSON (15.5).

The contract suite (tests/contract/test_seed_*.py) runs every rule through ``HttpStore``;
these tests speak the wire directly, as a client in another language would.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from sqlalchemy.engine import Engine

from app.api.wire import parse_canonical_base64
from app.domain.tokens import Role
from app.main import create_app
from app.settings import Settings
from app.storage.access.tokens import Tokens
from runtime_store_client import RunStart, RunStatus
from tests.api.wire_builders import (
    PROBLEM_JSON,
    Json,
    assert_problem,
    create_session,
    ok,
    one_shot_body,
    one_shot_child_body,
    root_start_body,
    start_one_shot,
    start_root,
    wire_record,
    wire_run,
)
from tests.contract.builders import (
    canceled_record,
    link_record,
    run_start,
    started_record,
    terminal_record,
    uid,
)

AGENT = "agent-1"
MESSAGES = '[{"role":"user","parts":[{"kind":"text","text":"hello"}],"meta":null}]'
COMPILED = b'{"workflow":"plan","input":{"n":1}}'
COMMAND_LIMIT = 1_000_000


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def canonical(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def declaration(run_id: str, **changes: Any) -> Json:
    """A literal declaration in the wire's (and the canonical encoding's) key order."""
    return {
        "agent_id": AGENT,
        "run_id": run_id,
        "session_id": "",
        "command_id": "cmd-1",
        "attempt_id": "att-1",
        "kind": "literal",
        "source_run_id": "",
        "source_end_id": "",
        "exclude_reasoning": False,
        "rendered_prompts": [],
        **changes,
    }


def attempts(run_id: str) -> str:
    return f"/v1/runs/{run_id}/seed/attempts"


def records_url(run_id: str, attempt_id: str = "att-1") -> str:
    return f"{attempts(run_id)}/{attempt_id}/records"


def begin(api: TestClient, run_id: str, **changes: Any) -> Json:
    body: Json = ok(
        api.post(attempts(run_id), json={"declaration": declaration(run_id, **changes)})
    )
    return body


def append(api: TestClient, run_id: str, record: Json, attempt_id: str = "att-1") -> Json:
    body: Json = ok(api.post(records_url(run_id, attempt_id), json={"record": record}))
    return body


def publish(api: TestClient, run_id: str, seed_end_id: str, end_id: str, size: int) -> Json:
    url = f"{attempts(run_id)}/att-1/publication"
    body = {"seed_end_id": seed_end_id, "end_id": end_id, "prepared_bytes": size}
    published: Json = ok(api.post(url, json=body))
    return published


def prepared(api: TestClient, run_id: str | None = None, **changes: Any) -> tuple[str, Json]:
    """A published literal seed: one messages record, one prepared record."""
    run_id = run_id or uid("run")
    begin(api, run_id, **changes)
    append(api, run_id, {"key": "h1", "previous_id": "0", "messages": MESSAGES})
    append(api, run_id, {"key": "p1", "previous_id": "1", "prepared": b64(COMPILED)})
    return run_id, publish(api, run_id, "1", "2", len(COMPILED))


# --- the JSON shapes (15.8) -------------------------------------------------------------------


def test_begin_answers_the_run_seed_with_every_key(api: TestClient) -> None:
    run_id = uid("run")
    prompts = [
        {"prompt_id": "p", "version": "2", "scope": {"session_id": "s", "labels": {"k": "v"}}}
    ]
    assert begin(api, run_id, rendered_prompts=prompts) == {
        "declaration": declaration(run_id, rendered_prompts=prompts),
        "source": None,
        "end_id": "0",
    }


def test_begin_fills_the_keys_an_input_may_leave_out(api: TestClient) -> None:
    run_id = uid("run")
    body = {
        "agent_id": AGENT,
        "run_id": run_id,
        "command_id": "cmd-1",
        "attempt_id": "att-1",
        "kind": "literal",
        "rendered_prompts": [
            {"prompt_id": "p", "version": "1"},
            {"prompt_id": "q", "version": "1", "scope": None},
        ],
    }
    seed = ok(api.post(attempts(run_id), json={"declaration": body}))
    empty_scope = {"session_id": "", "labels": {}}
    assert seed["declaration"] == declaration(
        run_id,
        rendered_prompts=[
            {"prompt_id": "p", "version": "1", "scope": empty_scope},
            {"prompt_id": "q", "version": "1", "scope": empty_scope},
        ],
    )
    # Absent, null and [] prompts are one declaration: an exact retry.
    again = ok(
        api.post(
            attempts(run_id),
            json={
                "declaration": {
                    **body,
                    "rendered_prompts": [
                        {"prompt_id": "p", "version": "1", "scope": {"labels": None}},
                        {
                            "prompt_id": "q",
                            "version": "1",
                            "scope": {"session_id": "", "labels": {}},
                        },
                    ],
                }
            },
        )
    )
    assert again == seed


def test_a_next_turn_answers_its_source(api: TestClient) -> None:
    session_id = create_session(api)
    source = start_root(api, session_id)
    completed = terminal_record(source, RunStatus.COMPLETED)
    finish = {"status": "completed", "record": wire_record(completed)}
    ok(api.post(f"/v1/runs/{source.run_id}/terminal", json=finish))
    run_id = uid("run")
    seed = begin(
        api,
        run_id,
        session_id=session_id,
        kind="next_turn",
        source_run_id=source.run_id,
        exclude_reasoning=True,
    )
    assert seed["source"] == {
        "run_id": source.run_id,
        "end_id": "2",
        "exclude_system": True,
        "exclude_reasoning": True,
    }
    prefix = {"key": "k1", "previous_id": "0", "prefix": seed["source"]}
    assert append(api, run_id, prefix) == {"id": "1", "inserted": True}


def test_the_four_variants_come_back_with_exactly_their_one_key(api: TestClient) -> None:
    run_id = uid("run")
    begin(api, run_id)
    sent: list[Json] = [
        {"key": "a", "previous_id": "0", "messages": MESSAGES},
        {"key": "b", "previous_id": "1", "literal_part": {"data": b64(b'[{"ro'), "final": False}},
        {
            "key": "c",
            "previous_id": "2",
            "literal_part": {"data": b64(b'le":"user","parts":[],"meta":null}]'), "final": True},
        },
        {"key": "d", "previous_id": "3", "prepared": b64(b"\x00\xffcompiled")},
        {"key": "e", "previous_id": "4", "prepared": b64(b"more")},
    ]
    for index, record in enumerate(sent, start=1):
        assert append(api, run_id, record) == {"id": str(index), "inserted": True}
    preparation = publish(api, run_id, "3", "5", len(b"\x00\xffcompiledmore"))
    assert preparation == {
        "seed": {"declaration": declaration(run_id), "source": None, "end_id": "3"},
        "end_id": "5",
        "prepared_bytes": 14,
    }
    history = ok(api.get(f"/v1/runs/{run_id}/seed/records", params={"seed_end_id": "3"}))
    assert history == {
        "records": [{"id": str(i), **record} for i, record in enumerate(sent[:3], start=1)],
        "next_cursor": "",
    }
    compiled = ok(api.get(f"/v1/runs/{run_id}/preparation/records", params={"end_id": "5"}))
    assert compiled == {
        "records": [{"id": str(i), **record} for i, record in enumerate(sent[3:], start=4)],
        "next_cursor": "",
    }
    page = ok(api.get(f"/v1/runs/{run_id}/seed/records", params={"seed_end_id": "3", "limit": 2}))
    assert [r["id"] for r in page["records"]] == ["1", "2"]
    assert page["next_cursor"] == "2"
    assert (
        ok(api.get(f"/v1/runs/{run_id}/seed", params={"seed_end_id": "3"})) == preparation["seed"]
    )


def test_find_and_settle_answer_found_and_preparation(api: TestClient) -> None:
    run_id, preparation = prepared(api)
    operation = {"agent_id": AGENT, "run_id": run_id, "session_id": "", "command_id": "cmd-1"}
    query = {k: v for k, v in operation.items() if k != "run_id"}
    found = ok(api.get(f"/v1/runs/{run_id}/preparation", params=query))
    assert found == {"found": True, "preparation": preparation}
    settled = ok(api.post(f"{attempts(run_id)}/other/settlement", json={"operation": operation}))
    assert settled == {"found": True, "preparation": preparation}

    unpublished = uid("run")
    begin(api, unpublished)
    operation = {**operation, "run_id": unpublished}
    found = ok(api.get(f"/v1/runs/{unpublished}/preparation", params=query))
    assert found == {"found": False, "preparation": None}
    settled = ok(
        api.post(f"{attempts(unpublished)}/att-1/settlement", json={"operation": operation})
    )
    assert settled == {"found": False, "preparation": None}
    late = api.post(
        records_url(unpublished),
        json={"record": {"key": "k", "previous_id": "0", "messages": "[]"}},
    )
    assert_problem(late, 409, "preparation_abandoned", run_id=unpublished)


# --- strict input -----------------------------------------------------------------------------


def _invalid(response: Any, run_id: str) -> None:
    assert response.status_code == 422, response.text
    assert response.headers["content-type"] == PROBLEM_JSON
    body = response.json()
    assert body["code"] == "invalid_argument", body
    assert body["run_id"] == run_id, body


@pytest.mark.parametrize(
    "body",
    [
        {"declaration": declaration("RUN"), "extra": 1},
        {"declaration": {**declaration("RUN"), "source": None}},
        {
            "declaration": declaration(
                "RUN", rendered_prompts=[{"prompt_id": "p", "version": "1", "x": 1}]
            )
        },
        {
            "declaration": declaration(
                "RUN", rendered_prompts=[{"prompt_id": "p", "version": "1", "scope": {"tags": {}}}]
            )
        },
        {"declaration": declaration("RUN", exclude_reasoning="false")},
        {"declaration": declaration("RUN", exclude_reasoning=0)},
        {"declaration": declaration("RUN", kind="resume")},
        {"declaration": declaration("RUN", agent_id=7)},
        {
            "declaration": declaration(
                "RUN",
                rendered_prompts=[
                    {"prompt_id": "p", "version": "1", "scope": {"labels": {"k": 1}}}
                ],
            )
        },
        {},
    ],
    ids=[
        "unknown top-level key",
        "unknown declaration key",
        "unknown prompt key",
        "unknown scope key",
        "boolean as a string",
        "boolean as a number",
        "unknown kind",
        "number for a string",
        "number for a label",
        "no declaration",
    ],
)
def test_begin_refuses_unknown_keys_and_wrong_types(api: TestClient, body: Json) -> None:
    run_id = uid("run")
    text = json.dumps(body).replace('"RUN"', json.dumps(run_id))
    response = api.post(
        attempts(run_id), content=text, headers={"content-type": "application/json"}
    )
    _invalid(response, run_id)
    assert (
        api.get(f"/v1/runs/{run_id}/seed", params={"seed_end_id": "0"}).json()["code"]
        == "seed_not_found"
    )


def test_begin_refuses_a_declaration_of_another_run(api: TestClient) -> None:
    run_id, other = uid("run"), uid("run")
    response = api.post(attempts(run_id), json={"declaration": declaration(other)})
    _invalid(response, run_id)
    assert "path" in response.json()["detail"]
    for named in (run_id, other):
        seed = api.get(f"/v1/runs/{named}/seed", params={"seed_end_id": "0"})
        assert seed.json()["code"] == "seed_not_found"


def test_settle_refuses_an_operation_of_another_run(api: TestClient) -> None:
    run_id = uid("run")
    begin(api, run_id)
    operation = {"agent_id": AGENT, "run_id": uid("run"), "session_id": "", "command_id": "cmd-1"}
    response = api.post(f"{attempts(run_id)}/att-1/settlement", json={"operation": operation})
    _invalid(response, run_id)
    # Nothing was settled: the attempt still appends.
    assert append(api, run_id, {"key": "k", "previous_id": "0", "messages": "[]"})["inserted"]


GOOD = {"key": "k", "previous_id": "0"}


@pytest.mark.parametrize(
    "record",
    [
        {**GOOD, "messages": "[]", "extra": None},
        {**GOOD, "literal_part": {"data": b64(b"[]"), "final": True, "more": False}},
        {**GOOD, "literal_part": {"data": b64(b"[]")}},
        {**GOOD, "literal_part": {"data": b64(b"[]"), "final": "true"}},
        {**GOOD, "literal_part": {"data": b64(b"[]"), "final": 1}},
        {**GOOD, "prefix": {"run_id": "r", "end_id": "1", "exclude_system": False}},
        {
            **GOOD,
            "prefix": {
                "run_id": "r",
                "end_id": "1",
                "exclude_system": False,
                "exclude_reasoning": False,
                "x": 1,
            },
        },
        {**GOOD, "prepared": "QR=="},  # non-zero unused bits: "QQ==" is the spelling of b"A"
        {**GOOD, "prepared": "QQ"},  # unpadded
        {**GOOD, "prepared": "QUJD\n"},
        {**GOOD, "prepared": "-_-_"},  # URL-safe alphabet
        {**GOOD, "prepared": "QUJ D"},
        {**GOOD, "literal_part": {"data": "W10", "final": True}},
        {**GOOD, "prepared": 5},
        {**GOOD, "messages": ["not", "a", "string"]},
        {**GOOD, "id": "1", "messages": "[]"},
        {**GOOD, "id": None, "messages": "[]"},
        {**GOOD, "messages": "[]", "prepared": b64(b"x")},
        dict(GOOD),
        {"previous_id": "0", "messages": "[]"},
    ],
    ids=[
        "unknown record key",
        "unknown literal part key",
        "final absent",
        "final a string",
        "final a number",
        "prefix without a key",
        "prefix with an extra key",
        "base64 not canonical",
        "base64 unpadded",
        "base64 with a newline",
        "base64 url-safe",
        "base64 with a space",
        "literal data unpadded",
        "prepared a number",
        "messages not a string",
        "id on input",
        "id null",
        "two variants",
        "no variant",
        "no key",
    ],
)
def test_append_refuses_unknown_keys_wrong_types_and_non_canonical_base64(
    api: TestClient, record: Json
) -> None:
    run_id = uid("run")
    begin(api, run_id)
    _invalid(api.post(records_url(run_id), json={"record": record}), run_id)
    assert begin(api, run_id)["end_id"] == "0"  # the exact retry: nothing appended


def test_unused_variants_may_be_null_and_id_empty(api: TestClient) -> None:
    run_id = uid("run")
    begin(api, run_id)
    record = {
        "id": "",
        **GOOD,
        "messages": MESSAGES,
        "literal_part": None,
        "prefix": None,
        "prepared": None,
    }
    assert append(api, run_id, record) == {"id": "1", "inserted": True}
    assert append(api, run_id, {**GOOD, "messages": MESSAGES}) == {"id": "1", "inserted": False}


def test_canonical_base64_is_decoded_and_every_other_spelling_refused() -> None:
    for data in (b"", b"A", b"AB", b"ABC", bytes(range(256))):
        assert parse_canonical_base64(b64(data)) == data
    for text in ("QR==", "QUI=QQ==", "QQ", "QQ=", "Q===", "QUJD\n", " QUJD", "-_8=", "QUJD=="):
        with pytest.raises(ValueError, match="base64"):
            parse_canonical_base64(text)


@pytest.mark.parametrize(
    "body",
    [
        {"seed_end_id": "1", "end_id": "2", "prepared_bytes": "35"},
        {"seed_end_id": "1", "end_id": "2", "prepared_bytes": 35.0},
        {"seed_end_id": "1", "end_id": "2", "prepared_bytes": True},
        {"seed_end_id": "1", "end_id": "2"},
        {"seed_end_id": 1, "end_id": "2", "prepared_bytes": 35},
        {"seed_end_id": "1", "end_id": "2", "prepared_bytes": 35, "run_id": "x"},
        {"seed_end_id": "", "end_id": "2", "prepared_bytes": 35},
    ],
    ids=["string", "float", "boolean", "absent", "number id", "unknown key", "empty id"],
)
def test_publish_refuses_anything_but_two_ids_and_an_integer(api: TestClient, body: Json) -> None:
    run_id = uid("run")
    begin(api, run_id)
    append(api, run_id, {"key": "h1", "previous_id": "0", "messages": MESSAGES})
    append(api, run_id, {"key": "p1", "previous_id": "1", "prepared": b64(COMPILED)})
    _invalid(api.post(f"{attempts(run_id)}/att-1/publication", json=body), run_id)
    seed = api.get(f"/v1/runs/{run_id}/seed", params={"seed_end_id": "1"})
    assert seed.json()["code"] == "seed_not_published"


# --- byte-exact messages, canonical sizes ---------------------------------------------------


def test_messages_travel_byte_for_byte_whatever_the_body_spells(api: TestClient) -> None:
    text = (
        '  [ {"role" :"user" ,\n\t"parts": [ {"kind":"text","text":"caf\u00e9 \u2014 \U0001f600 '
        '\\"q\\" \\u00e9 \\n"} ],"meta" : {"k":[1 , 2.50,true]}} ]\n'
    )
    run_id = uid("run")
    begin(api, run_id)
    record = {"key": "h1", "previous_id": "0", "messages": text}
    # Spelled with every non-ASCII character escaped (\u00e9, a surrogate pair for the emoji).
    escaped = json.dumps({"record": record}, ensure_ascii=True)
    assert "\\ud83d\\ude00" in escaped
    response = api.post(
        records_url(run_id), content=escaped, headers={"content-type": "application/json"}
    )
    assert ok(response) == {"id": "1", "inserted": True}
    # The raw UTF-8 spelling is the same record: an exact retry.
    assert append(api, run_id, record) == {"id": "1", "inserted": False}
    append(api, run_id, {"key": "p1", "previous_id": "1", "prepared": b64(COMPILED)})
    publish(api, run_id, "1", "2", len(COMPILED))
    page = api.get(f"/v1/runs/{run_id}/seed/records", params={"seed_end_id": "1"})
    assert page.json()["records"][0]["messages"] == text
    assert json.loads(page.content)["records"][0]["messages"].encode() == text.encode()


def _big_declaration(run_id: str, size: int, filler: str = "x") -> Json:
    """A declaration whose canonical begin command is exactly ``size`` bytes."""
    prompt = {"prompt_id": "p", "version": "1", "scope": {"session_id": "", "labels": {"big": ""}}}
    base = declaration(run_id, rendered_prompts=[prompt])
    room = size - len(canonical({"declaration": base}))
    unit = len(filler.encode())
    prompt["scope"]["labels"]["big"] = filler * (room // unit) + "x" * (room % unit)  # type: ignore[index]
    assert len(canonical({"declaration": base})) == size
    return base


def test_a_body_spelled_large_is_measured_on_its_canonical_command(api: TestClient) -> None:
    run_id = uid("run")
    big = _big_declaration(run_id, COMMAND_LIMIT - 1_000)
    # 1.2 MB as sent, whitespace between the tokens; the canonical command is under the
    # limit (and the body under the service's default body limit).
    spaced = json.dumps(big, indent=8, separators=(" ,\n", " :\t"))
    body = "{\n" + " " * 210_000 + '"declaration"\t:' + spaced + " \r\n" * 1_000 + "}"
    assert len(body.encode()) > 1_200_000
    response = api.post(
        attempts(run_id), content=body, headers={"content-type": "application/json"}
    )
    assert ok(response)["declaration"] == big


def test_escapes_in_the_body_count_as_their_canonical_bytes(api: TestClient) -> None:
    run_id = uid("run")
    big = _big_declaration(run_id, COMMAND_LIMIT, filler="\u00e9")
    body = json.dumps({"declaration": big}, ensure_ascii=True)  # 6 bytes a character sent
    assert len(body.encode()) > 2 * COMMAND_LIMIT
    headers = {"content-type": "application/json"}
    assert ok(api.post(attempts(run_id), content=body, headers=headers))["declaration"] == big

    other = uid("run")
    too_big = _big_declaration(other, COMMAND_LIMIT + 1, filler="\u00e9")
    compact = canonical({"declaration": too_big})
    response = api.post(attempts(other), content=compact, headers=headers)
    assert_problem(response, 413, "payload_too_large", run_id=other)


def test_an_append_command_is_measured_canonically_too(api: TestClient) -> None:
    run_id = uid("run")
    begin(api, run_id)
    frame = canonical(
        {
            "run_id": run_id,
            "attempt_id": "att-1",
            "record": {"key": "k", "previous_id": "0", "prepared": ""},
        }
    )
    # base64 grows by 4 bytes each 3: the largest prepared fragment whose command fits.
    data = b"x" * ((COMMAND_LIMIT - len(frame)) // 4 * 3)
    body = json.dumps({"record": {"key": "k", "previous_id": "0", "prepared": b64(data)}}, indent=4)
    response = api.post(
        records_url(run_id),
        content=" " * 300_000 + body,
        headers={"content-type": "application/json"},
    )
    assert ok(response) == {"id": "1", "inserted": True}
    response = api.post(
        records_url(run_id),
        json={"record": {"key": "k2", "previous_id": "1", "prepared": b64(data + b"xyz")}},
    )
    assert_problem(response, 413, "payload_too_large", run_id=run_id)


# --- reads: paging arguments, problems with the run ID -------------------------------------


def test_reads_answer_their_problems_with_the_run_id(api: TestClient) -> None:
    run_id, _ = prepared(api)
    missing = uid("run")
    seed = f"/v1/runs/{missing}/seed"
    assert_problem(
        api.get(seed, params={"seed_end_id": "1"}), 404, "seed_not_found", run_id=missing
    )
    unnamed = api.get(f"/v1/runs/{run_id}/seed")
    assert (unnamed.status_code, unnamed.json()["code"]) == (422, "invalid_argument")
    wrong = api.get(f"/v1/runs/{run_id}/seed", params={"seed_end_id": "2"})
    assert_problem(wrong, 409, "seed_conflict", run_id=run_id)
    records = f"/v1/runs/{run_id}/seed/records"
    not_limits = ("0", "-7", "1.5", "abc", "", "01", "+1", "1_0", " 1", "-99999999999999999999")
    for limit in not_limits:  # checked first
        response = api.get(records, params={"limit": limit})
        assert_problem(response, 422, "invalid_transcript_position", run_id=run_id)
    huge = api.get(records, params={"seed_end_id": "1", "limit": "9" * 5_000})
    assert [r["id"] for r in ok(huge)["records"]] == ["1"]
    after = api.get(records, params={"seed_end_id": "1", "after": "01"})
    assert_problem(after, 422, "invalid_transcript_position", run_id=run_id)
    compiled = f"/v1/runs/{run_id}/preparation/records"
    assert_problem(api.get(compiled), 422, "invalid_argument", run_id=run_id)
    found = api.get(f"/v1/runs/{run_id}/preparation", params={"agent_id": AGENT})
    assert (found.status_code, found.json()["code"]) == (422, "invalid_argument")
    other = api.get(
        f"/v1/runs/{run_id}/preparation", params={"agent_id": AGENT, "command_id": "cmd-2"}
    )
    assert_problem(other, 409, "seed_conflict", run_id=run_id)


def test_a_run_id_with_a_slash_is_one_path_segment(api: TestClient) -> None:
    run_id = f"team/{uid('run')}"
    path_id = run_id.replace("/", "%2F")
    seed = ok(
        api.post(f"/v1/runs/{path_id}/seed/attempts", json={"declaration": declaration(run_id)})
    )
    assert seed["declaration"]["run_id"] == run_id
    response = api.post(
        f"/v1/runs/{path_id}/seed/attempts/att-1/records",
        json={"record": {"key": "k", "previous_id": ""}},
    )
    _invalid(response, run_id)


# --- starts (15.5) ----------------------------------------------------------------------------


def _run_json(api: TestClient, run_id: str) -> Json:
    body: Json = ok(api.get(f"/v1/runs/{run_id}"))
    return body


@pytest.mark.parametrize("spelling", ["absent", "null", "empty"])
def test_every_start_takes_no_seed_as_absent_null_or_empty(api: TestClient, spelling: str) -> None:
    def without(body: Json) -> Json:
        if spelling == "absent":
            body["run"].pop("seed_end_id", None)
        else:
            body["run"]["seed_end_id"] = None if spelling == "null" else ""
        return body

    session_id = create_session(api)
    root = run_start(session_id=session_id)
    ok(api.post("/v1/runs/root-starts", json=without(root_start_body(root))))
    child = run_start(session_id=session_id, parent_run_id=root.run_id)
    ok(api.post("/v1/runs/child-starts", json=without(_child_body(root, child))))
    one_shot = run_start()
    ok(api.post("/v1/runs/one-shot-starts", json=without(one_shot_body(one_shot))))
    one_shot_child = run_start(parent_run_id=one_shot.run_id)
    ok(
        api.post(
            "/v1/runs/one-shot-child-starts",
            json=without(one_shot_child_body(one_shot, one_shot_child)),
        )
    )
    synchronous = run_start()
    ok(api.post("/v1/runs/synchronous-starts", json=without(one_shot_body(synchronous))))
    for run in (root, child, one_shot, one_shot_child, synchronous):
        assert _run_json(api, run.run_id)["seed_end_id"] == ""


def _child_body(parent: RunStart, child: RunStart) -> Json:
    return {
        "run": wire_run(child),
        "parent_linked": wire_record(link_record(parent, child)),
        "started": wire_record(started_record(child)),
        "canceled": wire_record(canceled_record(child)),
    }


def test_every_start_attaches_its_published_seed(api: TestClient) -> None:
    session_id = create_session(api)
    root_id, _ = prepared(api, session_id=session_id)
    root = replace(run_start(run_id=root_id, session_id=session_id), seed_end_id="1")
    ok(api.post("/v1/runs/root-starts", json=root_start_body(root)))
    child_id, _ = prepared(api, session_id=session_id)
    child = replace(
        run_start(run_id=child_id, session_id=session_id, parent_run_id=root.run_id),
        seed_end_id="1",
    )
    ok(api.post("/v1/runs/child-starts", json=_child_body(root, child)))
    one_shot = replace(run_start(run_id=prepared(api)[0]), seed_end_id="1")
    ok(api.post("/v1/runs/one-shot-starts", json=one_shot_body(one_shot)))
    one_shot_child = replace(
        run_start(run_id=prepared(api)[0], parent_run_id=one_shot.run_id), seed_end_id="1"
    )
    ok(
        api.post(
            "/v1/runs/one-shot-child-starts", json=one_shot_child_body(one_shot, one_shot_child)
        )
    )
    synchronous = replace(run_start(run_id=prepared(api)[0]), seed_end_id="1")
    ok(api.post("/v1/runs/synchronous-starts", json=one_shot_body(synchronous)))
    for run in (root, child, one_shot, one_shot_child, synchronous):
        assert _run_json(api, run.run_id)["seed_end_id"] == "1"
    # The run lists carry it as GET /v1/runs/{run_id} does.
    listed = ok(api.get(f"/v1/sessions/{session_id}/runs"))["runs"]
    assert {run["run_id"]: run["seed_end_id"] for run in listed} == {root_id: "1", child_id: "1"}
    found = ok(api.get("/v1/runs", params={"agent_id": AGENT, "limit": 1000}))["runs"]
    assert {run["run_id"]: run["seed_end_id"] for run in found}[one_shot.run_id] == "1"
    assert _run_json(api, one_shot.run_id) in found


def test_a_start_naming_no_published_seed_is_refused(api: TestClient) -> None:
    run = replace(run_start(), seed_end_id="1")
    response = api.post("/v1/runs/one-shot-starts", json=one_shot_body(run))
    assert_problem(response, 404, "seed_not_found", run_id=run.run_id)
    run_id = uid("run")
    begin(api, run_id)
    run = replace(run_start(run_id=run_id), seed_end_id="1")
    response = api.post("/v1/runs/one-shot-starts", json=one_shot_body(run))
    assert_problem(response, 409, "seed_not_published", run_id=run_id)
    # A run ID prepared for a seed cannot start without it.
    response = api.post("/v1/runs/one-shot-starts", json=one_shot_body(run_start(run_id=run_id)))
    assert_problem(response, 409, "seed_conflict", run_id=run_id)
    start_one_shot(api)  # other runs start as before


# --- roles -----------------------------------------------------------------------------------

KEY = "seed-routes-token-key"


@pytest.fixture
def secured(engine: Engine) -> Iterator[tuple[TestClient, dict[Role, dict[str, str]]]]:
    registry = Tokens(engine, KEY)
    headers = {}
    for role in Role:
        token = registry.create(f"{role.value}-{uid('t')}", role)
        headers[role] = {"Authorization": f"Bearer {token}"}
    url = engine.url.render_as_string(hide_password=False)
    app = create_app(Settings(database_url=url, token_key=SecretStr(KEY)))
    try:
        with TestClient(app, raise_server_exceptions=False) as http:
            yield http, headers
    finally:
        with engine.begin() as conn:
            conn.exec_driver_sql("DELETE FROM api_tokens")


def test_a_reader_reads_seeds_but_may_not_write_them(
    secured: tuple[TestClient, dict[Role, dict[str, str]]],
) -> None:
    http, headers = secured
    reader, worker = headers[Role.READER], headers[Role.WORKER]
    run_id = uid("run")
    operation = {"agent_id": AGENT, "run_id": run_id, "session_id": "", "command_id": "cmd-1"}
    writes = [
        (attempts(run_id), {"declaration": declaration(run_id)}),
        (records_url(run_id), {"record": {"key": "h1", "previous_id": "0", "messages": MESSAGES}}),
        (
            records_url(run_id),
            {"record": {"key": "p1", "previous_id": "1", "prepared": b64(COMPILED)}},
        ),
        (
            f"{attempts(run_id)}/att-1/publication",
            {"seed_end_id": "1", "end_id": "2", "prepared_bytes": len(COMPILED)},
        ),
        (f"{attempts(run_id)}/att-1/settlement", {"operation": operation}),
    ]
    for url, body in writes:
        assert_problem(http.post(url, json=body, headers=reader), 403, "permission_denied")
        assert http.post(url, json=body, headers=worker).status_code == 200, url
    reads = [
        (f"/v1/runs/{run_id}/seed", {"seed_end_id": "1"}),
        (f"/v1/runs/{run_id}/seed/records", {"seed_end_id": "1"}),
        (f"/v1/runs/{run_id}/preparation/records", {"end_id": "2"}),
        (f"/v1/runs/{run_id}/preparation", {"agent_id": AGENT, "command_id": "cmd-1"}),
    ]
    for url, params in reads:
        assert http.get(url, params=params, headers=reader).status_code == 200, url
        assert_problem(http.get(url, params=params), 401, "unauthenticated")


# --- the document ---------------------------------------------------------------------------


def test_the_openapi_document_lists_the_eight_operations(api: TestClient) -> None:
    paths = api.get("/openapi.json").json()["paths"]
    found = {
        (method.upper(), path): (spec["operationId"], spec["tags"])
        for path, item in paths.items()
        for method, spec in item.items()
        if "seeds" in spec.get("tags", ())
    }
    base = "/v1/runs/{run_id}"
    attempt = base + "/seed/attempts/{attempt_id}"
    assert found == {
        ("POST", base + "/seed/attempts"): ("begin-run-seed", ["seeds"]),
        ("POST", attempt + "/records"): ("append-run-seed", ["seeds"]),
        ("POST", attempt + "/publication"): ("publish-run-seed", ["seeds"]),
        ("POST", attempt + "/settlement"): ("settle-run-preparation", ["seeds"]),
        ("GET", base + "/preparation"): ("find-run-preparation", ["seeds"]),
        ("GET", base + "/seed"): ("load-run-seed", ["seeds"]),
        ("GET", base + "/seed/records"): ("list-run-seed-records", ["seeds"]),
        ("GET", base + "/preparation/records"): ("list-run-preparation-records", ["seeds"]),
    }
    for (_, path), _ in found.items():
        for spec in paths[path].values():
            codes = json.dumps(spec["responses"])
            assert "seed_conflict" in codes or "seed_not_found" in codes, path


def test_the_seed_reads_declare_the_parameters_the_service_requires() -> None:
    """openapi.json marks required what a read refuses when left out (422
    ``invalid_argument``, as any validation error). The two seed lists keep theirs optional
    in the document: their ``limit`` is checked first (CONTRACT.md 15.4), before FastAPI
    could refuse a missing parameter."""
    from app.main import create_app
    from app.settings import Settings

    document = create_app(Settings(database_url="sqlite://")).openapi()
    required = {
        ("/v1/runs/{run_id}/preparation", "agent_id"),
        ("/v1/runs/{run_id}/preparation", "command_id"),
        ("/v1/runs/{run_id}/seed", "seed_end_id"),
    }
    for path, name in required:
        (parameter,) = [
            p for p in document["paths"][path]["get"]["parameters"] if p["name"] == name
        ]
        assert parameter["required"] is True, (path, name)
