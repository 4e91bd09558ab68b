from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.new_seed_record_body import NewSeedRecordBody





T = TypeVar("T", bound="AppendRunSeedRequest")



@_attrs_define
class AppendRunSeedRequest:
    """ 
        Attributes:
            record (NewSeedRecordBody): A seed record to append: exactly one of `messages`, `literal_part`, `prefix`
                and `prepared` (the others absent or null).
     """

    record: NewSeedRecordBody





    def to_dict(self) -> dict[str, Any]:
        from ..models.new_seed_record_body import NewSeedRecordBody # noqa: PLC0415
        record = self.record.to_dict()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "record": record,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.new_seed_record_body import NewSeedRecordBody # noqa: PLC0415
        d = dict(src_dict)
        record = NewSeedRecordBody.from_dict(d.pop("record"))




        append_run_seed_request = cls(
            record=record,
        )

        return append_run_seed_request

