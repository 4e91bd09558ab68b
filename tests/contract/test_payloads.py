"""Strict lifecycle payloads and opaque ordinary payloads (CONTRACT.md section 5, 1.7).

Each lifecycle type is exercised through the operation that carries it: ``run_started``
through ``start_root_run``, ``child_run_linked`` through ``start_child_run``,
``run_suspended`` through ``record_run_suspension``, ``run_completed`` through
``record_run_terminal`` (and the canceled record of ``start_root_run``) and
``runtime.cancellation_intent`` through ``record_run_cancellation``.

JSON text is written as raw strings (``r'...'``) so JSON escapes such as ``\\u00e9`` reach
the store as escapes; raw multibyte text is written with Python escapes and encoded to UTF-8.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import pytest

from runtime_store_client import (
    AppendResult,
    InvalidArgumentError,
    RunStart,
    RunStatus,
    SessionStatus,
)
from tests.contract.builders import (
    Backend,
    all_records,
    assert_rejected,
    canceled_record,
    cancellation_record,
    checkpoint,
    link_record,
    new_session,
    record,
    run_start,
    start_root,
    started_record,
    suspended_record,
    terminal_record,
)

# --------------------------------------------------------------------------- helpers


def structural(valid: bytes) -> list[Any]:
    """Malformed variants of any payload: not exactly one JSON object."""
    return [
        pytest.param(b"null", id="literal_null"),
        pytest.param(b"[" + valid + b"]", id="top_level_array"),
        pytest.param(b'"text"', id="top_level_string"),
        pytest.param(b"1", id="top_level_number"),
        pytest.param(valid + b"{}", id="trailing_object"),
        pytest.param(valid + b"\n" + valid, id="second_value"),
        pytest.param(valid + b"x", id="trailing_bytes"),
        pytest.param(valid + b" null", id="trailing_null"),
        pytest.param(valid[:-1], id="truncated"),
        pytest.param(b"", id="empty"),
        pytest.param(b"   ", id="whitespace_only"),
    ]


BAD_UTF8 = [
    pytest.param(b"\x80", id="lone_continuation_byte"),
    pytest.param(b"\xc3", id="truncated_two_byte_sequence"),
    pytest.param(b"\xe6\x97", id="truncated_three_byte_sequence"),
    pytest.param(b"\xc0\xaf", id="overlong_two_byte_form"),
    pytest.param(b"\xe0\x80\xaf", id="overlong_three_byte_form"),
    pytest.param(b"\xed\xa0\x80", id="encoded_surrogate"),
    pytest.param(b"\xf4\x90\x80\x80", id="code_point_above_u10ffff"),
]

MULTIBYTE = "\u65e5\u672c\u8a9e \U0001f389 caf\u00e9"  # raw UTF-8 text once encoded


def bad_text(bad: bytes) -> bytes:
    """Invalid UTF-8 embedded in otherwise printable text."""
    return b"a" + bad + b"b"


@pytest.fixture
def session_id(store: Backend) -> str:
    return new_session(store).id


@pytest.fixture
def run(store: Backend, session_id: str) -> RunStart:
    """A running, unlabelled root run; its ``run_started`` record has ID "1"."""
    return start_root(store, session_id).run


# --------------------------------------------------------------------------- run_started

STARTED_LABELS = {"site": "one"}
STARTED = rb'{"ParentRunID":"","PredecessorRunID":"","Labels":{"site":"one"}}'

STARTED_REJECTED = [
    *structural(STARTED),
    pytest.param(
        rb'{"ParentRunID":"","PredecessorRunID":"","Labels":{"site":"one"},"Extra":""}',
        id="unknown_key",
    ),
    pytest.param(
        rb'{"ParentRunID":"","PredecessorRunID":"","Labels":{"site":"one"},"labels":null}',
        id="unknown_key_wrong_case",
    ),
    pytest.param(
        rb'{"parentRunID":"","PredecessorRunID":"","Labels":{"site":"one"}}',
        id="known_key_wrong_case",
    ),
    pytest.param(
        rb'{"ParentRunID":"","ParentRunID":"","PredecessorRunID":"","Labels":{"site":"one"}}',
        id="duplicate_key",
    ),
    pytest.param(
        rb'{"ParentRunID":0,"PredecessorRunID":"","Labels":{"site":"one"}}', id="string_as_number"
    ),
    pytest.param(
        rb'{"ParentRunID":null,"PredecessorRunID":"","Labels":{"site":"one"}}', id="string_as_null"
    ),
    pytest.param(
        rb'{"ParentRunID":"","PredecessorRunID":false,"Labels":{"site":"one"}}', id="string_as_bool"
    ),
    pytest.param(
        rb'{"ParentRunID":"","PredecessorRunID":{},"Labels":{"site":"one"}}', id="string_as_object"
    ),
    pytest.param(rb'{"ParentRunID":"","PredecessorRunID":"","Labels":["site"]}', id="labels_array"),
    pytest.param(rb'{"ParentRunID":"","PredecessorRunID":"","Labels":"one"}', id="labels_string"),
    pytest.param(
        rb'{"ParentRunID":"","PredecessorRunID":"","Labels":{"site":1}}', id="label_value_number"
    ),
    pytest.param(
        rb'{"ParentRunID":"","PredecessorRunID":"","Labels":{"site":null}}', id="label_value_null"
    ),
    pytest.param(
        rb'{"ParentRunID":"","PredecessorRunID":"","Labels":{"site":["one"]}}',
        id="label_value_array",
    ),
]


@pytest.mark.parametrize("payload", STARTED_REJECTED)
def test_run_started_malformed_payload_is_rejected(
    store: Backend, session_id: str, payload: bytes
) -> None:
    run = run_start(session_id=session_id, labels=STARTED_LABELS)
    started = dataclasses.replace(started_record(run), payload=payload)

    assert_rejected(
        store,
        lambda: store.start_root_run(run, started, canceled_record(run)),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


@pytest.mark.parametrize("bad", BAD_UTF8)
def test_run_started_invalid_utf8_is_rejected(store: Backend, session_id: str, bad: bytes) -> None:
    # The start's label is what a lenient decoder would read, so only the UTF-8 rule rejects.
    text = bad_text(bad)
    run = run_start(session_id=session_id, labels={"site": text.decode("utf-8", "replace")})
    payload = rb'{"ParentRunID":"","PredecessorRunID":"","Labels":{"site":"' + text + b'"}}'
    started = dataclasses.replace(started_record(run), payload=payload)

    assert_rejected(
        store,
        lambda: store.start_root_run(run, started, canceled_record(run)),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


STARTED_ACCEPTED = [
    pytest.param(
        {"site": "caf\u00e9"},
        rb'{"ParentRunID":"","PredecessorRunID":"","Labels":{"site":"caf\u00e9"}}',
        id="escaped_latin",
    ),
    pytest.param(
        {"site": "cafe\u0301"},
        rb'{"ParentRunID":"","PredecessorRunID":"","Labels":{"site":"cafe\u0301"}}',
        id="escaped_combining_sequence",
    ),
    pytest.param(
        {"site": "one"},
        rb'{"ParentRunID":"","PredecessorRunID":"","Labels":{"\u0073ite":"\u006fne"}}',
        id="escaped_ascii",
    ),
    pytest.param(
        {"site": MULTIBYTE},
        ('{"ParentRunID":"","PredecessorRunID":"","Labels":{"site":"' + MULTIBYTE + '"}}').encode(),
        id="raw_multibyte",
    ),
    pytest.param(
        {"site": "one"},
        b' {\n\t"ParentRunID" : "" ,\r\n "PredecessorRunID":"",\n'
        b' "Labels" : { "site" : "one" }\n} \n',
        id="insignificant_whitespace",
    ),
    pytest.param({}, rb'{"ParentRunID":"","PredecessorRunID":"","Labels":null}', id="labels_null"),
    pytest.param({}, rb'{"ParentRunID":"","PredecessorRunID":"","Labels":{}}', id="labels_empty"),
    pytest.param({}, rb"{}", id="missing_keys_take_zero_values"),
]


@pytest.mark.parametrize(("labels", "payload"), STARTED_ACCEPTED)
def test_run_started_valid_payload_is_stored_byte_for_byte(
    store: Backend, session_id: str, labels: Mapping[str, str], payload: bytes
) -> None:
    run = run_start(session_id=session_id, labels=labels)
    started = dataclasses.replace(started_record(run), payload=payload)

    result = store.start_root_run(run, started, canceled_record(run))

    assert result.started == AppendResult(
        id="1", inserted=True, session_status=SessionStatus.ACTIVE
    )
    assert all_records(store, run.run_id)[0].payload == payload
    assert dict(store.load_run(run.run_id).labels) == dict(labels)


CANCELED_REJECTED = [
    pytest.param(
        rb'{"status":"canceled","phase":"canceled","cancellation":{"reason":"session_ended"},"x":1}',
        id="unknown_key",
    ),
    pytest.param(
        rb'{"status":"canceled","phase":"canceled","cancellation":{"reason":"session_ended","x":1}}',
        id="nested_unknown_key",
    ),
    pytest.param(
        rb'{"status":"canceled","phase":"canceled","cancellation":{"reason":"session_ended"}} {}',
        id="trailing_object",
    ),
    pytest.param(
        rb'{"status":"canceled","phase":null,"cancellation":{"reason":"session_ended"}}',
        id="string_as_null",
    ),
    pytest.param(b"null", id="literal_null"),
]


@pytest.mark.parametrize("payload", CANCELED_REJECTED)
def test_start_canceled_record_is_strict_even_when_session_active(
    store: Backend, session_id: str, payload: bytes
) -> None:
    run = run_start(session_id=session_id)
    canceled = dataclasses.replace(canceled_record(run), payload=payload)

    assert_rejected(
        store,
        lambda: store.start_root_run(run, started_record(run), canceled),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


# --------------------------------------------------------------------------- child_run_linked

LINKED = (
    rb'{"ToolName":"search","ToolCallID":"call-1","ChildRunID":"CHILD","ChildAgentID":"agent-1"}'
)

LINKED_REJECTED = [
    *structural(LINKED),
    pytest.param(
        rb'{"ToolName":"search","ToolCallID":"call-1","ChildRunID":"CHILD","ChildAgentID":"agent-1",'
        rb'"Extra":""}',
        id="unknown_key",
    ),
    pytest.param(
        rb'{"ToolName":"search","ToolCallID":"call-1","ChildRunID":"CHILD","ChildAgentID":"agent-1",'
        rb'"toolName":"search"}',
        id="unknown_key_wrong_case",
    ),
    pytest.param(
        rb'{"ToolName":"search","ToolName":"search","ToolCallID":"call-1","ChildRunID":"CHILD",'
        rb'"ChildAgentID":"agent-1"}',
        id="duplicate_key",
    ),
    pytest.param(
        rb'{"ToolName":1,"ToolCallID":"call-1","ChildRunID":"CHILD","ChildAgentID":"agent-1"}',
        id="string_as_number",
    ),
    pytest.param(
        rb'{"ToolName":"search","ToolCallID":null,"ChildRunID":"CHILD","ChildAgentID":"agent-1"}',
        id="string_as_null",
    ),
    pytest.param(
        rb'{"ToolName":"search","ToolCallID":true,"ChildRunID":"CHILD","ChildAgentID":"agent-1"}',
        id="string_as_bool",
    ),
    pytest.param(
        rb'{"ToolName":["search"],"ToolCallID":"call-1","ChildRunID":"CHILD",'
        rb'"ChildAgentID":"agent-1"}',
        id="string_as_array",
    ),
]


def child_of(store: Backend, session_id: str) -> tuple[RunStart, RunStart]:
    parent = start_root(store, session_id).run
    child = run_start(session_id=session_id, parent_run_id=parent.run_id)
    return parent, child


@pytest.mark.parametrize("payload", LINKED_REJECTED)
def test_child_run_linked_malformed_payload_is_rejected(
    store: Backend, session_id: str, payload: bytes
) -> None:
    parent, child = child_of(store, session_id)
    link = dataclasses.replace(
        link_record(parent, child), payload=payload.replace(b"CHILD", child.run_id.encode())
    )

    assert_rejected(
        store,
        lambda: store.start_child_run(child, link, started_record(child), canceled_record(child)),
        InvalidArgumentError,
        parent.run_id,
        child.run_id,
        session_id=session_id,
    )


@pytest.mark.parametrize("bad", BAD_UTF8)
def test_child_run_linked_invalid_utf8_is_rejected(
    store: Backend, session_id: str, bad: bytes
) -> None:
    parent, child = child_of(store, session_id)
    payload = LINKED.replace(b"CHILD", child.run_id.encode()).replace(b"search", bad_text(bad))
    link = dataclasses.replace(link_record(parent, child), payload=payload)

    assert_rejected(
        store,
        lambda: store.start_child_run(child, link, started_record(child), canceled_record(child)),
        InvalidArgumentError,
        parent.run_id,
        child.run_id,
        session_id=session_id,
    )


LINKED_ACCEPTED = [
    pytest.param(
        rb'{"ToolName":"search\u0000","ToolCallID":"call-1","ChildRunID":"CHILD",'
        rb'"ChildAgentID":"agent-1"}',
        id="escaped_nul",
    ),
    pytest.param(
        rb'{"ToolName":"caf\u00e9","ToolCallID":"cafe\u0301","ChildRunID":"CHILD",'
        rb'"ChildAgentID":"agent-1"}',
        id="escaped_latin_and_combining_sequence",
    ),
    pytest.param(
        (
            '{"ToolName":"' + MULTIBYTE + '","ToolCallID":"call-1","ChildRunID":"CHILD",'
            '"ChildAgentID":"agent-1"}'
        ).encode(),
        id="raw_multibyte",
    ),
    pytest.param(
        b'{ "ToolName" : "search",\n  "ToolCallID" : "call-1",\n\t"ChildRunID":"CHILD",\r\n'
        b'  "ChildAgentID" : "agent-1" }\n',
        id="insignificant_whitespace",
    ),
]


@pytest.mark.parametrize("payload", LINKED_ACCEPTED)
def test_child_run_linked_valid_payload_is_stored_byte_for_byte(
    store: Backend, session_id: str, payload: bytes
) -> None:
    parent, child = child_of(store, session_id)
    payload = payload.replace(b"CHILD", child.run_id.encode())
    link = dataclasses.replace(link_record(parent, child), payload=payload)

    result = store.start_child_run(child, link, started_record(child), canceled_record(child))

    assert result.parent_record == AppendResult(
        id="2", inserted=True, session_status=SessionStatus.ACTIVE
    )
    assert all_records(store, parent.run_id)[-1].payload == payload


# --------------------------------------------------------------------------- run_suspended

SUSPENDED = rb'{"SuspensionID":"cp-1","Version":"v1","PendingCount":1,"RequiredTools":["approve"]}'

SUSPENDED_REJECTED = [
    *structural(SUSPENDED),
    pytest.param(
        rb'{"SuspensionID":"cp-1","Version":"v1","PendingCount":1,"RequiredTools":[],"Extra":1}',
        id="unknown_key",
    ),
    pytest.param(
        rb'{"SuspensionID":"cp-1","suspensionID":"cp-1","Version":"v1","PendingCount":1}',
        id="unknown_key_wrong_case",
    ),
    pytest.param(
        rb'{"SuspensionID":"cp-1","Version":"v1","Version":"v1","PendingCount":1}',
        id="duplicate_key",
    ),
    pytest.param(rb'{"SuspensionID":1,"Version":"v1","PendingCount":1}', id="string_as_number"),
    pytest.param(rb'{"SuspensionID":"cp-1","Version":null,"PendingCount":1}', id="string_as_null"),
    pytest.param(
        rb'{"SuspensionID":"cp-1","Version":"v1","PendingCount":"1"}', id="integer_as_string"
    ),
    pytest.param(
        rb'{"SuspensionID":"cp-1","Version":"v1","PendingCount":1.5}', id="integer_as_fraction"
    ),
    pytest.param(
        rb'{"SuspensionID":"cp-1","Version":"v1","PendingCount":1.0}', id="integer_as_float"
    ),
    pytest.param(
        rb'{"SuspensionID":"cp-1","Version":"v1","PendingCount":true}', id="integer_as_bool"
    ),
    pytest.param(
        rb'{"SuspensionID":"cp-1","Version":"v1","PendingCount":1,"RequiredTools":"approve"}',
        id="array_as_string",
    ),
    pytest.param(
        rb'{"SuspensionID":"cp-1","Version":"v1","PendingCount":1,"RequiredTools":{}}',
        id="array_as_object",
    ),
    pytest.param(
        rb'{"SuspensionID":"cp-1","Version":"v1","PendingCount":1,"RequiredTools":[1]}',
        id="array_item_as_number",
    ),
]


@pytest.mark.parametrize("payload", SUSPENDED_REJECTED)
def test_run_suspended_malformed_payload_is_rejected(
    store: Backend, run: RunStart, session_id: str, payload: bytes
) -> None:
    rec = dataclasses.replace(suspended_record(run), payload=payload)

    assert_rejected(
        store,
        lambda: store.record_run_suspension(run.run_id, checkpoint("cp-1"), rec),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


@pytest.mark.parametrize("bad", BAD_UTF8)
def test_run_suspended_invalid_utf8_is_rejected(
    store: Backend, run: RunStart, session_id: str, bad: bytes
) -> None:
    payload = SUSPENDED.replace(b'"v1"', b'"' + bad_text(bad) + b'"')
    rec = dataclasses.replace(suspended_record(run), payload=payload)

    assert_rejected(
        store,
        lambda: store.record_run_suspension(run.run_id, checkpoint("cp-1"), rec),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


SUSPENDED_ACCEPTED = [
    pytest.param(
        rb'{"SuspensionID":"cp-1","Version":"v\u0000","PendingCount":1,"RequiredTools":null}',
        id="escaped_nul",
    ),
    pytest.param(
        rb'{"SuspensionID":"cp-1","Version":"v1","PendingCount":2,'
        rb'"RequiredTools":["caf\u00e9","cafe\u0301"]}',
        id="escaped_latin_and_combining_sequence",
    ),
    pytest.param(
        rb'{"SuspensionID":"\u0063p-1","Version":"v1","PendingCount":1,"RequiredTools":[]}',
        id="escaped_suspension_id",
    ),
    pytest.param(
        (
            '{"SuspensionID":"cp-1","Version":"' + MULTIBYTE + '","PendingCount":1,'
            '"RequiredTools":["' + MULTIBYTE + '"]}'
        ).encode(),
        id="raw_multibyte",
    ),
    pytest.param(
        b'{\n  "SuspensionID" : "cp-1" ,\n  "Version" : "v1",\n  "PendingCount" : 1 ,\n'
        b'  "RequiredTools" : [ "approve" , "deny" ]\n}\n',
        id="insignificant_whitespace",
    ),
    pytest.param(rb'{"SuspensionID":"cp-1"}', id="missing_keys_take_zero_values"),
]


@pytest.mark.parametrize("payload", SUSPENDED_ACCEPTED)
def test_run_suspended_valid_payload_is_stored_byte_for_byte(
    store: Backend, run: RunStart, payload: bytes
) -> None:
    rec = dataclasses.replace(suspended_record(run), payload=payload)

    result = store.record_run_suspension(run.run_id, checkpoint("cp-1"), rec)

    assert result == AppendResult(id="2", inserted=True, session_status=SessionStatus.ACTIVE)
    assert all_records(store, run.run_id)[-1].payload == payload
    assert store.load_run(run.run_id).status == RunStatus.SUSPENDED


# --------------------------------------------------------------------------- run_completed

COMPLETED = rb'{"status":"success","phase":"completed"}'
FAILED = rb'{"status":"failed","phase":"failed","failure":{"message":"boom","kind":"timeout"}}'


def failed_with(failure: bytes) -> bytes:
    return rb'{"status":"failed","phase":"failed","failure":' + failure + b"}"


def canceled_with(cancellation: bytes) -> bytes:
    return rb'{"status":"canceled","phase":"canceled","cancellation":' + cancellation + b"}"


C, F, X = RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELED

COMPLETED_REJECTED = [
    *(pytest.param(C, p.values[0], id=p.id) for p in structural(COMPLETED)),
    pytest.param(C, rb'{"status":"success","phase":"completed","extra":1}', id="unknown_key"),
    pytest.param(
        C,
        rb'{"status":"success","phase":"completed","Status":"success"}',
        id="unknown_key_wrong_case",
    ),
    pytest.param(
        C, rb'{"status":"success","status":"success","phase":"completed"}', id="duplicate_key"
    ),
    pytest.param(C, rb'{"status":1,"phase":"completed"}', id="string_as_number"),
    pytest.param(C, rb'{"status":"success","phase":null}', id="string_as_null"),
    pytest.param(C, rb'{"status":"success","phase":"completed","labels":[]}', id="labels_array"),
    pytest.param(C, rb'{"status":"success","phase":"completed","labels":"x"}', id="labels_string"),
    pytest.param(F, failed_with(b'"boom"'), id="failure_as_string"),
    pytest.param(F, failed_with(b"null"), id="failure_null"),
    pytest.param(
        F,
        failed_with(rb'{"message":"boom","kind":"timeout","extra":"x"}'),
        id="failure_unknown_key",
    ),
    pytest.param(
        F,
        failed_with(rb'{"message":"boom","kind":"timeout","Message":"boom"}'),
        id="failure_unknown_key_wrong_case",
    ),
    pytest.param(
        F,
        failed_with(rb'{"message":"boom","message":"boom","kind":"timeout"}'),
        id="failure_duplicate_key",
    ),
    pytest.param(F, failed_with(rb'{"message":1,"kind":"timeout"}'), id="failure_message_number"),
    pytest.param(F, failed_with(rb'{"message":null,"kind":"timeout"}'), id="failure_message_null"),
    pytest.param(
        F, failed_with(rb'{"message":"boom","kind":"timeout","code":5}'), id="failure_code_number"
    ),
    pytest.param(
        F,
        failed_with(rb'{"message":"boom","kind":"timeout","http_status":"504"}'),
        id="failure_http_status_string",
    ),
    pytest.param(
        F,
        failed_with(rb'{"message":"boom","kind":"timeout","http_status":504.5}'),
        id="failure_http_status_fraction",
    ),
    pytest.param(
        F,
        failed_with(rb'{"message":"boom","kind":"timeout","http_status":504.0}'),
        id="failure_http_status_float",
    ),
    pytest.param(
        F,
        failed_with(rb'{"message":"boom","kind":"timeout","http_status":true}'),
        id="failure_http_status_bool",
    ),
    pytest.param(
        F,
        failed_with(rb'{"message":"boom","kind":"timeout","retryable":"true"}'),
        id="failure_retryable_string",
    ),
    pytest.param(
        F,
        failed_with(rb'{"message":"boom","kind":"timeout","retryable":1}'),
        id="failure_retryable_number",
    ),
    pytest.param(X, canceled_with(b'"engine_canceled"'), id="cancellation_as_string"),
    pytest.param(
        X,
        canceled_with(rb'{"reason":"engine_canceled","by":"x"}'),
        id="cancellation_unknown_key",
    ),
    pytest.param(
        X, canceled_with(rb'{"Reason":"engine_canceled"}'), id="cancellation_key_wrong_case"
    ),
    pytest.param(X, canceled_with(rb'{"reason":1}'), id="cancellation_reason_number"),
    pytest.param(X, canceled_with(rb'{"reason":null}'), id="cancellation_reason_null"),
]


@pytest.mark.parametrize(("status", "payload"), COMPLETED_REJECTED)
def test_run_completed_malformed_payload_is_rejected(
    store: Backend, run: RunStart, session_id: str, status: RunStatus, payload: bytes
) -> None:
    rec = dataclasses.replace(terminal_record(run, status), payload=payload)

    assert_rejected(
        store,
        lambda: store.record_run_terminal(run.run_id, status, rec),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


@pytest.mark.parametrize("bad", BAD_UTF8)
def test_run_completed_invalid_utf8_is_rejected(
    store: Backend, run: RunStart, session_id: str, bad: bytes
) -> None:
    payload = FAILED.replace(b'"boom"', b'"' + bad_text(bad) + b'"')
    rec = dataclasses.replace(terminal_record(run, RunStatus.FAILED), payload=payload)

    assert_rejected(
        store,
        lambda: store.record_run_terminal(run.run_id, RunStatus.FAILED, rec),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


COMPLETED_ACCEPTED = [
    pytest.param(F, failed_with(rb'{"message":"boom\u0000","kind":"timeout"}'), id="escaped_nul"),
    pytest.param(
        F,
        failed_with(rb'{"message":"caf\u00e9 cafe\u0301","kind":"timeout"}'),
        id="escaped_latin_and_combining_sequence",
    ),
    pytest.param(
        F,
        failed_with(('{"message":"' + MULTIBYTE + '","kind":"timeout"}').encode()),
        id="raw_multibyte",
    ),
    pytest.param(
        F,
        failed_with(
            rb'{"message":"boom","kind":"http","debug_message":"d","provider":"p",'
            rb'"operation":"o","code":"c","http_status":504,"retryable":false}'
        ),
        id="failure_with_every_optional_field",
    ),
    pytest.param(
        C,
        b'{ "status" : "success" ,\n\t"phase" : "completed" ,\r\n "labels" : { } }\n',
        id="insignificant_whitespace",
    ),
    pytest.param(C, rb'{"status":"success","phase":"completed","labels":null}', id="labels_null"),
    pytest.param(X, canceled_with(rb'{"reason":"engine_\u0063anceled"}'), id="escaped_reason"),
]


@pytest.mark.parametrize(("status", "payload"), COMPLETED_ACCEPTED)
def test_run_completed_valid_payload_is_stored_byte_for_byte(
    store: Backend, run: RunStart, status: RunStatus, payload: bytes
) -> None:
    rec = dataclasses.replace(terminal_record(run, status), payload=payload)

    result = store.record_run_terminal(run.run_id, status, rec)

    assert result == AppendResult(id="2", inserted=True, session_status=SessionStatus.ACTIVE)
    assert all_records(store, run.run_id)[-1].payload == payload
    assert store.load_run(run.run_id).status == status


# --------------------------------------------------------------------------- cancellation intent

INTENT = rb'{"reason":"user_requested"}'

INTENT_REJECTED = [
    *structural(INTENT),
    pytest.param(rb'{"Reason":"user_requested"}', id="reason_key_wrong_case"),
    pytest.param(rb'{"reason":"user_requested","reason":"user_requested"}', id="duplicate_key"),
    pytest.param(rb'{"reason":1}', id="reason_number"),
    pytest.param(rb'{"reason":null}', id="reason_null"),
    pytest.param(rb'{"reason":["user_requested"]}', id="reason_array"),
]


@pytest.mark.parametrize("payload", INTENT_REJECTED)
def test_cancellation_intent_malformed_payload_is_rejected(
    store: Backend, run: RunStart, session_id: str, payload: bytes
) -> None:
    rec = dataclasses.replace(cancellation_record(run), payload=payload)

    assert_rejected(
        store,
        lambda: store.record_run_cancellation(run.run_id, "user_requested", rec),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


@pytest.mark.parametrize("bad", BAD_UTF8)
def test_cancellation_intent_invalid_utf8_is_rejected(
    store: Backend, run: RunStart, session_id: str, bad: bytes
) -> None:
    payload = rb'{"reason":"user_requested","note":"' + bad_text(bad) + b'"}'
    rec = dataclasses.replace(cancellation_record(run), payload=payload)

    assert_rejected(
        store,
        lambda: store.record_run_cancellation(run.run_id, "user_requested", rec),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


INTENT_ACCEPTED = [
    pytest.param("caf\u00e9", rb'{"reason":"caf\u00e9"}', id="escaped_reason"),
    pytest.param("cafe\u0301", rb'{"reason":"cafe\u0301"}', id="escaped_combining_sequence"),
    pytest.param(MULTIBYTE, ('{"reason":"' + MULTIBYTE + '"}').encode(), id="raw_multibyte"),
    pytest.param(
        "user_requested",
        rb'{"reason":"user_requested","note":"a\u0000b","n":[1,{}]}',
        id="other_keys_ignored",
    ),
    pytest.param(
        "user_requested", b'\n{ "reason" :\t"user_requested" }\r\n', id="insignificant_whitespace"
    ),
]


@pytest.mark.parametrize(("reason", "payload"), INTENT_ACCEPTED)
def test_cancellation_intent_valid_payload_is_stored_byte_for_byte(
    store: Backend, run: RunStart, reason: str, payload: bytes
) -> None:
    rec = dataclasses.replace(cancellation_record(run), payload=payload)

    result = store.record_run_cancellation(run.run_id, reason, rec)

    assert result == AppendResult(id="2", inserted=True, session_status=SessionStatus.ACTIVE)
    assert all_records(store, run.run_id)[-1].payload == payload
    assert store.load_run(run.run_id).cancellation_reason == reason


# --------------------------------------------------------------------------- ordinary records

ORDINARY_REJECTED = [
    pytest.param(b"", id="empty"),
    pytest.param(b"  \n", id="whitespace_only"),
    pytest.param(b"not json", id="not_json"),
    pytest.param(b'{"note":', id="truncated"),
    pytest.param(b"{} {}", id="second_value"),
    pytest.param(b'{"note":1}x', id="trailing_bytes"),
    pytest.param(b"'single quoted'", id="single_quotes"),
    pytest.param(b"NaN", id="nan"),
    pytest.param(b"Infinity", id="infinity"),
    pytest.param(b"-Infinity", id="negative_infinity"),
    pytest.param(b'{"value":NaN}', id="nested_nan"),
    pytest.param(b'{"note":"a\x80b"}', id="lone_continuation_byte"),
    pytest.param(b'{"note":"a\xc3"}', id="truncated_sequence"),
    pytest.param(b'{"note":"a\xc0\xafb"}', id="overlong_form"),
    pytest.param(b'{"note":"a\xed\xa0\x80b"}', id="encoded_surrogate"),
    pytest.param(b'{"note":"a\xf4\x90\x80\x80b"}', id="code_point_above_u10ffff"),
]


@pytest.mark.parametrize("payload", ORDINARY_REJECTED)
def test_ordinary_payload_must_be_one_utf8_json_value(
    store: Backend, run: RunStart, session_id: str, payload: bytes
) -> None:
    rec = record(run, payload=payload)

    assert_rejected(
        store,
        lambda: store.append_run_record(rec),
        InvalidArgumentError,
        run.run_id,
        session_id=session_id,
    )


ORDINARY_ACCEPTED = [
    pytest.param(b' { "note" : [1, 2.50, 1e3, true, null] }\n', id="whitespace_and_number_forms"),
    pytest.param(b"null", id="literal_null"),
    pytest.param(b"42", id="number"),
    pytest.param(b'"just text"', id="string"),
    pytest.param(b"[]", id="empty_array"),
    pytest.param(rb'{"note":"caf\u00e9 cafe\u0301 \u0000 \ud83c\udf89"}', id="escapes"),
    pytest.param(('{"note":"' + MULTIBYTE + '"}').encode(), id="raw_multibyte"),
    pytest.param(b'{"b":1,"a":2,"Unknown":{"Any":"shape"}}', id="unknown_keys_and_key_order"),
]


@pytest.mark.parametrize("payload", ORDINARY_ACCEPTED)
def test_ordinary_payload_is_opaque_and_stored_byte_for_byte(
    store: Backend, run: RunStart, session_id: str, payload: bytes
) -> None:
    rec = record(run, payload=payload)

    result = store.append_run_record(rec)

    assert result == AppendResult(id="2", inserted=True, session_status=SessionStatus.ACTIVE)
    assert all_records(store, run.run_id)[-1].payload == payload
    assert [r.payload for r in store.list_session_run_records(session_id).records][-1] == payload
