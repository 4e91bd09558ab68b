from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.record_body import RecordBody





T = TypeVar("T", bound="CancellationRequest")



@_attrs_define
class CancellationRequest:
    """ 
        Attributes:
            reason (str): Why the run is canceled: non-empty; user_requested, session_ended and engine_canceled have a
                meaning, any other reason is allowed.
            record (RecordBody): An immutable run record (CONTRACT.md 1.7).
     """

    reason: str
    record: RecordBody





    def to_dict(self) -> dict[str, Any]:
        from ..models.record_body import RecordBody # noqa: PLC0415
        reason = self.reason

        record = self.record.to_dict()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "reason": reason,
            "record": record,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.record_body import RecordBody # noqa: PLC0415
        d = dict(src_dict)
        reason = d.pop("reason")

        record = RecordBody.from_dict(d.pop("record"))




        cancellation_request = cls(
            reason=reason,
            record=record,
        )

        return cancellation_request

