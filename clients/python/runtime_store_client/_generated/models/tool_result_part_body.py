from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import Literal, cast






T = TypeVar("T", bound="ToolResultPartBody")



@_attrs_define
class ToolResultPartBody:
    """ The result of the tool call whose model ID is ``tool_use_id``.

        Attributes:
            kind (Literal['tool_result']):
            tool_use_id (str):
            content (Any): Any JSON value (the tool's result).
            is_error (bool):
     """

    kind: Literal['tool_result']
    tool_use_id: str
    content: Any
    is_error: bool





    def to_dict(self) -> dict[str, Any]:
        kind = self.kind

        tool_use_id = self.tool_use_id

        content = self.content

        is_error = self.is_error


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "kind": kind,
            "tool_use_id": tool_use_id,
            "content": content,
            "is_error": is_error,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kind = cast(Literal['tool_result'] , d.pop("kind"))
        if kind != 'tool_result':
            raise ValueError(f"kind must match const 'tool_result', got '{kind}'")

        tool_use_id = d.pop("tool_use_id")

        content = d.pop("content")

        is_error = d.pop("is_error")

        tool_result_part_body = cls(
            kind=kind,
            tool_use_id=tool_use_id,
            content=content,
            is_error=is_error,
        )

        return tool_result_part_body

