"""Violations of the transcript rules (CONTRACT.md section 10), as structured values.

Every :class:`~runtime_store_client.InvalidTranscriptError` carries a list of them. This
module imports nothing from the package, so ``errors`` can name it without a cycle.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class TranscriptRule(enum.StrEnum):
    """The rule a :class:`TranscriptViolation` names.

    Decoding rules (10.1, 10.2) come first; the planner (10.4) and Bedrock rules follow;
    ``no_transcript_records`` is the replay rule of 10.3, ``empty_literal`` that of a seed's
    literal (15.6).
    """

    # --- decoding: JSON text and shapes
    INVALID_JSON = "invalid_json"
    """Not UTF-8, not exactly one JSON value, or a non-finite number."""
    DUPLICATE_KEY = "duplicate_key"
    WRONG_TYPE = "wrong_type"
    """A value of the wrong JSON type (``input`` not an object, ``index`` not an integer…)."""
    MISSING_KEY = "missing_key"
    UNKNOWN_KEY = "unknown_key"
    INVALID_STRING = "invalid_string"
    """A string holding an unpaired surrogate escape: it has no UTF-8 form."""
    INTEGER_RANGE = "integer_range"
    """An integer outside the signed 64-bit range."""
    INVALID_BASE64 = "invalid_base64"
    """Not canonical standard base64 with padding."""
    # --- decoding: the rules of 10.1 and 10.2
    UNKNOWN_ROLE = "unknown_role"
    UNKNOWN_KIND = "unknown_kind"
    IMAGE_FORMAT = "image_format"
    IMAGE_BYTES_EMPTY = "image_bytes_empty"
    DOCUMENT_NAME_EMPTY = "document_name_empty"
    DOCUMENT_FORMAT = "document_format"
    DOCUMENT_SOURCE_COUNT = "document_source_count"
    """A document needs exactly one of ``bytes``, ``text``, ``chunks``, ``uri``."""
    DOCUMENT_CHUNK_EMPTY = "document_chunk_empty"
    TOOL_USE_ID_EMPTY = "tool_use_id_empty"
    TOOL_USE_NAME_EMPTY = "tool_use_name_empty"
    TOOL_RESULT_ID_EMPTY = "tool_result_id_empty"
    # --- planner transcript (10.4)
    TOOL_USE_ID_DUPLICATE = "tool_use_id_duplicate"
    TOOL_USE_NOT_FOLLOWED_BY_USER = "tool_use_not_followed_by_user"
    TOOL_RESULT_COUNT = "tool_result_count"
    TOOL_RESULT_ID_DUPLICATE = "tool_result_id_duplicate"
    TOOL_RESULT_ID_UNMATCHED = "tool_result_id_unmatched"
    """A result names an ID that no ``tool_use`` of the preceding group declared."""
    TOOL_USE_UNANSWERED = "tool_use_unanswered"
    """A ``tool_use`` ID of the group has no result in the following user message."""
    TOOL_RESULT_WITHOUT_TOOL_USE = "tool_result_without_tool_use"
    # --- Bedrock (10.4)
    BEDROCK_THINKING_FIRST = "bedrock_thinking_first"
    # --- replay (10.3) and seeded replay (15.6)
    NO_TRANSCRIPT_RECORDS = "no_transcript_records"
    EMPTY_LITERAL = "empty_literal"
    """A seed's literal (its ``literal_part`` records joined) holds no message."""


@dataclass(frozen=True)
class TranscriptViolation:
    """One broken rule: the message ``index`` (``-1`` outside any message) and the ``rule``.

    ``rule`` is a :class:`TranscriptRule` value; ``message`` says what is wrong and, for
    decoding, where (a JSON path such as ``$[2].parts[0].input``).
    """

    index: int
    rule: str
    message: str

    def __str__(self) -> str:
        where = f"message[{self.index}]" if self.index >= 0 else "transcript"
        return f"{where} {self.rule}: {self.message}"
