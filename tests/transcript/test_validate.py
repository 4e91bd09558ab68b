"""Transcript validators (CONTRACT.md 10.4): every rule, every violation listed, no mutation."""

from __future__ import annotations

import copy

import pytest

from runtime_store_client import (
    InvalidTranscriptError,
    Message,
    ThinkingPart,
    TranscriptRule,
    TranscriptViolation,
    bedrock_violations,
    decode_messages,
    planner_transcript_violations,
    validate_bedrock,
    validate_planner_transcript,
)
from tests.transcript.samples import (
    assistant,
    conversation_json,
    dumps,
    result,
    system,
    text,
    think,
    use,
    user,
)

R = TranscriptRule


def rules(messages: list[Message]) -> list[tuple[int, str]]:
    """(index, rule) of every planner violation, in order."""
    return [(v.index, v.rule) for v in planner_transcript_violations(messages)]


def planner_error(messages: list[Message]) -> InvalidTranscriptError:
    with pytest.raises(InvalidTranscriptError) as info:
        validate_planner_transcript(messages)
    assert info.value.code == "invalid_transcript"
    assert info.value.violations == planner_transcript_violations(messages)
    return info.value


# --------------------------------------------------------------------------- valid transcripts


@pytest.mark.parametrize(
    "messages",
    [
        pytest.param([], id="empty"),
        pytest.param([system(text()), user(text()), assistant(text())], id="no_tools"),
        pytest.param(
            [user(text()), assistant(think(), text(), use("a")), user(result("a")), assistant()],
            id="one_call",
        ),
        pytest.param(
            [user(text()), assistant(use("a"), use("b")), user(result("b"), result("a"))],
            id="two_calls_any_order",
        ),
        pytest.param(
            [
                assistant(use("a")),
                assistant(text("more")),
                assistant(use("b")),
                user(result("a"), result("b")),
            ],
            id="grouped_consecutive_assistant_messages",
        ),
        pytest.param(
            [assistant(use("a")), user(text("note"), result("a"), text("and more"))],
            id="other_parts_accompany_results",
        ),
        pytest.param(
            [
                assistant(use("a")),
                user(result("a")),
                assistant(use("a2")),
                user(result("a2")),
                assistant(text("done")),
                user(text("thanks")),
            ],
            id="several_rounds",
        ),
        pytest.param(
            [assistant(use("a")), user(result("a", {"error": "boom"}))], id="error_result"
        ),
        pytest.param([assistant(), user()], id="empty_messages"),
    ],
)
def test_valid_transcripts(messages: list[Message]) -> None:
    assert planner_transcript_violations(messages) == []
    validate_planner_transcript(messages)
    validate_bedrock(messages, thinking_enabled=False)


def test_the_realistic_conversation_is_valid() -> None:
    messages = decode_messages(dumps(conversation_json()))
    validate_planner_transcript(messages)
    validate_bedrock(messages, thinking_enabled=True)


