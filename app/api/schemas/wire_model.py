"""The base of every request and response body (``WireModel``: unknown keys refused, frozen),
and the field types and schema helpers the contexts' bodies share.

Field names are the contract's (CONTRACT.md sections 1, 7 and 8); each model converts to
and from the contract dataclasses of ``runtime_store_client``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Final

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

Labels = Annotated[
    dict[str, str] | None,
    Field(
        description="String labels; absent, null and {} are equal.",
        examples=[{"site": "one"}],
    ),
]


JsonObject = Annotated[
    dict[str, Any],
    WithJsonSchema(
        {
            "type": "object",
            "additionalProperties": True,
            "description": "A JSON object (free-form event data).",
            "examples": [{"text": "hello"}],
        }
    ),
]


class WireModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


#: A string the contract requires non-empty: ``minLength`` in the document, while the store
#: keeps refusing ``""`` with its own ``invalid_argument`` message (``run.session_id is
#: required``), the one rule in one place.
NON_EMPTY: Final[dict[str, Any]] = {"minLength": 1}


def required_in_document(*names: str) -> Callable[[dict[str, Any]], None]:
    """A model's ``json_schema_extra`` naming fields ``required`` (without a ``default``)
    that the model itself defaults to ``""``, so that a missing one reaches the store's
    check and its message, as an empty one does."""

    def extra(schema: dict[str, Any]) -> None:
        properties: dict[str, dict[str, Any]] = schema["properties"]
        for name in names:
            properties[name].pop("default", None)
        required = {*schema.get("required", ()), *names}
        schema["required"] = [name for name in properties if name in required]

    return extra
