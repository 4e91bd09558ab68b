from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.record_body import RecordBody





T = TypeVar("T", bound="RecordPageBody")



@_attrs_define
class RecordPageBody:
    """ 
        Attributes:
            records (list[RecordBody]):
            next_cursor (str): Pass back to read on; "" when no more existed.
     """

    records: list[RecordBody]
    next_cursor: str





    def to_dict(self) -> dict[str, Any]:
        from ..models.record_body import RecordBody # noqa: PLC0415
        records = []
        for records_item_data in self.records:
            records_item = records_item_data.to_dict()
            records.append(records_item)



        next_cursor = self.next_cursor


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "records": records,
            "next_cursor": next_cursor,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.record_body import RecordBody # noqa: PLC0415
        d = dict(src_dict)
        records = []
        _records = d.pop("records")
        for records_item_data in (_records):
            records_item = RecordBody.from_dict(records_item_data)



            records.append(records_item)


        next_cursor = d.pop("next_cursor")

        record_page_body = cls(
            records=records,
            next_cursor=next_cursor,
        )

        return record_page_body