# --------------------------------------------------------------------------- planner rules


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        pytest.param(
            [user(text()), assistant(use("a"))],
            [(1, R.TOOL_USE_NOT_FOLLOWED_BY_USER)],
            id="unmatched_tool_use_at_the_end",
        ),
        pytest.param(
            [assistant(use("a")), system(text()), user(result("a"))],
            [(0, R.TOOL_USE_NOT_FOLLOWED_BY_USER), (2, R.TOOL_RESULT_WITHOUT_TOOL_USE)],
            id="tool_use_followed_by_system",
        ),
        pytest.param(
            [assistant(use("a")), user(text("no result"))],
            [(1, R.TOOL_RESULT_COUNT), (1, R.TOOL_USE_UNANSWERED)],
            id="user_without_results",
        ),
        pytest.param(
            [assistant(use("a"), use("b")), user(result("a"))],
            [(1, R.TOOL_RESULT_COUNT), (1, R.TOOL_USE_UNANSWERED)],
            id="too_few_results",
        ),
        pytest.param(
            [assistant(use("a")), user(result("a"), result("b"))],
            [(1, R.TOOL_RESULT_COUNT), (1, R.TOOL_RESULT_ID_UNMATCHED)],
            id="too_many_results",
        ),
        pytest.param(
            [assistant(use("a")), user(result("a"), result("a"))],
            [(1, R.TOOL_RESULT_COUNT), (1, R.TOOL_RESULT_ID_DUPLICATE)],
            id="result_repeated",
        ),
        pytest.param(
            [assistant(use("a"), use("b")), user(result("a"), result("a"))],
            [(1, R.TOOL_RESULT_ID_DUPLICATE), (1, R.TOOL_USE_UNANSWERED)],
            id="right_count_wrong_ids",
        ),
        pytest.param(
            [assistant(use("a")), user(result("b"))],
            [(1, R.TOOL_USE_UNANSWERED), (1, R.TOOL_RESULT_ID_UNMATCHED)],
            id="mismatched_ids",
        ),
        pytest.param(
            [assistant(use("a")), assistant(use("a")), user(result("a"), result("a"))],
            [(1, R.TOOL_USE_ID_DUPLICATE), (2, R.TOOL_RESULT_ID_DUPLICATE)],
            id="duplicate_tool_use_ids_across_the_group",
        ),
        pytest.param(
            [assistant(use("a"), use("a")), user(result("a"))],
            [(0, R.TOOL_USE_ID_DUPLICATE), (1, R.TOOL_RESULT_COUNT)],
            id="duplicate_tool_use_ids_in_one_message",
        ),
        pytest.param(
            [assistant(use("")), user(result(""))],
            [(0, R.TOOL_USE_ID_EMPTY), (1, R.TOOL_RESULT_ID_EMPTY)],
            id="empty_ids",
        ),
        pytest.param(
            [assistant(use("a")), user(result(""))],
            [(1, R.TOOL_RESULT_ID_EMPTY), (1, R.TOOL_USE_UNANSWERED)],
            id="empty_result_id",
        ),
        pytest.param(
            [user(result("a"))],
            [(0, R.TOOL_RESULT_WITHOUT_TOOL_USE)],
            id="result_first",
        ),
        pytest.param(
            [user(text()), assistant(text("no tools")), user(result("a"))],
            [(2, R.TOOL_RESULT_WITHOUT_TOOL_USE)],
            id="result_after_assistant_without_tool_use",
        ),
        pytest.param(
            [system(result("a")), assistant(text())],
            [(0, R.TOOL_RESULT_WITHOUT_TOOL_USE)],
            id="result_in_system_message",
        ),
        pytest.param(
            [assistant(use("a")), user(result("a")), user(result("a"))],
            [(2, R.TOOL_RESULT_WITHOUT_TOOL_USE)],
            id="result_repeated_in_a_later_message",
        ),
        pytest.param(
            [assistant(use("a"), use("b")), user(result("a")), user(result("b"))],
            [
                (1, R.TOOL_RESULT_COUNT),
                (1, R.TOOL_USE_UNANSWERED),
                (2, R.TOOL_RESULT_WITHOUT_TOOL_USE),
            ],
            id="results_split_across_messages",
        ),
        pytest.param(
            [assistant(use("a")), assistant(use("b")), user(result("b"))],
            [(2, R.TOOL_RESULT_COUNT), (2, R.TOOL_USE_UNANSWERED)],
            id="group_answered_only_for_its_last_message",
        ),
        pytest.param(
            [assistant(use("a")), user(result("a")), assistant(use("b"))],
            [(2, R.TOOL_USE_NOT_FOLLOWED_BY_USER)],
            id="second_round_unanswered",
        ),
    ],
)
def test_planner_rule_violations(
    messages: list[Message], expected: list[tuple[int, TranscriptRule]]
) -> None:
    assert rules(messages) == expected
    error = planner_error(messages)
    for violation in error.violations:
        assert str(violation) in error.message


def test_every_violation_is_listed_and_named() -> None:
    messages = [
        user(result("x")),  # 0: result without tool use
        assistant(use("a"), use("")),  # 1: empty ID
        user(result("b")),  # 2: count, unanswered, unmatched
        assistant(use("c")),  # 3: not followed by user
    ]
    error = planner_error(messages)
    assert [(v.index, v.rule) for v in error.violations] == [
        (0, R.TOOL_RESULT_WITHOUT_TOOL_USE),
        (1, R.TOOL_USE_ID_EMPTY),
        (2, R.TOOL_RESULT_COUNT),
        (2, R.TOOL_USE_UNANSWERED),
        (2, R.TOOL_RESULT_ID_UNMATCHED),
        (3, R.TOOL_USE_NOT_FOLLOWED_BY_USER),
    ]
    assert error.message.startswith("planner transcript: 6 violation(s): ")
    assert "message[2] tool_use_unanswered: no tool_result for tool_use 'a'" in error.message
    assert "message[2] tool_result_id_unmatched: tool_result 'b' names no tool_use" in error.message
    assert all(isinstance(v, TranscriptViolation) for v in error.violations)


