"""Transcript validators (CONTRACT.md 10.4). They read the messages and never change them.

``*_violations`` return every violation found (empty when valid); ``validate_*`` raise
:class:`~runtime_store_client.InvalidTranscriptError` whose message lists them all and
whose ``violations`` attribute holds them. Each violation names the message index and the
:class:`TranscriptRule` broken.

Both run in time linear in the number of parts (IDs are matched through dicts).

Planner rules, group by group (a *group* is a run of consecutive assistant messages):

* a group holding ``tool_use`` parts must be followed immediately by a ``user`` message
  (``tool_use_not_followed_by_user``);
* its tool-use IDs are non-empty (``tool_use_id_empty``) and unique
  (``tool_use_id_duplicate``);
* that user message holds exactly as many ``tool_result`` parts as the group has
  ``tool_use`` parts (``tool_result_count``), with non-empty (``tool_result_id_empty``),
  unique (``tool_result_id_duplicate``) IDs, and the ID sets are equal
  (``tool_use_unanswered`` for a call without result, ``tool_result_id_unmatched`` for a
  result naming no call of the group); other parts may accompany the results;
* a ``tool_result`` in a non-assistant message that does not directly follow a tool-use
  group is an error (``tool_result_without_tool_use``). As in the Goa-AI reference,
  ``tool_result`` parts inside assistant messages are not paired with anything.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import InvalidTranscriptError
from .model import Message, Part, Role, ThinkingPart, ToolResultPart, ToolUsePart
from .violations import TranscriptRule, TranscriptViolation


def _violation(index: int, rule: TranscriptRule, message: str) -> TranscriptViolation:
    return TranscriptViolation(index, str(rule), message)


def _ids(
    items: Sequence[tuple[int, str]],
    what: str,
    empty_rule: TranscriptRule,
    duplicate_rule: TranscriptRule,
    out: list[TranscriptViolation],
) -> dict[str, None]:
    """The distinct non-empty IDs in order (a dict: ordered, and O(1) membership);
    reports empty and repeated ones."""
    seen: dict[str, None] = {}
    for index, item_id in items:
        if not item_id:
            out.append(_violation(index, empty_rule, f"{what} ID is empty"))
        elif item_id in seen:
            out.append(_violation(index, duplicate_rule, f"{what} ID {item_id!r} is repeated"))
        else:
            seen[item_id] = None
    return seen


def _summary(parts: Sequence[Part]) -> str:
    return "[" + ", ".join(type(part).kind for part in parts) + "]"


def planner_transcript_violations(messages: Sequence[Message]) -> list[TranscriptViolation]:
    """Every violation of the planner transcript rules; ``[]`` when the transcript is valid."""
    out: list[TranscriptViolation] = []
    count = len(messages)
    i = 0
    while i < count:
        message = messages[i]
        if message.role != Role.ASSISTANT:
            orphans = [p.tool_use_id for p in message.parts if isinstance(p, ToolResultPart)]
            if orphans:
                out.append(
                    _violation(
                        i,
                        TranscriptRule.TOOL_RESULT_WITHOUT_TOOL_USE,
                        f"{message.role} message has tool_result {orphans!r} without a "
                        "directly preceding assistant tool_use",
                    )
                )
            i += 1
            continue
        end = i
        uses: list[tuple[int, str]] = []
        while end < count and messages[end].role == Role.ASSISTANT:
            uses.extend((end, p.id) for p in messages[end].parts if isinstance(p, ToolUsePart))
            end += 1
        if not uses:
            i = end
            continue
        group = f"assistant messages[{i}:{end}]"
        use_ids = _ids(
            uses,
            "tool_use",
            TranscriptRule.TOOL_USE_ID_EMPTY,
            TranscriptRule.TOOL_USE_ID_DUPLICATE,
            out,
        )
        if end == count or messages[end].role != Role.USER:
            after = "the end of the transcript" if end == count else f"a {messages[end].role}"
            out.append(
                _violation(
                    i,
                    TranscriptRule.TOOL_USE_NOT_FOLLOWED_BY_USER,
                    f"{group} with tool_use are followed by {after}, not a user message",
                )
            )
            i = end
            continue
        reply = messages[end]
        results = [(end, p.tool_use_id) for p in reply.parts if isinstance(p, ToolResultPart)]
        if len(results) != len(uses):
            out.append(
                _violation(
                    end,
                    TranscriptRule.TOOL_RESULT_COUNT,
                    f"user message must hold exactly {len(uses)} tool_result parts for {group}, "
                    f"holds {len(results)}",
                )
            )
        result_ids = _ids(
            results,
            "tool_result",
            TranscriptRule.TOOL_RESULT_ID_EMPTY,
            TranscriptRule.TOOL_RESULT_ID_DUPLICATE,
            out,
        )
        out.extend(
            _violation(
                end,
                TranscriptRule.TOOL_USE_UNANSWERED,
                f"no tool_result for tool_use {use_id!r} of {group}",
            )
            for use_id in use_ids
            if use_id not in result_ids
        )
        out.extend(
            _violation(
                end,
                TranscriptRule.TOOL_RESULT_ID_UNMATCHED,
                f"tool_result {result_id!r} names no tool_use of {group}",
            )
            for result_id in result_ids
            if result_id not in use_ids
        )
        i = end + 1
    return out


def bedrock_violations(
    messages: Sequence[Message], thinking_enabled: bool
) -> list[TranscriptViolation]:
    """Bedrock's extra rule: with thinking enabled, an assistant message holding a
    ``tool_use`` must be non-empty and begin with a ``thinking`` part."""
    if not thinking_enabled:
        return []
    return [
        _violation(
            i,
            TranscriptRule.BEDROCK_THINKING_FIRST,
            "assistant message with tool_use must begin with a thinking part when thinking "
            f"is enabled (parts: {_summary(message.parts)})",
        )
        for i, message in enumerate(messages)
        if message.role == Role.ASSISTANT
        and any(isinstance(part, ToolUsePart) for part in message.parts)
        and not (message.parts and isinstance(message.parts[0], ThinkingPart))
    ]


def _raise(what: str, violations: list[TranscriptViolation]) -> None:
    if violations:
        listed = "; ".join(str(v) for v in violations)
        raise InvalidTranscriptError(
            f"{what}: {len(violations)} violation(s): {listed}", violations=violations
        )


def validate_planner_transcript(messages: Sequence[Message]) -> None:
    """Raise :class:`~runtime_store_client.InvalidTranscriptError` listing every violation
    of the planner rules; an empty transcript is valid."""
    _raise("planner transcript", planner_transcript_violations(messages))


def validate_bedrock(messages: Sequence[Message], thinking_enabled: bool) -> None:
    """Raise :class:`~runtime_store_client.InvalidTranscriptError` when, with thinking
    enabled, an assistant message with a ``tool_use`` does not begin with ``thinking``."""
    _raise("bedrock transcript", bedrock_violations(messages, thinking_enabled))
