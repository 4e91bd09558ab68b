from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast
from typing import Literal, cast

if TYPE_CHECKING:
  from ..models.tool_use_part_body_input import ToolUsePartBodyInput





T = TypeVar("T", bound="ToolUsePartBody")



@_attrs_define
class ToolUsePartBody:
    """ A model-authored tool call; ``id`` is the model's tool-call ID.

        Attributes:
            kind (Literal['tool_use']):
            id (str):
            name (str):
            input_ (ToolUsePartBodyInput):
            thought_signature (str):
     """

    kind: Literal['tool_use']
    id: str
    name: str
    input_: ToolUsePartBodyInput
    thought_signature: str





    def to_dict(self) -> dict[str, Any]:
        from ..models.tool_use_part_body_input import ToolUsePartBodyInput # noqa: PLC0415
        kind = self.kind

        id = self.id

        name = self.name

        input_ = self.input_.to_dict()

        thought_signature = self.thought_signature


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "kind": kind,
            "id": id,
            "name": name,
            "input": input_,
            "thought_signature": thought_signature,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.tool_use_part_body_input import ToolUsePartBodyInput # noqa: PLC0415
        d = dict(src_dict)
        kind = cast(Literal['tool_use'] , d.pop("kind"))
        if kind != 'tool_use':
            raise ValueError(f"kind must match const 'tool_use', got '{kind}'")

        id = d.pop("id")

        name = d.pop("name")

        input_ = ToolUsePartBodyInput.from_dict(d.pop("input"))




        thought_signature = d.pop("thought_signature")

        tool_use_part_body = cls(
            kind=kind,
            id=id,
            name=name,
            input_=input_,
            thought_signature=thought_signature,
        )

        return tool_use_part_body