def test_tool_results_inside_assistant_messages_are_not_paired() -> None:
    """As in the Goa-AI reference: only non-assistant messages are checked for results."""
    assert rules([assistant(result("a")), user(text())]) == []


# --------------------------------------------------------------------------- Bedrock


BEDROCK_CASES = [
    pytest.param([assistant(use("a")), user(result("a"))], [0], id="tool_use_first"),
    pytest.param([assistant(text(), use("a")), user(result("a"))], [0], id="text_first"),
    pytest.param(
        [assistant(text(), think(), use("a")), user(result("a"))], [0], id="thinking_second"
    ),
    pytest.param([assistant(think(), use("a")), user(result("a"))], [], id="thinking_first"),
    pytest.param(
        [assistant(ThinkingPart(redacted=b"\x01"), use("a")), user(result("a"))],
        [],
        id="redacted_thinking_first",
    ),
    pytest.param([assistant(text("no tools"))], [], id="assistant_without_tool_use"),
    pytest.param([user(text(), use("a"))], [], id="user_messages_are_not_checked"),
    pytest.param(
        [
            assistant(use("a")),
            user(result("a")),
            assistant(think(), use("b")),
            user(result("b")),
            assistant(text(), use("c")),
        ],
        [0, 4],
        id="every_offender_listed",
    ),
    pytest.param([], [], id="empty"),
]


@pytest.mark.parametrize(("messages", "offenders"), BEDROCK_CASES)
def test_bedrock_thinking_first_when_enabled(messages: list[Message], offenders: list[int]) -> None:
    found = bedrock_violations(messages, thinking_enabled=True)
    assert [(v.index, v.rule) for v in found] == [(i, R.BEDROCK_THINKING_FIRST) for i in offenders]
    if offenders:
        with pytest.raises(InvalidTranscriptError) as info:
            validate_bedrock(messages, thinking_enabled=True)
        assert info.value.violations == found
        assert f"{len(offenders)} violation(s)" in info.value.message
    else:
        validate_bedrock(messages, thinking_enabled=True)


@pytest.mark.parametrize(("messages", "offenders"), BEDROCK_CASES)
def test_bedrock_accepts_everything_when_thinking_is_disabled(
    messages: list[Message], offenders: list[int]
) -> None:
    assert bedrock_violations(messages, thinking_enabled=False) == []
    validate_bedrock(messages, thinking_enabled=False)


def test_bedrock_message_names_the_parts() -> None:
    (violation,) = bedrock_violations([assistant(text(), use("a"))], thinking_enabled=True)
    assert violation.message.endswith("(parts: [text, tool_use])")


def test_bedrock_checks_only_its_own_rule() -> None:
    """An unanswered tool use is the planner validator's business, not Bedrock's."""
    validate_bedrock([assistant(think(), use("a"))], thinking_enabled=True)


# --------------------------------------------------------------------------- no mutation


def test_validators_never_change_the_messages() -> None:
    messages = [
        user(result("x")),
        assistant(use("b", name="z"), think(), use("a")),
        assistant(text()),
        user(result("a", {"deep": [1, {"x": 2}]}), text()),
        *decode_messages(dumps(conversation_json())),
    ]
    snapshot = copy.deepcopy(messages)
    ids = [id(m) for m in messages]
    planner_transcript_violations(messages)
    bedrock_violations(messages, thinking_enabled=True)
    with pytest.raises(InvalidTranscriptError):
        validate_planner_transcript(messages)
    with pytest.raises(InvalidTranscriptError):
        validate_bedrock(messages, thinking_enabled=True)
    assert messages == snapshot
    assert [id(m) for m in messages] == ids


def test_validators_accept_any_sequence() -> None:
    validate_planner_transcript((assistant(use("a")), user(result("a"))))
    validate_bedrock((assistant(think(), use("a")),), thinking_enabled=True)
