from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.run_status import RunStatus
from typing import cast

if TYPE_CHECKING:
  from ..models.record_body import RecordBody





T = TypeVar("T", bound="TerminalRequest")



@_attrs_define
class TerminalRequest:
    """ 
        Attributes:
            status (RunStatus): Status of a run; every status but ``running`` is terminal (the run takes no more
                ordinary records); ``completed``, ``failed`` and ``canceled`` are also *finished* (no
                state change can follow; a suspended run may still be repaired or continued).
            record (RecordBody): An immutable run record (CONTRACT.md 1.7).
     """

    status: RunStatus
    record: RecordBody





    def to_dict(self) -> dict[str, Any]:
        from ..models.record_body import RecordBody # noqa: PLC0415
        status = self.status.value

        record = self.record.to_dict()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "status": status,
            "record": record,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.record_body import RecordBody # noqa: PLC0415
        d = dict(src_dict)
        status = RunStatus(d.pop("status"))




        record = RecordBody.from_dict(d.pop("record"))




        terminal_request = cls(
            status=status,
            record=record,
        )

        return terminal_request

