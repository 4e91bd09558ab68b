from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.image_format import ImageFormat
from typing import Literal, cast






T = TypeVar("T", bound="ImagePartBody")



@_attrs_define
class ImagePartBody:
    """ 
        Attributes:
            kind (Literal['image']):
            format_ (ImageFormat):
            bytes_ (str): Standard base64.
     """

    kind: Literal['image']
    format_: ImageFormat
    bytes_: str





    def to_dict(self) -> dict[str, Any]:
        kind = self.kind

        format_ = self.format_.value

        bytes_ = self.bytes_


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "kind": kind,
            "format": format_,
            "bytes": bytes_,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kind = cast(Literal['image'] , d.pop("kind"))
        if kind != 'image':
            raise ValueError(f"kind must match const 'image', got '{kind}'")

        format_ = ImageFormat(d.pop("format"))




        bytes_ = d.pop("bytes")

        image_part_body = cls(
            kind=kind,
            format_=format_,
            bytes_=bytes_,
        )

        return image_part_body

