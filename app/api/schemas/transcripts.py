"""The transcript on the wire (CONTRACT.md section 10): messages with a discriminated union
of parts, every key present, exactly as the client's encoder writes them.

These models describe the response in the OpenAPI document; the route itself renders the
messages with ``runtime_store_client.transcript.encode_message``, the one encoder.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from runtime_store_client.transcript import DocumentFormat, ImageFormat, Role

Base64Text = Annotated[str, Field(description="Standard base64.")]
JsonObject = Annotated[
    dict[str, Any],
    WithJsonSchema({"type": "object", "additionalProperties": True}),
]
# The contract says "any JSON value" (10.2): the schema says exactly that, no more.
JsonValue = Annotated[Any, WithJsonSchema({"description": "Any JSON value (the tool's result)."})]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TextPartBody(_Strict):
    kind: Literal["text"]
    text: str


class ThinkingPartBody(_Strict):
    """Provider reasoning: plaintext with a signature, or redacted bytes."""

    kind: Literal["thinking"]
    text: str
    signature: str
    redacted: Base64Text | None
    index: int
    final: bool


class ImagePartBody(_Strict):
    kind: Literal["image"]
    format: ImageFormat
    bytes: Base64Text


class DocumentPartBody(_Strict):
    """Exactly one of ``bytes``, ``text``, ``chunks`` and ``uri`` is set."""

    kind: Literal["document"]
    name: str
    format: DocumentFormat
    bytes: Base64Text | None
    text: str
    chunks: list[str] | None
    uri: str
    context: str
    cite: bool


class DocumentLocationBody(_Strict):
    document_index: int
    start: int
    end: int


class CitationLocationBody(_Strict):
    document_char: DocumentLocationBody | None
    document_chunk: DocumentLocationBody | None
    document_page: DocumentLocationBody | None


class CitationBody(_Strict):
    title: str
    source: str
    location: CitationLocationBody
    source_content: list[str] | None


class CitationsPartBody(_Strict):
    kind: Literal["citations"]
    text: str
    citations: list[CitationBody]


class ToolUsePartBody(_Strict):
    """A model-authored tool call; ``id`` is the model's tool-call ID."""

    kind: Literal["tool_use"]
    id: str
    name: str
    input: JsonObject
    thought_signature: str


class ToolResultPartBody(_Strict):
    """The result of the tool call whose model ID is ``tool_use_id``."""

    kind: Literal["tool_result"]
    tool_use_id: str
    content: JsonValue
    is_error: bool


class CacheCheckpointPartBody(_Strict):
    """A prompt-cache boundary marker."""

    kind: Literal["cache_checkpoint"]


PartBody = Annotated[
    TextPartBody
    | ThinkingPartBody
    | ImagePartBody
    | DocumentPartBody
    | CitationsPartBody
    | ToolUsePartBody
    | ToolResultPartBody
    | CacheCheckpointPartBody,
    Field(discriminator="kind"),
]


class MessageBody(_Strict):
    """One model-visible message; parts keep their order."""

    role: Role
    parts: list[PartBody]
    meta: JsonObject | None


class TranscriptPageBody(_Strict):
    """The messages of the transcript records in one page of the run's records."""

    messages: list[MessageBody]
    next_cursor: str = Field(
        description='The record cursor to read on from; "" when no more records existed.'
    )


class TranscriptViolationBody(_Strict):
    """One broken transcript rule."""

    index: int = Field(description="Index of the message (-1: the payload as a whole).")
    rule: str = Field(examples=["tool_result_count"])
    message: str
