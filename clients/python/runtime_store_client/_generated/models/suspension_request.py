from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from typing import cast

if TYPE_CHECKING:
  from ..models.checkpoint_body import CheckpointBody
  from ..models.record_body import RecordBody





T = TypeVar("T", bound="SuspensionRequest")



@_attrs_define
class SuspensionRequest:
    """ 
        Attributes:
            checkpoint (CheckpointBody): A continuation checkpoint: opaque bytes as base64.
            record (RecordBody): An immutable run record (CONTRACT.md 1.7).
     """

    checkpoint: CheckpointBody
    record: RecordBody





    def to_dict(self) -> dict[str, Any]:
        from ..models.checkpoint_body import CheckpointBody # noqa: PLC0415
        from ..models.record_body import RecordBody # noqa: PLC0415
        checkpoint = self.checkpoint.to_dict()

        record = self.record.to_dict()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "checkpoint": checkpoint,
            "record": record,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.checkpoint_body import CheckpointBody # noqa: PLC0415
        from ..models.record_body import RecordBody # noqa: PLC0415
        d = dict(src_dict)
        checkpoint = CheckpointBody.from_dict(d.pop("checkpoint"))




        record = RecordBody.from_dict(d.pop("record"))




        suspension_request = cls(
            checkpoint=checkpoint,
            record=record,
        )

        return suspension_request

