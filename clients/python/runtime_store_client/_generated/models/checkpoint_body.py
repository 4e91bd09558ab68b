from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="CheckpointBody")



@_attrs_define
class CheckpointBody:
    """ A continuation checkpoint: opaque bytes as base64.

        Attributes:
            id (str):
            data (str): Non-empty opaque bytes as standard base64.
     """

    id: str
    data: str





    def to_dict(self) -> dict[str, Any]:
        id = self.id

        data = self.data


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "id": id,
            "data": data,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        data = d.pop("data")

        checkpoint_body = cls(
            id=id,
            data=data,
        )

        return checkpoint_body

