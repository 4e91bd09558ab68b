from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset







T = TypeVar("T", bound="DocumentLocationBody")



@_attrs_define
class DocumentLocationBody:
    """ 
        Attributes:
            document_index (int):
            start (int):
            end (int):
     """

    document_index: int
    start: int
    end: int





    def to_dict(self) -> dict[str, Any]:
        document_index = self.document_index

        start = self.start

        end = self.end


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "document_index": document_index,
            "start": start,
            "end": end,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        document_index = d.pop("document_index")

        start = d.pop("start")

        end = d.pop("end")

        document_location_body = cls(
            document_index=document_index,
            start=start,
            end=end,
        )

        return document_location_body

