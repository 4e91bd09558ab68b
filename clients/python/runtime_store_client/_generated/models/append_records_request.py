from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.record_body import RecordBody





T = TypeVar("T", bound="AppendRecordsRequest")



@_attrs_define
class AppendRecordsRequest:
    """ 
        Attributes:
            records (list[RecordBody]): 1 to 1,000 ordinary records of the path's run, stored in this order.
     """

    records: list[RecordBody]





    def to_dict(self) -> dict[str, Any]:
        from ..models.record_body import RecordBody # noqa: PLC0415
        records = []
        for records_item_data in self.records:
            records_item = records_item_data.to_dict()
            records.append(records_item)




        field_dict: dict[str, Any] = {}

        field_dict.update({
            "records": records,
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


        append_records_request = cls(
            records=records,
        )

        return append_records_request

