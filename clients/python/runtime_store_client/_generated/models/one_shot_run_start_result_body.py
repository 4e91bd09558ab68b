from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, BinaryIO, TextIO, TYPE_CHECKING, Generator

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

from ..models.run_status import RunStatus
from typing import cast

if TYPE_CHECKING:
  from ..models.append_result_body import AppendResultBody





T = TypeVar("T", bound="OneShotRunStartResultBody")



@_attrs_define
class OneShotRunStartResultBody:
    """ 
        Attributes:
            run_status (RunStatus): Status of a run; every status but ``running`` is terminal (the run takes no more
                ordinary records); ``completed``, ``failed`` and ``canceled`` are also *finished* (no
                state change can follow; a suspended run may still be repaired or continued).
            record (AppendResultBody): The result of writing one record.
     """

    run_status: RunStatus
    record: AppendResultBody





    def to_dict(self) -> dict[str, Any]:
        from ..models.append_result_body import AppendResultBody # noqa: PLC0415
        run_status = self.run_status.value

        record = self.record.to_dict()


        field_dict: dict[str, Any] = {}

        field_dict.update({
            "run_status": run_status,
            "record": record,
        })

        return field_dict



    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.append_result_body import AppendResultBody # noqa: PLC0415
        d = dict(src_dict)
        run_status = RunStatus(d.pop("run_status"))




        record = AppendResultBody.from_dict(d.pop("record"))




        one_shot_run_start_result_body = cls(
            run_status=run_status,
            record=record,
        )

        return one_shot_run_start_result_body

