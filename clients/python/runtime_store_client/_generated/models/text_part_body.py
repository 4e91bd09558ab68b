from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import Literal, cast






T = TypeVar("T", bound="TextPartBody")



@_attrs_define
class TextPartBody:
    """ 
        Attributes:
            kind (Literal['text']):
            text (str):
     """

    kind: Literal['text']
    text: str





    def to_dict(self) -> dict[str, Any]:
        kind = self.kind

        text = self.text


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "kind": kind,
            "text": text,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kind = cast(Literal['text'] , d.pop("kind"))
        if kind != 'text':
            raise ValueError(f"kind must match const 'text', got '{kind}'")

        text = d.pop("text")

        text_part_body = cls(
            kind=kind,
            text=text,
        )

        return text_part_body

